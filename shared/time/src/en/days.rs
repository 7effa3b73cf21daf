//! Relative days and weekdays: today, the day after tomorrow, next friday, friday after next, the
//! British "friday week", mon wed fri, first thing tomorrow, this time tomorrow, the same day next month.

use crate::segment::SegKind;
use crate::text::Text;
use crate::types::{
    Atom, Best, DateParts, Freq, Recur, Unit, date_atom,
};
use super::words::{after_day_word, digit_shorthand, month_name, prev_word_is_context, seg, weekday_name};

/// "first thing tomorrow", "first thing monday", "first thing in the morning": the morning of that
/// day ("first thing" alone may be the first item of a list).
pub(super) fn first_thing(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if t.at(i) != 'f' || t.at(i + 1) != 'i' {
        return None;
    }
    let e = t.phrase(i, "first thing")?;
    let k = t.skip_ws(e);
    if k == e {
        return None;
    }
    if let Some(x) = t.phrase(k, "in the morning") {
        return Some((x, seg(SegKind::Morning, None)));
    }
    let k2 = t.phrase(k, "on").map_or(k, |x| t.skip_ws(x));
    let day_follows = t.phrase_longest(k2, &["tomorrow", "today", "next", "this"]).is_some()
        || weekday_name(t, k2).is_some()
        || digit_shorthand(t, k2).is_some();
    day_follows.then_some((e, seg(SegKind::Morning, None)))
}

/// Another week, month or year, as a shift: "next month" = (1, Month). (end, n, unit).
fn period_after(t: &Text, k: usize) -> Option<(usize, i32, Unit)> {
    const PERIODS: &[(&str, i32, Unit)] = &[
        ("next week", 1, Unit::Week),
        ("next month", 1, Unit::Month),
        ("next year", 1, Unit::Year),
        ("last week", -1, Unit::Week),
        ("last month", -1, Unit::Month),
        ("last year", -1, Unit::Year),
        ("the following week", 1, Unit::Week),
        ("the following month", 1, Unit::Month),
        ("the following year", 1, Unit::Year),
        ("the week after next", 2, Unit::Week),
    ];
    let (e, p) = t.phrase_longest_in(k, PERIODS, |x| x.0)?;
    Some((e, PERIODS[p].1, PERIODS[p].2))
}

/// "this day next month", "the same day next week", "same date next year", "today next week":
/// the reference date shifted by that period (a day the month lacks is its last day).
pub(super) fn same_day_of_period(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let e = match (t.at(i), t.at(i + 1)) {
        ('t', 'o') => t.phrase(i, "today")?,
        ('t', 'h') | ('s', 'a') => {
            let mut j = i;
            if let Some(x) = t.phrase(i, "the") {
                j = t.skip_ws(x);
            } else if let Some(x) = t.phrase(i, "this") {
                j = t.skip_ws(x);
            }
            if j == i || t.at(i + 2) == 'e' {
                // "same day", "the same day"
                j = t.phrase(j, "same").map(|x| t.skip_ws(x))?;
            }
            t.phrase(j, "day").or_else(|| t.phrase(j, "date"))?
        }
        _ => return None,
    };
    let k = t.skip_ws(e);
    let (e2, n, u) = period_after(t, k).filter(|_| k > e)?;
    Some((e2, date_atom(|x| *x = DateParts::shifted(n, u))))
}

