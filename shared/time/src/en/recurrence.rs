//! Recurrences: every day, weekly, every other week, every 3 days, every 20th of the month, once a
//! month, every half hour.

use crate::numerals::{ascii_int, en_number_word, en_ordinal};
use crate::text::Text;
use crate::types::{
    Atom, DateParts, Freq,
    Recur, Unit, date_atom,
};
use super::dates::ordinal_day;
use super::words::{EnUnit, unit_word};

/// every day, daily, every weekday, weekdays, weekly, every month, monthly, every year,
/// every other day, every 2 weeks, hourly, biweekly, every weekend.
/// Recurrences written as fixed phrases: (phrase, frequency, interval, weekdays).
const FIXED: &[(&str, Freq, u32, u8)] = &[
    ("every day", Freq::Daily, 1, 0),
    ("everyday", Freq::Daily, 1, 0),
    ("each day", Freq::Daily, 1, 0),
    ("daily", Freq::Daily, 1, 0),
    ("every weekday", Freq::Weekly, 1, Recur::WORKDAYS),
    ("every workday", Freq::Weekly, 1, Recur::WORKDAYS),
    ("weekdays", Freq::Weekly, 1, Recur::WORKDAYS),
    ("workdays", Freq::Weekly, 1, Recur::WORKDAYS),
    ("every weekend", Freq::Weekly, 1, Recur::WEEKEND),
    ("weekends", Freq::Weekly, 1, Recur::WEEKEND),
    ("every week", Freq::Weekly, 1, 0),
    ("each week", Freq::Weekly, 1, 0),
    ("weekly", Freq::Weekly, 1, 0),
    ("biweekly", Freq::Weekly, 2, 0),
    ("bi-weekly", Freq::Weekly, 2, 0),
    ("fortnightly", Freq::Weekly, 2, 0),
    ("every month", Freq::Monthly, 1, 0),
    ("each month", Freq::Monthly, 1, 0),
    ("monthly", Freq::Monthly, 1, 0),
    ("every year", Freq::Yearly, 1, 0),
    ("yearly", Freq::Yearly, 1, 0),
    ("annually", Freq::Yearly, 1, 0),
    ("every hour", Freq::Hourly, 1, 0),
    ("every half hour", Freq::Minutely, 30, 0),
    ("every half an hour", Freq::Minutely, 30, 0),
    ("every quarter hour", Freq::Minutely, 15, 0),
    ("every quarter of an hour", Freq::Minutely, 15, 0),
    ("hourly", Freq::Hourly, 1, 0),
    ("every other day", Freq::Daily, 2, 0),
    ("every other week", Freq::Weekly, 2, 0),
    ("every other month", Freq::Monthly, 2, 0),
    ("every other year", Freq::Yearly, 2, 0),
    ("every quarter", Freq::Monthly, 3, 0),
    ("each quarter", Freq::Monthly, 3, 0),
    ("semiannually", Freq::Monthly, 6, 0),
    ("every six months", Freq::Monthly, 6, 0),
];

// rarer phrases behind a test of their first letters (a near miss of a table entry costs a
// look-up of abbreviations)
const RARE: &[(&str, Freq, u32, u8)] = &[
    ("each weekday", Freq::Weekly, 1, Recur::WORKDAYS),
    ("once a day", Freq::Daily, 1, 0),
    ("once a week", Freq::Weekly, 1, 0),
    ("once a month", Freq::Monthly, 1, 0),
    ("once a year", Freq::Yearly, 1, 0),
    ("once every two weeks", Freq::Weekly, 2, 0),
    ("once every other week", Freq::Weekly, 2, 0),
];


pub(super) fn recurrence(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let rare = matches!((t.at(i), t.at(i + 1), t.at(i + 2)), ('o', 'n', 'c') | ('e', 'a', 'c'));
    let mut best: Option<(usize, Atom)> = None;
    if let Some((e, k)) = if rare { t.phrase_longest_in(i, RARE, |f| f.0) } else { t.phrase_longest_in(i, FIXED, |f| f.0) } {
        let (_, freq, interval, byday) = if rare { RARE[k] } else { FIXED[k] };
        let r = Recur {
            freq,
            interval,
            byday,
            last_day: false,
        };
        best = Some((e, date_atom(|x| x.recur = Some(r))));
    }
    // every 3 days / every 2 weeks / every second week / every 3rd day / every 15th of the month
    if let Some(x) = every_interval(t, i)
        && best.is_none_or(|(be, _)| x.0 > be)
    {
        best = Some(x);
    }
    best
}

/// "every" and an interval: "every 3 days", "every second week", "every 15th (of the month)".
fn every_interval(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let e = t.phrase(i, "every")?;
    let mut best: Option<(usize, Atom)> = None;
    let k = t.skip_ws(e);
    // "every 15th of the month", "every 1st": a day of every month
    let k_day = t.phrase(k, "the").map_or(k, |x| t.skip_ws(x));
    if let Some((d, e2)) = ordinal_day(t, k_day).and_then(|(e2, a)| match a {
        Atom::Date(DateParts { day: Some(d), .. }) => Some((d, e2)),
        _ => None,
    }) {
        let k2 = t.skip_ws(e2);
        let e3 = t
            .phrase_longest(k2, &["of the month", "of each month", "of every month", "of month"])
            .map_or(e2, |x| x.0);
        let r = Recur::new(Freq::Monthly);
        best = Some((e3, date_atom(|x| {
            x.recur = Some(r);
            x.day = Some(d);
        })));
    }
    let n = if t.at(k).is_ascii_digit() {
        ascii_int(t, k).map(|(v, e, _)| (v, e))
    } else {
        en_number_word(t, k)
    };
    let n = en_ordinal(t, k).filter(|(v, _)| *v >= 2).or(n);
    if let Some((n, e2)) = n {
        let k2 = t.skip_ws(e2);
        if let Some((u, e3, mult)) = unit_word(t, k2) {
            let freq = match u {
                EnUnit::Cal(Unit::BusinessDay) => None,
                EnUnit::Minute => Some(Freq::Minutely),
                EnUnit::Hour => Some(Freq::Hourly),
                EnUnit::Cal(Unit::Day) => Some(Freq::Daily),
                EnUnit::Cal(Unit::Week) => Some(Freq::Weekly),
                EnUnit::Cal(Unit::Month) => Some(Freq::Monthly),
                EnUnit::Cal(Unit::Year) => Some(Freq::Yearly),
            };
            if let Some(freq) = freq
                && (1..=1000).contains(&n)
                && best.is_none_or(|(be, _)| e3 > be)
            {
                let r = Recur {
                    freq,
                    interval: n * mult,
                    byday: 0,
                    last_day: false,
                };
                best = Some((e3, date_atom(|x| x.recur = Some(r))));
            }
        }
    }
    best
}
