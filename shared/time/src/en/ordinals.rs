//! Ordinals that count days in a period: the third wednesday of next month, the last business day
//! of the week, next month's first monday, the 4th month of next year, every first monday.

use crate::numerals::{ascii_int, en_ordinal};
use crate::text::Text;
use crate::types::{
    Atom, BUSINESS_DAY, Freq, MonthPart, MonthSpec,
    Recur, YearSpec, date_atom,
};
use super::periods::{month_reference, week_reference};
use super::words::weekday_name;

/// An ordinal that counts days in a month or week, at `j`: 1..=5 ("first", "2nd"), -1 ("last",
/// "final"), -2 ("second to last", "penultimate"). (n, end).
fn nth_ordinal(t: &Text, j: usize) -> Option<(i8, usize)> {
    if let Some((x, _)) = t.phrase_longest(j, &["second to last", "second-to-last", "penultimate", "next to last"]) {
        return Some((-2, x));
    }
    if let Some(x) = t.phrase(j, "last").or_else(|| t.phrase(j, "final")) {
        return Some((-1, x));
    }
    let (n, x) = en_ordinal(t, j)?;
    (1..=5).contains(&n).then_some((n as i8, x))
}

/// What an ordinal counts at `k`: a weekday name (0 = Monday) or a business day ("business day",
/// "working day", "workday", "weekday" = [`BUSINESS_DAY`]). (weekday, end).
fn nth_day_kind(t: &Text, k: usize) -> Option<(u8, usize)> {
    if let Some((e, _)) = t.phrase_longest(k, &["business day", "working day", "work day", "workday", "weekday"]) {
        return Some((BUSINESS_DAY, e));
    }
    let (wd, e, plural, _) = weekday_name(t, k)?;
    (!plural).then_some((wd, e))
}

fn nth_atom(n: i8, wd: u8, month: Option<(MonthSpec, Option<YearSpec>)>, week: Option<i32>, every: bool) -> Atom {
    date_atom(|d| {
        d.nth = Some((n, wd));
        if let Some((m, y)) = month {
            d.month = Some(m);
            d.year = y;
        }
        d.week = week;
        if every {
            d.recur = Some(Recur::new(Freq::Monthly));
        }
    })
}

/// The n-th weekday of a month: "the third Wednesday of next month", "first monday in march",
/// "last Friday of this month", "the 2nd tuesday of the month", "the first monday next month";
/// the n-th business day: "the first business day of next month", "the last working day of the
/// week"; every month: "the last friday of every month", "every first monday (of the month)". The
/// month is required (a bare "last friday" is the Friday of last week).
pub(super) fn nth_weekday(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut j = i;
    let mut every = false;
    if let Some(x) = (matches!((t.at(i), t.at(i + 1)), ('e', 'v' | 'a')))
        .then(|| t.phrase(i, "every").or_else(|| t.phrase(i, "each")))
        .flatten()
    {
        j = t.skip_ws(x);
        every = j > x;
    } else if let Some(x) = t.phrase(i, "the") {
        j = t.skip_ws(x);
    }
    let (n, x) = nth_ordinal(t, j)?;
    let k = t.skip_ws(x);
    if k == x {
        return None;
    }
    let (wd, e) = nth_day_kind(t, k)?;
    let k2 = t.skip_ws(e);
    let of = t.phrase(k2, "of").or_else(|| t.phrase(k2, "in"));
    let k3 = of.map_or(k2, |x| t.skip_ws(x));
    if of.is_some() || k2 > e {
        if let Some((e3, _)) = t.phrase_longest(k3, &["every month", "each month", "the month"]).filter(|_| every || of.is_some())
            && (every || t.phrase(k3, "the month").is_none())
        {
            // "the last friday of every month", "every first monday of the month"
            return Some((e3, nth_atom(n, wd, None, None, true)));
        }
        if let Some((e3, (month, year))) = month_reference(t, k3)
            // without "of" only a relative month: "the first monday next month"
            && (of.is_some() || matches!(month, MonthSpec::Rel(_)))
            && !every
        {
            return Some((e3, nth_atom(n, wd, Some((month, year)), None, false)));
        }
        if wd == BUSINESS_DAY
            && !every
            && let Some((e3, w)) = week_reference(t, k3)
        {
            return Some((e3, nth_atom(n, wd, None, Some(w), false)));
        }
    }
    // "every first monday": of every month
    every.then(|| (e, nth_atom(n, wd, None, None, true)))
}

/// "next month's second tuesday", "this month's last friday", "june's first monday", "next
/// month's first business day", "next month's last day": the month first, with 's.
pub(super) fn possessive_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if !t.has_apostrophe() {
        return None;
    }
    let (e, (month, year)) = month_reference(t, i)?;
    if !matches!(t.at(e), '\'' | '’') || t.at(e + 1) != 's' || t.is_alnum(e + 2) {
        return None;
    }
    let j = t.skip_ws(e + 2);
    if j == e + 2 {
        return None;
    }
    if let Some((x, p)) = t.phrase_longest(j, &["first day", "last day", "final day", "end", "beginning", "start"]) {
        let part = if matches!(p, 0 | 4 | 5) { MonthPart::Begin } else { MonthPart::End };
        return Some((
            x,
            date_atom(|d| {
                d.month = Some(month);
                d.year = year;
                d.part = Some(part);
            }),
        ));
    }
    let (n, x) = nth_ordinal(t, j)?;
    let k = t.skip_ws(x);
    if k == x {
        return None;
    }
    let (wd, e2) = nth_day_kind(t, k)?;
    Some((e2, nth_atom(n, wd, Some((month, year)), None, false)))
}

/// "the 4th month of next year", "the second month of 2027".
pub(super) fn nth_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut j = i;
    if let Some(x) = t.phrase(i, "the") {
        j = t.skip_ws(x);
    }
    let (n, x) = en_ordinal(t, j)?;
    if !(1..=12).contains(&n) {
        return None;
    }
    let k = t.skip_ws(x);
    let x = t.phrase(k, "month")?;
    let k2 = t.skip_ws(x);
    let x2 = t.phrase(k2, "of").or_else(|| t.phrase(k2, "in"))?;
    let k3 = t.skip_ws(x2);
    const YEARS: &[(&str, i32)] = &[
        ("this year", 0),
        ("the year", 0),
        ("next year", 1),
        ("the next year", 1),
        ("the following year", 1),
        ("last year", -1),
        ("the previous year", -1),
    ];
    let (e, year) = if let Some((e, p)) = t.phrase_longest_in(k3, YEARS, |y| y.0) {
        (e, YearSpec::Rel(YEARS[p].1))
    } else {
        let (y, e, digits) = ascii_int(t, k3)?;
        if digits != 4 {
            return None;
        }
        (e, YearSpec::Abs(y as i32))
    };
    Some((
        e,
        date_atom(|d| {
            d.month = Some(MonthSpec::Abs(n));
            d.year = Some(year);
        }),
    ))
}
