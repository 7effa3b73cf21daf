//! Digit-based forms shared by both languages: 2026-03-05, 2026/3/5, 3/5, 4/25/2026, 6·30, 09-01,
//! 15:30, 3:30 pm, 3pm, 9a.

use super::numerals::ascii_int;
use super::text::Text;
use super::types::{Atom, Best, Clock, Mer, YearSpec, date_atom};

pub(crate) fn lex(t: &Text, i: usize, best: &mut Best) {
    let c = t.at(i);
    if !c.is_ascii_digit() {
        return;
    }
    let b = t.before(i);
    if b.is_ascii_digit() || b == ':' || b.is_ascii_alphabetic() {
        return;
    }
    best.offer_opt(ymd(t, i));
    best.offer_opt(day_month_year(t, i));
    best.offer_opt(month_day(t, i));
    best.offer_opt(clock(t, i));
}

fn valid_md(m: u32, d: u32) -> bool {
    (1..=12).contains(&m) && (1..=31).contains(&d)
}

/// Skip an optional 号/日 after a numeric day.
fn day_suffix(t: &Text, e: usize) -> usize {
    if matches!(t.at(e), '号' | '日') {
        e + 1
    } else {
        e
    }
}

/// 2026-03-05, 2026/3/5, 2026.3.5, 2027 03 15 (4-digit year first; with spaces only as
/// YYYY MM DD, two digits each).
fn ymd(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (y, e1, n1) = ascii_int(t, i)?;
    if n1 != 4 {
        return None;
    }
    let sep = t.at(e1);
    if !matches!(sep, '-' | '/' | '.' | ' ') {
        return None;
    }
    let (m, e2, n2) = ascii_int(t, e1 + 1)?;
    if n2 > 2 || t.at(e2) != sep {
        return None;
    }
    let (d, e3, n3) = ascii_int(t, e2 + 1)?;
    if n3 > 2 || !valid_md(m, d) {
        return None;
    }
    if sep == ' ' && (n2 != 2 || n3 != 2 || !(1900..=2200).contains(&y) || t.at(e3) == ':') {
        return None;
    }
    let e = day_suffix(t, e3);
    Some((
        e,
        date_atom(|p| {
            p.year = Some(YearSpec::Abs(y as i32));
            p.month = Some(super::types::MonthSpec::Abs(m));
            p.day = Some(d);
        }),
    ))
}

/// Day, month and a 4-digit year: 24.12.2027, 24-12-2027, 25/12/2027, 4/25/2026. A part over 12
/// is the day; when both could be the month, dots and dashes put the day first (24.12.2027,
/// 05.04.2027 = 5 April) and slashes the month first (4/5/2027 = 5 April in the US order) - the
/// one reading of these that is a guess.
fn day_month_year(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (a, e1, n1) = ascii_int(t, i)?;
    let sep = t.at(e1);
    if n1 > 2 || !matches!(sep, '.' | '-' | '/') {
        return None;
    }
    let (b, e2, n2) = ascii_int(t, e1 + 1)?;
    if n2 > 2 || t.at(e2) != sep {
        return None;
    }
    let (y, e3, n3) = ascii_int(t, e2 + 1)?;
    if n3 != 4 || t.at(e3) == sep || t.at(e3) == ':' {
        return None;
    }
    let (m, d) = if a > 12 || (b <= 12 && sep != '/') { (b, a) } else { (a, b) };
    if !valid_md(m, d) {
        return None;
    }
    let ambiguous = a <= 12 && b <= 12 && a != b;
    Some((
        day_suffix(t, e3),
        date_atom(|p| {
            p.year = Some(YearSpec::Abs(y as i32));
            p.month = Some(super::types::MonthSpec::Abs(m));
            p.day = Some(d);
            p.guessed = ambiguous;
        }),
    ))
}

/// 3/5, 11/3号, 4/25/2026, 6·30, 09-01 (month first; MM-DD only with a leading zero, so that
/// "10-20" stays a range of numbers).
fn month_day(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (m, e1, n1) = ascii_int(t, i)?;
    if n1 > 2 {
        return None;
    }
    let sep = t.at(e1);
    if !matches!(sep, '/' | '·' | '-' | '.') {
        return None;
    }
    let (d, e2, n2) = ascii_int(t, e1 + 1)?;
    // "25/4": a first part over 12 is the day
    let (m, d) = if sep == '/' && m > 12 && d <= 12 { (d, m) } else { (m, d) };
    if n2 > 2 || !valid_md(m, d) {
        return None;
    }
    let next = t.at(e2);
    let mut year = None;
    let mut e = e2;
    match sep {
        '/'
            if next == '/' => {
                let (y, e3, n3) = ascii_int(t, e2 + 1)?;
                let y = match n3 {
                    4 => y as i32,
                    2 => 2000 + y as i32,
                    _ => return None,
                };
                year = Some(y);
                e = e3;
            }
        '-' => {
            // only MM-DD written with two digits each, and not a range of hours
            if n1 != 2 || n2 != 2 || !(t.at(i) == '0' || t.at(e1 + 1) == '0') {
                return None;
            }
            if next == '-' || next == ':' || next.is_ascii_alphabetic() || matches!(next, '点' | '时') {
                return None;
            }
        }
        '.'
            // 3.5 is a number; only accept with 号/日 after it
            if !matches!(next, '号' | '日') => {
                return None;
            }
        _ => {}
    }
    if t.at(e).is_ascii_digit() || matches!(t.at(e), ':' | '点' | '时') {
        return None;
    }
    let e = day_suffix(t, e);
    Some((
        e,
        date_atom(|p| {
            p.year = year.map(YearSpec::Abs);
            p.month = Some(super::types::MonthSpec::Abs(m));
            p.day = Some(d);
        }),
    ))
}

