//! Combines adjacent atoms into expressions: a point (date + part of day + clock time, in any
//! order), optionally a range to a second point, optionally a trailing duration.
//! Atoms are adjacent when only whitespace separates them; glue words (at, on, of, 的, commas)
//! may stand inside an expression but never at its edges.

use super::lexer::lex_all;
use super::text::Text;
use super::types::{Atom, Clock, Conn, DateParts, Freq, Glue, Prefix, Recur, SegAtom, Tok};

/// One point in time as written: any of a date, a part of day, a clock time; or an offset from now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Point {
    pub s: usize,
    pub e: usize,
    pub date: DateParts,
    /// The date was written after the clock time ("3pm tomorrow").
    pub date_after_time: bool,
    pub seg: Option<SegAtom>,
    pub clock: Option<Clock>,
    /// Offset from the reference instant, minutes.
    pub toff: Option<i64>,
    /// The end of a span of offsets ("两小时内", "within 2 hours"), minutes.
    pub toff_end: Option<i64>,
    /// The span's amount is a convention ("in a few minutes").
    pub toff_guessed: bool,
    pub now: bool,
    /// "明天这个时候", "same time next week": the reference time of day.
    pub same_time: bool,
}

impl Point {
    fn is_empty(&self) -> bool {
        self.date.is_empty()
            && self.seg.is_none()
            && self.clock.is_none()
            && self.toff.is_none()
            && !self.now
            && !self.same_time
    }

    /// With the same time of day, a period is a shift: "下周的这个时候", "this time next week" =
    /// 7 days on, not the week.
    fn shift_period(&mut self) {
        if self.same_time
            && let Some((n, u)) = self.date.period_shift()
        {
            self.date = DateParts::shifted(n, u);
        }
    }

    /// Add one atom; false when it does not fit.
    fn add(&mut self, a: &Atom) -> bool {
        match *a {
            Atom::Date(d) => {
                if self.toff.is_some() || self.now || !self.date.merge(&d) {
                    return false;
                }
                if self.clock.is_some() || self.same_time {
                    self.date_after_time = true;
                }
                self.shift_period();
                true
            }
            Atom::SameTime => {
                if self.clock.is_some() || self.seg.is_some() || self.same_time || self.toff.is_some() || self.now {
                    return false;
                }
                self.same_time = true;
                self.shift_period();
                true
            }
            Atom::Seg(s) => self.add_segment(s),
            Atom::Clock(c) => {
                if self.clock.is_some() || self.toff.is_some() || self.now || self.same_time {
                    return false;
                }
                self.clock = Some(c);
                true
            }
            Atom::TimeOffset(m) => {
                if !self.is_empty() {
                    return false;
                }
                self.toff = Some(m);
                true
            }
            Atom::TimeSpan(a, b, guessed) => {
                if !self.is_empty() {
                    return false;
                }
                self.toff = Some(a);
                self.toff_end = Some(b);
                self.toff_guessed = guessed;
                true
            }
            Atom::Now => {
                if !self.is_empty() {
                    return false;
                }
                self.now = true;
                true
            }
            _ => false,
        }
    }

    /// Add a part of day, with the day it names (今晚) or its daily recurrence (every morning).
    fn add_segment(&mut self, s: SegAtom) -> bool {
        if self.seg.is_some() || self.toff.is_some() || self.now || self.same_time {
            return false;
        }
        let mut nd = self.date;
        if let Some(day) = s.day
            && !nd.merge(&DateParts {
                rel_day: Some(day),
                ..Default::default()
            })
        {
            return false;
        }
        if s.daily
            && !nd.merge(&DateParts {
                recur: Some(Recur::new(Freq::Daily)),
                ..Default::default()
            })
        {
            return false;
        }
        if self.clock.is_some() && s.day.is_some() {
            self.date_after_time = true;
        }
        self.date = nd;
        self.seg = Some(s);
        true
    }

