//! Calendar dates: march 3, 5 march 2026, the 20th of april, 17-sep-2027, 2027 oct 2, in 2027.

use crate::numerals::{ascii_int, en_ordinal};
use crate::text::Text;
use crate::types::{
    Atom, YearSpec, date_atom,
};
use super::periods::month_reference;
use super::words::{day_number, month_name, prev_word_is_context, trailing_year, weekday_name, ymd_atom};

/// "2027 Oct 2", "2027 march 5th": a year, then a month name and a day.
pub(super) fn year_first_date(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (y, e, n) = ascii_int(t, i)?;
    if n != 4 || !(1900..=2199).contains(&y) {
        return None;
    }
    let k = t.skip_ws(e);
    let (m, e2, _) = month_name(t, k).filter(|_| k > e)?;
    let k2 = t.skip_ws(e2);
    let (d, e3) = day_number(t, k2).filter(|_| k2 > e2)?;
    Some((e3, ymd_atom(Some(y as i32), m, Some(d))))
}

/// A year alone after in/during/by/until/since/of: "in 2017", "by 2030" (elsewhere four digits
/// may be a count).
pub(super) fn year_after_preposition(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (y, e, n) = ascii_int(t, i)?;
    if n != 4 || !(1900..=2199).contains(&y) || t.is_alnum(e) || matches!(t.at(e), ':' | '.' | '-' | '/') {
        return None;
    }
    let prev = t.prev_word(i)?;
    if !["in", "during", "by", "until", "till", "since", "of", "before", "after", "from"].iter().any(|w| t.word_eq(prev, w)) {
        return None;
    }
    // "in 2027, ...", "in 2027 we ...", not "in 2000 steps": only a function word may follow
    const FOLLOW: &[&str] = &[
        "i", "we", "you", "he", "she", "they", "it", "the", "a", "and", "or", "to", "for", "at", "on", "in",
        "when", "with", "so", "but", "there", "then", "is", "was", "will",
    ];
    let k = t.skip_ws(e);
    if t.at(k).is_ascii_alphanumeric() && !FOLLOW.iter().any(|w| t.phrase(k, w).is_some()) {
        return None;
    }
    Some((e, date_atom(|d| d.year = Some(YearSpec::Abs(y as i32)))))
}

/// march 3, Mar 5th, Feb 8 2026, April 14, 2015, february the 15th, march 2026, (in) march.
pub(super) fn month_first_date(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (m, e, weak) = month_name(t, i)?;
    if t.at(e) == '-'
        && let Some((d, e2, _)) = ascii_int(t, e + 1)
        && (1..=31).contains(&d)
        && t.at(e2) == '-'
        && let Some((y, e3, 4)) = ascii_int(t, e2 + 1)
    {
        // "Sep-17-2027"
        return Some((e3, ymd_atom(Some(y as i32), m, Some(d))));
    }
    let k = t.skip_ws(e);
    if k > e || t.at(e) == '.' {
        let k2 = t.phrase(k, "the").map(|x| t.skip_ws(x)).unwrap_or(k);
        // "march 3", "march 3rd", "march second", "march the twenty-second"
        let day = day_number(t, k2).or_else(|| en_ordinal(t, k2).filter(|(d, _)| *d <= 31));
        if let Some((d, e2)) = day {
            if let Some((y, e3)) = trailing_year(t, e2) {
                return Some((e3, ymd_atom(Some(y), m, Some(d))));
            }
            return Some((e2, ymd_atom(None, m, Some(d))));
        }
        if let Some((y, e2)) = trailing_year(t, e) {
            return Some((e2, ymd_atom(Some(y), m, None)));
        }
    }
    // a month name alone needs context ("in march", "until may", "march next year")
    let year_after = k > e && t.phrase_longest(k, &["next year", "last year", "this year"]).is_some();
    if weak && !prev_word_is_context(t, i) && !year_after {
        return None;
    }
    if !weak && !prev_word_is_context(t, i) && t.prev_word(i).is_some_and(|w| t.word_eq(w, "the") || t.word_eq(w, "a") || t.word_eq(w, "an")) {
        return None;
    }
    Some((e, ymd_atom(None, m, None)))
}

