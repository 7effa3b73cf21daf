//! Chinese years, months and days of the month: 2026年, 明年, 年底, 3月5日, 三月份, 下个月3号, 月底,
//! 下旬, 上半月, 5号; the n-th weekday or working day of a month: 第三个周三, 最后一个工作日.

use crate::numerals::{
    int_any, is_zh_num_char, zh_digit_seq,
};
use crate::text::Text;
use crate::types::{
    Atom, BUSINESS_DAY, Best, DateParts, MonthPart, MonthSpec, Unit,
    YearSpec, date_atom,
};
use super::days::{same_day_suffix, week_word, weekday_char};

pub(crate) const MONTH_PART_WORDS: &[(&str, MonthPart)] = &[
    ("月初", MonthPart::Begin),
    ("月底", MonthPart::End),
    ("月末", MonthPart::End),
    ("月中", MonthPart::Mid),
];

pub(crate) const YEAR_PART_WORDS: &[(&str, u32, MonthPart)] = &[
    ("年底", 12, MonthPart::End),
    ("年末", 12, MonthPart::End),
    ("年初", 1, MonthPart::Begin),
];

/// 第三个周三, 第2个星期五, 最后一个周五, 最后一个礼拜天, 倒数第二个周五, 头一个周一 (the n-th
/// weekday of the month named before it, or of this month); 第一个工作日, 最后一个工作日 right
/// after a month or a week (下个月第一个工作日, 本月最后一个工作日, 下周的最后一个工作日);
/// 第二个月, 第4个月 right after a year (明年第二个月, 2027年的第4个月).
pub(super) fn nth_weekday_or_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if !matches!(t.at(i), '最' | '倒' | '头' | '第') {
        return None;
    }
    let (n, j) = if let Some(e) = t.lit(i, "最后") {
        let e = if t.at(e) == '一' { e + 1 } else { e };
        if t.at(e) != '个' {
            return None;
        }
        (-1i8, e + 1)
    } else if let Some(e) = t.lit(i, "倒数第") {
        // 倒数第一个 = the last, 倒数第二个 = the second to last
        let (n, e2, _) = int_any(t, e)?;
        if !(1..=5).contains(&n) || t.at(e2) != '个' {
            return None;
        }
        (-(n as i8), e2 + 1)
    } else if let Some(e) = t.lit(i, "头一个").or_else(|| t.lit(i, "头个")) {
        (1, e)
    } else {
        let e = t.lit(i, "第")?;
        let (n, e2, _) = int_any(t, e)?;
        if !(1..=12).contains(&n) {
            return None;
        }
        (n as i8, if t.at(e2) == '个' { e2 + 1 } else { e2 })
    };
    if let Some(e) = week_word(t, j)
        && let Some(wd) = weekday_char(t.at(e))
        && n <= 5
        && !t.at(e + 1).is_ascii_digit()
    {
        return Some((e + 1, date_atom(|x| x.nth = Some((n, wd)))));
    }
    // the word before (的 skipped): 月/月份 for a month, 周/星期/礼拜 for a week, 年 for a year
    let mut b = i;
    if t.before(b) == '的' {
        b -= 1;
    }
    let period = t.before(b);
    if let Some((e, _)) = t.lit_longest(j, &["工作日", "工作天"])
        && n <= 23
        && matches!(period, '月' | '份' | '周' | '期' | '拜')
    {
        return Some((e, date_atom(|x| x.nth = Some((n, BUSINESS_DAY)))));
    }
    // 第二个月: only right after a year, else it counts months of something else
    if n > 0 && t.at(j) == '月' && period == '年' {
        return Some((j + 1, date_atom(|x| x.month = Some(MonthSpec::Abs(n as u32)))));
    }
    None
}