    /// Merge another point into this one (used by `resolve` for separated pieces).
    pub(crate) fn merge(&self, o: &Point) -> Option<Point> {
        if self.toff.is_some() || o.toff.is_some() || self.now || o.now {
            return None;
        }
        let mut p = *self;
        if !p.date.merge(&o.date) {
            return None;
        }
        if o.seg.is_some() {
            if p.seg.is_some() {
                return None;
            }
            p.seg = o.seg;
        }
        if o.clock.is_some() {
            if p.clock.is_some() || p.same_time {
                return None;
            }
            p.clock = o.clock;
        }
        if o.same_time {
            if p.clock.is_some() || p.seg.is_some() || p.same_time {
                return None;
            }
            p.same_time = true;
        }
        p.shift_period();
        p.e = o.e;
        Some(p)
    }

    /// A point that cannot be resolved on its own (an offset that needs a base date).
    pub(crate) fn is_valid(&self) -> bool {
        !(self.date.needs_base && self.date.offset.is_some() && !self.has_base())
    }

    fn has_base(&self) -> bool {
        let d = &self.date;
        d.rel_day.is_some() || d.next_day || d.weekday.is_some() || d.has_ymd()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    Point(Point),
    Range(Point, Point),
    Duration(u32),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expr {
    pub s: usize,
    pub e: usize,
    pub body: Body,
    pub duration: Option<u32>,
    /// Words inside `s..e` that are not part of the expression: what stands between a start and
    /// its duration ("后天上午10点|评审，开|一个半小时").
    pub gap: Option<(usize, usize)>,
}

/// The expressions of the text, left to right, each read from adjacent atoms (the passes of
/// `crate::clauses` then join those a few words apart).
pub(crate) fn expressions(t: &Text) -> Vec<Expr> {
    let toks = lex_all(t);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if matches!(toks[i].a, Atom::Glue(_) | Atom::Conn(_) | Atom::Bare(_)) {
            i += 1;
            continue;
        }
        match parse_expr(t, &toks, i) {
            Some((e, next)) => {
                out.push(e);
                i = next.max(i + 1);
            }
            None => i += 1,
        }
    }
    out
}

/// A run of durations that add up: "3天12小时", "2 hours 30 minutes", "两个星期又一天",
/// "an hour and 15 minutes". (minutes, index after the run).
fn duration_run(t: &Text, toks: &[Tok], j: usize) -> Option<(u32, usize)> {
    let Atom::Duration(mut minutes) = toks[j].a else { return None };
    let mut k = j + 1;
    loop {
        let mut n = k;
        if n < toks.len() && adj(t, &toks[n - 1], &toks[n]) && matches!(toks[n].a, Atom::Conn(Conn::And) | Atom::Glue(Glue::Plus)) {
            n += 1;
        }
        match toks.get(n) {
            Some(&Tok { a: Atom::Duration(m), .. }) if adj(t, &toks[n - 1], &toks[n]) => {
                minutes = minutes.saturating_add(m);
                k = n + 1;
            }
            _ => return Some((minutes, k)),
        }
    }
}

#[inline]
fn adj(t: &Text, a: &Tok, b: &Tok) -> bool {
    t.gap_is_ws(a.e, b.s)
}

/// Parse a point starting at token `k0`: (point, index after its last token, saw "between").
fn parse_point(t: &Text, toks: &[Tok], k0: usize) -> Option<(Point, usize, bool)> {
    let mut p = Point::default();
    let mut first: Option<usize> = None;
    let mut last: Option<usize> = None;
    let mut between = false;
    let mut glued = false;
    let mut j = k0;
    while j < toks.len() {
        if j > k0 && !adj(t, &toks[j - 1], &toks[j]) {
            break;
        }
        match toks[j].a {
            Atom::Glue(Glue::At) | Atom::Glue(Glue::Approx) | Atom::Glue(Glue::Soft) => {
                if first.is_none() {
                    break;
                }
                glued = true;
                j += 1;
                continue;
            }
            // "3点，晚上开会": a part of day after a clock time only when written right after it
            Atom::Seg(_) if glued && p.clock.is_some() => break,
            Atom::Prefix(pf) => {
                // "Thursday from 9a to 11a", "thursday between 9 and 11"
                if first.is_none() || !matches!(toks.get(j + 1).map(|k| k.a), Some(Atom::Clock(_)))
                {
                    break;
                }
                between |= pf == Prefix::Between;
                j += 1;
                continue;
            }
            ref a => {
                if !p.add(a) {
                    break;
                }
            }
        }
        if first.is_none() {
            first = Some(j);
        }
        glued = false;
        last = Some(j);
        j += 1;
    }
    let (first, last) = (first?, last?);
    p.s = toks[first].s;
    p.e = toks[last].e;
    Some((p, last + 1, between))
}

fn range_ok(a: &Point, b: &Point) -> bool {
    if a.toff.is_some() || b.toff.is_some() || b.now || b.date.recur.is_some() || a.same_time || b.same_time {
        return false;
    }
    if !a.is_valid() || !b.is_valid() {
        return false;
    }
    if a.now && a.date.is_empty() && b.clock.is_none() && b.seg.is_none() {
        // "from now until friday", 从现在到周五: now to the end of that day
        return !b.date.is_empty() && b.date.offset.is_none();
    }
    if a.clock.is_some() || a.now {
        return b.clock.is_some();
    }
    if b.clock.is_some() {
        // "周一到周五上午九点", "monday to friday at 9am": the hour holds for each day of a range
        // of weekdays (said of dates it may be when the range ends: 5号到7号下午3点)
        return a.seg.is_none()
            && a.date.weekday.is_some()
            && b.date.weekday.is_some()
            && a.date.offset.is_none()
            && b.date.offset.is_none()
            && a.date.recur.is_none()
            && b.date.recur.is_none();
    }
    // a range of dates, possibly with a part of day ("周一到周三的下午")
    if a.seg.is_some() && b.seg.is_some() && a.seg.map(|s| s.kind) != b.seg.map(|s| s.kind) {
        return false;
    }
    !a.date.is_empty()
        && !b.date.is_empty()
        && a.date.offset.is_none()
        && b.date.offset.is_none()
        && a.date.recur.is_none()
}

fn parse_expr(t: &Text, toks: &[Tok], i: usize) -> Option<(Expr, usize)> {
    let n = toks.len();
    if let Some((m, next)) = duration_run(t, toks, i) {
        let e = Expr {
            s: toks[i].s,
            e: toks[next - 1].e,
            body: Body::Duration(m),
            duration: Some(m),
            gap: None,
        };
        return Some((e, next));
    }
    let mut k = i;
    let mut prefix = None;
    if let Atom::Prefix(p) = toks[k].a {
        if k + 1 >= n || !adj(t, &toks[k], &toks[k + 1]) {
            return None;
        }
        prefix = Some(p);
        k += 1;
    }
    let (p1, k1, between) = parse_point(t, toks, k)?;
    if !p1.is_valid() {
        return None;
    }
    let s = if prefix.is_some() { toks[i].s } else { p1.s };
    let (mut e, mut k, body) = match range_end(t, toks, &p1, k1, prefix == Some(Prefix::Between) || between) {
        Some((p2, k2)) => (p2.e, k2, Body::Range(p1, p2)),
        // "from now" with no end is the tail of an offset not read ("a few weeks from now")
        None if prefix == Some(Prefix::From) && p1.now && p1.date.is_empty() => return None,
        None => (p1.e, k1, Body::Point(p1)),
    };
    // a duration right after the expression: "下午3点开始，持续2小时", "from 4pm for 30 minutes"
    let mut duration = None;
    if let Some((m, next)) = trailing_duration(t, toks, k, e) {
        duration = Some(m);
        e = toks[next - 1].e;
        k = next;
    }
    // "3月5日（周四）": close a parenthesis opened inside the expression
    if t.at(e) == ')' && t.count(s, e, '(') > t.count(s, e, ')') {
        e += 1;
    }
    Some((Expr { s, e, body, duration, gap: None }, k))
}

/// The end of a range that starts with `p1` (its tokens end before `k`): a connector and a second
/// point that may end it. `between`: "between" was said, so "and" connects too. (end, index after).
fn range_end(t: &Text, toks: &[Tok], p1: &Point, k: usize, between: bool) -> Option<(Point, usize)> {
    let n = toks.len();
    // "明天起到周五", "从现在开始到下周三": 起/开始 between a start and 到 says the same as 从
    let (mut from_on, mut kc) = (p1.e, k);
    if k + 1 < n && matches!(toks[k].a, Atom::Glue(Glue::Dur)) && t.lit(toks[k].s, "开始") == Some(toks[k].e) {
        from_on = toks[k].e;
        kc = k + 1;
    } else if t.at(t.skip_ws(p1.e)) == '起' {
        from_on = t.skip_ws(p1.e) + 1;
    }
    let Atom::Conn(c) = toks.get(kc)?.a else { return None };
    let conn_ok = c == Conn::To || between && from_on == p1.e;
    if !conn_ok || !t.gap_is_ws(from_on, toks[kc].s) || kc + 1 >= n || !adj(t, &toks[kc], &toks[kc + 1]) {
        return None;
    }
    let (p2, k2, _) = parse_point(t, toks, kc + 1)?;
    // days then an hour that starts a range of hours ("周三到周二，3点-5点"): not one hour a day
    let hours_follow = p1.clock.is_none() && p2.clock.is_some() && matches!(toks.get(k2).map(|x| x.a), Some(Atom::Conn(Conn::To)));
    (range_ok(p1, &p2) && !hours_follow).then_some((p2, k2))
}

/// A duration after an expression ending at `e` (token `k` on), past glue such as 持续, "for" or
/// a comma: (minutes, index after it).
fn trailing_duration(t: &Text, toks: &[Tok], k: usize, e: usize) -> Option<(u32, usize)> {
    let (mut j, mut last_e) = (k, e);
    while j < toks.len() && t.gap_is_ws(last_e, toks[j].s) {
        match toks[j].a {
            Atom::Glue(Glue::Dur) | Atom::Glue(Glue::Soft) => {
                last_e = toks[j].e;
                j += 1;
            }
            Atom::Duration(_) => return duration_run(t, toks, j),
            _ => return None,
        }
    }
    None
}

/// Fold a later expression into `acc` when they fill different slots (for `resolve`).
pub(crate) fn absorb(acc: &mut Expr, e: &Expr) -> bool {
    let ok = match (&mut acc.body, &e.body) {
        (_, Body::Duration(m)) => {
            if acc.duration.is_some() {
                return false;
            }
            acc.duration = Some(*m);
            true
        }
        (Body::Duration(m), Body::Point(q)) => {
            let m = *m;
            acc.body = Body::Point(*q);
            acc.duration = Some(m);
            true
        }
        (Body::Point(p), Body::Point(q)) => match p.merge(q) {
            Some(m) if m.is_valid() => {
                *p = m;
                true
            }
            _ => false,
        },
        (Body::Point(p), Body::Range(a, b))
            // "明天 下午3点到5点": a date in front of a time range
            if p.clock.is_none() && p.toff.is_none() && !p.now && a.clock.is_some() && a.date.is_empty() => {
                match p.merge(a) {
                    Some(m) => {
                        acc.body = Body::Range(m, *b);
                        true
                    }
                    None => false,
                }
            }
        (Body::Range(a, _), Body::Point(q))
            if q.clock.is_none() && q.seg.is_none() && !q.date.is_empty() && a.date.is_empty() => {
                a.date = q.date;
                true
            }
        _ => false,
    };
    if ok {
        acc.e = e.e;
        if acc.duration.is_none() {
            acc.duration = e.duration;
        }
    }
    ok
}
