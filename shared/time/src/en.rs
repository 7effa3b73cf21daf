//! English lexemes: relative days, weekdays, month names and dates, clock words, parts of day,
//! offsets ("in 3 days", "2 weeks ago"), durations, recurrences and connector words.
//! Input is already lower-cased.

use super::digits::meridiem;
use super::numerals::{ascii_decimal_hundredths, ascii_int, en_number_word, en_ordinal, en_year_words};
use super::segment::SegKind;
use super::text::Text;
use super::types::{
    Atom, BUSINESS_DAY, Best, Clock, Conn, DateParts, Freq, Glue, Mer, MonthPart, MonthSpec, Prefix,
    Recur, SegAtom, Unit, YearSpec, date_atom,
};

pub(crate) fn lex(t: &Text, i: usize, best: &mut Best) {
    if !t.word_start(i) {
        return;
    }
    let c = t.at(i);
    if fraction(c).is_some() {
        best.offer_opt(offset_or_duration(t, i));
        return;
    }
    if c.is_ascii_digit() {
        if c == '2' && matches!(t.at(i + 1), 'd' | 'm' | 'n') {
            best.offer_opt(digit_shorthand(t, i));
        }
        best.offer_opt(day_first_date(t, i));
        best.offer_opt(nth_weekday(t, i));
        best.offer_opt(nth_month(t, i));
        if week_or_half_ahead(t, i) {
            best.offer_opt(week_of_month(t, i));
        }
        best.offer_opt(year_after_preposition(t, i));
        best.offer_opt(year_first_date(t, i));
        best.offer_opt(ordinal_day(t, i));
        best.offer_opt(offset_or_duration(t, i));
        best.offer_opt(clock_phrase(t, i));
        return;
    }
    if !c.is_ascii_alphabetic() {
        return;
    }
    fixed_words(t, i, best);
    best.offer_opt(nth_weekday(t, i));
    best.offer_opt(nth_month(t, i));
    best.offer_opt(possessive_month(t, i));
    best.offer_opt(day_first_date(t, i));
    best.offer_opt(weekday_expr(t, i));
    best.offer_opt(month_first_date(t, i));
    best.offer_opt(modified_period(t, i));
    best.offer_opt(month_part(t, i));
    best.offer_opt(the_day(t, i));
    best.offer_opt(offset_or_duration(t, i));
    best.offer_opt(clock_phrase(t, i));
    best.offer_opt(word_clock(t, i));
    best.offer_opt(recurrence(t, i));
    best.offer_opt(day_half(t, i));
    best.offer_opt(same_day_of_period(t, i));
    best.offer_opt(early_late_month(t, i));
    best.offer_opt(super::rest_of_day::en(t, i));
    if matches!((t.at(i), t.at(i + 1)), ('t', 'h') | ('f', 'i' | 'o') | ('s', 'e') | ('l', 'a') | ('r', 'e'))
        && week_or_half_ahead(t, i)
    {
        best.offer_opt(week_of_month(t, i));
        best.offer_opt(rest_of_week(t, i));
    }
    best.offer_opt(first_thing(t, i));
    best.offer_opt(same_time(t, i));
}

