//! Calendar arithmetic: month lengths, adding months, Monday-start weeks, next weekday.

use super::types::BUSINESS_DAY;
use chrono::{Datelike, Days, Months, NaiveDate};

pub(crate) fn ymd(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d)
}

pub(crate) fn days_in_month(y: i32, m: u32) -> u32 {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    match (ymd(ny, nm, 1), ymd(y, m, 1)) {
        (Some(a), Some(b)) => (a - b).num_days() as u32,
        _ => 30,
    }
}

pub(crate) fn last_of_month(y: i32, m: u32) -> Option<NaiveDate> {
    ymd(y, m, days_in_month(y, m))
}

pub(crate) fn add_days(d: NaiveDate, n: i64) -> Option<NaiveDate> {
    if n >= 0 {
        d.checked_add_days(Days::new(n as u64))
    } else {
        d.checked_sub_days(Days::new(n.unsigned_abs()))
    }
}

/// Add months, clamping the day to the target month's length.
pub(crate) fn add_months(d: NaiveDate, n: i32) -> Option<NaiveDate> {
    if n >= 0 {
        d.checked_add_months(Months::new(n as u32))
    } else {
        d.checked_sub_months(Months::new(n.unsigned_abs()))
    }
}

/// (year, month) shifted by `n` months.
pub(crate) fn shift_month(y: i32, m: u32, n: i32) -> (i32, u32) {
    let idx = y * 12 + (m as i32 - 1) + n;
    (idx.div_euclid(12), idx.rem_euclid(12) as u32 + 1)
}

/// Monday of the week containing `d`.
pub(crate) fn monday_of(d: NaiveDate) -> NaiveDate {
    let wd = d.weekday().num_days_from_monday() as i64;
    add_days(d, -wd).unwrap_or(d)
}

/// 0 = Monday .. 6 = Sunday.
pub(crate) fn weekday_index(d: NaiveDate) -> u8 {
    d.weekday().num_days_from_monday() as u8
}

/// The first date on or after `from` that falls on weekday `wd` (0 = Monday).
pub(crate) fn next_weekday(from: NaiveDate, wd: u8) -> NaiveDate {
    let cur = weekday_index(from) as i64;
    let delta = (wd as i64 - cur).rem_euclid(7);
    add_days(from, delta).unwrap_or(from)
}

/// The first date on or after `from` whose weekday is in the bit set (bit 0 = Monday).
pub(crate) fn next_weekday_in(from: NaiveDate, set: u8) -> NaiveDate {
    for k in 0..7 {
        if let Some(d) = add_days(from, k)
            && set & (1 << weekday_index(d)) != 0
        {
            return d;
        }
    }
    from
}

/// The next date on or after `from` with day-of-month `day` (skipping months that lack it).
pub(crate) fn next_month_day(from: NaiveDate, day: u32) -> Option<NaiveDate> {
    let (mut y, mut m) = (from.year(), from.month());
    for k in 0..48 {
        if let Some(d) = ymd(y, m, day)
            && (k > 0 || d >= from)
        {
            return Some(d);
        }
        (y, m) = shift_month(y, m, 1);
    }
    None
}

/// The next date on or after `from` that is month `m`, day `d` (Feb 29 waits for a leap year).
pub(crate) fn next_month_and_day(from: NaiveDate, m: u32, d: u32) -> Option<NaiveDate> {
    for y in from.year()..from.year() + 9 {
        if let Some(x) = ymd(y, m, d)
            && x >= from
        {
            return Some(x);
        }
    }
    None
}

/// `n` business days (Monday to Friday) after `d` (before it when negative). From a weekend day,
/// counting starts at the Friday before (forward) or the Monday after (backward), so the next
/// business day after a Saturday is the Monday.
pub(crate) fn add_business_days(d: NaiveDate, n: i64) -> Option<NaiveDate> {
    let wd = weekday_index(d) as i64;
    let start = match (wd >= 5, n >= 0) {
        (true, true) => add_days(d, 4 - wd)?,
        (true, false) => add_days(d, 7 - wd)?,
        _ => d,
    };
    let sign = n.signum();
    let mut left = n.abs();
    let mut x = add_days(start, sign * 7 * (left / 5))?;
    left %= 5;
    while left > 0 {
        x = add_days(x, sign)?;
        if weekday_index(x) < 5 {
            left -= 1;
        }
    }
    Some(x)
}

/// The n-th weekday `wd` (0 = Monday) of month `m` of year `y`, counted from the end when n < 0
/// (-1 = the last, -2 = the second to last); None when the month has no such day (a fifth Monday).
/// `wd` = [`BUSINESS_DAY`] counts the days Monday to Friday instead (no holiday calendar): the
/// first business day of a month starting on a Saturday is the 3rd.
pub(crate) fn nth_weekday_in(y: i32, m: u32, n: i8, wd: u8) -> Option<NaiveDate> {
    if n == 0 {
        return None;
    }
    if wd == BUSINESS_DAY {
        let (first, last) = (ymd(y, m, 1)?, last_of_month(y, m)?);
        let (mut d, step) = if n > 0 { (first, 1) } else { (last, -1) };
        let mut left = n.unsigned_abs();
        while d.month() == m {
            if weekday_index(d) < 5 {
                left -= 1;
                if left == 0 {
                    return Some(d);
                }
            }
            d = add_days(d, step)?;
        }
        return None;
    }
    let d = if n > 0 {
        add_days(next_weekday(ymd(y, m, 1)?, wd), 7 * (n as i64 - 1))?
    } else {
        let last = last_of_month(y, m)?;
        let back = (weekday_index(last) as i64 - wd as i64).rem_euclid(7);
        add_days(last, -back - 7 * (n.unsigned_abs() as i64 - 1))?
    };
    (d.month() == m).then_some(d)
}

/// The n-th weekday (or business day) of the week that starts on Monday `mon`: 1 = its first,
/// -1 = its last (Sunday, or Friday for business days).
pub(crate) fn nth_weekday_of_week(mon: NaiveDate, n: i8, wd: u8) -> Option<NaiveDate> {
    let days = if wd == BUSINESS_DAY { 5 } else { return None };
    let k = if n > 0 { n as i64 - 1 } else { days + n as i64 };
    (0..days).contains(&k).then(|| add_days(mon, k)).flatten()
}
