//! The planner's rules, as pure functions: search normalisation, the count a sentence asks for,
//! conflicts and times that have already passed.

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};
use quickact_time::leading_number;

/// Results a search returns when the sentence names no count.
pub const DEFAULT_LIMIT: u32 = 5;
/// Most results one search returns.
pub const MAX_LIMIT: u32 = 20;

/// The limit a search uses: the count the user's sentence states, if any (it wins over whatever
/// the model asks, in every retry and relaxed search of the run); else the model's request; else the
/// default; always within 1..=20.
pub fn search_limit(requested: Option<i64>, sentence_count: Option<u32>) -> u32 {
    let wanted = match (sentence_count, requested) {
        (Some(count), _) => i64::from(count),
        (None, Some(requested)) => requested,
        (None, None) => i64::from(DEFAULT_LIMIT),
    };
    wanted.clamp(1, i64::from(MAX_LIMIT)) as u32
}

/// A date-only lower bound starts at 00:00.
pub fn widen_from(date: NaiveDate) -> NaiveDateTime {
    date.and_time(NaiveTime::MIN)
}

/// A date-only upper bound ends at 23:59:59.
pub fn widen_to(date: NaiveDate) -> NaiveDateTime {
    date.and_hms_opt(23, 59, 59).expect("a valid time")
}

/// Whether `[a_start, a_end)` and `[b_start, b_end)` overlap: `a.start < b.end && a.end > b.start`.
pub fn overlaps(a_start: NaiveDateTime, a_end: NaiveDateTime, b_start: NaiveDateTime, b_end: NaiveDateTime) -> bool {
    a_start < b_end && a_end > b_start
}

/// The local end of a range on `date` from `start` to `end`; an end not after the start is on the
/// next day.
pub fn range_end(date: NaiveDate, start: NaiveTime, end: NaiveTime) -> NaiveDateTime {
    if end > start { date.and_time(end) } else { (date + Duration::days(1)).and_time(end) }
}

/// The number of results a sentence explicitly asks for: "前3个", "前三条", "top 5", "first 3",
/// "来一个", "给我两个", "3个最紧急的". Clock times and durations ("3点", "3个小时") are not counts.
pub fn explicit_count(sentence: &str) -> Option<u32> {
    let chars: Vec<char> = sentence.chars().collect();
    // Byte offset of each char, so the number reader can start at any of them.
    let offsets: Vec<usize> = sentence.char_indices().map(|(at, _)| at).collect();
    let lower = sentence.to_lowercase();

    // English: "top 5", "first 3", "next 2", "5 most ...", "show me 3 ..." with the number as a word too;
    // digits glued to a word count as their own word ("top3", "3most").
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .flat_map(split_digits_from_letters)
        .filter(|w| !w.is_empty())
        .collect();
    for (i, word) in words.iter().enumerate() {
        // "first 3" is a count; "the first one" is a place among them, not a count of one.
        if matches!(*word, "top" | "first" | "next" | "latest" | "last")
            && let Some(n) = words.get(i + 1).filter(|w| **w != "one").and_then(|w| english_number(w)) {
                return Some(n);
            }
        if let Some(n) = english_number(word)
            && words.get(i + 1).is_some_and(|w| matches!(*w, "most" | "items" | "tasks" | "todos" | "events" | "things" | "reminders" | "upcoming")) {
                return Some(n);
            }
    }

    // Chinese: 前N(个|条|项|件), 来/给我/列出/看N(个|条|项|件), N(个|条|项|件) followed by 最/待办/任务/事.
    for i in 0..chars.len() {
        let Some((n, len)) = leading_number(&sentence[offsets[i]..]).filter(|(n, _)| (1..=100).contains(n)) else { continue };
        let before = if i > 0 { Some(chars[i - 1]) } else { None };
        let after = chars.get(i + len).copied();
        let measure = after.is_some_and(|c| matches!(c, '个' | '条' | '項' | '项' | '件' | '樁'));
        let after_measure: String = chars.iter().skip(i + len + 1).take(3).collect();
        if after_measure.starts_with("小时") || after_measure.starts_with("鐘") || after_measure.starts_with("钟") || after_measure.starts_with("月") || after_measure.starts_with("星期") || after_measure.starts_with("礼拜") {
            continue;
        }
        if before == Some('前') && (measure || after.is_none_or(|c| !c.is_ascii_digit() && !matches!(c, '天' | '周' | '週' | '年' | '点' | '點' | '月' | '日' | '号' | '號' | '小' | '分' | '秒'))) {
            return Some(n);
        }
        let lead: String = chars[..i].iter().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect();
        if measure && (lead.ends_with('来') || lead.ends_with("给我") || lead.ends_with('列') || lead.ends_with('看') || lead.ends_with('找') || lead.ends_with('出')) {
            return Some(n);
        }
        if measure && (after_measure.starts_with('最') || after_measure.starts_with("待办") || after_measure.starts_with("任务") || after_measure.starts_with("事")) {
            return Some(n);
        }
    }
    None
}

