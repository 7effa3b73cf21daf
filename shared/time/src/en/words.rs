//! The English vocabulary every phrase family shares: weekday and month names (with their
//! abbreviations), units of time, glue words (at, on, of, to, from, between), day numbers and the
//! year that may follow a date.

use crate::digits::meridiem;
use crate::numerals::{ascii_int, en_year_words};
use crate::segment::SegKind;
use crate::text::Text;
use crate::types::{
    Atom, Best, Conn, Glue, MonthSpec, Prefix, SegAtom, Unit,
    YearSpec, date_atom,
};


/// Chat spellings that start with a digit: 2day, 2moro, 2morrow, 2mrw, 2nite, 2night.
pub(crate) fn digit_shorthand(t: &Text, i: usize) -> Option<(usize, Atom)> {
    const WORDS: &[(&str, i32, bool)] = &[
        ("2day", 0, false),
        ("2moro", 1, false),
        ("2morro", 1, false),
        ("2morrow", 1, false),
        ("2morow", 1, false),
        ("2mrw", 1, false),
        ("2mro", 1, false),
        ("2nite", 0, true),
        ("2night", 0, true),
    ];
    let (e, k) = t.phrase_longest_in(i, WORDS, |w| w.0)?;
    // "a 2day workshop" is a length
    if k == 0 && t.prev_word(i).is_some_and(|w| t.word_eq(w, "a") || t.word_eq(w, "the")) {
        return None;
    }
    let (_, d, night) = WORDS[k];
    Some((e, if night { seg(SegKind::Evening, Some(d)) } else { date_atom(|x| x.rel_day = Some(d)) }))
}

/// The word before `i` (after at least one space) names a day: today, tomorrow, yesterday (and
/// their short forms), or a weekday.
pub(super) fn after_day_word(t: &Text, i: usize) -> bool {
    let mut j = i;
    while j > 0 && t.at(j - 1).is_whitespace() {
        j -= 1;
    }
    if j == i {
        return false;
    }
    let end = j;
    if t.before(j) == '.' {
        j -= 1;
    }
    while j > 0 && t.at(j - 1).is_ascii_alphanumeric() {
        j -= 1;
    }
    if j + 1 >= end {
        return false;
    }
    let ends = |x: Option<usize>| x == Some(end);
    weekday_name(t, j).is_some_and(|(_, e, plural, _)| e == end && !plural)
        || ["today", "tomorrow", "yesterday"].iter().any(|w| ends(t.phrase(j, w)))
        || ends(digit_shorthand(t, j).map(|x| x.0))
}

pub(super) fn seg(kind: SegKind, day: Option<i32>) -> Atom {
    Atom::Seg(SegAtom {
        kind,
        day,
        daily: false,
    })
}

/// Glue and connectors ("at", "on", "to", "from", "between", "around") and "now".
#[inline]
pub(super) fn glue_words(t: &Text, i: usize, best: &mut Best) {
    for p in ["now", "right now"] {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, Atom::Now);
        }
    }
    const GLUE: &[(&str, Atom)] = &[
        ("at", Atom::Glue(Glue::At)),
        // "tomorrow by 5pm", "friday by eod": the deadline's day and hour ("by 5" alone stays a number)
        ("by", Atom::Glue(Glue::Soft)),
        ("on", Atom::Glue(Glue::Soft)),
        ("of", Atom::Glue(Glue::Soft)),
        ("for", Atom::Glue(Glue::Dur)),
        ("lasting", Atom::Glue(Glue::Dur)),
        ("to", Atom::Conn(Conn::To)),
        ("till", Atom::Conn(Conn::To)),
        ("til", Atom::Conn(Conn::To)),
        ("until", Atom::Conn(Conn::To)),
        ("through", Atom::Conn(Conn::To)),
        ("thru", Atom::Conn(Conn::To)),
        ("and", Atom::Conn(Conn::And)),
        ("from", Atom::Prefix(Prefix::From)),
        ("between", Atom::Prefix(Prefix::Between)),
    ];
    for &(p, a) in GLUE {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, a);
        }
    }
    // "call dr lee @ 3 tmrw": "@" is "at".
    if t.at(i) == '@' {
        best.offer(i + 1, Atom::Glue(Glue::At));
    }
    if matches!((t.at(i), t.at(i + 1)), ('a', 'r' | 'b' | 'p') | ('r', 'o') | ('c', 'i')) {
        for p in ["around", "about", "approximately", "approx", "roughly", "circa"] {
            if let Some(e) = t.phrase(i, p) {
                best.offer(e, Atom::Glue(Glue::Approx));
            }
        }
    }
}

