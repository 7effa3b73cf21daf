//! Chinese offsets, spans and lengths: 3天后, 半小时后, 过3天, 三天内, 未来三天, 两三个小时以后, 几天后;
//! 2小时, 一个半小时, 5天.

use crate::numerals::{
    ascii_decimal_hundredths, is_zh_num_char, zh_digit, zh_int,
};
use crate::text::Text;
use crate::types::{
    Atom, Unit, date_atom,
};
use super::days::same_day_suffix;

#[derive(Clone, Copy, PartialEq)]
enum ZhUnit {
    Minute,
    Quarter,
    Hour,
    Cal(Unit),
}

/// Amount in hundredths: 3, 1.5, 三, 两, 半, 一个半 (the 个 is left for the unit).
fn amount(t: &Text, i: usize) -> Option<(u32, usize)> {
    if t.at(i) == '半' {
        return Some((50, i + 1));
    }
    let (v, e) = if t.at(i).is_ascii_digit() {
        ascii_decimal_hundredths(t, i)?
    } else {
        let (v, e) = zh_int(t, i)?;
        (v * 100, e)
    };
    if t.at(e) == '个' && t.at(e + 1) == '半' {
        return Some((v + 50, e + 2));
    }
    Some((v, e))
}

/// Unit word after an amount: (unit, end, index). `had_ge`: a 个 stood before it.
fn zh_unit(t: &Text, i: usize, had_ge: bool) -> Option<(ZhUnit, usize, &'static str)> {
    // (word, unit, 0 = only without 个, 1 = only with 个, 2 = both)
    const UNITS: &[(&str, ZhUnit, u8)] = &[
        ("分钟", ZhUnit::Minute, 0),
        ("分", ZhUnit::Minute, 0),
        ("刻钟", ZhUnit::Quarter, 0),
        ("小时", ZhUnit::Hour, 2),
        ("钟头", ZhUnit::Hour, 2),
        ("钟", ZhUnit::Hour, 1),
        ("天", ZhUnit::Cal(Unit::Day), 0),
        ("日", ZhUnit::Cal(Unit::Day), 0),
        ("周", ZhUnit::Cal(Unit::Week), 2),
        ("星期", ZhUnit::Cal(Unit::Week), 2),
        ("礼拜", ZhUnit::Cal(Unit::Week), 2),
        ("月", ZhUnit::Cal(Unit::Month), 1),
        ("年", ZhUnit::Cal(Unit::Year), 0),
        ("工作日", ZhUnit::Cal(Unit::BusinessDay), 2),
        ("工作天", ZhUnit::Cal(Unit::BusinessDay), 2),
    ];
    let mut best: Option<(ZhUnit, usize, &'static str)> = None;
    for &(w, u, mode) in UNITS {
        if (mode == 0 && had_ge) || (mode == 1 && !had_ge) {
            continue;
        }
        if let Some(e) = t.lit(i, w)
            && best.is_none_or(|b| e > b.1)
            && !(had_ge && matches!(u, ZhUnit::Cal(Unit::Week)) && names_a_weekday(t, e))
        {
            best = Some((u, e, w));
        }
    }
    best
}

/// "再加一个周五上午10点的会": a week word after 个 followed by a weekday is that weekday (一个 counts
/// the item), not a week ("两个星期一次" is still weeks).
fn names_a_weekday(t: &Text, e: usize) -> bool {
    let day = t.at(e);
    (matches!(day, '末') || !day.is_ascii_digit() && super::days::weekday_char(day).is_some()) && t.at(e + 1) != '次'
}

/// An amount and its unit as read: "两三个小时以后" = amt 200, hi 300, hours, dir 1.
struct Measure {
    /// Hundredths of the unit.
    amt: u32,
    /// The upper end of an approximate amount (两三, 几 = 4), in hundredths; `amt` when exact.
    hi_amt: u32,
    approx: bool,
    /// 几: two to four by convention.
    few: bool,
    unit: ZhUnit,
    /// The unit as written (分 alone may be a score, 日 a date).
    word: &'static str,
    /// 1 forward, -1 back, 0 a length.
    dir: i32,
    /// From now to that far (三天内, 未来三天).
    within: bool,
    /// 过/再过 before it: an offset, never a length.
    forward_prefix: bool,
}

/// 3天后, 三天以后, 两周后, 半小时后, 1个小时后, 3天前, 过3天 (offsets); 三天内, 未来三天, 两三个小时以后
/// (spans); 2小时, 两个小时, 半小时, 一个半小时, 90分钟 (durations).
pub(super) fn offset_or_duration(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (j, period, forward_prefix) = offset_prefix(t, i);
    let (mut m, e) = measure(t, j)?;
    m.forward_prefix = forward_prefix;
    let e = direction(t, e, period, &mut m);
    if m.approx && m.dir == 0 {
        return None;
    }
    match m.unit {
        ZhUnit::Minute | ZhUnit::Quarter | ZhUnit::Hour => minutes_atom(&m).map(|a| (e, a)),
        ZhUnit::Cal(u) => calendar_atom(t, i, e, &m, u),
    }
}

/// What stands before the amount: 未来/接下来/今后/往后 (from now on, period 1), 过去/最近/近 (back to
/// now, -1), 过/再过 (an offset forward). (start of the amount, period, forward).
fn offset_prefix(t: &Text, i: usize) -> (usize, i32, bool) {
    // 未来三天, 接下来的一周 = from now to that far on; 过去三天, 最近两周 = that far back to now
    if matches!(t.at(i), '未' | '接' | '今' | '往' | '过' | '最' | '近')
        && let Some((e, k)) = t.lit_longest(i, &["未来", "接下来", "接下来的", "今后", "往后", "过去", "过去的", "最近", "近"])
    {
        return (e, if k < 5 { 1 } else { -1 }, false);
    }
    if let Some(e) = t.lit(i, "再过") {
        return (e, 0, true);
    }
    if t.at(i) == '过' {
        return (i + 1, 0, true);
    }
    (i, 0, false)
}

/// The amount and unit at `j`: 3天, 两个小时, 三四天, 几个小时, 一天半, 俩月. (measure, end).
fn measure(t: &Text, j: usize) -> Option<(Measure, usize)> {
    // "三四天后", "两三个小时以后": two neighbouring numbers are an approximate amount, a span
    let approx = zh_digit(t.at(j))
        .zip(zh_digit(t.at(j + 1)))
        .filter(|&(a, b)| a >= 1 && b == a + 1 && !is_zh_num_char(t.before(j)) && t.at(j + 2) != '十');
    // 几天后, 过几天 = two to four days on, like 两三天后
    let approx = approx.or_else(|| (t.at(j) == '几' && t.before(j) != '十' && t.before(j) != '好').then_some((2, 4)));
    let (amt, mut e) = match approx {
        Some((a, _)) if t.at(j) == '几' => (a * 100, j + 1),
        Some((a, _)) => (a * 100, j + 2),
        None => amount(t, j)?,
    };
    let hi_amt = approx.map_or(amt, |(_, b)| b * 100);
    let mut had_ge = false;
    if t.at(e) == '个' {
        had_ge = true;
        e += 1;
    } else if t.at(j).is_ascii_digit() && t.at(e) == ' ' {
        // "3 周", "2 小时"
        e = t.skip_ws(e);
    }
    // 俩/仨 already hold their 个: "俩月" = 两个月, "俩天" = 两天
    let colloquial = !had_ge && e == j + 1 && matches!(t.at(j), '俩' | '仨');
    let (unit, mut e, word) = zh_unit(t, e, had_ge).or_else(|| if colloquial { zh_unit(t, e, true) } else { None })?;
    let half_after = t.at(e) == '半' && approx.is_none() && amt % 100 == 0 && matches!(unit, ZhUnit::Hour | ZhUnit::Cal(Unit::Day));
    let amt = if half_after {
        e += 1;
        amt + 50
    } else {
        amt
    };
    let few = t.at(j) == '几';
    let m = Measure { amt, hi_amt, approx: approx.is_some(), few, unit, word, dir: 0, within: false, forward_prefix: false };
    Some((m, e))
}

/// The direction after the unit at `e` (后, 以前, 内) or from the prefix: sets `m.dir` and
/// `m.within`; the end.
fn direction(t: &Text, e: usize, period: i32, m: &mut Measure) -> usize {
    if period != 0 {
        (m.dir, m.within) = (period, true);
        return e;
    }
    if let Some((e2, k)) = t.lit_longest(e, &["以后", "之后", "过后", "后", "以前", "之前", "前"]) {
        m.dir = if k < 4 { 1 } else { -1 };
        return e2;
    }
    if m.forward_prefix {
        m.dir = 1;
        return e;
    }
    if matches!(t.at(e), '之' | '以' | '内')
        && let Some((e2, _)) = t.lit_longest(e, &["之内", "以内", "内"])
        && !matches!(t.at(e2), '容' | '部' | '地' | '心' | '存' | '在' | '外' | '科' | '衣' | '阁' | '务' | '涵')
    {
        // "三天内", "两小时之内": from now to that far on
        (m.dir, m.within) = (1, true);
        return e2;
    }
    e
}

/// A measure in minutes, quarters or hours: a length, an offset from now or a span of offsets.
fn minutes_atom(m: &Measure) -> Option<Atom> {
    let per = match m.unit {
        ZhUnit::Minute => 1,
        ZhUnit::Quarter => 15,
        _ => 60,
    };
    let mins = m.amt * per / 100;
    if mins == 0 {
        return None;
    }
    if m.within || m.approx {
        let hi = (m.hi_amt * per / 100) as i64 * m.dir as i64;
        let lo = if m.within { 0 } else { mins as i64 * m.dir as i64 };
        return Some(Atom::TimeSpan(lo.min(hi), lo.max(hi), m.few));
    }
    if m.dir == 0 {
        // a duration needs an unambiguous unit ("5分" alone may be a score)
        if m.word == "分" || m.forward_prefix {
            return None;
        }
        return Some(Atom::Duration(mins));
    }
    Some(Atom::TimeOffset(m.dir as i64 * mins as i64))
}

/// A measure in days, weeks, months or years: a length, a date offset or a span of them.
fn calendar_atom(t: &Text, i: usize, e: usize, m: &Measure, u: Unit) -> Option<(usize, Atom)> {
    let (amt, dir) = (m.amt, m.dir);
    if amt == 0 {
        return None;
    }
    if dir == 0 {
        return calendar_duration(t, i, e, amt, u, m.word);
    }
    if m.within || m.approx {
        if amt % 100 != 0 {
            return None;
        }
        let hi = (m.hi_amt / 100) as i32 * dir;
        let lo = if m.within { 0 } else { (amt / 100) as i32 * dir };
        return Some((
            e,
            date_atom(|x| {
                x.offset = Some((lo.min(hi), u));
                x.offset_end = Some(lo.max(hi));
                // 几 is two to four by convention
                x.guessed = m.few;
            }),
        ));
    }
    // 半个月 = 15 days, 半年 = 6 months, 一天半 = 36 hours
    let (n, u) = match (amt % 100, u) {
        (0, u) => ((amt / 100) as i32, u),
        (50, Unit::Month) => ((amt / 100) as i32 * 30 + 15, Unit::Day),
        (50, Unit::Year) => ((amt / 100) as i32 * 12 + 6, Unit::Month),
        (50, Unit::Day | Unit::Week) => {
            let per: i64 = if u == Unit::Day { 1440 } else { 7 * 1440 };
            return Some((e, Atom::TimeOffset(dir as i64 * amt as i64 * per / 100)));
        }
        _ => return None,
    };
    let n = n * dir;
    // "一个月后的今天" is the offset itself
    let e = same_day_suffix(t, e).unwrap_or(e);
    Some((e, date_atom(|x| x.offset = Some((n, u)))))
}

/// A length in days or weeks without a direction: 5天, 3 周, 两个星期, 半天, 一天半 (months and
/// years vary in length and stay unread). Not 第3天 (an ordinal), 这一天 (a day), 3日 (a date) or 3周年.
fn calendar_duration(t: &Text, i: usize, e: usize, amt: u32, unit: Unit, word: &str) -> Option<(usize, Atom)> {
    let per_day = match unit {
        Unit::Day if word == "天" => 1440,
        Unit::Week => 7 * 1440,
        _ => return None,
    };
    // 第3天 counts, 这一天/同一天/那一周 point at a day or week
    if matches!(t.before(i), '第' | '这' | '那' | '同' | '哪') || matches!(t.at(e), '年' | '岁') {
        return None;
    }
    let minutes = u32::try_from(u64::from(amt) * per_day / 100).ok()?;
    Some((e, Atom::Duration(minutes)))
}
