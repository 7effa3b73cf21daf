//! Chinese lexemes: relative days, weekdays, dates, clock times, parts of day, offsets,
//! durations, recurrences and connectors. Traditional forms are normalised before (see
//! `text::normalize_char`); Cantonese words (聽日, 尋日, 琴日, 朝早, 晏晝, 下晝, 今個) are listed.

use super::digits::meridiem;
use super::numerals::{
    ascii_decimal_hundredths, int_any, is_zh_num_char, zh_colloquial, zh_digit, zh_digit_seq, zh_int,
};
use super::segment::SegKind;
use super::text::Text;
use super::types::{
    Atom, BUSINESS_DAY, Best, Clock, Conn, DateParts, Freq, Glue, MonthPart, MonthSpec, Prefix, Recur,
    SegAtom, Unit, YearSpec, date_atom,
};

/// `after_tok`: the previous character belongs to a lexed atom (so a numeral may start here).
pub(crate) fn lex(t: &Text, i: usize, after_tok: bool, best: &mut Best) {
    let c = t.at(i);
    let num_start = c.is_ascii_digit() || is_zh_num_char(c) || c == '半';
    if num_start {
        // a number inside a longer number is not a start
        let b = t.before(i);
        if after_tok || !(b.is_ascii_digit() || (is_zh_num_char(b) && !c.is_ascii_digit())) {
            best.offer_opt(year_abs(t, i));
            best.offer_opt(month_abs(t, i));
            best.offer_opt(day_of_month(t, i));
            best.offer_opt(clock(t, i));
            best.offer_opt(offset_or_duration(t, i));
        }
    }
    let period_prefix = match c {
        '过' | '再' => true,
        '几' => !matches!(t.before(i), '十' | '好' | '这' | '那' | '前' | '后'),
        '未' | '接' | '今' | '往' | '最' => matches!(t.at(i + 1), '来' | '下' | '后' | '近'),
        '近' => is_zh_num_char(t.at(i + 1)) || t.at(i + 1).is_ascii_digit() || t.at(i + 1) == '半',
        _ => false,
    };
    if period_prefix {
        best.offer_opt(offset_or_duration(t, i));
    }
    if !may_start_word(c) {
        return;
    }
    words(t, i, best);
    best.offer_opt(super::rest_of_day::zh(t, i));
    best.offer_opt(clock_after_minutes_short(t, i));
    best.offer_opt(nth_weekday_or_month(t, i));
    best.offer_opt(same_time(t, i));
    best.offer_opt(weekday(t, i));
    best.offer_opt(recurrence(t, i));
    best.offer_opt(month_rel(t, i));
    best.offer_opt(year_rel(t, i));
    best.offer_opt(short_segment(t, i));
}

