//! Helpers the readings share: meal words, questions, joining time expressions, trimming verbs.

use quickact_time::{TimeContext, TimeMatch};

/// Meals, and the part of the day each is eaten in.
pub(super) const MEALS: [(&str, &str); 13] = [
    ("breakfast", "morning"),
    ("brunch", "forenoon"),
    ("lunch", "noon"),
    ("dinner", "evening"),
    ("supper", "evening"),
    ("早饭", "morning"),
    ("早餐", "morning"),
    ("早茶", "morning"),
    ("午饭", "noon"),
    ("午餐", "noon"),
    ("晚饭", "evening"),
    ("晚餐", "evening"),
    ("夜宵", "evening"),
];

/// A match that is only a meal the resolver reads as a part of day, which is also what the item is
/// ("lunch with Sarah", "cancel team lunch"): it stays in the title or query.
pub(super) fn is_meal_word(m: &TimeMatch) -> bool {
    let word = m.text.trim().to_lowercase();
    word == "lunchtime" || MEALS.iter().any(|(meal, _)| meal.is_ascii() && *meal == word)
}

/// Questions are not requests to write something ("今天天气怎么样", "is it raining tomorrow?").
pub(super) fn is_question(text: &str, chinese: bool) -> bool {
    let trimmed = text.trim();
    if trimmed.ends_with('?') || trimmed.ends_with('？') {
        return true;
    }
    if chinese {
        ["怎么样", "怎样", "如何", "为什么", "是什么", "什么时候", "吗", "呢", "几点了", "多少", "几号", "星期几", "礼拜几", "周几"].iter().any(|w| trimmed.ends_with(w) || trimmed.contains(w) && *w != "吗" && *w != "呢")
    } else {
        let lower = trimmed.to_lowercase();
        ["what ", "what's", "how ", "why ", "who ", "is it ", "are ", "can you", "could you", "will it", "when is", "where "].iter().any(|w| lower.starts_with(w))
    }
}

/// The time expressions of `matches` as one text, in order ("明天" + "下午3点"), each as the tools
/// will read it ("3" of "at 3" goes on as "at 3").
pub(super) fn join_times(matches: &[TimeMatch], chinese: bool, ctx: &TimeContext) -> Option<String> {
    if matches.is_empty() {
        return None;
    }
    let parts: Vec<String> = matches
        .iter()
        .map(|m| {
            // Only the time words: "后天上午10点评审，开一个半小时" goes on as "后天上午10点 一个半小时";
            // unless words outside them decided the time: the meal in "dinner at 8 on friday" makes
            // "8 on friday" 20:00, so the match goes on whole, or as the day and time it means.
            let meant = (m.resolution.date, m.resolution.start_time);
            let reads_as = |text: &str| quickact_time::resolve(text, ctx).map(|r| (r.date, r.start_time)) == Some(meant);
            let words = time_words(m);
            let exact;
            let text = if reads_as(words.trim()) || m.resolution.rrule.is_some() || !chinese && reads_as(&format!("at {}", words.trim())) {
                words.trim()
            } else if m.gap.is_some() && reads_as(m.text.trim()) {
                m.text.trim()
            } else if let Some(start) = m.resolution.start_time {
                exact = exact_time(m.resolution.date, start);
                exact.as_str()
            } else {
                words.trim()
            };
            if !chinese && quickact_time::resolve(text, ctx).is_none() {
                format!("at {text}")
            } else {
                text.to_owned()
            }
        })
        .collect();
    Some(parts.join(if chinese { "" } else { " " }))
}

/// A day and a clock time as the tools read them exactly ("2026-02-13 20:00"): what the reader
/// passes on when the words of the sentence, taken apart, would not say it.
pub(super) fn exact_time(date: chrono::NaiveDate, time: chrono::NaiveTime) -> String {
    format!("{date} {}", time.format("%H:%M"))
}

/// The text of a match without the words inside it that are not time words (`TimeMatch::gap`).
pub(super) fn time_words(m: &TimeMatch) -> String {
    let chars: Vec<char> = m.text.chars().collect();
    let pieces: Vec<String> = m.pieces().iter().map(|&(a, b)| chars[a - m.span.0..b - m.span.0].iter().collect::<String>().trim().to_owned()).collect();
    pieces.join(" ")
}

/// Removes whitespace except between two Latin letters or digits.
pub(super) fn join_cjk(text: &str) -> String {
    let chars: Vec<char> = text.trim().chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_whitespace() {
            let before = out.chars().last();
            let after = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if before.is_some_and(|b| b.is_ascii_alphanumeric()) && after.is_some_and(|a| a.is_ascii_alphanumeric()) && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(*c);
        }
    }
    out
}

pub(super) fn merge(spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

pub(super) fn strip_leading<'a>(text: &'a str, words: &[&str]) -> &'a str {
    let mut current = text.trim();
    loop {
        let before = current;
        for word in words {
            if let Some(rest) = current.strip_prefix(word) {
                current = rest.trim();
            }
        }
        if current == before {
            return current;
        }
    }
}

/// The text after a leading verb.
pub(super) fn leading_verb<'a>(text: &'a str, verbs: &[&str]) -> Option<&'a str> {
    verbs.iter().find_map(|v| text.strip_prefix(v)).map(str::trim).filter(|rest| !rest.is_empty())
}

/// The text before a trailing verb.
pub(super) fn trailing_verb<'a>(text: &'a str, verbs: &[&str]) -> Option<&'a str> {
    let trimmed = text.trim_end_matches(['了', '吧', '啦']);
    verbs.iter().find_map(|v| trimmed.strip_suffix(v).or_else(|| text.strip_suffix(v))).map(str::trim).filter(|rest| !rest.is_empty())
}

/// The text after an English verb at the start (`lower` is `text` lowercased).
pub(super) fn strip_verb<'a>(lower: &str, text: &'a str, verb: &str) -> Option<&'a str> {
    let rest = lower.strip_prefix(verb)?;
    if !rest.starts_with(' ') && !rest.starts_with(':') {
        return None;
    }
    let cut = text.len() - rest.len();
    Some(text[cut..].trim_start_matches(':').trim())
}