/// "this time tomorrow", "same time next week", "the same time on friday", "tomorrow same time":
/// the reference time of day on the date it is said with (only next to one).
pub(super) fn same_time(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut j = i;
    if (t.at(i), t.at(i + 1), t.at(i + 2)) == ('a', 't', ' ') {
        j = t.skip_ws(i + 2);
    }
    let e = match (t.at(j), t.at(j + 1)) {
        ('t', 'h') | ('s', 'a') => {
            let mut k = j;
            if let Some(x) = t.phrase(j, "this") {
                k = t.skip_ws(x);
            } else if let Some(x) = t.phrase(j, "the") {
                k = t.phrase(t.skip_ws(x), "same").map(|y| t.skip_ws(y))?;
            } else if let Some(x) = t.phrase(j, "same") {
                k = t.skip_ws(x);
            }
            if k == j {
                return None;
            }
            t.phrase(k, "time")?
        }
        _ => return None,
    };
    let k = t.skip_ws(e);
    let k2 = t.phrase(k, "on").map_or(k, |x| t.skip_ws(x));
    let day_follows = k > e
        && (t.phrase_longest(k2, &["tomorrow", "today", "yesterday", "next", "last", "this"]).is_some()
            || weekday_name(t, k2).is_some()
            || digit_shorthand(t, k2).is_some());
    // "tomorrow same time", "next week at the same time"
    let day_precedes = after_day_word(t, i)
        || t.prev_word(i).is_some_and(|w| ["week", "month", "year"].iter().any(|p| t.phrase(w.0, p) == Some(w.1)));
    (day_follows || day_precedes).then_some((e, Atom::SameTime))
}

/// "tmrw am", "monday pm", "sat eve": am, pm and eve right after a day name a part of it
/// (morning, afternoon, evening). Elsewhere "am" is a verb and "eve" a name.
pub(super) fn day_half(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (kind, e) = match (t.at(i), t.at(i + 1)) {
        ('a' | 'p', 'm') => (if t.at(i) == 'a' { SegKind::Morning } else { SegKind::Afternoon }, i + 2),
        ('a' | 'p', '.') if t.at(i + 2) == 'm' && t.at(i + 3) == '.' => {
            (if t.at(i) == 'a' { SegKind::Morning } else { SegKind::Afternoon }, i + 4)
        }
        ('e', 'v') if t.at(i + 2) == 'e' => (SegKind::Evening, i + 3),
        _ => return None,
    };
    if t.is_alnum(e) || !after_day_word(t, i) {
        return None;
    }
    Some((e, seg(kind, None)))
}

/// "gym mon wed fri", "monday wednesday friday at 7": weekday names apart by spaces only are a
/// list when there are two or more and one of them cannot be an ordinary word (not mon, wed, sat,
/// sun: "the sun sat low" is none).
fn spaced_weekday_run(t: &Text, i: usize) -> bool {
    let whole = |s: usize| weekday_name(t, s).filter(|&(_, _, plural, _)| !plural);
    // back to the first name of the run
    let mut s = i;
    while let Some(w) = t.prev_word(s).filter(|w| w.1 < s) {
        match whole(w.0) {
            Some((_, e, _, _)) if e == w.1 => s = w.0,
            _ => break,
        }
    }
    let (mut names, mut plain) = (0, false);
    let mut k = s;
    while let Some((_, e, _, weak)) = whole(k) {
        names += 1;
        plain |= !weak;
        let n = t.skip_ws(e);
        if n == e {
            break;
        }
        k = n;
    }
    names >= 2 && plain
}

/// Parts of day that make a following-word context for the short weekday names (sat, sun, mon, wed).
const PARTS_AFTER_WEEKDAY: &[&str] = &[
    "morning", "afternoon", "evening", "night", "noon", "lunch", "dinner", "breakfast", "am", "a.m.", "pm",
    "p.m.", "eve",
];

