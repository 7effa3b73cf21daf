//! Clock times in words and phrases: a quarter past 3, twenty to seven, seven thirty pm, at eight,
//! half six, 3 o'clock.

use crate::digits::meridiem;
use crate::numerals::{ascii_int, en_number_word};
use crate::segment::SegKind;
use crate::text::Text;
use crate::types::{
    Atom, Best, Clock, Mer, SegAtom,
};
use super::words::{O_CLOCK, seg, unit_word, weekday_name};

/// An hour for clock phrases: 3, 3pm, noon, midnight, three.
fn hour_ref(t: &Text, i: usize) -> Option<(Clock, usize)> {
    if let Some(e) = t.phrase(i, "noon") {
        return Some((Clock::noon(), e));
    }
    if let Some(e) = t.phrase(i, "midnight") {
        return Some((Clock::midnight(), e));
    }
    let (h, e) = if t.at(i).is_ascii_digit() {
        let (h, e, n) = ascii_int(t, i)?;
        if n > 2 {
            return None;
        }
        (h, e)
    } else {
        en_number_word(t, i)?
    };
    if !(1..=12).contains(&h) {
        return None;
    }
    let mut c = Clock::bare(h);
    let mut e = e;
    if let Some((mer, e2)) = meridiem(t, e) {
        c.mer = Some(mer);
        e = e2;
    }
    Some((c, e))
}

/// Parts of day that may follow an hour written in words ("two in the afternoon").
const SEG_AFTER_HOUR: &[&str] = &[
    "in the morning",
    "in the afternoon",
    "in the evening",
    "at night",
    "tonight",
    "this morning",
    "this afternoon",
    "this evening",
    "tomorrow",
    "today",
    "morning",
    "afternoon",
    "evening",
    "night",
];

/// An hour in words, with minutes in words when given: "two in the afternoon", "at seven",
/// "seven thirty pm", "eleven am", "half six" (6:30, British). Without am/pm the words need
/// context: "at"/"by"/"until"/"around" before them, or a part of day or day after them.
pub(super) fn word_clock(t: &Text, i: usize) -> Option<(usize, Atom)> {
    // "half six" = 6:30
    let (half, j) = match t.phrase(i, "half") {
        Some(x) if t.skip_ws(x) > x => (true, t.skip_ws(x)),
        _ => (false, i),
    };
    let (h, mut e) = if half && t.at(j).is_ascii_digit() {
        let (h, e, n) = ascii_int(t, j)?;
        (n <= 2).then_some((h, e))?
    } else {
        en_number_word(t, j)?
    };
    if !(1..=12).contains(&h) {
        return None;
    }
    let mut c = Clock::bare(h);
    if half {
        c.m = 30;
        c.has_min = true;
    } else {
        // "seven thirty", "seven oh five", "nine forty-five"
        let k = t.skip_ws(e);
        let oh = t.phrase(k, "oh").map(|x| t.skip_ws(x));
        if k > e
            && let Some((m, e2)) = en_number_word(t, oh.unwrap_or(k))
            && (if oh.is_some() { (1..=9).contains(&m) } else { (10..=59).contains(&m) })
            && unit_word(t, t.skip_ws(e2)).is_none()
        {
            c.m = m;
            c.has_min = true;
            e = e2;
        }
    }
    if let Some((mer, e2)) = meridiem(t, e).filter(|_| !half) {
        c.mer = Some(mer);
        return Some((e2, Atom::Clock(c)));
    }
    let before = t.prev_word(i).is_some_and(|w| {
        ["at", "by", "until", "till", "around", "about", "from", "to"].iter().any(|p| t.word_eq(w, p))
    });
    let k = t.skip_ws(e);
    let after = k > e && t.phrase_longest(k, SEG_AFTER_HOUR).is_some();
    (half || before || after || (c.has_min && minutes_end_a_time(t, e)) || starts_a_marked_range(t, e))
        .then_some((e, Atom::Clock(c)))
}

