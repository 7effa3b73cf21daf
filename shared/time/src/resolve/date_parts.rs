//! The date of a point's date parts: relative days, weekdays and weeks, dates with or without a
//! year, parts of a month, the n-th weekday of a month, holidays, offsets and recurrences.

use crate::dates::{
    add_business_days, add_days, add_months, last_of_month, monday_of, next_month_and_day, next_month_day,
    next_weekday, nth_weekday_in, nth_weekday_of_week, shift_month, weekday_index, ymd,
};
use crate::{holidays, recurrence};
use crate::types::{DateParts, MonthPart, MonthSpec, Recur, Unit, YearSpec};
use crate::{Grain, TimeContext};
use chrono::{Datelike, NaiveDate};


/// A resolved date part.
#[derive(Debug, Clone, Copy)]
pub(super) struct DRes {
    pub(super) date: NaiveDate,
    /// Inclusive last day of a span (week, month, year).
    pub(super) end: Option<NaiveDate>,
    pub(super) grain: Grain,
    /// A bare weekday ("周三", "friday"): moves a week on when its time has passed today.
    pub(super) bare_weekday: bool,
    pub(super) recur: Option<Recur>,
}

impl DRes {
    pub(super) fn day(date: NaiveDate) -> DRes {
        DRes {
            date,
            end: None,
            grain: Grain::Day,
            bare_weekday: false,
            recur: None,
        }
    }
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
pub(super) fn resolve_date(d: &DateParts, ctx: &TimeContext, anchor: Option<NaiveDate>) -> Option<DRes> {
    let today = ctx.today();
    let from = anchor.unwrap_or(today);
    if let Some(r) = d.recur {
        // A daily or weekly series with a day of the month starts that day.
        let start = match (d.month, d.day) {
            (Some(_), Some(_)) => resolve_date(&DateParts { recur: None, ..*d }, ctx, anchor)?.date.max(today),
            _ => today,
        };
        let date = recurrence::first_occurrence(&r, d, start)?;
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
        let (x, whole) = week_date(d, w, today)?;
        if whole {
            return Some(x);
        }
        x
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

/// A day or span of week `w` (0 = this week): its n-th business day, a half of it, a weekday
/// or the week itself. The flag: the result is final (no base offset applies to it).
fn week_date(d: &DateParts, w: i32, today: NaiveDate) -> Option<(DRes, bool)> {
    let mon = add_days(monday_of(today), 7 * w as i64)?;
    if let Some((n, wd)) = d.nth {
        return Some((DRes::day(nth_weekday_of_week(mon, n, wd)?), true));
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
        return Some((
            DRes {
                end: add_days(mon, b),
                ..DRes::day(add_days(mon, a)?)
            },
            true,
        ));
    }
    let x = match d.weekday {
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
    };
    Some((x, false))
}
