//! Weeks, months and years and their parts: next month, the week after next, end of the month,
//! early march, the first week of april, the second half of june, the rest of the week.

use crate::numerals::en_ordinal;
use crate::text::Text;
use crate::types::{
    Atom, DateParts, MonthPart, MonthSpec, YearSpec, date_atom,
};
use super::words::{month_name, trailing_year};

/// Whether "week" or "half" is written within the next five words (a cheap test before the
/// readers of weeks and halves of a month).
pub(super) fn week_or_half_ahead(t: &Text, i: usize) -> bool {
    let mut words = 0;
    let mut k = i;
    while k < t.len() && words < 5 {
        if t.word_start(k) && t.at(k).is_ascii_alphabetic() {
            words += 1;
            if (t.at(k) == 'w' && t.at(k + 1) == 'e' && t.at(k + 2) == 'e') || (t.at(k) == 'h' && t.at(k + 1) == 'a' && t.at(k + 2) == 'l') {
                return true;
            }
        }
        k += 1;
    }
    false
}

/// "the rest of the week", "rest of this week": from today to its Sunday.
pub(super) fn rest_of_week(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let j = t.phrase(i, "the").map_or(i, |x| t.skip_ws(x));
    let x = t.phrase(j, "rest of")?;
    let k = t.skip_ws(x);
    let e = t.phrase_longest(k, &["the week", "this week"])?.0;
    Some((
        e,
        date_atom(|d| {
            d.week = Some(0);
            d.week_half = Some(3);
        }),
    ))
}

/// "the first week of december", "the last week of next month", "2nd week of march": seven days
/// of the month as a span (1st-7th, 8th-14th ...; the last: its last seven days).
pub(super) fn week_of_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let j = t.phrase(i, "the").map_or(i, |x| t.skip_ws(x));
    // "the first half of march", "second half of next month": 1st-15th, 16th-last
    if let Some((x, p)) = t.phrase_longest(j, &["first half of", "second half of", "latter half of"]) {
        let (e2, (month, year)) = month_reference(t, t.skip_ws(x))?;
        return Some((
            e2,
            date_atom(|d| {
                d.month = Some(month);
                d.year = year;
                d.part = Some(MonthPart::Half(if p == 0 { 1 } else { 2 }));
            }),
        ));
    }
    let (n, e) = if let Some(x) = t.phrase(j, "last") {
        (-1, x)
    } else {
        let (n, e) = en_ordinal(t, j)?;
        if !(1..=4).contains(&n) {
            return None;
        }
        (n as i8, e)
    };
    let k = t.skip_ws(e);
    let x = t.phrase(k, "week of").filter(|_| k > e)?;
    let (e2, (month, year)) = month_reference(t, t.skip_ws(x))?;
    Some((
        e2,
        date_atom(|d| {
            d.month = Some(month);
            d.year = year;
            d.part = Some(MonthPart::Week(n));
        }),
    ))
}

/// "early march", "late next month", "in early april 2027": the first or last third of a month
/// (1st-10th, 21st-last), as a span.
pub(super) fn early_late_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if !matches!((t.at(i), t.at(i + 1)), ('e' | 'l', 'a')) {
        return None;
    }
    let (e, k) = t.phrase_longest(i, &["early", "late", "early in", "late in", "later", "later in"])?;
    let early = k % 2 == 0 && k < 4;
    let k2 = if t.at(e) == '-' { e + 1 } else { t.skip_ws(e) };
    if k2 == e {
        return None;
    }
    if let Some((e2, w)) = week_reference(t, k2) {
        // "early next week", "later this week", "late in the week": a half of the week
        return Some((
            e2,
            date_atom(|d| {
                d.week = Some(w);
                d.week_half = Some(if early { 1 } else { 2 });
                d.guessed = true;
            }),
        ));
    }
    let (e2, (month, year)) = month_reference(t, k2)?;
    Some((
        e2,
        date_atom(|d| {
            d.month = Some(month);
            d.year = year;
            d.part = Some(MonthPart::Third(if early { 1 } else { 3 }));
        }),
    ))
}

