//! Chinese relative days, weekdays and weeks: 明天, 大后天, 明后天, 次日, 周三, 下个礼拜二, 这周末,
//! 下周, 下周初; the same day or time in another period: 下个月的今天, 明天这个时候.

use crate::numerals::{
    is_zh_num_char, zh_colloquial,
};
use crate::text::Text;
use crate::types::{
    Atom, Best, DateParts, Unit, date_atom,
};


pub(crate) const REL_DAYS: &[(&str, i32)] = &[
    ("大大后天", 4),
    ("大后天", 3),
    ("大后日", 3),
    ("后天", 2),
    ("后日", 2),
    ("明天", 1),
    ("明日", 1),
    ("听日", 1),
    ("明儿", 1),
    ("明个儿", 1),
    ("后儿", 2),
    ("大后儿", 3),
    ("今天", 0),
    ("今日", 0),
    ("本日", 0),
    ("当天", 0),
    ("当日", 0),
    ("今儿", 0),
    ("今个儿", 0),
    ("昨天", -1),
    ("昨日", -1),
    ("寻日", -1),
    ("琴日", -1),
    ("昨儿", -1),
    ("昨个儿", -1),
    ("前儿", -2),
    ("大前儿", -3),
    ("前天", -2),
    ("前日", -2),
    ("大前天", -3),
    ("大前日", -3),
    ("大大前天", -4),
];

/// Characters after which 前儿/后儿 name a place (跟前儿, 眼前儿, 门后儿, 以后儿), not a day.
pub(super) const LOCATIVE_BEFORE: &str = "跟眼面门以之提事目当头窗床桌身背最然往落向朝屋院车房家楼山脑胸额炕台饭课会班前后";

/// Two relative days at once: (word, first, last). 明后天 = tomorrow and the day after.
pub(crate) const REL_SPANS: &[(&str, i32, i32)] = &[
    ("明后天", 1, 2),
    ("明后两天", 1, 2),
    ("明后日", 1, 2),
    ("今明两天", 0, 1),
    ("今明两日", 0, 1),
    ("今明天", 0, 1),
];

pub(crate) const NEXT_DAY_WORDS: &[&str] = &["次日", "翌日", "第二天", "隔天", "隔日"];

pub(crate) const NOW_WORDS: &[&str] = &["现在", "此刻", "目前"];

pub(crate) const NEXT_WORKDAY_WORDS: &[&str] = &["下一个工作日", "下个工作日", "下一工作日"];

pub(crate) const WEEK_WORDS: &[&str] = &["星期", "礼拜", "周"];

pub(super) fn weekday_char(c: char) -> Option<u8> {
    Some(match c {
        '一' | '1' => 0,
        '二' | '2' => 1,
        '三' | '3' => 2,
        '四' | '4' => 3,
        '五' | '5' => 4,
        '六' | '6' => 5,
        '日' | '天' | '7' => 6,
        _ => return None,
    })
}

pub(crate) const WEEK_PREFIXES: &[(&str, i32)] = &[
    ("下下个", 2),
    ("下下", 2),
    ("上上个", -2),
    ("上上", -2),
    ("下一个", 1),
    ("上一个", -1),
    ("下个", 1),
    ("上个", -1),
    ("这个", 0),
    ("今个", 0),
    ("本", 0),
    ("这", 0),
    ("下", 1),
    ("上", -1),
];

/// Week word at `i`: (end).
pub(super) fn week_word(t: &Text, i: usize) -> Option<usize> {
    t.lit_longest(i, WEEK_WORDS).map(|(e, _)| e)
}