/// 24th October, 5 March 2026, 15th of march.
pub(super) fn day_first_date(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (d, e) = day_number(t, i).or_else(|| en_ordinal(t, i))?;
    let mut k = t.skip_ws(e);
    let dashed = k == e && t.at(e) == '-';
    if dashed {
        // "17-Sep-2027"
        k = e + 1;
    } else if k == e {
        return None;
    }
    let mut of = false;
    // "15th of next month", "15th in next month"
    if let Some(x) = t.phrase(k, "of").or_else(|| t.phrase(k, "in")) {
        k = t.skip_ws(x);
        of = true;
    }
    if of
        && month_name(t, k).is_none()
        && let Some((e3, (month, year))) = month_reference(t, k)
    {
        // "first of next month", "15th of this month"
        return Some((e3, date_atom(|x| {
            x.day = Some(d);
            x.month = Some(month);
            x.year = year;
        })));
    }
    let (m, e2, _) = month_name(t, k)?;
    if dashed {
        let (y, e3, n) = ascii_int(t, e2 + 1).filter(|_| t.at(e2) == '-')?;
        return (n == 4).then(|| (e3, ymd_atom(Some(y as i32), m, Some(d))));
    }
    if let Some((y, e3)) = trailing_year(t, e2) {
        return Some((e3, ymd_atom(Some(y), m, Some(d))));
    }
    Some((e2, ymd_atom(None, m, Some(d))))
}

/// "5th", "20th" (ordinal suffix required).
pub(super) fn ordinal_day(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (d, e, n) = ascii_int(t, i)?;
    if n > 2 || !(1..=31).contains(&d) {
        return None;
    }
    let (e2, _) = t.lit_longest(e, &["st", "nd", "rd", "th"])?;
    if t.is_alnum(e2) {
        return None;
    }
    Some((e2, date_atom(|x| x.day = Some(d))))
}

/// "the 5th", "the 20th of march".
pub(super) fn the_day(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let k = t.phrase(i, "the")?;
    let k = t.skip_ws(k);
    let (d, e2) = en_ordinal(t, k)?;
    if !(1..=31).contains(&d) {
        return None;
    }
    // "the second" in words is a day only as one: after a weekday or "on", or before "of <month>"
    let in_words = !t.at(k).is_ascii_digit();
    let after_weekday_or_on = t.prev_word(i).is_some_and(|w| t.word_eq(w, "on") || weekday_name(t, w.0).is_some());
    // "the 20th of march"
    let k2 = t.skip_ws(e2);
    if let Some(x) = t.phrase(k2, "in")
        && let Some((e3, (month, year))) = month_reference(t, t.skip_ws(x)).filter(|_| month_name(t, t.skip_ws(x)).is_none())
    {
        // "the 3rd in next month": "in" only before a relative month ("the 5th in march" is two)
        return Some((e3, date_atom(|x| {
            x.day = Some(d);
            x.month = Some(month);
            x.year = year;
        })));
    }
    if let Some(x) = t.phrase(k2, "of") {
        let k3 = t.skip_ws(x);
        if let Some((m, e3, _)) = month_name(t, k3) {
            if let Some((y, e4)) = trailing_year(t, e3) {
                return Some((e4, ymd_atom(Some(y), m, Some(d))));
            }
            return Some((e3, ymd_atom(None, m, Some(d))));
        }
        if let Some((e3, month)) = month_reference(t, k3) {
            // "the 11th of next month"
            return Some((e3, date_atom(|x| {
                x.day = Some(d);
                x.month = Some(month.0);
                x.year = month.1;
            })));
        }
    }
    if in_words && !after_weekday_or_on {
        return None;
    }
    Some((e2, date_atom(|x| x.day = Some(d))))
}
