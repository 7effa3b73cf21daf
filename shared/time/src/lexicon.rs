//! The lexicon: every word the resolver reads as part of a time, found in a text whether or not
//! it formed a match ([`crate::time_word_spans`]). A reader that sees such a word left over by
//! every match knows its reading of the time is uncertain ("改到周三之前": 之前 is read by no
//! match, but 周三 is; "meet thrusday" has its typo read).
//!
//! The words come from the lexers' own tables (weekday and month names and their abbreviations,
//! units, relative days, parts of day, months and years, holidays) and the short list below of
//! words that stand only inside phrases ("ago", "am", "o'clock"); one pass over the normalised
//! text, each word looked up once.

use super::en::tables as en;
use super::numerals::is_zh_num_char;
use super::text::{ABBREVIATIONS, Text};
use super::typos;
use super::zh::tables as zh;
use super::is_han;

/// English words of the vocabulary that the name recognisers below do not cover, sorted (a
/// binary search looks them up; `tests` checks the order).
const EN_WORDS: &[&str] = &[
    "a.m.", "afternoon", "afternoons", "ago", "am", "annually", "arvo", "biweekly", "cob", "daily", "dawn", "dusk",
    "eob", "eod", "eve", "evening", "evenings", "fortnightly", "hence", "hourly", "later", "lunch", "lunchtime",
    "midday", "midnight", "monthly", "morning", "mornings", "night", "nightly", "nights", "noon", "noonish", "now",
    "o'clock", "oclock", "p.m.", "pm", "quarterly", "today", "tomorrow", "tonight", "weekday", "weekdays", "weekend",
    "weekends", "weekly", "workday", "workdays", "yearly", "yesterday",
];

/// Units and markers glued to a number ("10am", "2h", "45min").
const GLUED: &[&str] = &["a", "a.m.", "am", "h", "hr", "hrs", "m", "min", "mins", "p", "p.m.", "pm"];

/// Words that are time words only before one: "next friday", "last week", "this morning".
const MODIFIERS: &[&str] = &["next", "last", "this", "coming", "every", "each", "past"];

/// Chinese words no table below holds: units, the thirds of a month, 每 and the week words.
const ZH_WORDS: &[&str] = &[
    "小时", "钟头", "分钟", "刻钟", "上旬", "中旬", "下旬", "每天", "每周", "每月", "每年", "每晚", "工作日", "半夜", "午夜",
];

/// Chinese characters that are units only after a number (or 几, 半, 个): 3点, 五号, 两天, 十二月,
/// 2026年, 几天.
const ZH_UNITS_AFTER_NUMBER: &str = "点号日天月年周分时刻秒";

/// The spans (positions in `t`) of the time words of `t`, left to right.
pub(crate) fn time_words(t: &Text) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let c = t.at(i);
        let end = if c.is_ascii_alphabetic() && t.before(i).is_ascii_digit() {
            // a unit glued to a number: 10am, 2h, 45min
            let e = word_end(t, i);
            let w: String = (i..e).map(|k| t.at(k)).collect();
            if GLUED.contains(&w.as_str()) {
                out.push((i, e));
            }
            e
        } else if c.is_ascii_alphabetic() && t.word_start(i) {
            let e = word_end(t, i);
            // a holiday is one word however many it is written in ("christmas eve")
            let whole = t.phrase_longest_in(i, en::HOLIDAYS, |h| h.0).map(|x| x.0).filter(|&x| x >= e);
            match whole.or_else(|| english_word(t, i, e).then_some(e)) {
                Some(x) => {
                    out.push((i, x));
                    x
                }
                None => e,
            }
        } else if is_han(c) {
            match chinese_word(t, i) {
                Some(e) => {
                    out.push((i, e));
                    e
                }
                None => i + 1,
            }
        } else {
            i + 1
        };
        i = end.max(i + 1);
    }
    out
}

/// The end of the English word at `i`: letters, and an apostrophe or dot inside it (o'clock, a.m.).
fn word_end(t: &Text, i: usize) -> usize {
    let mut e = i;
    while t.at(e).is_ascii_alphabetic() || (matches!(t.at(e), '\'' | '.') && t.at(e + 1).is_ascii_alphabetic()) {
        // a possessive 's is not part of the word ("next week's")
        if t.at(e) == '\'' && t.at(e + 1) == 's' && !t.at(e + 2).is_ascii_alphabetic() {
            break;
        }
        e += 1;
    }
    if t.at(e) == '.' && t.at(e.saturating_sub(2)) == '.' {
        e += 1;
    }
    e
}