/// Weekdays with their modifiers: monday, next friday, this sat, last tuesday, friday after next,
/// this coming monday, every monday and friday, mondays.
pub(super) fn weekday_expr(t: &Text, i: usize) -> Option<(usize, Atom)> {
    #[derive(Clone, Copy, PartialEq)]
    enum Md {
        Bare,
        Week(i32),
        Every,
    }
    let mods: &[(&str, Md)] = &[
        ("next", Md::Week(1)),
        ("this", Md::Week(0)),
        ("last", Md::Week(-1)),
        ("this coming", Md::Bare),
        ("coming", Md::Bare),
        ("this past", Md::Week(-1)),
        ("every", Md::Every),
        ("each", Md::Every),
        ("every other", Md::Every),
    ];
    let mut md = Md::Bare;
    let mut j = i;
    let mut interval = 1;
    let mut this = false;
    if let Some((e, k)) = t.phrase_longest_in(i, mods, |m| m.0) {
        let k2 = t.skip_ws(e);
        if k2 > e && weekday_name(t, k2).is_some() {
            md = mods[k].1;
            this = mods[k].0 == "this";
            if mods[k].0 == "every other" {
                interval = 2;
            }
            j = k2;
        }
    }
    let (wd, mut e, plural, weak) = weekday_name(t, j)?;
    if md == Md::Every || plural {
        return Some(weekly_recurrence(t, wd, e, interval));
    }
    if weak && md == Md::Bare && !short_name_meant(t, i, e) {
        return None;
    }
    let mut after_next = false;
    if md == Md::Bare {
        let k = t.skip_ws(e);
        if k > e
            && let Some(x) = t.phrase(k, "after next").or_else(|| {
                // British "friday week", "monday week": a week after the coming one
                t.phrase(k, "week").filter(|&x| !t.is_alnum(x) && t.at(x) != '-')
            })
        {
            after_next = true;
            e = x;
        }
    }
    Some((
        e,
        date_atom(|x| {
            x.weekday = Some(wd);
            x.after_next = after_next;
            x.this_named = this;
            if let Md::Week(w) = md {
                x.week = Some(w);
            }
        }),
    ))
}

/// "every monday", "mondays", "every other tuesday", with a span ("every monday to friday") or a
/// list ("every monday and wednesday", "mon, wed and fri") after the first name ending at `e`.
fn weekly_recurrence(t: &Text, wd: u8, e: usize, interval: u32) -> (usize, Atom) {
    let mut e = e;
    let mut r = Recur::new(Freq::Weekly);
    r.interval = interval;
    r.byday = 1 << wd;
    // a span: "every monday to friday", "mondays through fridays"
    let k = t.skip_ws(e);
    if k > e
        && let Some((x, _)) = t.phrase_longest(k, &["to", "through", "thru", "till", "until"])
    {
        let k2 = t.skip_ws(x);
        if k2 > x
            && let Some((last, e2, _, _)) = weekday_name(t, k2)
            && last > wd
        {
            for d in wd..=last {
                r.byday |= 1 << d;
            }
            return (e2, date_atom(|x| x.recur = Some(r)));
        }
    }
    // lists: "every monday and wednesday", "mon, wed and fri"
    loop {
        let mut k = e;
        if t.at(k) == ',' {
            k += 1;
        }
        let k1 = t.skip_ws(k);
        let k1 = t.phrase(k1, "and").map(|x| t.skip_ws(x)).unwrap_or(k1);
        if k1 == e {
            break;
        }
        match weekday_name(t, k1) {
            Some((w2, e2, _, _)) => {
                r.byday |= 1 << w2;
                e = e2;
            }
            None => break,
        }
    }
    (e, date_atom(|x| x.recur = Some(r)))
}