/// am/pm marker at `i` (after optional whitespace): "am", "pm", "a.m.", "p.m.", "a", "p".
pub(crate) fn meridiem(t: &Text, i: usize) -> Option<(Mer, usize)> {
    let j = t.skip_ws(i);
    let mer = match t.at(j) {
        'a' => Mer::Am,
        'p' => Mer::Pm,
        _ => return None,
    };
    // "a.m." / "p.m."
    if t.at(j + 1) == '.' && t.at(j + 2) == 'm' {
        let e = if t.at(j + 3) == '.' { j + 4 } else { j + 3 };
        if t.is_alnum(e) {
            return None;
        }
        return Some((mer, e));
    }
    if t.at(j + 1) == 'm' && !t.is_alnum(j + 2) {
        return Some((mer, j + 2));
    }
    // a bare "a"/"p" only glued to the number ("9a", "11p")
    if j == i && !t.is_alnum(j + 1) && t.at(j + 1) != '\'' {
        return Some((mer, j + 1));
    }
    None
}

/// Four digits as a 24-hour time: after "at" ("at 1500", "at 0930") or before "hours"/"hrs"/"h"
/// ("0900 hours", "1500h"); alone they are a year or a count.
fn military(t: &Text, i: usize, v: u32, e: usize) -> Option<(usize, Atom)> {
    let (h, m) = (v / 100, v % 100);
    if h > 23 || m > 59 {
        return None;
    }
    let k = t.skip_ws(e);
    let at_before = t.prev_word(i).is_some_and(|w| t.word_eq(w, "at"));
    let unit = if t.at(e) == 'h' && !t.is_alnum(e + 1) {
        Some(e + 1)
    } else if k > e && (t.at(i) == '0' || at_before) {
        // "0800 hours", "at 1500 hours" (not "worked 1500 hours")
        t.phrase_longest(k, &["hours", "hrs"]).map(|x| x.0)
    } else {
        None
    };
    let end = match unit {
        Some(x) => x,
        None if at_before
            && !t.at(e).is_ascii_alphanumeric()
            && t.at(e) != ':'
            && t.at(e) != '.'
            // "at 1500 tomorrow", not "at 2026 prices"
            && (!t.at(k).is_ascii_alphabetic()
                || t.phrase_longest(k, &["tomorrow", "today", "tonight", "on", "sharp"]).is_some()) =>
        {
            e
        }
        None => return None,
    };
    Some((
        end,
        Atom::Clock(Clock {
            h,
            m,
            has_min: m != 0,
            mer: None,
            absolute: true,
            padded: false,
            guessed: false,
        }),
    ))
}

/// 15:30, 3:30 pm, 09:00, 3pm, 3 pm, 9a.
fn clock(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (h, e1, n1) = ascii_int(t, i)?;
    if n1 == 4 {
        return military(t, i, h, e1);
    }
    if n1 > 2 || h > 24 {
        return None;
    }
    let leading_zero = n1 == 2 && t.at(i) == '0';
    // "7.45 pm": a dot only with am/pm after it (3.5 is a number), or after "at" ("at 9.30")
    let at_before = || t.prev_word(i).is_some_and(|w| t.word_eq(w, "at") || t.word_eq(w, "around"));
    let dotted = t.at(e1) == '.'
        && h <= 12
        && ascii_int(t, e1 + 1).is_some_and(|(m, e2, n2)| {
            n2 == 2 && m <= 59 && (meridiem(t, e2).is_some() || (!t.at(e2).is_ascii_alphanumeric() && t.at(e2) != '.' && at_before()))
        });
    if t.at(e1) == ':' || dotted {
        let (m, mut e2, n2) = ascii_int(t, e1 + 1)?;
        if n2 != 2 || m > 59 {
            return None;
        }
        // optional seconds
        if t.at(e2) == ':'
            && let Some((_, e3, 2)) = ascii_int(t, e2 + 1)
        {
            e2 = e3;
        }
        let mut c = Clock {
            h,
            m,
            has_min: true,
            mer: None,
            absolute: h > 12 || h == 0,
            padded: leading_zero,
            guessed: false,
        };
        let mut e = e2;
        if h <= 12
            && h > 0
            && let Some((mer, e3)) = meridiem(t, e2)
        {
            c.mer = Some(mer);
            c.absolute = false;
            e = e3;
        } else if t.at(e2) == 'h' && !t.is_alnum(e2 + 1) {
            // "15:00h"
            e = e2 + 1;
        }
        if h == 24 && m > 0 {
            return None;
        }
        return Some((e, Atom::Clock(c)));
    }
    if h == 0 || h > 12 {
        return None;
    }
    // "9ish", "around 3ish"
    if let Some(e) = t.lit(e1, "ish")
        && !t.is_alnum(e)
    {
        return Some((e, Atom::Clock(Clock::bare(h))));
    }
    let (mer, e) = meridiem(t, e1)?;
    Some((
        e,
        Atom::Clock(Clock {
            h,
            m: 0,
            has_min: false,
            mer: Some(mer),
            absolute: false,
            padded: false,
            guessed: false,
        }),
    ))
}
