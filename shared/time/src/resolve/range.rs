//! Ranges: of dates (7月13日到15日, monday to friday, with one hour for each day), from now to a day,
//! and of times (3点到5点, 10pm to 2am, 1pm-2pm tomorrow).

use crate::grammar::Point;
use crate::recurrence;
use crate::segment::SegKind;
use crate::types::{Clock, DateParts, MonthSpec, YearSpec};
use crate::{Confidence, Grain, Resolution, TimeContext};
use chrono::Datelike;
use super::clock::{Mode, after_start, clock_minutes, empty_res, half_of_day_guessed, hm, marked, split, time_grain};
use super::date_parts::resolve_date;
use super::resolve_point;

pub(super) fn resolve_range(a: &Point, b: &Point, ctx: &TimeContext) -> Option<Resolution> {
    if a.now && b.clock.is_none() {
        return range_from_now(b, ctx);
    }
    if a.clock.is_none() && !a.now {
        return range_of_days(a, b, ctx);
    }
    range_of_times(a, b, ctx)
}

/// "from now until friday", 从现在到周五: from now through the last day.
fn range_from_now(b: &Point, ctx: &TimeContext) -> Option<Resolution> {
    let (today, now) = (ctx.today(), ctx.now_minutes());
    let db = resolve_date(&b.date, ctx, Some(today))?;
    let end = db.end.unwrap_or(db.date);
    if end < today {
        return None;
    }
    let mut r = empty_res(today, Grain::Minute);
    r.start_time = Some(hm(now));
    r.end_date = Some(end);
    if b.date.guessed {
        r.confidence = Confidence::Inferred;
    }
    Some(r)
}

/// A range of dates (7月13日到15日, "monday to wednesday"), with one hour for each of its days
/// ("周一到周五上午九点").
fn range_of_days(a: &Point, b: &Point, ctx: &TimeContext) -> Option<Resolution> {
    let today = ctx.today();
    let mut da = resolve_date(&a.date, ctx, None)?;
    let mut db = resolve_date(&b.date, ctx, Some(da.date))?;
    // "march 3 to 5" said on 4 March: the range going on now, not next year's
    if a.date.year.is_none()
        && matches!(a.date.month, Some(MonthSpec::Abs(_)))
        && a.date.day.is_some()
        && da.date.year() > today.year()
    {
        let this_year = |d: &DateParts| DateParts {
            year: matches!(d.month, Some(MonthSpec::Abs(_))).then_some(YearSpec::Abs(today.year())),
            ..*d
        };
        if let Some(x) = resolve_date(&this_year(&a.date), ctx, None)
            && let Some(y) = resolve_date(&this_year(&b.date), ctx, Some(x.date))
            && y.end.unwrap_or(y.date) >= today
            && x.date <= today
        {
            (da, db) = (x, y);
        }
    }
    let end = db.end.unwrap_or(db.date);
    if end < da.date {
        return resolve_point(a, ctx);
    }
    if let Some(c) = b.clock {
        // weekdays with one hour for each: the first day at that hour, repeated daily to the last
        let seg = b.seg.map(|s| s.kind);
        let (d, at) = split(da.date, clock_minutes(&c, seg, Mode::Other))?;
        let mut r = empty_res(d, time_grain(&c));
        r.start_time = Some(at);
        r.end_date = Some(end);
        r.rrule = Some(format!("FREQ=DAILY;COUNT={}", (end - da.date).num_days() + 1));
        if half_of_day_guessed(&c, seg) || c.guessed || a.date.guessed || b.date.guessed {
            r.confidence = Confidence::Inferred;
        }
        return Some(r);
    }
    let mut r = empty_res(da.date, Grain::Day);
    r.end_date = Some(end);
    r.segment = a.seg.or(b.seg).map(|s| s.kind.segment());
    if a.date.guessed || b.date.guessed {
        r.confidence = Confidence::Inferred;
    }
    Some(r)
}