/// Whether an ambiguous short name ("sun", "sat", "wed", "mon") at `i..e` is a weekday: only where a
/// date is clearly meant (after a context word or a meal, in a list or a span of weekdays, before a
/// date, a part of day or a clock time).
fn short_name_meant(t: &Text, i: usize, e: usize) -> bool {
    // "sun", "sat", "wed", "mon" only where a date is clearly meant
    let n = t.skip_ws(e);
    let the = t.prev_word(i).is_some_and(|w| t.word_eq(w, "the"));
    // "lunch wed", "dinner sat": a meal names the day it is on
    let meal = t
        .prev_word(i)
        .is_some_and(|w| ["lunch", "dinner", "breakfast", "brunch", "supper", "drinks"].iter().any(|m| t.word_eq(w, m)));
    // "mon, wed and fri": listed with another weekday
    let listed = {
        let n2 = t.phrase_longest(n, &["and", "or"]).map_or(n, |(x, _)| t.skip_ws(x));
        let mut b = i;
        while b > 0 && t.at(b - 1).is_whitespace() {
            b -= 1;
        }
        let before = if b > 0 && t.at(b - 1) == ',' {
            t.prev_word(b - 1)
        } else {
            t.prev_word(i).filter(|w| t.word_eq(*w, "and") || t.word_eq(*w, "or")).and_then(|w| t.prev_word(w.0))
        };
        // "mon-wed": after a dash right after a weekday
        let dash_before = t.before(i) == '-' && t.prev_word(i - 1).is_some_and(|w| weekday_name(t, w.0).is_some_and(|x| x.1 == w.1));
        (n2 > n && weekday_name(t, n2).is_some())
            || before.is_some_and(|w| weekday_name(t, w.0).is_some_and(|x| x.1 == w.1))
            || dash_before
            || spaced_weekday_run(t, i)
    };
    // "mon-fri", "mon through fri"
    let dashed = t.at(e) == '-' && weekday_name(t, e + 1).is_some()
        || n > e
            && t.phrase_longest(n, &["to", "through", "thru", "till", "until"]).is_some_and(|(x, _)| {
                let k = t.skip_ws(x);
                k > x && weekday_name(t, k).is_some()
            });
    prev_word_is_context(t, i)
        || meal
        || listed
        || dashed
        || t.at(e) == ','
        || t.at(n).is_ascii_digit()
        || month_name(t, n).is_some()
        // "sat morning", "sun nite", "mon pm", "sun @ 2", "wed at 3" (not "the sun at noon")
        || !the
            && ((n > e && t.phrase_longest(n, PARTS_AFTER_WEEKDAY).is_some())
                || t.at(n) == '@'
                || t.phrase(n, "at").is_some_and(|x| {
                    let k = t.skip_ws(x);
                    k > x && (t.at(k).is_ascii_digit() || t.phrase(k, "noon").is_some())
                }))
}

/// Relative days ("today", "the day after tomorrow", "the next day"), the next business day and
/// "eow" (the end of this week).
#[inline]
pub(super) fn relative_day_words(t: &Text, i: usize, best: &mut Best) {
    const REL: &[(&str, i32)] = &[
        ("today", 0),
        ("tomorrow", 1),
        ("tmrw", 1),
        ("tmr", 1),
        ("yesterday", -1),
        ("the day after tomorrow", 2),
        ("day after tomorrow", 2),
        ("the day before yesterday", -2),
        ("day before yesterday", -2),
    ];
    for &(p, d) in REL {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, date_atom(|x| x.rel_day = Some(d)));
        }
    }
    // "the next day", "the following day": the day after the date it is anchored to (次日)
    if matches!((t.at(i), t.at(i + 1), t.at(i + 2)), ('t', 'h', 'e') | ('n', 'e' | 'x', _)) {
        for p in ["the next day", "the following day", "next day"] {
            if let Some(e) = t.phrase(i, p) {
                best.offer(e, date_atom(|x| x.next_day = true));
            }
        }
    }
    for p in [
        "next business day",
        "next working day",
        "the next business day",
        "the next working day",
        "the following business day",
        "the following working day",
        "next workday",
    ] {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, date_atom(|x| x.offset = Some((1, Unit::BusinessDay))));
        }
    }
    if let Some(e) = t.phrase(i, "eow").filter(|_| t.at(i + 1) == 'o') {
        // end of week: its Friday, as "end of the week" (see `month_part`)
        best.offer(
            e,
            date_atom(|x| {
                x.week = Some(0);
                x.weekday = Some(4);
                x.guessed = true;
            }),
        );
    }
}
