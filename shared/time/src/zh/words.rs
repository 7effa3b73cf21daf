//! The fixed Chinese words of every family (relative days, parts of day, month parts, connectors
//! and glue), tried together at each position.

use crate::text::Text;
use crate::types::{
    Atom, Best, Clock, Conn, Glue, MonthPart, MonthSpec, Prefix,
    SegAtom, Unit, date_atom,
};
use super::clock::{DAY_SEGS, SEGS};
use super::days::{LOCATIVE_BEFORE, NEXT_DAY_WORDS, NEXT_WORKDAY_WORDS, NOW_WORDS, REL_DAYS, REL_SPANS};
use super::periods::{MONTH_PART_WORDS, YEAR_PART_WORDS, third};

pub(super) const DUR_GLUE_WORDS: &[&str] = &["开始", "持续", "历时", "为期", "时长"];

/// Fixed words: relative days, parts of day, connectors, glue.
pub(super) fn words(t: &Text, i: usize, best: &mut Best) {
    for &(p, d) in REL_DAYS {
        if let Some(mut e) = t.lit(i, p) {
            if p.ends_with('儿') {
                // 后儿/前儿 are also "behind"/"in front" after a place word: 跟前儿, 门后儿
                if matches!(p, "后儿" | "前儿") && LOCATIVE_BEFORE.contains(t.before(i)) {
                    continue;
                }
                // 明儿个, 今儿个, 后儿个
                if t.at(e) == '个' {
                    e += 1;
                }
            }
            best.offer(e, date_atom(|x| x.rel_day = Some(d)));
        }
    }
    for &(p, a, b) in REL_SPANS.iter().filter(|_| matches!(t.at(i), '明' | '今')) {
        if let Some(e) = t.lit(i, p) {
            best.offer(
                e,
                date_atom(|x| {
                    x.rel_day = Some(a);
                    x.rel_end = Some(b);
                }),
            );
        }
    }
    for p in NEXT_DAY_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(e, date_atom(|x| x.next_day = true));
        }
    }
    for &(p, d, k) in DAY_SEGS {
        if let Some(e) = t.lit(i, p) {
            best.offer(
                e,
                Atom::Seg(SegAtom {
                    kind: k,
                    day: Some(d),
                    daily: false,
                }),
            );
        }
    }
    for &(p, k) in SEGS {
        if let Some(e) = t.lit(i, p) {
            best.offer(
                e,
                Atom::Seg(SegAtom {
                    kind: k,
                    day: None,
                    daily: false,
                }),
            );
        }
    }
    if let Some(e) = t.lit(i, "午夜") {
        // "午夜12点", "午夜十二点" = midnight too
        let e = t.lit_longest(e, &["12点", "十二点", "12点整", "十二点整"]).map_or(e, |x| x.0);
        best.offer(e, Atom::Clock(Clock::midnight()));
    }
    for p in NEXT_WORKDAY_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(e, date_atom(|x| x.offset = Some((1, Unit::BusinessDay))));
        }
    }
    for p in NOW_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(e, Atom::Now);
        }
    }
    // month parts without a month: 月底 = this month's last day
    for &(p, part) in MONTH_PART_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(e, date_atom(|x| x.part = Some(part)));
        }
    }
    // 上旬 alone: this month's (下个月的上旬 merges with the month)
    if matches!(t.at(i), '上' | '中' | '下') && t.at(i + 1) == '旬' {
        best.offer(i + 2, date_atom(|x| x.part = Some(MonthPart::Third(third(t.at(i))))));
    }
    for &(p, m, part) in YEAR_PART_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(
                e,
                date_atom(|x| {
                    x.month = Some(MonthSpec::Abs(m));
                    x.part = Some(part);
                }),
            );
        }
    }
    match t.at(i) {
        '到' | '至' => best.offer(i + 1, Atom::Conn(Conn::To)),
        '从' => best.offer(i + 1, Atom::Prefix(Prefix::From)),
        '由' if t.at(i + 1) != '于' => best.offer(i + 1, Atom::Prefix(Prefix::From)),
        '的' => best.offer(i + 1, Atom::Glue(Glue::Soft)),
        '又' | '零' => best.offer(i + 1, Atom::Glue(Glue::Plus)),
        _ => {}
    }
    for p in DUR_GLUE_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(e, Atom::Glue(Glue::Dur));
        }
    }
}
