//! Expressions to [`Resolution`]s: dates from their parts, clock times with the AM/PM rules,
//! ranges, offsets, recurrences. The rules are documented in the crate docs.

use super::dates::{
    add_business_days, add_days, add_months, last_of_month, monday_of, next_month_and_day, next_month_day,
    next_weekday, nth_weekday_in, nth_weekday_of_week, shift_month, weekday_index, ymd,
};
use super::grammar::{Body, Expr, Point};
use super::{holidays, recurrence};
use super::segment::SegKind;
use super::types::{Clock, DateParts, Mer, MonthPart, MonthSpec, REST_OF_DAY, Recur, Unit, YearSpec};
use super::{Confidence, Grain, Resolution, TimeContext};
use chrono::{Datelike, NaiveDate, NaiveTime, TimeDelta, Timelike};

/// A resolved date part.
#[derive(Debug, Clone, Copy)]
struct DRes {
    date: NaiveDate,
    /// Inclusive last day of a span (week, month, year).
    end: Option<NaiveDate>,
    grain: Grain,
    /// A bare weekday ("周三", "friday"): moves a week on when its time has passed today.
    bare_weekday: bool,
    recur: Option<Recur>,
}

impl DRes {
    fn day(date: NaiveDate) -> DRes {
        DRes {
            date,
            end: None,
            grain: Grain::Day,
            bare_weekday: false,
            recur: None,
        }
    }
}

/// How a bare hour (no part of day, no am/pm) is read.
#[derive(Clone, Copy)]
enum Mode {
    /// On the reference date: the earliest of h and h+12 not passed (minutes since midnight).
    Reference(u32),
    /// Another date (or a recurrence): 1-6 are PM, 7-12 as written.
    Other,
}

fn empty_res(date: NaiveDate, grain: Grain) -> Resolution {
    Resolution::date_only(date, grain)
}

fn hm(mins: u32) -> NaiveTime {
    NaiveTime::from_hms_opt((mins / 60) % 24, mins % 60, 0).unwrap_or(NaiveTime::MIN)
}

/// A date plus minutes (possibly past midnight) → (date, time).
fn split(date: NaiveDate, mins: u32) -> Option<(NaiveDate, NaiveTime)> {
    let d = add_days(date, (mins / 1440) as i64)?;
    Some((d, hm(mins % 1440)))
}

fn expand_short_year(yy: u32, today: NaiveDate) -> i32 {
    let y = 2000 + yy as i32;
    if y > today.year() + 20 { y - 100 } else { y }
}

fn apply_offset(d: NaiveDate, n: i32, u: Unit) -> Option<NaiveDate> {
    match u {
        Unit::Day => add_days(d, n as i64),
        Unit::BusinessDay => add_business_days(d, n as i64),
        Unit::Week => add_days(d, 7 * n as i64),
        Unit::Month => add_months(d, n),
        Unit::Year => add_months(d, 12 * n),
    }
}

/// Minutes since midnight of the start date (may exceed 1440: next day).
fn clock_minutes(c: &Clock, seg: Option<SegKind>, mode: Mode) -> u32 {
    if c.absolute {
        return c.h * 60 + c.m;
    }
    if let Some(mer) = c.mer {
        let h = match mer {
            Mer::Am => {
                if c.h == 12 {
                    0
                } else {
                    c.h
                }
            }
            Mer::Pm => {
                if c.h < 12 {
                    c.h + 12
                } else {
                    c.h
                }
            }
        };
        return h * 60 + c.m;
    }
    if let Some(v) = seg.and_then(|k| k.read_hour(c.h, c.m)) {
        return v;
    }
    if c.padded {
        return c.h * 60 + c.m;
    }
    match mode {
        Mode::Reference(now) => {
            if c.h == 12 {
                return 12 * 60 + c.m;
            }
            let a = c.h * 60 + c.m;
            if a >= now { a } else { a + 720 }
        }
        Mode::Other => {
            if (1..=6).contains(&c.h) {
                (c.h + 12) * 60 + c.m
            } else {
                c.h * 60 + c.m
            }
        }
    }
}

/// True when the clock is marked (am/pm, 24-hour, part of day).
fn marked(c: &Clock, seg: Option<SegKind>) -> bool {
    !c.is_bare() || c.padded || seg.is_some_and(|k| k != SegKind::AllDay)
}

/// The end of a range written without a marker: the earliest reading after `start`.
fn after_start(c: &Clock, start: u32) -> u32 {
    let base = c.h * 60 + c.m;
    // 12 may also be midnight ("9~12点" in the evening)
    let mut cands = [base, if c.h <= 12 { base + 720 } else { base }];
    cands.sort_unstable();
    for day in 0..3 {
        for v in cands {
            let v = v + 1440 * day;
            if v > start {
                return v;
            }
        }
    }
    base + 1440
}

