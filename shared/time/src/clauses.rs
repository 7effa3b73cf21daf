//! What joins the expressions of one clause after the grammar has read each: a duration a few
//! words from its start ("后天上午10点评审，开一个半小时"), the time said once for a list of days
//! ("monday and wednesday at 3"), a day and its hour with a meal between them ("明天晚饭七点"),
//! and 每天/"every day" with an hour after a range of days ("周一到周五每天上午九点").

use super::grammar::{Body, Expr, Point, expressions};
use super::text::Text;
use super::types::{DateParts, Freq, Recur};

/// All expressions in the text, left to right, those of one clause joined.
pub(crate) fn parse(t: &Text) -> Vec<Expr> {
    let mut out = expressions(t);
    attach_durations(t, &mut out);
    share_list_times(t, &mut out);
    join_across_meal(t, &mut out);
    daily_hour_of_days(t, &mut out);
    out
}

/// A range of days, then 每天/every day and an hour: "周一到周五每天上午九点", "mon to fri every day
/// at 9" say the hour once for each of the days, as "周一到周五上午九点" does: one expression.
fn daily_hour_of_days(t: &Text, out: &mut Vec<Expr>) {
    let mut i = 0;
    while i + 1 < out.len() {
        let (a, b) = (&out[i], &out[i + 1]);
        let joined = match (&a.body, &b.body) {
            (Body::Range(p1, p2), Body::Point(q))
                if a.duration.is_none()
                    && a.gap.is_none()
                    && b.gap.is_none()
                    && p1.clock.is_none()
                    && p2.clock.is_none()
                    && p1.seg.is_none()
                    && p2.seg.is_none()
                    && q.clock.is_some()
                    && q.date.recur == Some(Recur::new(Freq::Daily))
                    && DateParts { recur: None, ..q.date }.is_empty()
                    && t.gap_is_ws(a.e, b.s) =>
            {
                // 每天 says each day, so dates join as well as weekdays (3月5日到3月7日每天下午3点)
                Some(Body::Range(*p1, Point { clock: q.clock, seg: q.seg, ..*p2 }))
            }
            _ => None,
        };
        if let Some(body) = joined {
            let (s, e, duration) = (a.s, b.e, b.duration);
            out[i] = Expr { s, e, body, duration, gap: None };
            out.remove(i + 1);
        }
        i += 1;
    }
}

/// A day and its hour with a meal between them are one expression, the meal its `gap`:
/// "明天晚饭七点" = tomorrow 19:00, "周五晚餐八点半", "friday dinner at 8".
fn join_across_meal(t: &Text, out: &mut Vec<Expr>) {
    const MEALS: &[&str] = &["晚饭", "晚餐", "午饭", "午餐", "中饭", "早饭", "早餐", "dinner", "supper", "lunch", "breakfast"];
    let mut i = 0;
    while i + 1 < out.len() {
        let (a, b) = (&out[i], &out[i + 1]);
        let mut meal_end = a.e;
        let joined = match (&a.body, &b.body) {
            (Body::Point(p), Body::Point(q))
                if a.duration.is_none()
                    && a.gap.is_none()
                    && b.gap.is_none()
                    && p.clock.is_none()
                    && !p.date.is_empty()
                    && q.clock.is_some()
                    && q.date.is_empty()
                    && {
                        let k = t.skip_ws(a.e);
                        MEALS.iter().any(|m| {
                            let e = if m.is_ascii() { t.phrase(k, m) } else { t.lit(k, m) };
                            e.is_some_and(|e| {
                                meal_end = e;
                                let e2 = t.skip_ws(e);
                                let e2 = if t.at(e2) == '@' { t.skip_ws(e2 + 1) } else { t.phrase(e2, "at").map_or(e2, |x| t.skip_ws(x)) };
                                e2 == b.s
                            })
                        })
                    } =>
            {
                p.merge(q).filter(|m| m.is_valid())
            }
            _ => None,
        };
        if let Some(m) = joined {
            // the meal stays in the text around the time words; "at" after it does not
            let (s, e, gap, duration) = (a.s, b.e, Some((a.e, meal_end)), b.duration);
            out[i] = Expr { s, e, body: Body::Point(m), duration, gap };
            out.remove(i + 1);
        }
        i += 1;
    }
}