/// Weekday name at `i`: (0 = Monday, end, plural, ambiguous abbreviation).
pub(crate) fn weekday_name(t: &Text, i: usize) -> Option<(u8, usize, bool, bool)> {
    const FULL: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    const ABBR: &[(&str, u8, bool)] = &[
        ("mon", 0, true),
        ("tue", 1, false),
        ("tues", 1, false),
        ("wed", 2, true),
        ("weds", 2, false),
        ("thu", 3, false),
        ("thur", 3, false),
        ("thurs", 3, false),
        ("fri", 4, false),
        ("sat", 5, true),
        ("sun", 6, true),
    ];
    if !t.word_start(i) {
        return None;
    }
    for (k, w) in FULL.iter().enumerate() {
        if let Some(e) = t.lit(i, w) {
            if t.at(e) == 's' && !t.is_alnum(e + 1) {
                return Some((k as u8, e + 1, true, false));
            }
            if !t.is_alnum(e) {
                return Some((k as u8, e, false, false));
            }
        }
    }
    let mut found = None;
    for &(w, k, weak) in ABBR {
        if let Some(e) = t.lit(i, w)
            && !t.is_alnum(e)
            && found.is_none_or(|(_, fe, _, _)| e > fe)
        {
            let e2 = if t.at(e) == '.' { e + 1 } else { e };
            found = Some((k, e2, false, weak));
        }
    }
    found
}

/// Month name at `i`: (month, end, ambiguous).
pub(crate) fn month_name(t: &Text, i: usize) -> Option<(u32, usize, bool)> {
    const FULL: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    const ABBR: &[(&str, u32)] = &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("sept", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ];
    if !t.word_start(i) {
        return None;
    }
    for (k, w) in FULL.iter().enumerate() {
        if let Some(e) = t.lit(i, w)
            && !t.is_alnum(e)
        {
            return Some((k as u32 + 1, e, k == 2 || k == 4));
        }
    }
    let mut found = None;
    for &(w, m) in ABBR {
        if let Some(e) = t.lit(i, w)
            && !t.is_alnum(e)
            && found.is_none_or(|(_, fe, _)| e > fe)
        {
            let e2 = if t.at(e) == '.' { e + 1 } else { e };
            found = Some((m, e2, m == 3));
        }
    }
    found
}

const CONTEXT_WORDS: &[&str] = &[
    "on", "next", "last", "this", "every", "until", "till", "by", "from", "to", "before", "after",
    "in", "of", "since", "during", "early", "late", "mid", "end", "through", "coming", "each",
    "for", "at",
];

pub(super) fn prev_word_is_context(t: &Text, i: usize) -> bool {
    match t.prev_word(i) {
        Some(w) => CONTEXT_WORDS.iter().any(|c| t.word_eq(w, c)),
        None => false,
    }
}

/// Day number with optional ordinal suffix: (day, end). Rejects clock-like numbers.
pub(super) fn day_number(t: &Text, i: usize) -> Option<(u32, usize)> {
    let (d, e, n) = ascii_int(t, i)?;
    if n > 2 || !(1..=31).contains(&d) {
        return None;
    }
    let e2 = match t.lit_longest(e, &["st", "nd", "rd", "th"]) {
        Some((e2, _)) if !t.is_alnum(e2) => e2,
        _ => {
            if t.at(e).is_ascii_alphabetic() {
                return None;
            }
            e
        }
    };
    if e2 == e {
        // "march 3:30", "march 3pm", "march 3 days"
        if t.at(e) == ':'
            || t.at(e) == '.' && t.at(e + 1).is_ascii_digit()
            || meridiem(t, e).is_some()
        {
            return None;
        }
        let k = t.skip_ws(e);
        if t.phrase_longest(k, O_CLOCK).is_some() || unit_word(t, k).is_some() {
            return None;
        }
    }
    Some((d, e2))
}