fn year_of(y: YearSpec, today: NaiveDate) -> i32 {
    match y {
        YearSpec::Abs(y) => y,
        YearSpec::Rel(n) => today.year() + n,
        YearSpec::Short(yy) => expand_short_year(yy, today),
    }
}

/// (year, month) of a month spec.
fn month_year(ms: MonthSpec, year: Option<i32>, today: NaiveDate, from: NaiveDate) -> (i32, u32) {
    match ms {
        MonthSpec::Abs(m) => {
            let y = year.unwrap_or(if m >= from.month() {
                from.year()
            } else {
                from.year() + 1
            });
            (y, m)
        }
        // "明年本月" = this month of next year
        MonthSpec::Rel(n) => shift_month(year.unwrap_or(today.year()), today.month(), n),
        MonthSpec::NextAbs(m) => (
            if m > today.month() {
                today.year()
            } else {
                today.year() + 1
            },
            m,
        ),
        MonthSpec::LastAbs(m) => (
            if m < today.month() {
                today.year()
            } else {
                today.year() - 1
            },
            m,
        ),
    }
}

fn resolve_ymd(d: &DateParts, today: NaiveDate, from: NaiveDate) -> Option<DRes> {
    let year = d.year.map(|y| year_of(y, today));
    match (d.month, d.day, d.part) {
        (Some(ms), Some(day), _) => {
            let date = match (ms, year) {
                (MonthSpec::Abs(m), None) => match d.weekday {
                    Some(wd) => weekday_year(m, day, wd, today)
                        .or_else(|| next_month_and_day(from, m, day))?,
                    None => next_month_and_day(from, m, day)?,
                },
                _ => {
                    let (y, m) = month_year(ms, year, today, from);
                    ymd(y, m, day)?
                }
            };
            Some(DRes::day(date))
        }
        (Some(ms), None, part) => {
            let (y, m) = month_year(ms, year, today, from);
            Some(match part {
                Some(part) => month_part(y, m, part)?,
                None => DRes {
                    date: ymd(y, m, 1)?,
                    end: last_of_month(y, m),
                    grain: Grain::Month,
                    bare_weekday: false,
                    recur: None,
                },
            })
        }
        (None, Some(day), None) => {
            if year.is_some() {
                return None;
            }
            let next = next_month_day(from, day)?;
            // "Tuesday the 14th", "14号周二": the next 14th that is a Tuesday
            if let Some(wd) = d.weekday {
                let mut x = next;
                for _ in 0..30 {
                    if weekday_index(x) == wd {
                        return Some(DRes::day(x));
                    }
                    x = next_month_day(add_days(x, 1)?, day)?;
                }
            }
            Some(DRes::day(next))
        }
        (None, None, Some(part)) => month_part(year.unwrap_or(today.year()), today.month(), part),
        (None, None, None) => {
            let y = year?;
            Some(DRes {
                date: ymd(y, 1, 1)?,
                end: ymd(y, 12, 31),
                grain: Grain::Year,
                bare_weekday: false,
                recur: None,
            })
        }
        _ => None,
    }
}

/// A part of month `m` of year `y`: its 1st, 15th or last day, or a third of it as a span
/// (上旬 = 1st-10th, 中旬 = 11th-20th, 下旬 = 21st-last).
fn month_part(y: i32, m: u32, part: MonthPart) -> Option<DRes> {
    Some(match part {
        MonthPart::Begin => DRes::day(ymd(y, m, 1)?),
        MonthPart::Mid => DRes::day(ymd(y, m, 15)?),
        MonthPart::End => DRes::day(last_of_month(y, m)?),
        MonthPart::Half(h) => {
            let (a, b) = if h == 1 { (ymd(y, m, 1)?, ymd(y, m, 15)?) } else { (ymd(y, m, 16)?, last_of_month(y, m)?) };
            DRes {
                end: Some(b),
                ..DRes::day(a)
            }
        }
        MonthPart::Week(n) => {
            let last = last_of_month(y, m)?;
            let first = if n < 0 { add_days(last, -6)? } else { ymd(y, m, 7 * n as u32 - 6)? };
            DRes {
                end: Some(add_days(first, 6)?.min(last)),
                ..DRes::day(first)
            }
        }
        MonthPart::Third(k) => {
            let k = k.clamp(1, 3) as u32;
            DRes {
                end: if k == 3 { last_of_month(y, m) } else { ymd(y, m, 10 * k) },
                ..DRes::day(ymd(y, m, 10 * k - 9)?)
            }
        }
    })
}

