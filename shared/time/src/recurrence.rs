//! Recurrences: the RFC 5545 RRULE text and the first occurrence on or after a date.

use super::dates::{
    last_of_month, next_month_and_day, next_month_day, next_weekday_in, nth_weekday_in, shift_month, ymd,
};
use super::types::{BUSINESS_DAY, DateParts, Freq, MonthSpec, Recur};
use chrono::{Datelike, NaiveDate};
use std::fmt::Write;

const DAY_CODES: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];

fn byday(r: &Recur, d: &DateParts) -> u8 {
    if r.byday != 0 {
        r.byday
    } else if let (Freq::Weekly, Some(wd)) = (r.freq, d.weekday) {
        1 << wd
    } else {
        0
    }
}

fn month_abs(d: &DateParts) -> Option<u32> {
    match d.month {
        Some(MonthSpec::Abs(m)) => Some(m),
        _ => None,
    }
}

/// "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=MONTHLY;BYMONTHDAY=5", "FREQ=DAILY;INTERVAL=2",
/// "FREQ=MONTHLY;BYDAY=-1FR" (the last Friday of every month), "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1"
/// (the first business day of every month).
pub(crate) fn rrule(r: &Recur, d: &DateParts) -> String {
    let mut s = String::with_capacity(40);
    s.push_str("FREQ=");
    s.push_str(match r.freq {
        Freq::Minutely => "MINUTELY",
        Freq::Hourly => "HOURLY",
        Freq::Daily => "DAILY",
        Freq::Weekly => "WEEKLY",
        Freq::Monthly => "MONTHLY",
        Freq::Yearly => "YEARLY",
    });
    if r.interval > 1 {
        let _ = write!(s, ";INTERVAL={}", r.interval);
    }
    if let Some((n, wd)) = d.nth {
        if wd == BUSINESS_DAY {
            let _ = write!(s, ";BYDAY=MO,TU,WE,TH,FR;BYSETPOS={n}");
        } else {
            let _ = write!(s, ";BYDAY={n}{}", DAY_CODES[wd as usize]);
        }
        return s;
    }
    let days = byday(r, d);
    if days != 0 {
        s.push_str(";BYDAY=");
        let mut first = true;
        for (k, code) in DAY_CODES.iter().enumerate() {
            if days & (1 << k) != 0 {
                if !first {
                    s.push(',');
                }
                s.push_str(code);
                first = false;
            }
        }
    }
    if r.freq == Freq::Yearly
        && let Some(m) = month_abs(d)
    {
        let _ = write!(s, ";BYMONTH={m}");
    }
    if let Some(day) = d.day.filter(|_| matches!(r.freq, Freq::Monthly | Freq::Yearly)) {
        // (a weekly series' day of the month is where it starts: "从5月1号开始每两周")
        let _ = write!(s, ";BYMONTHDAY={day}");
    } else if r.last_day {
        s.push_str(";BYMONTHDAY=-1");
    }
    s
}

/// The first occurrence on or after `from`.
pub(crate) fn first_occurrence(r: &Recur, d: &DateParts, from: NaiveDate) -> Option<NaiveDate> {
    match r.freq {
        Freq::Minutely | Freq::Hourly | Freq::Daily => Some(from),
        Freq::Weekly => {
            let days = byday(r, d);
            Some(if days != 0 {
                next_weekday_in(from, days)
            } else {
                from
            })
        }
        Freq::Monthly if d.nth.is_some() => {
            // this month's n-th weekday when it has not passed, else the next month that has one
            let (n, wd) = d.nth?;
            (0..24).find_map(|k| {
                let (y, m) = shift_month(from.year(), from.month(), k);
                nth_weekday_in(y, m, n, wd).filter(|x| *x >= from)
            })
        }
        Freq::Monthly => match d.day {
            Some(day) => next_month_day(from, day),
            None if r.last_day => last_of_month(from.year(), from.month()),
            None => Some(from),
        },
        Freq::Yearly => match (month_abs(d), d.day) {
            (Some(m), Some(day)) => next_month_and_day(from, m, day),
            (Some(m), None) => {
                let y = if m >= from.month() {
                    from.year()
                } else {
                    from.year() + 1
                };
                let first = ymd(y, m, 1)?;
                Some(if first < from && m == from.month() {
                    from
                } else {
                    first
                })
            }
            _ => Some(from),
        },
    }
}