/// After an hour and minutes in words ("seven forty-five", "six thirty"), which no count reads
/// as: the end of the clause, or a word that goes on with a time (a day, a part of day, "on",
/// "sharp"), not a noun ("seven fifty dollars" is a price).
fn minutes_end_a_time(t: &Text, e: usize) -> bool {
    let k = t.skip_ws(e);
    // "two thirty-page reports": the number runs on into a word
    if matches!(t.at(e), '-' | '\'') {
        return false;
    }
    !t.at(k).is_ascii_alphanumeric()
        || t.phrase_longest(k, &["on", "at", "sharp", "next", "this"]).is_some()
        || weekday_name(t, k).is_some()
}

/// An hour in words before "to"/"till" and an hour marked am or pm: "one to three pm" is 13-15.
fn starts_a_marked_range(t: &Text, e: usize) -> bool {
    let k = t.skip_ws(e);
    let Some((x, _)) = t.phrase_longest(k, &["to", "till", "til", "until", "through"]).filter(|_| k > e) else {
        return false;
    };
    let k2 = t.skip_ws(x);
    k2 > x && hour_ref(t, k2).is_some_and(|(c, _)| c.mer.is_some())
}

/// a quarter past 3pm, half past 3, quarter to noon, 10 past 5, 3 o'clock.
pub(super) fn clock_phrase(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if let Some(x) = o_clock(t, i) {
        return Some(x);
    }
    let mut j = i;
    if let Some(e) = t.phrase(i, "a") {
        j = t.skip_ws(e);
    }
    let mut counted = false;
    let (mins, e) = if let Some(e) = t.phrase(j, "quarter") {
        (15, e)
    } else if let Some(e) = t.phrase(j, "half") {
        (30, e)
    } else {
        counted = true;
        let (m, e) = if t.at(j).is_ascii_digit() {
            let (m, e, _) = ascii_int(t, j)?;
            (m, e)
        } else {
            en_number_word(t, j)?
        };
        let k = t.skip_ws(e);
        let e = match t.phrase_longest(k, &["minutes", "minute", "mins"]) {
            Some((x, _)) => {
                counted = false;
                x
            }
            None => e,
        };
        (m, e)
    };
    if mins == 0 || mins >= 60 {
        return None;
    }
    let k = t.skip_ws(e);
    let (x, p) = t.phrase_longest(k, &["past", "after", "to", "before"])?;
    // "from 3 to 5" is a range: a plain number before "to" needs the word "minutes", or a count
    // no hour could be ("twenty to six"), or "at" before it ("at ten to five")
    let range_word = t.prev_word(i).is_some_and(|w| t.word_eq(w, "from") || t.word_eq(w, "between"));
    let at_before = t.prev_word(i).is_some_and(|w| ["at", "around", "about", "by"].iter().any(|x| t.word_eq(w, x)));
    if counted && (range_word || (p >= 2 && !(mins > 12 && mins % 5 == 0) && !at_before)) {
        return None;
    }
    let k2 = t.skip_ws(x);
    if k2 == x {
        return None;
    }
    let (c, e2) = hour_ref(t, k2)?;
    let c = if p < 2 {
        Clock {
            m: mins,
            has_min: true,
            ..c
        }
    } else {
        minutes_to(c, mins)
    };
    Some((e2, Atom::Clock(c)))
}

/// "3 o'clock", "seven oclock pm".
fn o_clock(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (h, e) = if t.at(i).is_ascii_digit() {
        ascii_int(t, i).map(|(h, e, _)| (h, e))?
    } else {
        en_number_word(t, i)?
    };
    let (mut x, _) = t.phrase_longest(t.skip_ws(e), O_CLOCK).filter(|_| (1..=12).contains(&h))?;
    let mut c = Clock::bare(h);
    if let Some((mer, e2)) = meridiem(t, x) {
        c.mer = Some(mer);
        x = e2;
    }
    Some((x, Atom::Clock(c)))
}