/// 2026年, 15年, 二零一五年, 零七年 (+ 底/初).
pub(super) fn year_abs(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (y, e) = if t.at(i).is_ascii_digit() {
        let (v, e, n) = crate::numerals::ascii_int(t, i)?;
        match n {
            4 => (YearSpec::Abs(v as i32), e),
            2 => (YearSpec::Short(v), e),
            _ => return None,
        }
    } else {
        let (v, e, n) = zh_digit_seq(t, i)?;
        match n {
            4 => (YearSpec::Abs(v as i32), e),
            2 => (YearSpec::Short(v), e),
            _ => return None,
        }
    };
    if t.at(e) != '年' {
        return None;
    }
    // a two-digit year only before a month ("15年3月"); "干了10年" is a count
    if let YearSpec::Short(_) = y {
        let n = t.at(e + 1);
        if !(n.is_ascii_digit() || is_zh_num_char(n) || n == ',') {
            return None;
        }
    }
    year_with_suffix(t, e + 1, y)
}

fn year_with_suffix(t: &Text, e: usize, y: YearSpec) -> Option<(usize, Atom)> {
    let mut d = DateParts {
        year: Some(y),
        ..Default::default()
    };
    let mut e = e;
    if let Some((part, x)) = first_or_last_day(t, e) {
        // 明年最后一天 = 31 December, 今年第一天 = 1 January
        d.month = Some(MonthSpec::Abs(if part == MonthPart::End { 12 } else { 1 }));
        d.part = Some(part);
        return Some((x, Atom::Date(d)));
    }
    match t.at(e) {
        '底' | '末' => {
            d.month = Some(MonthSpec::Abs(12));
            d.part = Some(MonthPart::End);
            e += 1;
        }
        '初' => {
            d.month = Some(MonthSpec::Abs(1));
            d.part = Some(MonthPart::Begin);
            e += 1;
        }
        _ => {}
    }
    Some((e, Atom::Date(d)))
}

pub(crate) const YEAR_RELS: &[(&str, i32)] = &[
    ("今年", 0),
    ("本年", 0),
    ("这一年", 0),
    ("同年", 0),
    ("当年", 0),
    ("明年", 1),
    ("下年", 1),
    ("下一年", 1),
    ("来年", 1),
    ("后年", 2),
    ("去年", -1),
    ("上年", -1),
    ("上一年", -1),
    ("前年", -2),
    ("大前年", -3),
    ("大后年", 3),
];

pub(super) fn year_rel(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (e, k) = t.lit_longest_in(i, YEAR_RELS, |p| p.0)?;
    if let Some(x) = same_day_suffix(t, e) {
        return Some((x, Atom::Date(DateParts::shifted(YEAR_RELS[k].1, Unit::Year))));
    }
    year_with_suffix(t, e, YearSpec::Rel(YEAR_RELS[k].1))
}

/// 上/中/下 of 上旬, 中旬, 下旬: the third of the month.
pub(super) fn third(c: char) -> u8 {
    match c {
        '上' => 1,
        '中' => 2,
        _ => 3,
    }
}

/// After a month: 初/底/末/中 → a part of the month; 上旬/中旬/下旬 → a third of it.
fn month_part_suffix(t: &Text, e: usize) -> Option<(MonthPart, usize)> {
    if let Some(x) = first_or_last_day(t, e) {
        return Some(x);
    }
    match t.at(e) {
        '初' => Some((MonthPart::Begin, e + 1)),
        '底' | '末' => Some((MonthPart::End, e + 1)),
        '中' if t.at(e + 1) != '旬' => Some((MonthPart::Mid, e + 1)),
        '上' | '中' | '下' if t.at(e + 1) == '旬' => Some((MonthPart::Third(third(t.at(e))), e + 2)),
        // 3月上半月, 下个月的下半月 = 1st-15th, 16th-last
        '上' | '下' | '前' | '后' if t.at(e + 1) == '半' && t.at(e + 2) == '月' => {
            Some((MonthPart::Half(if matches!(t.at(e), '上' | '前') { 1 } else { 2 }), e + 3))
        }
        _ => None,
    }
}