const REL_DAYS: &[(&str, i32)] = &[
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
const LOCATIVE_BEFORE: &str = "跟眼面门以之提事目当头窗床桌身背最然往落向朝屋院车房家楼山脑胸额炕台饭课会班前后";

/// Two relative days at once: (word, first, last). 明后天 = tomorrow and the day after.
const REL_SPANS: &[(&str, i32, i32)] = &[
    ("明后天", 1, 2),
    ("明后两天", 1, 2),
    ("明后日", 1, 2),
    ("今明两天", 0, 1),
    ("今明两日", 0, 1),
    ("今明天", 0, 1),
];

const DAY_SEGS: &[(&str, i32, SegKind)] = &[
    ("今晚", 0, SegKind::Evening),
    ("今夜", 0, SegKind::Night),
    ("今早", 0, SegKind::Morning),
    ("今晨", 0, SegKind::Morning),
    ("今朝", 0, SegKind::Morning),
    ("当晚", 0, SegKind::Evening),
    ("明早", 1, SegKind::Morning),
    ("明晨", 1, SegKind::Morning),
    ("明晚", 1, SegKind::Evening),
    ("听晚", 1, SegKind::Evening),
    ("昨晚", -1, SegKind::Evening),
    ("昨夜", -1, SegKind::Night),
    ("琴晚", -1, SegKind::Evening),
    ("前晚", -2, SegKind::Evening),
];

const SEGS: &[(&str, SegKind)] = &[
    ("凌晨", SegKind::EarlyMorning),
    ("黎明", SegKind::Dawn),
    ("拂晓", SegKind::Dawn),
    ("后半夜", SegKind::LateNight),
    ("早上", SegKind::Morning),
    ("早晨", SegKind::Morning),
    ("清晨", SegKind::Morning),
    ("一早", SegKind::Morning),
    ("一大早", SegKind::Morning),
    ("大清早", SegKind::Morning),
    ("大早上", SegKind::Morning),
    ("朝早", SegKind::Morning),
    ("上午", SegKind::Forenoon),
    ("中午", SegKind::Noon),
    ("正午", SegKind::Noon),
    ("午间", SegKind::Noon),
    ("晌午", SegKind::Noon),
    ("下午", SegKind::Afternoon),
    ("午后", SegKind::Afternoon),
    ("晏昼", SegKind::Afternoon),
    ("下昼", SegKind::Afternoon),
    ("傍晚", SegKind::Evening),
    ("晚上", SegKind::Evening),
    ("夜晚", SegKind::Evening),
    ("晚间", SegKind::Evening),
    ("晚头", SegKind::Evening),
    ("夜里", SegKind::Night),
    ("夜间", SegKind::Night),
    ("深夜", SegKind::Night),
    ("半夜", SegKind::Night),
    ("白天", SegKind::Daytime),
    ("全天", SegKind::AllDay),
    ("整天", SegKind::AllDay),
    ("一整天", SegKind::AllDay),
];

const NEXT_DAY_WORDS: &[&str] = &["次日", "翌日", "第二天", "隔天", "隔日"];
const NOW_WORDS: &[&str] = &["现在", "此刻", "目前"];
const NEXT_WORKDAY_WORDS: &[&str] = &["下一个工作日", "下个工作日", "下一工作日"];
const MONTH_PART_WORDS: &[(&str, MonthPart)] = &[
    ("月初", MonthPart::Begin),
    ("月底", MonthPart::End),
    ("月末", MonthPart::End),
    ("月中", MonthPart::Mid),
];
const YEAR_PART_WORDS: &[(&str, u32, MonthPart)] = &[
    ("年底", 12, MonthPart::End),
    ("年末", 12, MonthPart::End),
    ("年初", 1, MonthPart::Begin),
];
const DUR_GLUE_WORDS: &[&str] = &["开始", "持续", "历时", "为期", "时长"];
const WORKDAY_WORDS: &[&str] = &["每个工作日", "每工作日", "工作日", "每个工作天"];
const WEEK_WORDS: &[&str] = &["星期", "礼拜", "周"];

/// Characters that can start a word-like (non-numeric) Chinese lexeme; everything else skips
/// the word tables. `tests::every_word_passes_the_prefilter` keeps it in step with the tables.
#[rustfmt::skip]
fn may_start_word(c: char) -> bool {
    matches!(c,
        '大' | '后' | '明' | '听' | '今' | '本' | '当' | '昨' | '寻' | '琴' | '前' | '次' |
        '翌' | '第' | '隔' | '凌' | '黎' | '拂' | '早' | '清' | '一' | '朝' | '上' | '中' |
        '正' | '午' | '晌' | '下' | '晏' | '傍' | '晚' | '夜' | '深' | '半' | '白' | '全' |
        '整' | '现' | '此' | '目' | '月' | '年' | '到' | '至' | '从' | '由' | '的' | '开' |
        '持' | '历' | '为' | '时' | '星' | '礼' | '周' | '这' | '每' | '工' | '天' | '同' |
        '去' | '来' | '又' | '零' | '最' | '差' | '倒' | '头'
    )
}

/// Fixed words: relative days, parts of day, connectors, glue.
fn words(t: &Text, i: usize, best: &mut Best) {
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

/// 早8点 / 晚8点: a one-character part of day directly before a clock time.
fn short_segment(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let kind = match t.at(i) {
        '早' => SegKind::Morning,
        '晚' => SegKind::Evening,
        _ => return None,
    };
    clock(t, i + 1)?;
    Some((
        i + 1,
        Atom::Seg(SegAtom {
            kind,
            day: None,
            daily: false,
        }),
    ))
}

fn weekday_char(c: char) -> Option<u8> {
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

const WEEK_PREFIXES: &[(&str, i32)] = &[
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
fn week_word(t: &Text, i: usize) -> Option<usize> {
    t.lit_longest(i, WEEK_WORDS).map(|(e, _)| e)
}

/// 周一, 下周三, 上个礼拜天, 这周末, 下周, 上上周.
fn weekday(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
            _ => b.is_ascii_digit() || is_zh_num_char(b) || b == '个' || b == '每',
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
    // 下周初, 这周前半周 = Monday-Wednesday; 本周后半周 = Thursday-Sunday; 下周中 = its Wednesday
    if let Some((x, k)) = t.lit_longest(e, &["初", "前半周", "前半", "后半周", "后半", "中"]) {
        if k == 5 {
            if t.at(x) != '午' && t.at(x) != '旬' {
                return Some((
                    x,
                    date_atom(|d| {
                        d.week = Some(rel);
                        d.weekday = Some(2);
                        d.guessed = true;
                    }),
                ));
            }
        } else {
            return Some((
                x,
                date_atom(|d| {
                    d.week = Some(rel);
                    d.week_half = Some(if k < 3 { 1 } else { 2 });
                    d.guessed = true;
                }),
            ));
        }
    }
    Some((e, date_atom(|x| x.week = Some(rel))))
}

/// 第三个周三, 第2个星期五, 最后一个周五, 最后一个礼拜天, 倒数第二个周五, 头一个周一 (the n-th
/// weekday of the month named before it, or of this month); 第一个工作日, 最后一个工作日 right
/// after a month or a week (下个月第一个工作日, 本月最后一个工作日, 下周的最后一个工作日);
/// 第二个月, 第4个月 right after a year (明年第二个月, 2027年的第4个月).
fn nth_weekday_or_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// Words for "this same day" after a period or an offset: 下个月的今天, 下周今天, 明年的这一天,
/// 下个月同一天, 一个月后的今天.
const SAME_DAY_WORDS: &[&str] = &["今天", "今日", "这一天", "这天", "同一天", "同一日", "同日"];

/// An optional 的 and a word for "this same day" at `e`, after a period (下个月的今天, 下周今天, 明年
/// 的这一天, 下个月同一天): its end. The period is then a shift of the reference date (a day the
/// month lacks is its last day: 31 January + 1 month = 28/29 February).
fn same_day_suffix(t: &Text, e: usize) -> Option<usize> {
    let k = if t.at(e) == '的' { e + 1 } else { e };
    t.lit_longest(k, SAME_DAY_WORDS).map(|(x, _)| x)
}

/// 这个时候, 这个时间, 这时候, 同一时间, 此时 right after a day, a week or an offset (明天这个时候,
/// 下周的这个时候, 三天后的这个时间): the reference time of day on that date.
fn same_time(t: &Text, i: usize) -> Option<(usize, Atom)> {
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

/// 2026年, 15年, 二零一五年, 零七年 (+ 底/初).
fn year_abs(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (y, e) = if t.at(i).is_ascii_digit() {
        let (v, e, n) = super::numerals::ascii_int(t, i)?;
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

const YEAR_RELS: &[(&str, i32)] = &[
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

fn year_rel(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (e, k) = t.lit_longest_in(i, YEAR_RELS, |p| p.0)?;
    if let Some(x) = same_day_suffix(t, e) {
        return Some((x, Atom::Date(DateParts::shifted(YEAR_RELS[k].1, Unit::Year))));
    }
    year_with_suffix(t, e, YearSpec::Rel(YEAR_RELS[k].1))
}

/// 上/中/下 of 上旬, 中旬, 下旬: the third of the month.
fn third(c: char) -> u8 {
    match c {
        '上' => 1,
        '中' => 2,
        _ => 3,
    }
}

/// After a month: 初/底/末/中 → a part of the month; 上旬/中旬/下旬 → a third of it.
fn month_part_suffix(t: &Text, e: usize) -> Option<(MonthPart, usize)> {
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
fn month_abs(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (m, e, _) = int_any(t, i)?;
    if !(1..=12).contains(&m) || t.at(e) != '月' {
        return None;
    }
    Some(month_with_day(t, e + 1, MonthSpec::Abs(m)))
}

const MONTH_RELS: &[(&str, i32)] = &[
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
fn month_rel(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
fn day_of_month(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (d, e, _) = int_any(t, i)?;
    if !(1..=31).contains(&d) || !matches!(t.at(e), '日' | '号') {
        return None;
    }
    Some((e + 1, date_atom(|x| x.day = Some(d))))
}

/// 3点, 三点半, 3点15分, 三点一刻, 十五点, 15点30, 晚上十一点钟, 8时35分, 6点30pm.
pub(crate) fn clock(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (h, e, is_ascii) = int_any(t, i)?;
    if h > 24 {
        return None;
    }
    let marker = t.at(e);
    if marker != '点' && marker != '时' {
        return None;
    }
    let after = t.at(e + 1);
    if marker == '时' && matches!(after, '间' | '候' | '代' | '期' | '刻' | '段' | '差') {
        return None;
    }
    if marker == '点' && after == '点' {
        return None;
    }
    let padded = is_ascii && t.at(i) == '0' && e - i == 2;
    let mut j = e + 1;
    if marker == '点' && after == '儿' {
        // "三点儿", "俩点儿" = 3, 2 o'clock; "一点儿" is "a little" unless a part of day stands
        // right before it ("下午一点儿")
        if h == 1 && !is_ascii && !"午晨上里".contains(t.before(i)) {
            return None;
        }
        j += 1;
    }
    if matches!(t.at(j), '钟' | '整' | '正') {
        j += 1;
    }
    let mut m = 0;
    let mut has_min = false;
    let mut h = h;
    if let Some((before, e2)) = minutes_short(t, j).filter(|_| h > 0) {
        // "8点差一刻" = 7:45
        h -= 1;
        m = 60 - before;
        has_min = true;
        j = e2;
    } else if t.at(j) == '半' {
        m = 30;
        has_min = true;
        j += 1;
    } else if t.at(j) == '踏' && t.at(j + 1) == '半' {
        m = 30;
        has_min = true;
        j += 2;
    } else {
        let mut k = j;
        if t.at(k) == '过' || t.at(k) == '零' && t.at(k + 1).is_ascii_digit() {
            k += 1;
        }
        if let Some((mm, e2, _)) = int_any(t, k) {
            if t.at(e2) == '刻' && (1..=3).contains(&mm) && t.at(e2 + 1) != '钟' {
                m = mm * 15;
                has_min = true;
                j = e2 + 1;
            } else if mm <= 59
                && !matches!(
                    t.at(e2),
                    '点' | '时'
                        | '号'
                        | '日'
                        | '月'
                        | '个'
                        | '天'
                        | '年'
                        | '小'
                        | '刻'
                        | '周'
                        | '星'
                        | '岁'
                        | '次'
                        | '人'
                        | '.'
                        | '%'
                )
                // "七点一起去", "三点一下": 一 starts a word there, it is no minute
                && !(t.at(k) == '一' && e2 == k + 1 && "起下些会直定样般共同块边道切旦".contains(t.at(e2)))
                && !(t.at(e2) == '分'
                    && t.at(e2 + 1) == '钟'
                    && matches!(t.at(e2 + 2), '后' | '前' | '以' | '之'))
            {
                m = mm;
                has_min = true;
                j = e2;
                if t.at(j) == '分' {
                    j += 1;
                    if let Some((s, e3, _)) = int_any(t, j)
                        && s <= 59
                        && t.at(e3) == '秒'
                    {
                        j = e3 + 1;
                    }
                }
            }
        }
    }
    if h == 24 && m > 0 {
        return None;
    }
    let mut mer = None;
    if (1..=12).contains(&h)
        && let Some((mr, e3)) = meridiem(t, j)
        && (!t.at(j).is_ascii_alphabetic() || !t.before(j).is_ascii_alphabetic())
    {
        mer = Some(mr);
        j = e3;
    }
    // "一点" usually means "a little" after these characters or before these
    if !is_ascii && h == 1 && !has_min && mer.is_none() && t.at(i) == '一' {
        let b = t.before(i);
        if "有快早晚慢多少好差大小些点再高低长短近远轻重".contains(b)
            || "也都不吧啊呀".contains(t.at(j))
        {
            return None;
        }
    }
    // "第3点", "这三点", "有3点建议": points of a list, not hours
    if !has_min && mer.is_none() && marker == '点' && "第这那几有".contains(t.before(i)) {
        return None;
    }
    Some((
        j,
        Atom::Clock(Clock {
            h,
            m,
            has_min,
            mer,
            absolute: h > 12 || h == 0,
            padded,
            guessed: false,
        }),
    ))
}

/// Two neighbouring hours said together, "两三点" (2 or 3 o'clock), "七八点", "十一二点": the first
/// hour, the end of its numeral, and the second hour's clock time with its end. The lexer makes
/// them a range (下午两三点 = 14:00-15:00) whose `confidence` is `inferred`, since either hour may
/// be meant. "一两点" only after a part of day (凌晨一两点); "有一两点建议" counts points.
pub(crate) fn hour_pair(t: &Text, i: usize) -> Option<(Clock, usize, Clock, usize)> {
    let (a, e1) = zh_int(t, i)?;
    let b = zh_digit(t.at(e1))?;
    let second = match a {
        2..=8 if b == a + 1 => b,
        1 if b == 2 && "午晨上里晚夜".contains(t.before(i)) => 2,
        11 if b == 2 => 12,
        _ => return None,
    };
    if "第这那几有".contains(t.before(i)) {
        return None;
    }
    let (e2, atom) = clock(t, e1)?;
    let Atom::Clock(c2) = atom else { return None };
    if c2.mer.is_some() {
        return None;
    }
    let first = Clock {
        guessed: true,
        ..Clock::bare(a)
    };
    Some((first, e1, Clock { h: second, absolute: second > 12, ..c2 }, e2))
}

/// "差一刻", "差5分", "差十分钟" at `j`: the minutes short of the hour (1..=59) and the end.
fn minutes_short(t: &Text, j: usize) -> Option<(u32, usize)> {
    if t.at(j) != '差' {
        return None;
    }
    let (n, e, _) = int_any(t, j + 1)?;
    let (minutes, e) = match t.at(e) {
        '刻' if (1..=3).contains(&n) => (n * 15, e + 1),
        '分' => (n, if t.at(e + 1) == '钟' { e + 2 } else { e + 1 }),
        _ => return None,
    };
    (1..=59).contains(&minutes).then_some((minutes, e))
}

/// "差5分8点", "差一刻九点": a clock time written after the minutes short of it.
fn clock_after_minutes_short(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (before, e) = minutes_short(t, i)?;
    let (end, atom) = clock(t, e)?;
    let Atom::Clock(c) = atom else { return None };
    if c.has_min || c.h == 0 {
        return None;
    }
    Some((
        end,
        Atom::Clock(Clock {
            h: c.h - 1,
            m: 60 - before,
            has_min: true,
            absolute: c.h - 1 > 12,
            ..c
        }),
    ))
}

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
        {
            best = Some((u, e, w));
        }
    }
    best
}

/// 3天后, 三天以后, 两周后, 半小时后, 1个小时后, 3天前, 过3天 (offsets);
/// 2小时, 两个小时, 半小时, 一个半小时, 90分钟 (durations).
fn offset_or_duration(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let mut j = i;
    let mut forward_prefix = false;
    // 未来三天, 接下来的一周 = from now to that far on; 过去三天, 最近两周 = that far back to now
    let mut period = 0i32;
    if matches!(t.at(j), '未' | '接' | '今' | '往' | '过' | '最' | '近')
        && let Some((e, k)) = t.lit_longest(j, &["未来", "接下来", "接下来的", "今后", "往后", "过去", "过去的", "最近", "近"])
    {
        period = if k < 5 { 1 } else { -1 };
        j = e;
    } else if let Some(e) = t.lit(j, "再过") {
        j = e;
        forward_prefix = true;
    } else if t.at(j) == '过' {
        j += 1;
        forward_prefix = true;
    }
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
    let (unit, mut e, word) =
        zh_unit(t, e, had_ge).or_else(|| if colloquial { zh_unit(t, e, true) } else { None })?;
    let half_after = t.at(e) == '半'
        && approx.is_none()
        && amt % 100 == 0
        && matches!(unit, ZhUnit::Hour | ZhUnit::Cal(Unit::Day));
    let amt = if half_after {
        e += 1;
        amt + 50
    } else {
        amt
    };
    let mut within = period != 0;
    let dir = if period != 0 {
        period
    } else if let Some((e2, k)) =
        t.lit_longest(e, &["以后", "之后", "过后", "后", "以前", "之前", "前"])
    {
        e = e2;
        if k < 4 { 1 } else { -1 }
    } else if forward_prefix {
        1
    } else if matches!(t.at(e), '之' | '以' | '内')
        && let Some((e2, _)) = t.lit_longest(e, &["之内", "以内", "内"])
        && !matches!(t.at(e2), '容' | '部' | '地' | '心' | '存' | '在' | '外' | '科' | '衣' | '阁' | '务' | '涵')
    {
        // "三天内", "两小时之内": from now to that far on
        e = e2;
        within = true;
        1
    } else {
        0
    };
    if approx.is_some() && dir == 0 {
        return None;
    }
    let minutes = |per: u32| -> u32 { amt * per / 100 };
    match unit {
        ZhUnit::Minute | ZhUnit::Quarter | ZhUnit::Hour => {
            let per = match unit {
                ZhUnit::Minute => 1,
                ZhUnit::Quarter => 15,
                _ => 60,
            };
            let mins = minutes(per);
            if mins == 0 {
                return None;
            }
            if within || approx.is_some() {
                let hi = (hi_amt * per / 100) as i64 * dir as i64;
                let lo = if within { 0 } else { mins as i64 * dir as i64 };
                return Some((e, Atom::TimeSpan(lo.min(hi), lo.max(hi), t.at(j) == '几')));
            }
            if dir == 0 {
                // a duration needs an unambiguous unit ("5分" alone may be a score)
                if word == "分" || forward_prefix {
                    return None;
                }
                return Some((e, Atom::Duration(mins)));
            }
            Some((e, Atom::TimeOffset(dir as i64 * mins as i64)))
        }
        ZhUnit::Cal(u) => {
            if amt == 0 {
                return None;
            }
            if dir == 0 {
                return calendar_duration(t, i, e, amt, u, word);
            }
            if within || approx.is_some() {
                if amt % 100 != 0 {
                    return None;
                }
                let hi = (hi_amt / 100) as i32 * dir;
                let lo = if within { 0 } else { (amt / 100) as i32 * dir };
                return Some((
                    e,
                    date_atom(|x| {
                        x.offset = Some((lo.min(hi), u));
                        x.offset_end = Some(lo.max(hi));
                        // 几 is two to four by convention
                        x.guessed = t.at(j) == '几';
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
    }
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

/// 每天, 每周一三五, 每个工作日, 工作日, 每月, 每年, 每隔一天, 每两周, 每小时, 每周末, 每晚.
fn recurrence(t: &Text, i: usize) -> Option<(usize, Atom)> {
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
    let mut j = i + 1;
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
    if freq == Freq::Monthly {
        // 每月最后一天, 每月底, 每个月的最后一天
        let k = if t.at(e) == '的' { e + 1 } else { e };
        if let Some((e2, _)) = t.lit_longest(k, &["最后一天", "底", "末"]) {
            r.last_day = true;
            e = e2;
        } else if let Some((e2, _)) = t.lit_longest(k, &["第一天", "第1天", "头一天", "初"]) {
            // 每个月的第一天, 每月初 = the 1st
            return Some((
                e2,
                date_atom(|x| {
                    x.recur = Some(r);
                    x.day = Some(1);
                }),
            ));
        }
    }
    if freq == Freq::Weekly {
        if t.at(e) == '末' {
            r.byday = Recur::WEEKEND;
            e += 1;
        } else {
            // a list of weekdays: 一三五, 一、三、五, 一和三, 周一周三
            let start = e;
            let mut k = e;
            loop {
                let c = t.at(k);
                let Some(wd) = weekday_char(c) else { break };
                if c.is_ascii_digit() && t.at(k + 1).is_ascii_digit() {
                    break;
                }
                r.byday |= 1 << wd;
                k += 1;
                e = k;
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
                        e = k3 + 1;
                    }
                    break;
                }
            }
            // "每周一次" = once a week
            if matches!(t.at(e), '次' | '遍' | '回') {
                r.byday = 0;
                e = start;
            }
        }
    }
    Some((e, date_atom(|x| x.recur = Some(r))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_passes_the_prefilter() {
        let mut words: Vec<&str> = Vec::new();
        words.extend(REL_DAYS.iter().map(|w| w.0));
        words.extend(REL_SPANS.iter().map(|w| w.0));
        words.extend(DAY_SEGS.iter().map(|w| w.0));
        words.extend(SEGS.iter().map(|w| w.0));
        words.extend(WEEK_PREFIXES.iter().map(|w| w.0));
        words.extend(YEAR_RELS.iter().map(|w| w.0));
        words.extend(MONTH_RELS.iter().map(|w| w.0));
        words.extend(MONTH_PART_WORDS.iter().map(|w| w.0));
        words.extend(YEAR_PART_WORDS.iter().map(|w| w.0));
        words.extend(NEXT_DAY_WORDS);
        words.extend(NOW_WORDS);
        words.extend(NEXT_WORKDAY_WORDS);
        words.extend(DUR_GLUE_WORDS);
        words.extend(WORKDAY_WORDS);
        words.extend(WEEK_WORDS);
        words.push("午夜");
        words.push("天天");
        for w in words {
            let c = w.chars().next().unwrap();
            assert!(may_start_word(c), "{w}: {c} is missing from may_start_word");
        }
        // single characters that start a lexeme on their own (connectors, glue, 每, 早/晚 + time)
        for c in "到至从由的每早晚又零第最差倒头".chars() {
            assert!(may_start_word(c), "{c} is missing from may_start_word");
        }
    }
}