/// "Fri, Jul 18": the year nearest to today in which month/day falls on the weekday.
fn weekday_year(m: u32, day: u32, wd: u8, today: NaiveDate) -> Option<NaiveDate> {
    let mut best: Option<(i64, NaiveDate)> = None;
    for y in today.year() - 1..=today.year() + 11 {
        if let Some(x) = ymd(y, m, day)
            && weekday_index(x) == wd
        {
            let dist = (x - today).num_days().abs();
            if best.is_none_or(|(bd, _)| dist < bd) {
                best = Some((dist, x));
            }
        }
    }
    best.map(|b| b.1)
}

/// "the third Wednesday of next month", "下个月的第三个周三": in the month given (this month when
/// none is); a month named without a year whose n-th weekday has passed is next year's.
fn nth_weekday_of_month(d: &DateParts, n: i8, wd: u8, today: NaiveDate) -> Option<NaiveDate> {
    let year = d.year.map(|y| year_of(y, today));
    let (y, m) = match d.month {
        Some(ms) => month_year(ms, year, today, today),
        None => (year.unwrap_or(today.year()), today.month()),
    };
    let date = nth_weekday_in(y, m, n, wd)?;
    if date < today && year.is_none() && matches!(d.month, Some(MonthSpec::Abs(_))) {
        return nth_weekday_in(y + 1, m, n, wd);
    }
    Some(date)
}

/// Resolve the date parts; `anchor` is the start date when this is the end of a range.
fn resolve_date(d: &DateParts, ctx: &TimeContext, anchor: Option<NaiveDate>) -> Option<DRes> {
    let today = ctx.today();
    let from = anchor.unwrap_or(today);
    if let Some(r) = d.recur {
        let date = recurrence::first_occurrence(&r, d, today)?;
        return Some(DRes {
            date,
            end: None,
            grain: Grain::Day,
            bare_weekday: false,
            recur: Some(r),
        });
    }
    if let (Some((n, u)), false) = (d.offset, d.needs_base) {
        let mut x = DRes::day(apply_offset(today, n, u)?);
        if let Some(n2) = d.offset_end {
            // "三天内" = today to 3 days on, "三四天后" = 3 to 4 days on
            x.end = Some(apply_offset(today, n2, u)?);
        }
        return Some(x);
    }
    let mut res = if let Some(r) = d.rel_day {
        let mut x = DRes::day(add_days(today, r as i64)?);
        if let Some(re) = d.rel_end {
            // 明后天 = tomorrow and the day after
            x.end = add_days(today, re as i64);
        }
        x
    } else if d.next_day {
        DRes::day(add_days(from, 1)?)
    } else if d.weekend {
        let sat = match d.week {
            Some(w) => add_days(monday_of(today), 7 * w as i64 + 5)?,
            None => next_weekday(from, 5),
        };
        let mut x = DRes::day(sat);
        if d.weekend_both {
            x.end = add_days(sat, 1);
        }
        x
    } else if let Some(w) = d.week {
        let mon = add_days(monday_of(today), 7 * w as i64)?;
        if let Some((n, wd)) = d.nth {
            return Some(DRes::day(nth_weekday_of_week(mon, n, wd)?));
        }
        if let Some(h) = d.week_half {
            // "early next week" = Monday-Wednesday, "later this week" = Thursday-Sunday, "the
            // rest of the week" = today to Sunday
            let (a, b) = match h {
                1 => (0, 2),
                2 => (3, 6),
                4 => (0, 4),
                _ => ((today - mon).num_days().clamp(0, 6), 6),
            };
            return Some(DRes {
                end: add_days(mon, b),
                ..DRes::day(add_days(mon, a)?)
            });
        }
        match d.weekday {
            // "this saturday" said on a Sunday: the coming one
            Some(wd) if d.this_named && w == 0 && weekday_index(today) == 6 => DRes::day(next_weekday(today, wd)),
            Some(wd) => DRes::day(add_days(mon, wd as i64)?),
            None => DRes {
                date: mon,
                end: add_days(mon, 6),
                grain: Grain::Week,
                bare_weekday: false,
                recur: None,
            },
        }
    } else if let Some(h) = d.holiday {
        // "春节", "easter": the next one, today included; with a year, that year's
        DRes::day(match d.year {
            Some(y) => holidays::in_year(h, year_of(y, today))?,
            None => holidays::next(h, from)?,
        })
    } else if let Some((n, wd)) = d.nth {
        DRes::day(nth_weekday_of_month(d, n, wd, today)?)
    } else if d.has_ymd() {
        resolve_ymd(d, today, from)?
    } else if let Some(wd) = d.weekday {
        let mut x = next_weekday(from, wd);
        if d.after_next {
            x = add_days(x, 7)?;
        }
        DRes {
            bare_weekday: !d.after_next && anchor.is_none(),
            ..DRes::day(x)
        }
    } else {
        return None;
    };
    if d.needs_base {
        let (n, u) = d.offset?;
        res = DRes::day(apply_offset(res.date, n, u)?);
    }
    Some(res)
}

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