/// "first thing tomorrow", "first thing monday", "first thing in the morning": the morning of that
/// day ("first thing" alone may be the first item of a list).
fn first_thing(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// "2027 Oct 2", "2027 march 5th": a year, then a month name and a day.
fn year_first_date(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn year_after_preposition(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// Whether "week" or "half" is written within the next five words (a cheap test before the
/// readers of weeks and halves of a month).
fn week_or_half_ahead(t: &Text, i: usize) -> bool {
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
fn rest_of_week(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn week_of_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn early_late_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn same_day_of_period(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn same_time(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// Chat spellings that start with a digit: 2day, 2moro, 2morrow, 2mrw, 2nite, 2night.
fn digit_shorthand(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn after_day_word(t: &Text, i: usize) -> bool {
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

/// "tmrw am", "monday pm", "sat eve": am, pm and eve right after a day name a part of it
/// (morning, afternoon, evening). Elsewhere "am" is a verb and "eve" a name.
fn day_half(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

fn seg(kind: SegKind, day: Option<i32>) -> Atom {
    Atom::Seg(SegAtom {
        kind,
        day,
        daily: false,
    })
}

fn fixed_words(t: &Text, i: usize, best: &mut Best) {
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
    const SEGS: &[(&str, SegKind, Option<i32>)] = &[
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
    for &(p, k, d) in SEGS {
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
    for p in ["now", "right now"] {
        if let Some(e) = t.phrase(i, p) {
            best.offer(e, Atom::Now);
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
    if matches!((t.at(i), t.at(i + 1)), ('a', 'r' | 'b' | 'p') | ('r', 'o') | ('c', 'i')) {
        for p in ["around", "about", "approximately", "approx", "roughly", "circa"] {
            if let Some(e) = t.phrase(i, p) {
                best.offer(e, Atom::Glue(Glue::Approx));
            }
        }
    }
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

/// Weekday name at `i`: (0 = Monday, end, plural, ambiguous abbreviation).
fn weekday_name(t: &Text, i: usize) -> Option<(u8, usize, bool, bool)> {
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
fn month_name(t: &Text, i: usize) -> Option<(u32, usize, bool)> {
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

fn prev_word_is_context(t: &Text, i: usize) -> bool {
    match t.prev_word(i) {
        Some(w) => CONTEXT_WORDS.iter().any(|c| t.word_eq(w, c)),
        None => false,
    }
}

/// Day number with optional ordinal suffix: (day, end). Rejects clock-like numbers.
fn day_number(t: &Text, i: usize) -> Option<(u32, usize)> {
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
fn trailing_year(t: &Text, e: usize) -> Option<(i32, usize)> {
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

fn ymd_atom(year: Option<i32>, m: u32, d: Option<u32>) -> Atom {
    date_atom(|x| {
        x.year = year.map(YearSpec::Abs);
        x.month = Some(MonthSpec::Abs(m));
        x.day = d;
    })
}

/// march 3, Mar 5th, Feb 8 2026, April 14, 2015, february the 15th, march 2026, (in) march.
fn month_first_date(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
    if !weak && !prev_word_is_context(t, i) && t.prev_word(i).is_some_and(|w| t.word_eq(w, "the")) {
        return None;
    }
    Some((e, ymd_atom(None, m, None)))
}

/// 24th October, 5 March 2026, 15th of march.
fn day_first_date(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
    if let Some(x) = t.phrase(k, "of") {
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
fn ordinal_day(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn the_day(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// A month named after "of"/"in": a month name (with a year), this/next/last month, the month.
/// (end, (month, year)).
fn month_reference(t: &Text, k: usize) -> Option<(usize, (MonthSpec, Option<YearSpec>))> {
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

/// The week a business-day ordinal counts in: "of next week", "of the week". (end, week).
fn week_reference(t: &Text, k: usize) -> Option<(usize, i32)> {
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
fn nth_weekday(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn possessive_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn nth_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// Parts of day that make a following-word context for the short weekday names (sat, sun, mon, wed).
const PARTS_AFTER_WEEKDAY: &[&str] = &[
    "morning", "afternoon", "evening", "night", "noon", "lunch", "dinner", "breakfast", "am", "a.m.", "pm",
    "p.m.", "eve",
];

/// Weekdays with their modifiers: monday, next friday, this sat, last tuesday, friday after next,
/// this coming monday, every monday and friday, mondays.
fn weekday_expr(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
                return Some((e2, date_atom(|x| x.recur = Some(r))));
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
        return Some((e, date_atom(|x| x.recur = Some(r))));
    }
    if weak && md == Md::Bare {
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
        let ok = prev_word_is_context(t, i)
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
                    }));
        if !ok {
            return None;
        }
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

/// this/next/last week|weekend|month|year|<month name>, the week after next, the weekend ...
fn modified_period(t: &Text, i: usize) -> Option<(usize, Atom)> {
    const FIXED: &[(&str, i32, u8)] = &[
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
    let mut best: Option<(usize, Atom)> = None;
    let mut offer = |e: usize, a: Atom| {
        if best.is_none_or(|(be, _)| e > be) {
            best = Some((e, a));
        }
    };
    for &(p, n, kind) in FIXED {
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
    // next march / last may / this june
    if let Some((e, k)) = t.phrase_longest(i, &["next", "last", "this"]) {
        let k2 = t.skip_ws(e);
        if k2 > e
            && let Some((m, e2, _)) = month_name(t, k2)
        {
            let spec = match k {
                0 => MonthSpec::NextAbs(m),
                1 => MonthSpec::LastAbs(m),
                _ => MonthSpec::Abs(m),
            };
            offer(e2, date_atom(|x| x.month = Some(spec)));
        }
    }
    best
}

/// end of the month, beginning of next month, the end of march, end of the year.
fn month_part(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
    const PERIODS: &[(&str, i32, bool)] = &[
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
    const WEEKS: &[(&str, i32)] = &[
        ("the week", 0),
        ("week", 0),
        ("this week", 0),
        ("the current week", 0),
        ("next week", 1),
        ("the next week", 1),
        ("the following week", 1),
        ("last week", -1),
    ];
    if k < 5
        && let Some((e2, p)) = t.phrase_longest_in(k2, WEEKS, |x| x.0)
    {
        d.week = Some(WEEKS[p].1);
        d.weekday = Some(match part {
            MonthPart::Begin => 0,
            MonthPart::Mid => 2,
            _ => 4,
        });
        d.guessed = part != MonthPart::Begin;
        d.part = None;
        return Some((e2, Atom::Date(d)));
    }
    if let Some((e2, p)) = t.phrase_longest_in(k2, PERIODS, |x| x.0) {
        let (_, n, is_year) = PERIODS[p];
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

#[derive(Clone, Copy, PartialEq)]
enum EnUnit {
    Minute,
    Hour,
    Cal(Unit),
}

/// Unit word: (unit, end, multiplier) — fortnight = 2 weeks.
fn unit_word(t: &Text, i: usize) -> Option<(EnUnit, usize, u32)> {
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
fn fraction(c: char) -> Option<u32> {
    match c {
        '¼' => Some(25),
        '½' => Some(50),
        '¾' => Some(75),
        _ => None,
    }
}

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

/// in 3 days, in half an hour, 2 weeks from now, 3 days ago, 5 minutes later, a week after (base),
/// and durations: 2 hours, 90 minutes, an hour and a half, 45-minute, 2h30, 5 days, for a week.
fn offset_or_duration(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut j = i;
    let mut dir = 0i32;
    let mut within = false;
    if let Some((e, d, w)) = span_prefix(t, i) {
        j = t.skip_ws(e);
        if j == e {
            return None;
        }
        dir = d;
        within = w;
    }
    // "within the next hour": one unit (hours and minutes only: "in the next week" is next week)
    let implicit_one = within && amount(t, j).is_none() && matches!(unit_word(t, j), Some((EnUnit::Minute | EnUnit::Hour, _, _)));
    // "in a few days", "a few weeks from now": two to four, a span like "in 2-4 days"
    let few = if implicit_one { None } else { t.phrase_longest(j, &["a few", "few"]).map(|x| x.0) };
    let (amt, e, article) = match few {
        Some(x) => (200, x, false),
        None if implicit_one => (100, j, true),
        None => amount(t, j)?,
    };
    // "in 2-3 days", "3 or 4 hours from now": an approximate amount, a span
    let mut hi_amt = None;
    if !article && amt % 100 == 0 {
        let k = t.skip_ws(e);
        let k2 = if t.at(e) == '-' {
            Some(e + 1)
        } else if k > e {
            t.phrase_longest(k, &["or", "to"]).map(|(x, _)| t.skip_ws(x)).filter(|&x| x > k)
        } else {
            None
        };
        if let Some(k2) = k2
            && let Some((hi, e2, false)) = amount(t, k2)
            && hi == amt + 100
        {
            hi_amt = Some((hi, e2));
        }
    }
    let e = hi_amt.map_or(e, |h| h.1);
    let hi_amt = if few.is_some() { Some(400) } else { hi_amt.map(|h| h.0) };
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
    let mut needs_base = false;
    if dir == 0 {
        let k = t.skip_ws(e);
        if k > e {
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
            if let Some((x, p)) = t.phrase_longest_in(k, DIRS, |d| d.0) {
                dir = DIRS[p].1;
                needs_base = DIRS[p].2;
                e = x;
            } else if unit == EnUnit::Cal(Unit::Week)
                && !t.prev_word(i).is_some_and(|w| t.word_eq(w, "for") || t.word_eq(w, "lasting"))
                && {
                // British "a week tomorrow", "two weeks today", "a week on friday": that many
                // weeks after the day named next (which the grammar joins as the base)
                let k2 = t.phrase(k, "on").map_or(k, |x| t.skip_ws(x));
                t.phrase_longest(k2, &["tomorrow", "today", "tmrw"]).is_some() || weekday_name(t, k2).is_some_and(|w| !w.2)
            } {
                dir = 1;
                needs_base = true;
            }
        }
    }
    if hi_amt.is_some() && (dir == 0 || needs_base) {
        return None;
    }
    match unit {
        EnUnit::Minute | EnUnit::Hour => {
            let per = if unit == EnUnit::Minute { 1 } else { 60 };
            let mins = amt * per / 100 + extra;
            if mins == 0 || needs_base {
                return None;
            }
            if within || hi_amt.is_some() {
                let hi = (hi_amt.unwrap_or(amt) * per / 100 + extra) as i64 * dir as i64;
                let lo = if within { 0 } else { mins as i64 * dir as i64 };
                return Some((e, Atom::TimeSpan(lo.min(hi), lo.max(hi), few.is_some())));
            }
            if dir == 0 {
                return Some((e, Atom::Duration(mins)));
            }
            Some((e, Atom::TimeOffset(dir as i64 * mins as i64)))
        }
        EnUnit::Cal(u) if dir == 0 => {
            // a length in days or weeks: "5 days", "ten days", "for a week" ("a day" alone is
            // too often "once a day")
            let per_day = match u {
                Unit::Day => 1440,
                Unit::Week => 7 * 1440,
                _ => return None,
            };
            let after_for = t
                .prev_word(i)
                .is_some_and(|w| t.word_eq(w, "for") || t.word_eq(w, "lasting") || t.word_eq(w, "by"));
            if amt == 0 || (article && !after_for) {
                return None;
            }
            let minutes = u32::try_from(u64::from(amt) * per_day / 100).ok()?;
            Some((e, Atom::Duration(minutes)))
        }
        EnUnit::Cal(u) if within || hi_amt.is_some() => {
            if amt % 100 != 0 || needs_base {
                return None;
            }
            let hi = (hi_amt.unwrap_or(amt) / 100) as i32 * dir;
            let lo = if within { 0 } else { (amt / 100) as i32 * dir };
            Some((
                e,
                date_atom(|x| {
                    x.offset = Some((lo.min(hi), u));
                    x.offset_end = Some(lo.max(hi));
                    // "a few" is two to four by convention
                    x.guessed = few.is_some();
                }),
            ))
        }
        EnUnit::Cal(u) => {
            if amt % 100 != 0 && !needs_base && matches!(u, Unit::Day | Unit::Week) {
                // "a day and a half from now", "in 1.5 days": 36 hours on, to the minute
                let per_day: u64 = if u == Unit::Day { 1440 } else { 7 * 1440 };
                let mins = i64::try_from(u64::from(amt) * per_day / 100).ok()?;
                return Some((e, Atom::TimeOffset(dir as i64 * mins)));
            }
            if amt % 100 != 0 || amt == 0 {
                return None;
            }
            let n = (amt / 100) as i32 * dir;
            Some((
                e,
                date_atom(|x| {
                    x.offset = Some((n, u));
                    x.needs_base = needs_base;
                }),
            ))
        }
    }
}

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
fn word_clock(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
    (half || before || after).then_some((e, Atom::Clock(c)))
}

/// "o'clock" as people type it: with either apostrophe, without one, or with a space for it.
const O_CLOCK: &[&str] = &["o'clock", "oclock", "o’clock", "o clock"];

/// a quarter past 3pm, half past 3, quarter to noon, 10 past 5, 3 o'clock.
fn clock_phrase(t: &Text, i: usize) -> Option<(usize, Atom)> {
    // "3 o'clock"
    if let Some((h, e)) = if t.at(i).is_ascii_digit() {
        ascii_int(t, i).map(|(h, e, _)| (h, e))
    } else {
        en_number_word(t, i)
    } {
        let k = t.skip_ws(e);
        if let Some((x, _)) = t.phrase_longest(k, O_CLOCK)
            && (1..=12).contains(&h)
        {
            let mut c = Clock::bare(h);
            let mut x = x;
            if let Some((mer, e2)) = meridiem(t, x) {
                c.mer = Some(mer);
                x = e2;
            }
            return Some((x, Atom::Clock(c)));
        }
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
        // "quarter to noon" = 11:45, "quarter to 3pm" = 14:45
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
    };
    Some((e2, Atom::Clock(c)))
}

/// every day, daily, every weekday, weekdays, weekly, every month, monthly, every year,
/// every other day, every 2 weeks, hourly, biweekly, every weekend.
fn recurrence(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
    // every 3 days / every 2 weeks / every second week / every 3rd day
    if let Some(e) = t.phrase(i, "every") {
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
    }
    best
}
