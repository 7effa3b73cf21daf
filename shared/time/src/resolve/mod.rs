//! Expressions to [`Resolution`]s: dates from their parts, clock times with the AM/PM rules,
//! ranges, offsets, recurrences. The rules are documented in the crate docs.
//!
//! # Layout
//! - `clock`: minutes of a clock time (the AM/PM rules of a bare hour, a part of day, a range's end).
//! - `date_parts`: the date of a point's [`DateParts`](crate::types::DateParts) (relative days,
//!   weekdays, weeks, months, years, holidays, offsets).
//! - `range`: ranges of dates and of times.

mod clock;
mod date_parts;
mod range;

use super::dates::add_days;
use super::grammar::{Body, Expr, Point};
use super::recurrence;
use super::segment::SegKind;
use super::types::{Clock, REST_OF_DAY};
use super::{Confidence, Grain, Resolution, TimeContext};
use chrono::{TimeDelta, Timelike};
use clock::{Mode, clock_minutes, empty_res, half_of_day_guessed, hm, split, time_grain};
use date_parts::{DRes, resolve_date};
use range::resolve_range;

pub(crate) fn resolve_expr(e: &Expr, ctx: &TimeContext) -> Option<Resolution> {
    let mut res = resolve_body(e, ctx)?;
    res.day_stated = match &e.body {
        Body::Duration(_) => false,
        Body::Point(p) => states_day(p, &res, ctx),
        Body::Range(a, b) => states_day(a, &res, ctx) || states_day(b, &res, ctx),
    };
    Some(res)
}

/// Whether a point names its day (see [`Resolution::day_stated`]): any date part does ("明天",
/// "今晚", "friday", "3天后", "中秋"), and so do "later today" and an offset from now that lands on
/// another day.
fn states_day(p: &Point, res: &Resolution, ctx: &TimeContext) -> bool {
    !p.date.is_empty() || p.toff_end == Some(REST_OF_DAY) || (p.toff.is_some() && res.date != ctx.today())
}

fn resolve_body(e: &Expr, ctx: &TimeContext) -> Option<Resolution> {
    let mut res = match &e.body {
        Body::Duration(m) => {
            let mut r = empty_res(ctx.today(), Grain::Minute);
            r.duration_minutes = Some(*m);
            r.confidence = Confidence::Assumed;
            return Some(r);
        }
        Body::Point(p) => resolve_point(p, ctx)?,
        Body::Range(a, b) => resolve_range(a, b, ctx)?,
    };
    if let Some(d) = e.duration {
        res.duration_minutes = Some(d);
        if let (Some(st), None) = (res.start_time, res.end_time) {
            let total = (st.hour() * 60 + st.minute()).checked_add(d)?;
            let (ed, et) = split(res.date, total)?;
            res.end_time = Some(et);
            if ed != res.date {
                res.end_date = Some(ed);
            }
            res.grain = Grain::Minute;
        }
    }
    Some(res)
}

pub(super) fn resolve_point(p: &Point, ctx: &TimeContext) -> Option<Resolution> {
    let today = ctx.today();
    if let Some(m) = p.toff {
        return offset_point(p, m, ctx);
    }
    if p.now {
        let mut r = empty_res(today, Grain::Minute);
        r.start_time = Some(hm(ctx.now_minutes()));
        return Some(r);
    }
    let dres = if p.date.is_empty() {
        None
    } else {
        Some(resolve_date(&p.date, ctx, None)?)
    };
    if p.same_time {
        // "明天这个时候", "same time next week": the reference time of day on that date (alone it
        // says nothing)
        let mut r = empty_res(dres?.date, Grain::Minute);
        r.start_time = Some(hm(ctx.now_minutes()));
        r.rrule = dres.and_then(|d| d.recur).map(|rec| recurrence::rrule(&rec, &p.date));
        return Some(r);
    }
    let dr = dres.unwrap_or(DRes::day(today));
    let rrule = dr.recur.map(|r| recurrence::rrule(&r, &p.date));
    let seg = p.seg.map(|s| s.kind);
    if let Some(c) = p.clock {
        let mut r = clock_point(p, &c, seg, dr, ctx)?;
        r.rrule = rrule;
        return Some(r);
    }
    let mut r = match seg {
        Some(k) => segment_point(p, k, dr, ctx)?,
        None => {
            let mut r = empty_res(dr.date, dr.grain);
            r.end_date = dr.end;
            r
        }
    };
    r.rrule = rrule;
    if p.date.guessed {
        r.confidence = Confidence::Inferred;
    }
    Some(r)
}

/// An offset from now in minutes ("in 2 hours", 半小时后), or a span of them (两小时内, "later today").
fn offset_point(p: &Point, m: i64, ctx: &TimeContext) -> Option<Resolution> {
    let at = ctx.now().checked_add_signed(TimeDelta::minutes(m))?;
    let local = at.naive_local();
    let mut r = empty_res(local.date(), Grain::Minute);
    r.start_time = Some(hm(local.hour() * 60 + local.minute()));
    if let Some(m2) = p.toff_end {
        let end = if m2 == REST_OF_DAY {
            local.date().succ_opt()?.and_hms_opt(0, 0, 0)?
        } else {
            ctx.now().checked_add_signed(TimeDelta::minutes(m2))?.naive_local()
        };
        r.end_time = Some(hm(end.hour() * 60 + end.minute()));
        if end.date() != local.date() {
            r.end_date = Some(end.date());
        }
        if p.toff_guessed {
            r.confidence = Confidence::Inferred;
        }
    }
    Some(r)
}

/// A clock time on the point's date; a bare weekday or a recurrence whose time has passed today
/// moves to its next occurrence.
fn clock_point(p: &Point, c: &Clock, seg: Option<SegKind>, mut dr: DRes, ctx: &TimeContext) -> Option<Resolution> {
    let (today, now) = (ctx.today(), ctx.now_minutes());
    let mode = if dr.recur.is_none() && dr.date == today { Mode::Reference(now) } else { Mode::Other };
    let mut mins = clock_minutes(c, seg, mode);
    if dr.date == today && mins < now {
        if dr.bare_weekday {
            dr.date = add_days(dr.date, 7)?;
            mins = clock_minutes(c, seg, Mode::Other);
        } else if let Some(r) = dr.recur {
            dr.date = recurrence::first_occurrence(&r, &p.date, add_days(today, 1)?)?;
        }
    }
    let (d, t) = split(dr.date, mins)?;
    let mut r = empty_res(d, time_grain(c));
    r.start_time = Some(t);
    if half_of_day_guessed(c, seg) || c.guessed || p.date.guessed {
        r.confidence = Confidence::Inferred;
    }
    Some(r)
}

/// A part of day on the point's date, moved on like a clock time when it has passed today.
fn segment_point(p: &Point, k: SegKind, mut dr: DRes, ctx: &TimeContext) -> Option<Resolution> {
    let today = ctx.today();
    if dr.date == today && ctx.now_minutes() > k.end_minute() {
        if dr.bare_weekday {
            dr.date = add_days(dr.date, 7)?;
        } else if let Some(r) = dr.recur {
            dr.date = recurrence::first_occurrence(&r, &p.date, add_days(today, 1)?)?;
        }
    }
    let mut r = empty_res(dr.date, Grain::Day);
    r.segment = Some(k.segment());
    if p.date.rel_end.is_some() {
        // "明后天下午": that part of both days
        r.end_date = dr.end;
    }
    Some(r)
}