fn time_grain(c: &Clock) -> Grain {
    if c.has_min {
        Grain::Minute
    } else {
        Grain::Hour
    }
}

fn resolve_point(p: &Point, ctx: &TimeContext) -> Option<Resolution> {
    let today = ctx.today();
    if let Some(m) = p.toff {
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
        return Some(r);
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
    let mut dr = dres.unwrap_or(DRes::day(today));
    let rrule = dr.recur.map(|r| recurrence::rrule(&r, &p.date));
    let now = ctx.now_minutes();
    let seg = p.seg.map(|s| s.kind);
    if let Some(c) = p.clock {
        let mode = |d: NaiveDate| {
            if dr.recur.is_none() && d == today {
                Mode::Reference(now)
            } else {
                Mode::Other
            }
        };
        let mut mins = clock_minutes(&c, seg, mode(dr.date));
        if dr.date == today && mins < now {
            if dr.bare_weekday {
                dr.date = add_days(dr.date, 7)?;
                mins = clock_minutes(&c, seg, Mode::Other);
            } else if let Some(r) = dr.recur {
                dr.date = recurrence::first_occurrence(&r, &p.date, add_days(today, 1)?)?;
            }
        }
        let (d, t) = split(dr.date, mins)?;
        let mut r = empty_res(d, time_grain(&c));
        r.start_time = Some(t);
        r.rrule = rrule;
        if half_of_day_guessed(&c, seg) || c.guessed || p.date.guessed {
            r.confidence = Confidence::Inferred;
        }
        return Some(r);
    }
    if let Some(k) = seg {
        if dr.date == today && now > k.end_minute() {
            if dr.bare_weekday {
                dr.date = add_days(dr.date, 7)?;
            } else if let Some(r) = dr.recur {
                dr.date = recurrence::first_occurrence(&r, &p.date, add_days(today, 1)?)?;
            }
        }
        let mut r = empty_res(dr.date, Grain::Day);
        r.segment = Some(k.segment());
        r.rrule = rrule;
        if p.date.rel_end.is_some() {
            // "明后天下午": that part of both days
            r.end_date = dr.end;
        }
        if p.date.guessed {
            r.confidence = Confidence::Inferred;
        }
        return Some(r);
    }
    let mut r = empty_res(dr.date, dr.grain);
    r.end_date = dr.end;
    r.rrule = rrule;
    if p.date.guessed {
        r.confidence = Confidence::Inferred;
    }
    Some(r)
}

/// A bare hour 1-11 (no am/pm, part of day or 24-hour form): which half of the day it is in was
/// chosen by rule, not read.
fn half_of_day_guessed(c: &Clock, seg: Option<SegKind>) -> bool {
    !marked(c, seg) && (1..=11).contains(&c.h)
}

fn resolve_range(a: &Point, b: &Point, ctx: &TimeContext) -> Option<Resolution> {
    let today = ctx.today();
    let now = ctx.now_minutes();
    if a.now && b.clock.is_none() {
        // "from now until friday": from now through the last day
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
        return Some(r);
    }
    if a.clock.is_none() && !a.now {
        // a range of dates
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
        return Some(r);
    }
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
        Some(ca) => {
            if !marked(&ca, seg_a) && marked(&cb, seg_b) && !b_own_date {
                // the end's marker applies to the start when that keeps start < end
                let e = clock_minutes(&cb, seg_b, Mode::Other);
                let same = if seg_b.is_some() && cb.is_bare() && !cb.padded {
                    clock_minutes(&ca, seg_b, Mode::Other)
                } else if cb.mer.is_some() {
                    clock_minutes(&Clock { mer: cb.mer, ..ca }, None, Mode::Other)
                } else {
                    u32::MAX
                };
                let plain = ca.h * 60 + ca.m;
                if same < e {
                    same
                } else if plain < e {
                    plain
                } else {
                    clock_minutes(&ca, None, mode_a)
                }
            } else {
                clock_minutes(&ca, seg_a, mode_a)
            }
        }
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
