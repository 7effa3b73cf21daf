//! Offsets and lengths: in 3 days, 2 weeks from now, 3 days ago, within the next hour, in 2-3 days,
//! a few weeks from now, for 90 minutes, 2h30, an hour and a half.

use crate::numerals::{ascii_decimal_hundredths, ascii_int, en_number_word};
use crate::text::Text;
use crate::types::{
    Atom, Unit, date_atom,
};
use super::words::{EnUnit, fraction, unit_word, weekday_name};

/// What stands before an amount of an offset: "in" (dir 1), or a span from now, "within", "in the
/// next", "over the next", "during the next", "in the coming", "the next", "next", "the coming"
/// (dir 1), or back to now, "the last", "the past", "past", "over/in/during/within the last/past"
/// (dir -1). (end, dir, span). "next 3 days" needs its number ("next week" is the week).
fn span_prefix(t: &Text, i: usize) -> Option<(usize, i32, bool)> {
    // the word after "the": next/coming forward, last/past back
    let after_the = |k: usize| -> Option<(usize, i32)> {
        let x = t.phrase(k, "the")?;
        let k2 = t.skip_ws(x);
        if k2 == x {
            return None;
        }
        if let Some((e, p)) = t.phrase_longest(k2, &["next", "coming", "last", "past"]) {
            return Some((e, if p < 2 { 1 } else { -1 }));
        }
        None
    };
    let first = match (t.at(i), t.at(i + 1)) {
        ('i', 'n') => t.phrase(i, "in"),
        ('w', 'i') => t.phrase(i, "within"),
        ('o', 'v') => t.phrase(i, "over"),
        ('d', 'u') => t.phrase(i, "during"),
        ('t', 'h') => return after_the(i).map(|(e, d)| (e, d, true)),
        ('n', 'e' | 'x') => return t.phrase(i, "next").map(|e| (e, 1, true)),
        ('p', 'a') => return t.phrase(i, "past").map(|e| (e, -1, true)),
        _ => None,
    }?;
    let k = t.skip_ws(first);
    if k > first
        && let Some((e, d)) = after_the(k)
    {
        return Some((e, d, true));
    }
    match t.at(i) {
        'i' => Some((first, 1, false)),
        'w' => Some((first, 1, true)),
        _ => None,
    }
}

/// Amount in hundredths: 3, 1.5, 1½, ¼, three, a, an, half a(n), a quarter (of an), three
/// quarters of an, a couple of, 2 and a half. The flag is true for the article alone ("a", "an").
fn amount(t: &Text, i: usize) -> Option<(u32, usize, bool)> {
    let mut article = false;
    let (mut v, mut e) = if let Some(f) = fraction(t.at(i)) {
        (f, i + 1)
    } else if t.at(i).is_ascii_digit() {
        let (v, e) = ascii_decimal_hundredths(t, i)?;
        match fraction(t.at(e)) {
            Some(f) => (v + f, e + 1),
            None => (v, e),
        }
    } else if let Some((e, _)) = matches!((t.at(i), t.at(i + 1), t.at(i + 2)), ('a', ' ', 'c') | ('c', 'o', 'u'))
        .then(|| t.phrase_longest(i, &["a couple of", "a couple", "couple of", "couple"]))
        .flatten()
    {
        // "a couple of days", "in a couple hours", "couple days from now"
        (200, e)
    } else if let Some((e, k)) = t.phrase_longest(
        i,
        &[
            "a",
            "an",
            "half a",
            "half an",
            "a half",
            "a quarter",
            "a quarter of a",
            "a quarter of an",
            "quarter of an",
            "three quarters",
            "three quarters of a",
            "three quarters of an",
        ],
    ) {
        article = k < 2;
        ([100, 100, 50, 50, 50, 25, 25, 25, 25, 75, 75, 75][k], e)
    } else {
        let (n, e) = en_number_word(t, i)?;
        (n * 100, e)
    };
    // "2 and a half hours", "three and a quarter hours"
    let k = t.skip_ws(e);
    if k > e
        && let Some((x, p)) = t.phrase_longest(k, &["and a half", "and a quarter"])
    {
        v += [50, 25][p];
        e = x;
        article = false;
    }
    Some((v, e, article))
}

/// A unit written right after the number: "2h", "30m", "45min", "1.5hrs", "3d", "2wk", "2h30",
/// "2h30m". (unit, end, multiplier, extra minutes).
fn glued_unit(t: &Text, e: usize) -> Option<(EnUnit, usize, u32, u32)> {
    const GLUED: &[(&str, EnUnit)] = &[
        ("h", EnUnit::Hour),
        ("hr", EnUnit::Hour),
        ("hrs", EnUnit::Hour),
        ("m", EnUnit::Minute),
        ("min", EnUnit::Minute),
        ("mins", EnUnit::Minute),
        ("d", EnUnit::Cal(Unit::Day)),
        ("wk", EnUnit::Cal(Unit::Week)),
        ("wks", EnUnit::Cal(Unit::Week)),
    ];
    let (x, k) = t.lit_longest_in(e, GLUED, |g| g.0)?;
    let unit = GLUED[k].1;
    if unit == EnUnit::Hour
        && let Some((m, x2, n)) = ascii_int(t, x)
        && n == 2
        && m < 60
    {
        // "2h30", "2h30m"
        let x3 = t.lit_longest(x2, &["m", "min", "mins"]).map_or(x2, |(x3, _)| x3);
        if !t.is_alnum(x3) {
            return Some((unit, x3, 1, m));
        }
    }
    if t.is_alnum(x) {
        return None;
    }
    Some((unit, x, 1, 0))
}