/// The clock time `mins` minutes before hour `c`: "quarter to noon" = 11:45, "ten to 1am" = 00:50.
fn minutes_to(c: Clock, mins: u32) -> Clock {
    let h = if c.h == 0 { 23 } else { c.h - 1 };
    let mut c2 = Clock {
        h,
        m: 60 - mins,
        has_min: true,
        ..c
    };
    if c.absolute && c.h == 12 {
        c2.absolute = true;
        c2.h = 11;
    } else if c.h == 24 {
        c2.h = 23;
    } else if c.h == 12 && c.mer == Some(Mer::Am) {
        c2.h = 11;
        c2.mer = Some(Mer::Pm);
    } else if c.h == 1 {
        c2.h = 12;
        c2.mer = c.mer.map(|m| if m == Mer::Am { Mer::Pm } else { Mer::Am });
    }
    c2
}

const PARTS_OF_DAY: &[(&str, SegKind, Option<i32>)] = &[
    ("tonight", SegKind::Evening, Some(0)),
    ("tonite", SegKind::Evening, Some(0)),
    ("this morning", SegKind::Morning, Some(0)),
    ("this afternoon", SegKind::Afternoon, Some(0)),
    ("this evening", SegKind::Evening, Some(0)),
    ("last night", SegKind::Evening, Some(-1)),
    ("morning", SegKind::Morning, None),
    ("early morning", SegKind::EarlyMorning, None),
    ("in the early morning", SegKind::EarlyMorning, None),
    ("afternoon", SegKind::Afternoon, None),
    ("evening", SegKind::Evening, None),
    ("night", SegKind::Night, None),
    ("in the morning", SegKind::Morning, None),
    ("in the afternoon", SegKind::Afternoon, None),
    ("in the evening", SegKind::Evening, None),
    ("at night", SegKind::Night, None),
    ("lunch", SegKind::Noon, None),
    ("lunchtime", SegKind::Noon, None),
    ("at lunch", SegKind::Noon, None),
    ("all day", SegKind::AllDay, None),
    ("all-day", SegKind::AllDay, None),
    ("the whole day", SegKind::AllDay, None),
];

/// Parts of day ("tonight", "in the morning", "every evening"), noon, midnight and the end of the
/// working day ("eod", "close of business": 17:00).
#[inline]
pub(super) fn part_of_day_words(t: &Text, i: usize, best: &mut Best) {
    for &(p, k, d) in PARTS_OF_DAY {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, seg(k, d));
        }
    }
    for (p, k) in [
        ("every morning", SegKind::Morning),
        ("every afternoon", SegKind::Afternoon),
        ("every evening", SegKind::Evening),
        ("every night", SegKind::Night),
        ("nightly", SegKind::Night),
        ("each morning", SegKind::Morning),
        ("each afternoon", SegKind::Afternoon),
        ("each evening", SegKind::Evening),
        ("each night", SegKind::Night),
    ]
    .into_iter()
    .take(if (t.at(i + 1), t.at(i + 2)) == ('a', 'c') { 9 } else { 5 })
    {
        if let Some(e) = t.phrase(i, p) {
            best.offer(
                e,
                Atom::Seg(SegAtom {
                    kind: k,
                    day: None,
                    daily: true,
                }),
            );
        }
    }
    // the end of the working day: 17:00 by convention ("by EOD", "close of business friday")
    let eod_start = match (t.at(i), t.at(i + 1)) {
        ('e', 'o' | 'n') | ('c', 'o' | 'l') => true,
        ('t', 'h') => t.at(t.skip_ws(i + 3)) == 'e',
        _ => false,
    };
    for p in [
        "eod",
        "cob",
        "eob",
        "end of day",
        "end of the day",
        "the end of the day",
        "end of business",
        "close of business",
        "end of the business day",
        "end of business day",
    ]
    .into_iter()
    .filter(|_| eod_start)
    {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, Atom::Clock(Clock::end_of_day()));
        }
    }
    for p in ["noon", "midday", "12 noon"] {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, Atom::Clock(Clock::noon()));
        }
    }
    if t.at(i) == 'n'
        && let Some(e) = t.lit(i, "noonish").filter(|&e| !t.is_alnum(e))
    {
        best.offer(e, Atom::Clock(Clock::noon()));
    }
    for p in ["midnight", "12 midnight"] {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, Atom::Clock(Clock::midnight()));
        }
    }
}