/// Only a list word stands between `a` and `b`: and, or, a comma, 和, 与, 及, 跟, 或, 、.
fn list_joiner(t: &Text, a: usize, b: usize) -> bool {
    const WORDS: &[&str] = &["and", "or", "&", "/", "和", "与", "及", "跟", "或", "或者", "还有"];
    let mut k = t.skip_ws(a);
    if matches!(t.at(k), ',' | '、') {
        k = t.skip_ws(k + 1);
    }
    if k == b {
        // "星期一星期三下午三点": Chinese days written one after the other
        return k > a || super::is_han(t.at(b));
    }
    WORDS.iter().any(|w| {
        let e = if w.is_ascii() { t.phrase(k, w) } else { t.lit(k, w) };
        e.is_some_and(|e| t.skip_ws(e) == b)
    })
}

/// Days listed together share the time said once for them: "monday and wednesday at 3" = both
/// at 15:00, "周一和周三下午三点", "at 10 on tuesday or thursday". Each day stays its own match.
fn share_list_times(t: &Text, out: &mut [Expr]) {
    let day_only = |p: &Point| {
        p.clock.is_none()
            && p.seg.is_none()
            && p.toff.is_none()
            && !p.now
            && !p.same_time
            && !p.date.is_empty()
            && p.date.recur.is_none()
            && p.date.offset.is_none()
    };
    let timed = |p: &Point| (p.clock.is_some() || p.seg.is_some()) && !p.date.is_empty() && p.toff.is_none() && !p.same_time;
    // right to left, so that "mon, wed and fri at 10" passes the time back along the list
    for i in (0..out.len().saturating_sub(1)).rev() {
        let (l, r) = out.split_at_mut(i + 1);
        let (a, b) = (&mut l[i], &r[0]);
        if a.duration.is_some() || !list_joiner(t, a.e, b.s) {
            continue;
        }
        if let (Body::Point(p), Body::Point(q)) = (&mut a.body, &b.body)
            && day_only(p)
            && timed(q)
        {
            p.clock = q.clock;
            p.seg = q.seg;
        }
    }
    // left to right: "at 3 on monday and wednesday"
    for i in 1..out.len() {
        let (l, r) = out.split_at_mut(i);
        let (a, b) = (&l[i - 1], &mut r[0]);
        if b.duration.is_some() || !list_joiner(t, a.e, b.s) {
            continue;
        }
        if let (Body::Point(p), Body::Point(q)) = (&a.body, &mut b.body)
            && timed(p)
            && day_only(q)
        {
            q.clock = p.clock;
            q.seg = p.seg;
        }
    }
}

/// A duration written a few words away from a point in the same clause is that point's length:
/// "后天上午10点评审，开一个半小时", "a 45-minute call friday at 4pm". The two become one expression
/// whose `gap` holds the words between them.
fn attach_durations(t: &Text, out: &mut Vec<Expr>) {
    let mut i = 0;
    while i + 1 < out.len() {
        let (a, b) = (&out[i], &out[i + 1]);
        let (point, minutes) = match (&a.body, &b.body) {
            (Body::Point(p), Body::Duration(m)) if a.duration.is_none() && short_gap(t, a.e, b.s, true) => (*p, *m),
            (Body::Duration(m), Body::Point(p)) if b.duration.is_none() && short_gap(t, a.e, b.s, false) => (*p, *m),
            _ => {
                i += 1;
                continue;
            }
        };
        let gap = (!t.gap_is_ws(a.e, b.s)).then_some((a.e, b.s));
        out[i] = Expr {
            s: a.s,
            e: b.e,
            body: Body::Point(point),
            duration: Some(minutes),
            gap,
        };
        out.remove(i + 1);
        i += 1;
    }
}

/// Words between a point and a duration that still leave them in one clause: no sentence break,
/// no number, no word that starts another action ("然后", "then"), at most 6 Han characters and 3
/// Latin words. `commas`: whether a comma may stand there (after the point: "评审，开一个半小时").
fn short_gap(t: &Text, a: usize, b: usize, commas: bool) -> bool {
    const BREAKS: &[&str] = &["然后", "之后", "以后", "接着", "再", "并且", "then", "and", "after", "before", "but"];
    let (mut han, mut words, mut in_word) = (0, 0, false);
    for k in a..b {
        let c = t.at(k);
        if c.is_ascii_alphabetic() {
            if !in_word {
                words += 1;
                if BREAKS.iter().any(|w| w.is_ascii() && t.phrase(k, w).is_some()) {
                    return false;
                }
            }
            in_word = true;
            continue;
        }
        in_word = false;
        if c.is_whitespace() || c == '-' {
            continue;
        }
        if super::is_han(c) {
            han += 1;
            if BREAKS.iter().any(|w| !w.is_ascii() && t.lit(k, w).is_some()) {
                return false;
            }
            continue;
        }
        if !(commas && matches!(c, ',' | '、')) {
            return false;
        }
    }
    han <= 6 && words <= 3
}