/// A month named after "of"/"in": a month name (with a year), this/next/last month, the month.
/// (end, (month, year)).
pub(super) fn month_reference(t: &Text, k: usize) -> Option<(usize, (MonthSpec, Option<YearSpec>))> {
    if let Some((m, e, _)) = month_name(t, k) {
        return Some(match trailing_year(t, e) {
            Some((y, e2)) => (e2, (MonthSpec::Abs(m), Some(YearSpec::Abs(y)))),
            None => (e, (MonthSpec::Abs(m), None)),
        });
    }
    const PERIODS: &[(&str, i32)] = &[
        ("the month", 0),
        ("this month", 0),
        ("the current month", 0),
        ("current month", 0),
        ("next month", 1),
        ("the next month", 1),
        ("the following month", 1),
        ("last month", -1),
        ("the previous month", -1),
        ("the month after next", 2),
    ];
    let (e, p) = t.phrase_longest_in(k, PERIODS, |x| x.0)?;
    Some((e, (MonthSpec::Rel(PERIODS[p].1), None)))
}

/// The week a business-day ordinal counts in: "of next week", "of the week". (end, week).
pub(super) fn week_reference(t: &Text, k: usize) -> Option<(usize, i32)> {
    const WEEKS: &[(&str, i32)] = &[
        ("the week", 0),
        ("this week", 0),
        ("next week", 1),
        ("the next week", 1),
        ("the following week", 1),
        ("last week", -1),
    ];
    let (e, p) = t.phrase_longest_in(k, WEEKS, |w| w.0)?;
    Some((e, WEEKS[p].1))
}

const PERIOD_PHRASES: &[(&str, i32, u8)] = &[
    // (phrase, n, 0 = week, 1 = weekend, 2 = month, 3 = year)
    ("this week", 0, 0),
    ("next week", 1, 0),
    ("last week", -1, 0),
    ("the following week", 1, 0),
    ("the week after next", 2, 0),
    ("the week before last", -2, 0),
    ("this weekend", 0, 1),
    ("this coming weekend", 0, 1),
    ("the coming weekend", 0, 1),
    ("next weekend", 1, 1),
    ("last weekend", -1, 1),
    ("this month", 0, 2),
    ("next month", 1, 2),
    ("last month", -1, 2),
    ("the next month", 1, 2),
    ("the current month", 0, 2),
    ("current month", 0, 2),
    ("the following month", 1, 2),
    ("the previous month", -1, 2),
    ("the month after next", 2, 2),
    ("this year", 0, 3),
    ("next year", 1, 3),
    ("last year", -1, 3),
    ("the next year", 1, 3),
    ("the following year", 1, 3),
    ("the previous year", -1, 3),
];

/// this/next/last week|weekend|month|year|<month name>, the week after next, the weekend ...
pub(super) fn modified_period(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut best: Option<(usize, Atom)> = None;
    let mut offer = |e: usize, a: Atom| {
        if best.is_none_or(|(be, _)| e > be) {
            best = Some((e, a));
        }
    };
    for &(p, n, kind) in PERIOD_PHRASES {
        if let Some(e) = t.phrase(i, p) {
            let a = date_atom(|x| match kind {
                0 => x.week = Some(n),
                1 => {
                    x.weekend = true;
                    x.week = Some(n);
                }
                2 => x.month = Some(MonthSpec::Rel(n)),
                _ => x.year = Some(YearSpec::Rel(n)),
            });
            offer(e, a);
        }
    }
    for p in ["the weekend", "weekend"] {
        if let Some(e) = t.phrase(i, p) {
            offer(e, date_atom(|x| x.weekend = true));
        }
    }
    // "all weekend", "the whole weekend", "both weekend days": Saturday to Sunday
    if matches!((t.at(i), t.at(i + 1)), ('a', 'l') | ('t', 'h') | ('w', 'h') | ('b', 'o'))
        && (t.at(i) != 't' || t.phrase_longest(t.skip_ws(i + 3), &["whole", "entire"]).is_some())
    {
        const BOTH: &[&str] = &[
            "all weekend", "all weekend long", "the whole weekend", "the entire weekend", "whole weekend",
            "both weekend days", "both days of the weekend",
        ];
        if let Some((e, _)) = t.phrase_longest(i, BOTH) {
            offer(
                e,
                date_atom(|x| {
                    x.weekend = true;
                    x.weekend_both = true;
                }),
            );
        }
    }
    // "this past weekend", "the weekend after next"
    let second = t.phrase_longest(i, &["this", "the"]).map(|(x, _)| t.at(t.skip_ws(x)));
    if matches!(second, Some('p' | 'w')) || matches!((t.at(i), t.at(i + 1)), ('p', 'a') | ('w', 'e')) {
        const RARE: &[(&str, i32)] = &[
            ("this past weekend", -1),
            ("the past weekend", -1),
            ("past weekend", -1),
            ("the weekend after next", 2),
            ("weekend after next", 2),
        ];
        if let Some((e, k)) = t.phrase_longest_in(i, RARE, |r| r.0) {
            let n = RARE[k].1;
            offer(
                e,
                date_atom(|x| {
                    x.weekend = true;
                    x.week = Some(n);
                }),
            );
        }
    }
    if let Some((e, a)) = month_after_modifier(t, i) {
        offer(e, a);
    }
    best
}