/// A range of times ("3点到5点", "10pm to 2am", "1pm-2pm tomorrow", "now to 5pm").
fn range_of_times(a: &Point, b: &Point, ctx: &TimeContext) -> Option<Resolution> {
    let (today, now) = (ctx.today(), ctx.now_minutes());
    let a_has_date = !a.date.is_empty();
    let b_has_date = !b.date.is_empty();
    // "1pm-2pm tomorrow": a date after the end applies to both ends
    let shared = !a_has_date && b_has_date && b.date_after_time;
    let da = if a_has_date {
        Some(resolve_date(&a.date, ctx, None)?)
    } else if shared {
        Some(resolve_date(&b.date, ctx, None)?)
    } else {
        None
    };
    let start_date = da.map(|d| d.date).unwrap_or(today);
    let recurring = da.is_some_and(|d| d.recur.is_some());
    let mode_a = if !recurring && start_date == today {
        Mode::Reference(now)
    } else {
        Mode::Other
    };
    let seg_a = a.seg.map(|s| s.kind);
    let seg_b = b.seg.map(|s| s.kind);
    let cb = b.clock?;
    let b_own_date = b_has_date && !shared;
    let start = match a.clock {
        None => now, // "now to 5pm"
        Some(ca) => start_minutes(&ca, seg_a, &cb, seg_b, b_own_date, mode_a),
    };
    let (end_date, end_min) = if b_own_date {
        let db = resolve_date(&b.date, ctx, Some(start_date))?;
        let m = if db.date == start_date && !marked(&cb, seg_b) {
            after_start(&cb, start)
        } else {
            let mode_b = if db.date == today {
                Mode::Reference(now)
            } else {
                Mode::Other
            };
            clock_minutes(&cb, seg_b, mode_b)
        };
        (db.date, m)
    } else {
        let m = if marked(&cb, seg_b) {
            let x = clock_minutes(&cb, seg_b, Mode::Other);
            if x <= start {
                x + 1440 * (1 + (start - x) / 1440)
            } else {
                x
            }
        } else {
            after_start(&cb, start)
        };
        (start_date, m)
    };
    let (sd, st) = split(start_date, start)?;
    let (ed, et) = split(end_date, end_min)?;
    let fine = a.clock.is_some_and(|c| c.has_min) || cb.has_min;
    let mut r = empty_res(sd, if fine { Grain::Minute } else { Grain::Hour });
    // "3到5点", "from 3 to 5": neither end says which half of the day
    let start_guessed = a.clock.is_none_or(|ca| half_of_day_guessed(&ca, seg_a));
    let hour_guessed = a.clock.is_some_and(|c| c.guessed) || cb.guessed;
    if (start_guessed && half_of_day_guessed(&cb, seg_b)) || hour_guessed || a.date.guessed || b.date.guessed {
        r.confidence = Confidence::Inferred;
    }
    r.start_time = Some(st);
    r.end_time = Some(et);
    if ed != sd {
        r.end_date = Some(ed);
    }
    if let Some(rec) = da.and_then(|d| d.recur) {
        r.rrule = Some(recurrence::rrule(&rec, &a.date));
    }
    Some(r)
}

/// The start of a range of times, in minutes: an unmarked start takes the end's marker when that
/// keeps it before the end ("3-4pm" = 15-16, "10 - 11 at night" = 22-23).
fn start_minutes(ca: &Clock, seg_a: Option<SegKind>, cb: &Clock, seg_b: Option<SegKind>, b_own_date: bool, mode_a: Mode) -> u32 {
    if !marked(ca, seg_a) && marked(cb, seg_b) && !b_own_date {
        // the end's marker applies to the start when that keeps start < end
        let e = clock_minutes(cb, seg_b, Mode::Other);
        let same = if seg_b.is_some() && cb.is_bare() && !cb.padded {
            clock_minutes(ca, seg_b, Mode::Other)
        } else if cb.mer.is_some() {
            clock_minutes(&Clock { mer: cb.mer, ..*ca }, None, Mode::Other)
        } else {
            u32::MAX
        };
        let plain = ca.h * 60 + ca.m;
        if same < e {
            same
        } else if plain < e {
            plain
        } else {
            clock_minutes(ca, None, mode_a)
        }
    } else {
        clock_minutes(ca, seg_a, mode_a)
    }
}