/// Optional ", 2015" / " 2015" / " in 2027" / " twenty twenty-seven" after a date: (year, end).
pub(super) fn trailing_year(t: &Text, e: usize) -> Option<(i32, usize)> {
    let mut k = e;
    if t.at(k) == ',' {
        k += 1;
    }
    let mut k = t.skip_ws(k);
    if k > e
        && let Some(x) = t.phrase(k, "in").or_else(|| t.phrase(k, "of"))
        && t.skip_ws(x) > x
    {
        k = t.skip_ws(x);
    }
    if let Some((y, e2, n)) = ascii_int(t, k) {
        if n != 4 || !(1900..=2200).contains(&y) || t.at(e2) == ':' {
            return None;
        }
        return Some((y as i32, e2));
    }
    if k == e {
        return None;
    }
    en_year_words(t, k).filter(|(y, _)| (1900..=2200).contains(y))
}

pub(super) fn ymd_atom(year: Option<i32>, m: u32, d: Option<u32>) -> Atom {
    date_atom(|x| {
        x.year = year.map(YearSpec::Abs);
        x.month = Some(MonthSpec::Abs(m));
        x.day = d;
    })
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum EnUnit {
    Minute,
    Hour,
    Cal(Unit),
}

/// Unit word: (unit, end, multiplier) — fortnight = 2 weeks.
pub(crate) fn unit_word(t: &Text, i: usize) -> Option<(EnUnit, usize, u32)> {
    const UNITS: &[(&str, EnUnit, u32)] = &[
        ("minutes", EnUnit::Minute, 1),
        ("minute", EnUnit::Minute, 1),
        ("mins", EnUnit::Minute, 1),
        ("min", EnUnit::Minute, 1),
        ("hours", EnUnit::Hour, 1),
        ("hour", EnUnit::Hour, 1),
        ("hrs", EnUnit::Hour, 1),
        ("hr", EnUnit::Hour, 1),
        ("days", EnUnit::Cal(Unit::Day), 1),
        ("day", EnUnit::Cal(Unit::Day), 1),
        ("business days", EnUnit::Cal(Unit::BusinessDay), 1),
        ("business day", EnUnit::Cal(Unit::BusinessDay), 1),
        ("working days", EnUnit::Cal(Unit::BusinessDay), 1),
        ("working day", EnUnit::Cal(Unit::BusinessDay), 1),
        ("workdays", EnUnit::Cal(Unit::BusinessDay), 1),
        ("workday", EnUnit::Cal(Unit::BusinessDay), 1),
        ("weeks", EnUnit::Cal(Unit::Week), 1),
        ("week", EnUnit::Cal(Unit::Week), 1),
        ("fortnights", EnUnit::Cal(Unit::Week), 2),
        ("fortnight", EnUnit::Cal(Unit::Week), 2),
        ("months", EnUnit::Cal(Unit::Month), 1),
        ("month", EnUnit::Cal(Unit::Month), 1),
        ("years", EnUnit::Cal(Unit::Year), 1),
        ("year", EnUnit::Cal(Unit::Year), 1),
    ];
    let (e, k) = t.phrase_longest_in(i, UNITS, |u| u.0)?;
    Some((UNITS[k].1, e, UNITS[k].2))
}

/// A vulgar fraction character as hundredths.
pub(super) fn fraction(c: char) -> Option<u32> {
    match c {
        '¼' => Some(25),
        '½' => Some(50),
        '¾' => Some(75),
        _ => None,
    }
}

/// "o'clock" as people type it: with either apostrophe, without one, or with a space for it.
pub(super) const O_CLOCK: &[&str] = &["o'clock", "oclock", "o’clock", "o clock"];