/// An amount and its unit as read: "in 2-3 days" = amt 200, hi 300, unit days, dir 1.
struct Measure {
    /// Hundredths of the unit, times its multiplier (a fortnight = 2 weeks).
    amt: u32,
    /// The upper end of an approximate amount ("2-3", "a few" = 4), in hundredths.
    hi_amt: Option<u32>,
    /// "a few": two to four by convention.
    few: bool,
    /// The amount was the article alone ("a day").
    article: bool,
    unit: EnUnit,
    /// Minutes written after an hour unit ("2h30").
    extra: u32,
    /// 1 forward, -1 back, 0 a length.
    dir: i32,
    /// From now to that far ("within 5 days", "the next 2 hours").
    within: bool,
    /// Counted from another date of the expression ("a week after tomorrow").
    needs_base: bool,
}

/// in 3 days, in half an hour, 2 weeks from now, 3 days ago, 5 minutes later, a week after (base),
/// and durations: 2 hours, 90 minutes, an hour and a half, 45-minute, 2h30, 5 days, for a week.
pub(super) fn offset_or_duration(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (mut j, mut dir, mut within) = (i, 0i32, false);
    if let Some((e, d, w)) = span_prefix(t, i) {
        j = t.skip_ws(e);
        if j == e {
            return None;
        }
        (dir, within) = (d, w);
    }
    let (mut m, e) = measure(t, j, within)?;
    m.dir = dir;
    let e = if dir == 0 { direction_after(t, i, e, &mut m) } else { e };
    if m.hi_amt.is_some() && (m.dir == 0 || m.needs_base) {
        return None;
    }
    match m.unit {
        EnUnit::Minute | EnUnit::Hour => minutes_atom(&m).map(|a| (e, a)),
        EnUnit::Cal(u) => calendar_atom(t, i, &m, u).map(|a| (e, a)),
    }
}

/// The amount and unit at `j` ("2-3 days", "a few weeks", "an hour and a half", "2h30"); with
/// `within`, "the next hour" counts one hour. (measure, end).
fn measure(t: &Text, j: usize, within: bool) -> Option<(Measure, usize)> {
    // "within the next hour": one unit (hours and minutes only: "in the next week" is next week)
    let implicit_one = within && amount(t, j).is_none() && matches!(unit_word(t, j), Some((EnUnit::Minute | EnUnit::Hour, _, _)));
    // "in a few days", "a few weeks from now": two to four, a span like "in 2-4 days"
    let few = if implicit_one { None } else { t.phrase_longest(j, &["a few", "few"]).map(|x| x.0) };
    let (amt, e, article) = match few {
        Some(x) => (200, x, false),
        None if implicit_one => (100, j, true),
        None => amount(t, j)?,
    };
    let hi = if article || amt % 100 != 0 { None } else { approximate_end(t, e, amt) };
    let e = hi.map_or(e, |h| h.1);
    let hi_amt = if few.is_some() { Some(400) } else { hi.map(|h| h.0) };
    let mut k = if implicit_one { e } else { t.skip_ws(e) };
    if k == e && t.at(e) == '-' && t.at(e + 1).is_ascii_alphabetic() {
        // "a 45-minute call", "a 2-hour meeting"
        k = e + 1;
    }
    let glued = k == e && t.at(j).is_ascii_digit() && !implicit_one;
    if k == e && !glued && !t.at(e).is_ascii_alphabetic() {
        return None;
    }
    let (unit, mut e, mult, extra) = if glued {
        glued_unit(t, e)?
    } else {
        let (u, x, m) = unit_word(t, k)?;
        (u, x, m, 0)
    };
    let mut amt = amt * mult;
    // "an hour and a half"
    let k = t.skip_ws(e);
    if k > e
        && let Some(x) = t.phrase(k, "and a half")
    {
        amt += 50 * mult;
        e = x;
    }
    let m = Measure { amt, hi_amt, few: few.is_some(), article, unit, extra, dir: 0, within, needs_base: false };
    Some((m, e))
}