/// "top3" -> "top", "3": a run of ASCII digits and a run of anything else are separate words.
fn split_digits_from_letters(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut previous: Option<bool> = None;
    for (at, c) in word.char_indices() {
        let digit = c.is_ascii_digit();
        if previous.is_some_and(|p| p != digit) {
            parts.push(&word[start..at]);
            start = at;
        }
        previous = Some(digit);
    }
    parts.push(&word[start..]);
    parts
}

/// A whole word that is a number from 1 to 100 ("3", "three", "twenty").
fn english_number(word: &str) -> Option<u32> {
    leading_number(word).filter(|&(n, len)| len == word.chars().count() && (1..=100).contains(&n)).map(|(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_stated_in_the_sentence_are_found() {
        let cases = [
            ("前3个最紧急的任务", Some(3)),
            ("列出前三条待办", Some(3)),
            ("来一个最重要的任务", Some(1)),
            ("给我两个待办", Some(2)),
            ("3个最紧急的任务", Some(3)),
            ("前十个任务", Some(10)),
            ("show me the top 5 tasks", Some(5)),
            ("first three todos", Some(3)),
            ("my 2 most urgent tasks", Some(2)),
            ("top3 tasks", Some(3)),
            ("show my top10 todos", Some(10)),
            ("列出前两个待办", Some(2)),
            ("最紧急的前5个", Some(5)),
            ("meet at 3pm", None),
            ("明天下午3点开会", None),
            ("开3个小时的会", None),
            ("明天有什么安排", None),
            ("前天的会议", None),
            ("what's on tomorrow", None),
            ("in 3 days", None),
        ];
        for (text, expected) in cases {
            assert_eq!(explicit_count(text), expected, "{text}");
        }
    }

    #[test]
    fn the_sentence_count_locks_the_limit() {
        assert_eq!(search_limit(Some(10), Some(3)), 3);
        assert_eq!(search_limit(Some(10), None), 10);
        assert_eq!(search_limit(None, None), DEFAULT_LIMIT);
        assert_eq!(search_limit(Some(500), None), MAX_LIMIT);
        assert_eq!(search_limit(Some(0), None), 1);
        assert_eq!(search_limit(None, Some(50)), MAX_LIMIT);
    }

    #[test]
    fn ranges_overlap_only_when_they_share_time() {
        let at = |h: u32, m: u32| NaiveDate::from_ymd_opt(2026, 2, 8).unwrap().and_hms_opt(h, m, 0).unwrap();
        assert!(overlaps(at(15, 0), at(16, 0), at(15, 30), at(17, 0)));
        assert!(!overlaps(at(15, 0), at(16, 0), at(16, 0), at(17, 0)), "touching ranges do not conflict");
        assert!(overlaps(at(9, 0), at(18, 0), at(12, 0), at(13, 0)));
    }

    #[test]
    fn a_range_ending_before_it_starts_ends_the_next_day() {
        let date = NaiveDate::from_ymd_opt(2026, 2, 8).unwrap();
        let end = range_end(date, NaiveTime::from_hms_opt(23, 0, 0).unwrap(), NaiveTime::from_hms_opt(1, 0, 0).unwrap());
        assert_eq!(end, NaiveDate::from_ymd_opt(2026, 2, 9).unwrap().and_hms_opt(1, 0, 0).unwrap());
    }

    #[test]
    fn date_only_bounds_widen_to_whole_days() {
        let date = NaiveDate::from_ymd_opt(2026, 2, 8).unwrap();
        assert_eq!(widen_from(date).to_string(), "2026-02-08 00:00:00");
        assert_eq!(widen_to(date).to_string(), "2026-02-08 23:59:59");
    }
}