/// 最后一天 / 第一天 (头一天) after a month or a year, 的 allowed before them: its last or first
/// day (下个月最后一天, 本月的第一天, 明年最后一天).
fn first_or_last_day(t: &Text, e: usize) -> Option<(MonthPart, usize)> {
    let k = if t.at(e) == '的' { e + 1 } else { e };
    let (x, w) = t.lit_longest(k, &["最后一天", "最后1天", "第一天", "第1天", "头一天"])?;
    Some((if w < 2 { MonthPart::End } else { MonthPart::Begin }, x))
}

/// A day number directly after a month ("3月5日", "十月31", "下个月9号"): (day, end).
fn day_after_month(t: &Text, e: usize) -> Option<(u32, usize)> {
    let (d, e2, _) = int_any(t, e)?;
    if !(1..=31).contains(&d) {
        return None;
    }
    match t.at(e2) {
        '日' | '号' => Some((d, e2 + 1)),
        c if c.is_ascii_digit()
            || matches!(
                c,
                '点' | '时'
                    | '个'
                    | '天'
                    | '分'
                    | '小'
                    | '年'
                    | '月'
                    | '周'
                    | '钟'
                    | '次'
                    | '人'
                    | '.'
                    | ':'
                    | '%'
                    | '岁'
                    | '位'
                    | '遍'
                    | '倍'
                    | '星'
                    | '礼'
                    | '刻'
            ) =>
        {
            None
        }
        _ => Some((d, e2)),
    }
}

/// 3月, 三月份, 3月5日, 十月31, 十二月月底 (the 月底 is a separate atom), 10月底.
pub(super) fn month_abs(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (m, e, _) = int_any(t, i)?;
    if !(1..=12).contains(&m) || t.at(e) != '月' {
        return None;
    }
    Some(month_with_day(t, e + 1, MonthSpec::Abs(m)))
}

pub(crate) const MONTH_RELS: &[(&str, i32)] = &[
    ("这个月", 0),
    ("本月", 0),
    ("当月", 0),
    ("同月", 0),
    ("这月", 0),
    ("今个月", 0),
    ("下个月", 1),
    ("下月", 1),
    ("下一个月", 1),
    ("下下个月", 2),
    ("上个月", -1),
    ("上月", -1),
    ("上一个月", -1),
    ("上上个月", -2),
];

/// 下个月, 本月初, 上个月底, 下月15号.
pub(super) fn month_rel(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (e, k) = t.lit_longest_in(i, MONTH_RELS, |p| p.0)?;
    if let Some(x) = same_day_suffix(t, e) {
        return Some((x, Atom::Date(DateParts::shifted(MONTH_RELS[k].1, Unit::Month))));
    }
    Some(month_with_day(t, e, MonthSpec::Rel(MONTH_RELS[k].1)))
}

/// A month ending at `e`, then an optional 份, then a day (5号) or a part of the month (底, 初).
fn month_with_day(t: &Text, mut e: usize, month: MonthSpec) -> (usize, Atom) {
    if t.at(e) == '份' {
        e += 1;
    }
    let mut d = DateParts {
        month: Some(month),
        ..Default::default()
    };
    if let Some((day, e2)) = day_after_month(t, e) {
        d.day = Some(day);
        e = e2;
    } else if let Some((part, e2)) = month_part_suffix(t, e) {
        d.part = Some(part);
        e = e2;
    }
    (e, Atom::Date(d))
}

/// 5号, 二十日.
pub(super) fn day_of_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (d, e, _) = int_any(t, i)?;
    if !(1..=31).contains(&d) || !matches!(t.at(e), '日' | '号') {
        return None;
    }
    Some((e + 1, date_atom(|x| x.day = Some(d))))
}

/// Parts of a month or year without the month (月底, 上旬, 年底).
#[inline]
pub(super) fn month_part_words(t: &Text, i: usize, best: &mut Best) {
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
}
