//! The item a sentence refers to: its words and the day (and time of day) it names; a time of day
//! alone names an item too ("move my 4pm to 5").

use quickact_time::{TimeContext, TimeMatch, find_all};

use super::{Target, words::{is_meal_word, join_times, strip_leading}};
use crate::provider::local::text::{remove_spans, trim_fillers};

/// The item a phrase names: its words (the query) and the day it mentions.
pub(super) fn target(phrase: &str, ctx: &TimeContext, chinese: bool) -> Option<Target> {
    let phrase = strip_leading(phrase.trim(), &["帮我", "请", "麻烦", "我要", "我想", "把", "将"]);
    let matches: Vec<TimeMatch> = find_all(phrase, ctx).into_iter().filter(|m| !is_meal_word(m)).collect();
    // "the weekly sync", "每周例会", "the daily standup tomorrow": a recurrence describes the item's
    // series, it picks no day; its words leave the query with the other time words.
    let dated: Vec<TimeMatch> = matches.iter().filter(|m| m.resolution.rrule.is_none()).cloned().collect();
    let date = join_times(&dated, chinese, ctx);
    let spans: Vec<(usize, usize)> = matches.iter().map(|m| m.span).collect();
    let rest = remove_spans(phrase, &spans);
    let query = if chinese {
        // A kind word names the list the item is on, not its title ("删除吃药提醒").
        let q: String = rest.split_whitespace().collect();
        
        trim_fillers(
            &q,
            &["截止日期", "截止时间", "的时间", "的日期", "时间", "的", "我的", "那个", "这个", "一下", "了", "个", "把", "将", "事项", "日程", "安排", "提醒", "待办事项", "待办", "任务"],
        )
    } else {
        let cleaned: Vec<&str> = rest
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| c.is_ascii_punctuation() && c != '-'))
            .map(|w| w.strip_suffix("'s").unwrap_or(w))
            .filter(|w| !w.is_empty() && !["the", "my", "a", "an", "item", "event", "task", "todo", "reminder", "on", "at", "for", "'s", "s"].contains(&w.to_lowercase().as_str()))
            .collect();
        cleaned.join(" ")
    };
    // "it", "那个": the item is not named; several items at once are beyond the rules.
    const PRONOUNS: [&str; 8] = ["it", "that", "this", "them", "它", "这个", "那个", "这"];
    const BULK: [&str; 6] = ["all", "every", "everything", "所有", "全部", "都"];
    let lower = query.to_lowercase();
    if PRONOUNS.contains(&lower.as_str()) || BULK.iter().any(|b| if chinese { query.contains(b) } else { lower.split_whitespace().any(|w| w == *b) }) {
        return None;
    }
    // "move my 4pm to 5", "把下午3点那个改到4点": the time of day alone names the item.
    let timed = matches.iter().any(|m| m.resolution.start_time.is_some() || m.resolution.segment.is_some());
    (!query.is_empty() || timed).then_some(Target { query, date })
}