/// "in 2-3 days", "3 or 4 hours from now": the next whole amount after `amt` written as the upper
/// end of an approximate one. (hi, end).
fn approximate_end(t: &Text, e: usize, amt: u32) -> Option<(u32, usize)> {
    let k = t.skip_ws(e);
    let k2 = if t.at(e) == '-' {
        e + 1
    } else if k > e {
        t.phrase_longest(k, &["or", "to"]).map(|(x, _)| t.skip_ws(x)).filter(|&x| x > k)?
    } else {
        return None;
    };
    match amount(t, k2) {
        Some((hi, e2, false)) if hi == amt + 100 => Some((hi, e2)),
        _ => None,
    }
}

/// The direction written after a measure ("ago", "from now", "after" a base, the British "a week
/// tomorrow"): sets `m.dir` and `m.needs_base`; the end.
fn direction_after(t: &Text, i: usize, e: usize, m: &mut Measure) -> usize {
    const DIRS: &[(&str, i32, bool)] = &[
        ("ago", -1, false),
        ("earlier", -1, false),
        ("before now", -1, false),
        ("from now", 1, false),
        ("from today", 1, false),
        ("later", 1, false),
        ("hence", 1, false),
        ("after", 1, true),
        ("from", 1, true),
        ("before", -1, true),
    ];
    let k = t.skip_ws(e);
    if k == e {
        return e;
    }
    if let Some((x, p)) = t.phrase_longest_in(k, DIRS, |d| d.0) {
        (m.dir, m.needs_base) = (DIRS[p].1, DIRS[p].2);
        return x;
    }
    // British "a week tomorrow", "two weeks today", "a week on friday": that many weeks after the
    // day named next (which the grammar joins as the base)
    let k2 = t.phrase(k, "on").map_or(k, |x| t.skip_ws(x));
    if m.unit == EnUnit::Cal(Unit::Week)
        && !t.prev_word(i).is_some_and(|w| t.word_eq(w, "for") || t.word_eq(w, "lasting"))
        && (t.phrase_longest(k2, &["tomorrow", "today", "tmrw"]).is_some() || weekday_name(t, k2).is_some_and(|w| !w.2))
    {
        (m.dir, m.needs_base) = (1, true);
    }
    e
}

/// A measure in minutes or hours: a length, an offset from now or a span of offsets.
fn minutes_atom(m: &Measure) -> Option<Atom> {
    let per = if m.unit == EnUnit::Minute { 1 } else { 60 };
    let mins = m.amt * per / 100 + m.extra;
    if mins == 0 || m.needs_base {
        return None;
    }
    if m.within || m.hi_amt.is_some() {
        let hi = (m.hi_amt.unwrap_or(m.amt) * per / 100 + m.extra) as i64 * m.dir as i64;
        let lo = if m.within { 0 } else { mins as i64 * m.dir as i64 };
        return Some(Atom::TimeSpan(lo.min(hi), lo.max(hi), m.few));
    }
    if m.dir == 0 {
        return Some(Atom::Duration(mins));
    }
    Some(Atom::TimeOffset(m.dir as i64 * mins as i64))
}

/// A measure in days, weeks, months or years: a length (days and weeks only), a date offset or a
/// span of them.
fn calendar_atom(t: &Text, i: usize, m: &Measure, u: Unit) -> Option<Atom> {
    let (amt, dir) = (m.amt, m.dir);
    if dir == 0 {
        // a length in days or weeks: "5 days", "ten days", "for a week" ("a day" alone is too
        // often "once a day")
        let per_day = match u {
            Unit::Day => 1440,
            Unit::Week => 7 * 1440,
            _ => return None,
        };
        let after_for = t.prev_word(i).is_some_and(|w| t.word_eq(w, "for") || t.word_eq(w, "lasting") || t.word_eq(w, "by"));
        if amt == 0 || (m.article && !after_for) {
            return None;
        }
        return Some(Atom::Duration(u32::try_from(u64::from(amt) * per_day / 100).ok()?));
    }
    if m.within || m.hi_amt.is_some() {
        if amt % 100 != 0 || m.needs_base {
            return None;
        }
        let hi = (m.hi_amt.unwrap_or(amt) / 100) as i32 * dir;
        let lo = if m.within { 0 } else { (amt / 100) as i32 * dir };
        return Some(date_atom(|x| {
            x.offset = Some((lo.min(hi), u));
            x.offset_end = Some(lo.max(hi));
            // "a few" is two to four by convention
            x.guessed = m.few;
        }));
    }
    if amt % 100 != 0 && !m.needs_base && matches!(u, Unit::Day | Unit::Week) {
        // "a day and a half from now", "in 1.5 days": 36 hours on, to the minute
        let per_day: u64 = if u == Unit::Day { 1440 } else { 7 * 1440 };
        let mins = i64::try_from(u64::from(amt) * per_day / 100).ok()?;
        return Some(Atom::TimeOffset(dir as i64 * mins));
    }
    if amt % 100 != 0 || amt == 0 {
        return None;
    }
    let n = (amt / 100) as i32 * dir;
    Some(date_atom(|x| {
        x.offset = Some((n, u));
        x.needs_base = m.needs_base;
    }))
}
