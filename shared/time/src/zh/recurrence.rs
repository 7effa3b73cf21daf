//! Chinese recurrences: 每天, 每周一三五, 每个工作日, 每月5号, 每隔一天, 每两周, 每半小时, 每季度,
//! 隔周三, 每晚.

use crate::numerals::int_any;
use crate::segment::SegKind;
use crate::text::Text;
use crate::types::{
    Atom, Freq, Recur,
    SegAtom, date_atom,
};
use super::days::{week_word, weekday_char};

pub(crate) const WORKDAY_WORDS: &[&str] = &["每个工作日", "每工作日", "工作日", "每个工作天"];

/// 每天, 每周一三五, 每个工作日, 工作日, 每月, 每年, 每隔一天, 每两周, 每小时, 每周末, 每晚.
pub(super) fn recurrence(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if let Some((e, _)) = t.lit_longest(i, WORKDAY_WORDS) {
        // "第一个工作日", "三个工作日内": an ordinal or a count, not every working day
        if t.at(i) == '工' && t.before(i) == '个' {
            return None;
        }
        let mut r = Recur::new(Freq::Weekly);
        r.byday = Recur::WORKDAYS;
        return Some((e, date_atom(|x| x.recur = Some(r))));
    }
    if let Some(e) = t.lit(i, "天天") {
        return Some((e, date_atom(|x| x.recur = Some(Recur::new(Freq::Daily)))));
    }
    if let Some(e) = t.lit(i, "隔周") {
        // every other week; 隔周三 = every other Wednesday
        let mut r = Recur::new(Freq::Weekly);
        r.interval = 2;
        let mut e = e;
        if let Some(wd) = weekday_char(t.at(e)).filter(|_| !t.at(e + 1).is_ascii_digit()) {
            r.byday = 1 << wd;
            e += 1;
        }
        return Some((e, date_atom(|x| x.recur = Some(r))));
    }
    if t.at(i) != '每' {
        return None;
    }
    every(t, i + 1)
}

/// After 每 at `j`: a part of every day (每晚), or a frequency with its interval (每两周, 每隔一天,
/// 每半小时, 每季度) and the days it falls on (每周一三五, 每月底).
fn every(t: &Text, j: usize) -> Option<(usize, Atom)> {
    if let Some(a) = daily_segment(t, j) {
        return Some(a);
    }
    let mut j = j;
    let mut skip = 0;
    if t.at(j) == '隔' {
        skip = 1;
        j += 1;
    }
    // 每半小时, 每半个小时 = every 30 minutes, 每刻钟 = every 15
    if skip == 0
        && let Some(e) = t.lit(j, "半小时").or_else(|| t.lit(j, "半个小时"))
    {
        let mut r = Recur::new(Freq::Minutely);
        r.interval = 30;
        return Some((e, date_atom(|x| x.recur = Some(r))));
    }
    let mut n = 1;
    if let Some((v, e, _)) = int_any(t, j) {
        n = v.max(1);
        j = e;
    }
    if t.at(j) == '个' {
        j += 1;
    }
    if n > 1000 {
        return None;
    }
    let interval = n + skip;
    let (freq, mut e) = if let Some(e) = t.lit(j, "季度") {
        // 每季度, 每个季度: every three months
        let mut r = Recur::new(Freq::Monthly);
        r.interval = 3 * n + skip;
        return Some((e, date_atom(|x| x.recur = Some(r))));
    } else if let Some(e) = t.lit(j, "分钟") {
        (Freq::Minutely, e)
    } else if let Some(e) = t.lit(j, "小时") {
        (Freq::Hourly, e)
    } else if let Some(e) = t.lit(j, "钟头") {
        (Freq::Hourly, e)
    } else if matches!(t.at(j), '天' | '日') {
        (Freq::Daily, j + 1)
    } else if let Some(e) = week_word(t, j) {
        (Freq::Weekly, e)
    } else if t.at(j) == '月' {
        (Freq::Monthly, j + 1)
    } else if t.at(j) == '年' {
        (Freq::Yearly, j + 1)
    } else if let Some(e) = t.lit(j, "工作日") {
        let mut r = Recur::new(Freq::Weekly);
        r.byday = Recur::WORKDAYS;
        return Some((e, date_atom(|x| x.recur = Some(r))));
    } else {
        return None;
    };
    let mut r = Recur::new(freq);
    // 每隔30分钟 is every 30 minutes: 隔 skips whole days or weeks (每隔一天 = every other day),
    // not a length of time
    r.interval = if matches!(freq, Freq::Minutely | Freq::Hourly) { n } else { interval };
    if freq == Freq::Monthly
        && let Some(x) = monthly_day(t, &mut e, &mut r)
    {
        return Some(x);
    }
    if freq == Freq::Weekly {
        weekly_days(t, &mut e, &mut r);
    }
    Some((e, date_atom(|x| x.recur = Some(r))))
}

