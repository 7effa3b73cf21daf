//! Turns the normalised text into a list of atoms: at each position the longest candidate of the
//! digit, Chinese and English lexers wins; unknown text is skipped (and breaks adjacency).
//! Afterwards bare numbers are read as hours or days from their neighbours ("at 3", "3-4pm",
//! "July 13-15", "9~12点半") or dropped.

use super::numerals::{ascii_int, is_zh_num_char, zh_int};
use super::text::Text;
use super::segment::SegKind;
use super::types::{Atom, Best, Clock, Conn, DateParts, Glue, Mer, Tok, Unit, date_atom};
use super::{digits, en, is_han, zh};

fn punct(t: &Text, i: usize, best: &mut Best) {
    match t.at(i) {
        '-' | '~' => {
            let mut e = i + 1;
            while matches!(t.at(e), '-' | '~') {
                e += 1;
            }
            // "->" arrow
            if t.at(e) == '>' {
                e += 1;
            }
            best.offer(e, Atom::Conn(Conn::To));
        }
        ',' | '、' | '(' | ')' => best.offer(i + 1, Atom::Glue(Glue::Soft)),
        '@' => best.offer(i + 1, Atom::Glue(Glue::At)),
        _ => {}
    }
}

pub(crate) fn lex_all(t: &Text) -> Vec<Tok> {
    let mut toks: Vec<Tok> = Vec::with_capacity(8);
    let n = t.len();
    let mut i = 0;
    let mut last_end = usize::MAX;
    while i < n {
        let c = t.at(i);
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let mut best = Best::new(i);
        let alnum = c.is_ascii_alphanumeric();
        if c.is_ascii_digit() {
            digits::lex(t, i, &mut best);
        }
        if is_han(c) || c.is_ascii_digit() {
            zh::lex(t, i, last_end == i, &mut best);
        }
        if alnum || matches!(c, '¼' | '½' | '¾') {
            en::lex(t, i, &mut best);
        }
        if !alnum && !is_han(c) {
            punct(t, i, &mut best);
        }
        if best.atom.is_none()
            && is_han(c)
            && let Some((c1, e1, c2, e2)) = zh::hour_pair(t, i)
        {
            // "两三点": 两 to 三点, the connector between them has no width
            toks.push(Tok { s: i, e: e1, a: Atom::Clock(c1) });
            toks.push(Tok { s: e1, e: e1, a: Atom::Conn(Conn::To) });
            toks.push(Tok { s: e1, e: e2, a: Atom::Clock(c2) });
            i = e2;
            last_end = i;
            continue;
        }
        let found = best.atom.map(|a| (best.end, a)).or_else(|| bare_number(t, i, c, last_end));
        if let Some((e, a)) = found {
            toks.push(Tok { s: i, e, a });
            i = e;
            last_end = i;
            continue;
        }
        if alnum {
            // skip the rest of the word
            let mut e = i + 1;
            while t.is_alnum(e) {
                e += 1;
            }
            i = e;
        } else {
            i += 1;
        }
    }
    classify_bare(t, &mut toks);
    meal_hours(t, &mut toks);
    join_compound_offsets(t, &mut toks);
    toks
}

/// An offset in minutes or in whole days, with its sign: (minutes, days).
fn offset_amount(a: &Atom) -> Option<(i64, bool)> {
    match *a {
        Atom::TimeOffset(m) => Some((m, false)),
        Atom::Date(d)
            if !d.needs_base
                && d.offset_end.is_none()
                && matches!(d.offset, Some((_, Unit::Day | Unit::Week)))
                && DateParts { offset: None, ..d }.is_empty() =>
        {
            let (n, u) = d.offset?;
            Some((n as i64 * if u == Unit::Week { 7 * 1440 } else { 1440 }, true))
        }
        _ => None,
    }
}

/// Whether the offset at `tok` says its direction first ("in 1 hour", 过3天), so that a length
/// written after it continues it ("in 1 hour 30 minutes"); an offset whose direction comes last
/// ("4 hours from now", 三小时后) is continued by a length before it ("3 days 4 hours from now").
fn direction_first(t: &Text, tok: &Tok) -> bool {
    t.phrase(tok.s, "in").is_some() || t.at(tok.s) == '过' || t.lit(tok.s, "再过").is_some()
}