/// "next march", "last may", "this june": the month after or before the current one, or this
/// year's.
fn month_after_modifier(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (e, k) = t.phrase_longest(i, &["next", "last", "this"])?;
    let k2 = t.skip_ws(e);
    let (m, e2, _) = month_name(t, k2).filter(|_| k2 > e)?;
    let spec = match k {
        0 => MonthSpec::NextAbs(m),
        1 => MonthSpec::LastAbs(m),
        _ => MonthSpec::Abs(m),
    };
    Some((e2, date_atom(|x| x.month = Some(spec))))
}

const PART_OF_PERIODS: &[(&str, i32, bool)] = &[
    ("the month", 0, false),
    ("month", 0, false),
    ("this month", 0, false),
    ("the current month", 0, false),
    ("next month", 1, false),
    ("the next month", 1, false),
    ("last month", -1, false),
    ("the year", 0, true),
    ("year", 0, true),
    ("this year", 0, true),
    ("next year", 1, true),
    ("last year", -1, true),
];

// "end of the week" = its Friday (the end of the working week), "start of next week" = its
// Monday, "middle of the week" = its Wednesday; Friday and Wednesday are a convention
const PART_OF_WEEKS: &[(&str, i32)] = &[
    ("the week", 0),
    ("week", 0),
    ("this week", 0),
    ("the current week", 0),
    ("next week", 1),
    ("the next week", 1),
    ("the following week", 1),
    ("last week", -1),
];

/// end of the month, beginning of next month, the end of march, end of the year.
pub(super) fn month_part(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut j = i;
    if let Some(e) = t.phrase(i, "the") {
        j = t.skip_ws(e);
    }
    let (e, k) = t.phrase_longest(
        j,
        &["end of", "beginning of", "start of", "middle of", "mid", "last day of", "first day of", "final day of"],
    )?;
    let part = [
        MonthPart::End,
        MonthPart::Begin,
        MonthPart::Begin,
        MonthPart::Mid,
        MonthPart::Mid,
        MonthPart::End,
        MonthPart::Begin,
        MonthPart::End,
    ][k];
    let k2 = t.skip_ws(if t.at(e) == '-' { e + 1 } else { e });
    let mut d = DateParts {
        part: Some(part),
        ..Default::default()
    };
    if k < 5
        && let Some((e2, p)) = t.phrase_longest_in(k2, PART_OF_WEEKS, |x| x.0)
    {
        d.week = Some(PART_OF_WEEKS[p].1);
        d.weekday = Some(match part {
            MonthPart::Begin => 0,
            MonthPart::Mid => 2,
            _ => 4,
        });
        d.guessed = part != MonthPart::Begin;
        d.part = None;
        return Some((e2, Atom::Date(d)));
    }
    if let Some((e2, p)) = t.phrase_longest_in(k2, PART_OF_PERIODS, |x| x.0) {
        let (_, n, is_year) = PART_OF_PERIODS[p];
        if is_year {
            let m = match part {
                MonthPart::End => 12,
                MonthPart::Begin => 1,
                _ => return None,
            };
            d.month = Some(MonthSpec::Abs(m));
            d.year = Some(YearSpec::Rel(n));
        } else {
            d.month = Some(MonthSpec::Rel(n));
        }
        return Some((e2, Atom::Date(d)));
    }
    let (m, e2, _) = month_name(t, k2)?;
    d.month = Some(MonthSpec::Abs(m));
    Some((e2, Atom::Date(d)))
}

/// "next business week", "this work week", "the working week": the Monday to Friday of that week.
pub(super) fn business_week(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (e, k) = t.phrase_longest(i, &["this", "next", "last", "the"])?;
    let k2 = t.skip_ws(e);
    let x = t.phrase_longest(k2, &["business week", "work week", "working week", "workweek"]).filter(|_| k2 > e)?.0;
    let w = [0, 1, -1, 0][k];
    Some((
        x,
        date_atom(|d| {
            d.week = Some(w);
            d.week_half = Some(4);
        }),
    ))
}