/// Whether the English word `i..e` is a time word.
fn english_word(t: &Text, i: usize, e: usize) -> bool {
    let w: String = (i..e).map(|k| t.at(k)).collect();
    if EN_WORDS.binary_search(&w.as_str()).is_ok() || named(t, i, e) {
        return true;
    }
    let chars: Vec<char> = w.chars().collect();
    if ABBREVIATIONS.iter().any(|(_, short)| short.contains(&w.as_str())) || typos::correction(&chars).is_some() {
        return true;
    }
    // "next", "last", "this" only before a time word ("next friday", not "next step")
    if MODIFIERS.contains(&w.as_str()) {
        let k = t.skip_ws(e);
        return k > e && t.at(k).is_ascii_alphabetic() && english_word(t, k, word_end(t, k));
    }
    false
}

/// A weekday, month or unit name covering exactly `i..e` (or with the dot of "sept.").
fn named(t: &Text, i: usize, e: usize) -> bool {
    en::weekday_name(t, i).is_some_and(|x| x.1 == e || x.1 == e + 1)
        || en::month_name(t, i).is_some_and(|x| x.1 == e || x.1 == e + 1)
        || en::unit_word(t, i).is_some_and(|x| x.1 == e)
}

/// The end of the Chinese time word at `i`, if one starts there.
fn chinese_word(t: &Text, i: usize) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut offer = |e: Option<usize>| {
        if let Some(e) = e
            && best.is_none_or(|b| e > b)
        {
            best = Some(e);
        }
    };
    offer(t.lit_longest_in(i, zh::REL_DAYS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::REL_SPANS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::DAY_SEGS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::SEGS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::MONTH_RELS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::YEAR_RELS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::MONTH_PART_WORDS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::YEAR_PART_WORDS, |w| w.0).map(|x| x.0));
    offer(t.lit_longest_in(i, zh::HOLIDAYS, |w| w.0).map(|x| x.0));
    for list in [zh::NEXT_DAY_WORDS, zh::NOW_WORDS, zh::NEXT_WORKDAY_WORDS, zh::WORKDAY_WORDS, ZH_WORDS] {
        offer(t.lit_longest(i, list).map(|x| x.0));
    }
    // 小时候 is childhood, not hours
    if t.lit(i, "小时候").is_some() {
        return None;
    }
    // 下周, 这个星期, 上礼拜三: a week prefix and a week word, with the weekday after it; 周 alone
    // only before a weekday or 末 (周围 is no time)
    let day_after = |e: usize| if "一二三四五六日天末1234567".contains(t.at(e)) { e + 1 } else { e };
    if let Some((e, _)) = t.lit_longest_in(i, zh::WEEK_PREFIXES, |w| w.0)
        && let Some((e2, _)) = t.lit_longest(e, zh::WEEK_WORDS)
    {
        offer(Some(day_after(e2)));
    }
    if let Some((e, _)) = t.lit_longest(i, zh::WEEK_WORDS)
        && (t.at(i) != '周' || day_after(e) > e)
    {
        offer(Some(day_after(e)));
    }
    // 3点, 五号, 两天, 几天, 半天, 两个月: a unit right after a number
    let b = t.before(i);
    // (一点点, 一点儿: "a little", as the clock reader has it)
    let a_little = b == '一' && t.at(i) == '点' && matches!(t.at(i + 1), '点' | '儿' | '也' | '都' | '不' | '吧');
    if (b.is_ascii_digit() || is_zh_num_char(b) || matches!(b, '几' | '半' | '个')) && ZH_UNITS_AFTER_NUMBER.contains(t.at(i)) && !a_little {
        offer(Some(i + 1));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let t = Text::new(text);
        time_words(&t).into_iter().map(|(s, e)| (s..e).map(|k| t.at(k)).collect()).collect()
    }

    #[test]
    fn the_word_lists_are_sorted_for_their_lookups() {
        assert!(EN_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn time_words_are_found_whether_or_not_they_form_a_match() {
        assert_eq!(words("move my dentist appointment to Friday 10am"), ["friday", "am"]);
        assert_eq!(words("see you next week, not next step"), ["next", "week"]);
        assert_eq!(words("meet thrusday morning"), ["thursday", "morning"]);
        assert_eq!(words("明天下午3点到4点开会"), ["明天", "下午", "点", "点"]);
        assert_eq!(words("改到下周三之前，或者星期五"), ["下周三", "星期五"]);
        assert_eq!(words("中秋节和两个小时"), ["中秋节", "小时"]);
        assert!(words("buy a sundae and some money").is_empty());
        assert!(words("周围的天气").is_empty());
        assert!(words("小时候吃一点点糖，很周到").is_empty());
    }
}