/// A run of lengths and an offset written together are one offset: "3 days 4 hours from now",
/// 两天三小时后, 两周零三天后, 1小时20分钟后, "in 1 hour 30 minutes", "in 2 weeks and 2 days". Whole
/// days stay a date (grain day), anything finer is minutes from now.
fn join_compound_offsets(t: &Text, toks: &mut Vec<Tok>) {
    // the piece after token `p`: next to it, or after an "and", 又 or 零 next to both
    let next = |toks: &[Tok], p: usize| -> Option<usize> {
        let plus = toks.get(p + 1).is_some_and(|x| matches!(x.a, Atom::Conn(Conn::And) | Atom::Glue(Glue::Plus)));
        let n = if plus { p + 2 } else { p + 1 };
        (n < toks.len() && (n == p + 1 || adj(t, &toks[p], &toks[p + 1])) && adj(t, &toks[n - 1], &toks[n])).then_some(n)
    };
    let length = |toks: &[Tok], n: usize| match toks[n].a {
        Atom::Duration(m) => Some(m as i64),
        _ => None,
    };
    let mut i = 0;
    while i < toks.len() {
        let offset_first = offset_amount(&toks[i].a).is_some() && direction_first(t, &toks[i]);
        let Some(mut minutes) = (if offset_first { Some(0) } else { length(toks, i) }) else {
            i += 1;
            continue;
        };
        let mut p = i;
        while let Some(n) = next(toks, p)
            && let Some(m) = length(toks, n)
        {
            minutes += m;
            p = n;
        }
        let off = if offset_first {
            Some(i).filter(|_| p > i)
        } else {
            next(toks, p).filter(|&n| offset_amount(&toks[n].a).is_some() && !direction_first(t, &toks[n]))
        };
        let Some(off) = off else {
            i += 1;
            continue;
        };
        let end = if offset_first { p } else { off };
        let (base, days) = offset_amount(&toks[off].a).unwrap_or((0, false));
        let total = base.signum() * (base.abs() + minutes);
        let a = if days && minutes % 1440 == 0 {
            date_atom(|d| d.offset = Some(((total / 1440) as i32, Unit::Day)))
        } else {
            Atom::TimeOffset(total)
        };
        toks[i] = Tok { s: toks[i].s, e: toks[end].e, a };
        toks.drain(i + 1..=end);
        i += 1;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Meal {
    Breakfast,
    Lunch,
    Dinner,
}

/// The meal word starting at `j` (English words whole, Chinese as written).
fn meal_at(t: &Text, j: usize) -> Option<Meal> {
    const EN: &[(&str, Meal)] = &[
        ("breakfast", Meal::Breakfast),
        ("brunch", Meal::Breakfast),
        ("lunch", Meal::Lunch),
        ("dinner", Meal::Dinner),
        ("supper", Meal::Dinner),
        ("drinks", Meal::Dinner),
    ];
    const ZH: &[(&str, Meal)] = &[
        ("早饭", Meal::Breakfast),
        ("早餐", Meal::Breakfast),
        ("午饭", Meal::Lunch),
        ("午餐", Meal::Lunch),
        ("中饭", Meal::Lunch),
        ("晚饭", Meal::Dinner),
        ("晚餐", Meal::Dinner),
    ];
    let c = t.at(j);
    if matches!(c, 'b' | 'l' | 'd' | 's') {
        EN.iter().find(|(w, _)| t.phrase(j, w).is_some()).map(|x| x.1)
    } else if matches!(c, '早' | '午' | '中' | '晚') && matches!(t.at(j + 1), '饭' | '餐') {
        ZH.iter().find(|(w, _)| t.lit(j, w).is_some()).map(|x| x.1)
    } else {
        None
    }
}

/// The meal named in the clause of a clock time at `s..e`: up to 5 English words or 6 Han
/// characters before it, or 3 words or 5 Han characters after it (not past 然后 or "then"), not
/// across a sentence break or another number.
fn meal_near(t: &Text, s: usize, e: usize) -> Option<Meal> {
    let next_clause = |j| t.lit(j, "然后").is_some() || t.phrase(j, "then").is_some();
    meal_within(t, (0..s).rev(), 6, 5, |_| false).or_else(|| meal_within(t, e..t.len(), 5, 3, next_clause))
}

/// The first meal named at `positions` (walked in their order) within `most_han` Han characters
/// and `most_words` English words, stopping at a sentence break, a number or where `stops_here`.
fn meal_within(
    t: &Text,
    positions: impl Iterator<Item = usize>,
    most_han: usize,
    most_words: usize,
    stops_here: impl Fn(usize) -> bool,
) -> Option<Meal> {
    let stop = |c: char| matches!(c, '.' | '!' | '?' | ';' | ',' | '。' | '！' | '？' | '；' | '，' | '\n') || c.is_ascii_digit();
    let (mut words, mut han) = (0, 0);
    for j in positions {
        let c = t.at(j);
        if stop(c) || stops_here(j) {
            break;
        }
        if is_han(c) {
            han += 1;
        } else if c.is_ascii_alphabetic() && !t.before(j).is_ascii_alphabetic() {
            words += 1;
        } else {
            continue;
        }
        if han > most_han || words > most_words {
            break;
        }
        if let Some(m) = meal_at(t, j) {
            return Some(m);
        }
    }
    None
}

/// A meal said with a bare hour decides its half of the day: dinner, supper, drinks, 晚饭, 晚餐 at
/// 1-11 are in the evening ("dinner at 7 tomorrow" = 19:00, "七点吃晚饭"), lunch, 午饭, 午餐 at 1-2
/// after noon, breakfast, brunch, 早饭, 早餐 at 5-11 in the morning. A meal names when people eat, which a bare hour alone cannot.
fn meal_hours(t: &Text, toks: &mut [Tok]) {
    for tok in toks.iter_mut() {
        let Atom::Clock(c) = tok.a else { continue };
        if !c.is_bare() || c.padded || c.guessed || !(1..=11).contains(&c.h) {
            continue;
        }
        let mer = match meal_near(t, tok.s, tok.e) {
            Some(Meal::Dinner) => Mer::Pm,
            Some(Meal::Lunch) if c.h <= 2 => Mer::Pm,
            Some(Meal::Breakfast) if c.h >= 5 => Mer::Am,
            _ => continue,
        };
        tok.a = Atom::Clock(Clock { mer: Some(mer), ..c });
    }
}

/// A number nothing claimed at `i`, kept as [`Atom::Bare`] for [`classify_bare`] to decide: ASCII
/// digits standing alone, or Chinese numerals right before a range connector (十到十二).
fn bare_number(t: &Text, i: usize, c: char, last_end: usize) -> Option<(usize, Atom)> {
    if c.is_ascii_digit()
        && !t.before(i).is_ascii_alphanumeric()
        && let Some((v, e, _)) = ascii_int(t, i)
        && !t.at(e).is_ascii_alphabetic()
        && t.at(e) != '.'
        && v <= 31
    {
        return Some((e, Atom::Bare(v)));
    }
    if is_zh_num_char(c)
        && (last_end == i || !is_zh_num_char(t.before(i)))
        && let Some((v, e)) = zh_int(t, i)
        && matches!(t.at(e), '到' | '至' | '-' | '~')
        && v <= 31
    {
        return Some((e, Atom::Bare(v)));
    }
    None
}

#[inline]
fn adj(t: &Text, a: &Tok, b: &Tok) -> bool {
    t.gap_is_ws(a.e, b.s)
}

/// Decide what each bare number is from its neighbours, then drop the undecided ones.
fn classify_bare(t: &Text, toks: &mut Vec<Tok>) {
    if !toks.iter().any(|k| matches!(k.a, Atom::Bare(_))) {
        return;
    }
    let n = toks.len();
    for _ in 0..3 {
        let mut changed = false;
        for i in 0..n {
            let Atom::Bare(v) = toks[i].a else { continue };
            let new = bare_reading(t, toks, i, v);
            if let Some(a) = new {
                toks[i].a = a;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    toks.retain(|k| !matches!(k.a, Atom::Bare(_)));
}

/// What the bare number `v` of token `i` is, read from its neighbours: an hour ("at 3", "3-4pm",
/// "8 tonight", "monday 9-11"), a day ("July 13-15") or nothing yet.
fn bare_reading(t: &Text, toks: &[Tok], i: usize, v: u32) -> Option<Atom> {
    let n = toks.len();
    let prev = (i > 0 && adj(t, &toks[i - 1], &toks[i])).then(|| toks[i - 1].a);
    let prev2 = (prev.is_some() && i > 1 && adj(t, &toks[i - 2], &toks[i - 1]))
        .then(|| toks[i - 2].a);
    let next = (i + 1 < n && adj(t, &toks[i], &toks[i + 1])).then(|| toks[i + 1].a);
    let next2 = (next.is_some() && i + 2 < n && adj(t, &toks[i + 1], &toks[i + 2]))
        .then(|| toks[i + 2].a);
    let hour = v <= 24;
    let h12 = (1..=12).contains(&v);
    let is_conn = |a: Option<Atom>| matches!(a, Some(Atom::Conn(_)));
    let is_clock = |a: Option<Atom>| matches!(a, Some(Atom::Clock(_)));
    // "around 3", "about 3, ..." but not "about 3 people"
    let approx = h12
        && matches!(prev, Some(Atom::Glue(Glue::Approx)))
        && (next.is_some() || !t.at(t.skip_ws(toks[i].e)).is_alphanumeric());
    if (hour && matches!(prev, Some(Atom::Glue(Glue::At)))) || approx {
        Some(Atom::Clock(Clock::bare(v)))
    } else if h12 && matches!(next, Some(Atom::Seg(s)) if !s.daily) {
        // "8 tonight", "6 in the afternoon"
        Some(Atom::Clock(Clock::bare(v)))
    } else if h12
        && matches!(prev, Some(Atom::Seg(s)) if !s.daily && s.kind != SegKind::AllDay)
        && (next.is_none() || is_conn(next) || is_clock(next2))
    {
        // "tuesday afternoon 2-4", "tomorrow morning 9"
        Some(Atom::Clock(Clock::bare(v)))
    } else if h12
        && matches!(prev, Some(Atom::Date(d)) if (d.weekday.is_some() || d.rel_day.is_some()) && d.day.is_none() && d.recur.is_none())
        && is_conn(next)
        && matches!(next2, Some(Atom::Bare(w)) if (1..=12).contains(&w))
        // not "monday 3-4 people"
        && (i + 3 < n && adj(t, &toks[i + 2], &toks[i + 3]) || !t.at(t.skip_ws(toks[i + 2].e)).is_alphanumeric())
    {
        // "monday 9-11", "tomorrow 2-4": hours of that day
        Some(Atom::Clock(Clock::bare(v)))
    } else if h12
        && matches!(next, Some(Atom::Date(d)) if d.rel_day.is_some())
        && matches!(next2, Some(Atom::Seg(_)))
    {
        // "9 tomorrow morning"
        Some(Atom::Clock(Clock::bare(v)))
    } else if hour && is_conn(next) && is_clock(next2) {
        // "3-4pm", "9~12点半"
        Some(Atom::Clock(Clock::bare(v)))
    } else if hour && is_conn(prev) && is_clock(prev2) {
        // "3pm to 5", "from 3 to 5"
        Some(Atom::Clock(Clock::bare(v)))
    } else if (1..=31).contains(&v)
        && matches!(prev, Some(Atom::Conn(Conn::To)))
        && matches!(prev2, Some(Atom::Date(d)) if d.day.is_some())
    {
        // "July 13-15", "7月13日到15"
        Some(date_atom(|x| x.day = Some(v)))
    } else if hour
        && matches!(prev, Some(Atom::Prefix(_)))
        && is_conn(next)
        && matches!(next2, Some(Atom::Bare(_)) | Some(Atom::Clock(_)))
    {
        // "from 3 to 5", "between 9 and 11"
        Some(Atom::Clock(Clock::bare(v)))
    } else {
        None
    }
}