/// 周一, 下周三, 上个礼拜天, 这周末, 下周, 上上周.
pub(super) fn weekday(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut rel = None;
    let mut j = i;
    if let Some((e, k)) = t.lit_longest_in(i, WEEK_PREFIXES, |p| p.0)
        && week_word(t, e).is_some()
    {
        rel = Some(WEEK_PREFIXES[k].1);
        j = e;
    }
    let e = week_word(t, j)?;
    if rel.is_none() {
        // "一周", "两周": a count of weeks, not a weekday
        let b = t.before(i);
        let counted = match b {
            // "咱俩周末": 俩 counts people there, so 周末 is the weekend
            '俩' | '仨' => zh_colloquial(t, i - 1).is_some(),
            // "周六周日": 六 closes the weekday before, it counts nothing
            _ if i >= 2 && weekday_char(b).is_some() && matches!(t.at(i - 2), '周' | '期' | '拜') => false,
            // "加一个周五上午10点的会": 一个 counts the item, and a weekday follows
            '个' => !(weekday_char(t.at(e)).is_some_and(|_| !t.at(e).is_ascii_digit()) || t.at(e) == '末') || t.at(e + 1) == '次',
            _ => b.is_ascii_digit() || is_zh_num_char(b) || b == '每',
        };
        if counted {
            return None;
        }
    }
    let c = t.at(e);
    if c == '末' {
        // 周末两天, 这周末这两天: both its days
        // (周末两天半 is a length after it)
        let both = t
            .lit_longest(e + 1, &["两天", "两日", "这两天", "的两天"])
            .map(|(x, _)| x)
            .filter(|&x| !matches!(t.at(x), '半' | '多') && !is_zh_num_char(t.at(x)));
        return Some((
            both.unwrap_or(e + 1),
            date_atom(|x| {
                x.weekend = true;
                x.weekend_both = both.is_some();
                x.week = rel;
            }),
        ));
    }
    if let Some(wd) = weekday_char(c) {
        // "周1" must not run into more digits, "周一" not into a larger numeral
        let n = t.at(e + 1);
        // ... but "周三14:00", "周三10点" are a weekday and its time
        let mut k = e + 1;
        while t.at(k).is_ascii_digit() {
            k += 1;
        }
        let clock_after = !c.is_ascii_digit() && matches!(t.at(k), ':' | '点' | '时');
        if (n.is_ascii_digit() && !clock_after) || (c != '日' && c != '天' && matches!(n, '十' | '百')) {
            return None;
        }
        return Some((
            e + 1,
            date_atom(|x| {
                x.weekday = Some(wd);
                x.week = rel;
            }),
        ));
    }
    let rel = rel?;
    // 下周 / 这礼拜 / 上上周: the week itself (not 周年, 周岁...)
    if matches!(c, '年' | '岁') {
        return None;
    }
    if let Some(x) = same_day_suffix(t, e) {
        // 下周的今天
        return Some((x, Atom::Date(DateParts::shifted(rel, Unit::Week))));
    }
    if let Some(x) = week_part(t, e, rel) {
        return Some(x);
    }
    Some((e, date_atom(|x| x.week = Some(rel))))
}

/// A part of the week `rel` written after it at `e`: 下周初, 这周前半周 = Monday-Wednesday; 本周后半周 =
/// Thursday-Sunday; 下周中 = its Wednesday (not 周中午, 周中旬).
fn week_part(t: &Text, e: usize, rel: i32) -> Option<(usize, Atom)> {
    let (x, k) = t.lit_longest(e, &["初", "前半周", "前半", "后半周", "后半", "中"])?;
    if k == 5 {
        if t.at(x) == '午' || t.at(x) == '旬' {
            return None;
        }
        return Some((
            x,
            date_atom(|d| {
                d.week = Some(rel);
                d.weekday = Some(2);
                d.guessed = true;
            }),
        ));
    }
    Some((
        x,
        date_atom(|d| {
            d.week = Some(rel);
            d.week_half = Some(if k < 3 { 1 } else { 2 });
            d.guessed = true;
        }),
    ))
}

/// Words for "this same day" after a period or an offset: 下个月的今天, 下周今天, 明年的这一天,
/// 下个月同一天, 一个月后的今天.
const SAME_DAY_WORDS: &[&str] = &["今天", "今日", "这一天", "这天", "同一天", "同一日", "同日"];

/// An optional 的 and a word for "this same day" at `e`, after a period (下个月的今天, 下周今天, 明年
/// 的这一天, 下个月同一天): its end. The period is then a shift of the reference date (a day the
/// month lacks is its last day: 31 January + 1 month = 28/29 February).
pub(super) fn same_day_suffix(t: &Text, e: usize) -> Option<usize> {
    let k = if t.at(e) == '的' { e + 1 } else { e };
    t.lit_longest(k, SAME_DAY_WORDS).map(|(x, _)| x)
}

/// 这个时候, 这个时间, 这时候, 同一时间, 此时 right after a day, a week or an offset (明天这个时候,
/// 下周的这个时候, 三天后的这个时间): the reference time of day on that date.
pub(super) fn same_time(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if !matches!(t.at(i), '这' | '同' | '此') {
        return None;
    }
    let (e, _) = t.lit_longest(i, &["这个时候", "这个时间", "这时候", "同一时间", "此时"])?;
    let mut b = i;
    if t.before(b) == '的' {
        b -= 1;
    }
    "天日儿周期拜月年后晚早".contains(t.before(b)).then_some((e, Atom::SameTime))
}

/// Relative days (明天, 后儿, 明后天), the next day or working day (次日, 下个工作日) and now (现在).
#[inline]
pub(super) fn relative_day_words(t: &Text, i: usize, best: &mut Best) {
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
}