/// 每晚, 每天早上: a part of every day.
fn daily_segment(t: &Text, j: usize) -> Option<(usize, Atom)> {
    const DAILY_SEGS: [(&str, SegKind); 10] = [
        ("晚上", SegKind::Evening),
        ("夜晚", SegKind::Evening),
        ("早上", SegKind::Morning),
        ("早晨", SegKind::Morning),
        ("上午", SegKind::Forenoon),
        ("下午", SegKind::Afternoon),
        ("夜里", SegKind::Night),
        ("晚", SegKind::Evening),
        ("早", SegKind::Morning),
        ("夜", SegKind::Night),
    ];
    if let Some((e, k)) = t.lit_longest_in(j, &DAILY_SEGS, |p| p.0) {
        let kind = DAILY_SEGS[k].1;
        return Some((
            e,
            Atom::Seg(SegAtom {
                kind,
                day: None,
                daily: true,
            }),
        ));
    }
    None
}

/// 每月最后一天, 每月底 (the last day: sets `r.last_day`), 每个月的第一天, 每月初 (the 1st: the
/// whole atom).
fn monthly_day(t: &Text, e: &mut usize, r: &mut Recur) -> Option<(usize, Atom)> {
    // 每月最后一天, 每月底, 每个月的最后一天
    let k = if t.at(*e) == '的' { *e + 1 } else { *e };
    if let Some((e2, _)) = t.lit_longest(k, &["最后一天", "底", "末"]) {
        r.last_day = true;
        *e = e2;
    } else if let Some((e2, _)) = t.lit_longest(k, &["第一天", "第1天", "头一天", "初"]) {
        // 每个月的第一天, 每月初 = the 1st
        return Some((
            e2,
            date_atom(|x| {
                x.recur = Some(*r);
                x.day = Some(1);
            }),
        ));
    }
    None
}

/// The weekdays after 每周 at `e`: 末 (the weekend), a list (一三五, 一、三、五, 周一周三) or a span
/// (一至五); 每周一次 is once a week, no day.
fn weekly_days(t: &Text, e: &mut usize, r: &mut Recur) {
    if t.at(*e) == '末' {
        r.byday = Recur::WEEKEND;
        *e += 1;
    } else {
        // a list of weekdays: 一三五, 一、三、五, 一和三, 周一周三
        let start = *e;
        let mut k = *e;
        loop {
            let c = t.at(k);
            let Some(wd) = weekday_char(c) else { break };
            if c.is_ascii_digit() && t.at(k + 1).is_ascii_digit() {
                break;
            }
            r.byday |= 1 << wd;
            k += 1;
            *e = k;
            let mut k2 = k;
            if matches!(t.at(k2), '、' | ',' | '和' | '及' | '与') {
                k2 += 1;
            }
            if let Some(w) = week_word(t, k2) {
                k2 = w;
            }
            if k2 > k {
                if weekday_char(t.at(k2)).is_none() {
                    break;
                }
                k = k2;
                continue;
            }
            // a span of weekdays: 每周一至周五, 每周一到五
            if matches!(t.at(k), '至' | '到' | '-' | '~') {
                let mut k3 = k + 1;
                if let Some(w) = week_word(t, k3) {
                    k3 = w;
                }
                if let Some(last) = weekday_char(t.at(k3))
                    && last > wd
                    && !t.at(k3 + 1).is_ascii_digit()
                {
                    for d in wd..=last {
                        r.byday |= 1 << d;
                    }
                    *e = k3 + 1;
                }
                break;
            }
        }
        // "每周一次" = once a week
        if matches!(t.at(*e), '次' | '遍' | '回') {
            r.byday = 0;
            *e = start;
        }
    }
}
