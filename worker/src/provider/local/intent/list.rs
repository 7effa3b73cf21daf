//! Listings: "明天有什么安排", "前3个最紧急的任务", "what's on friday".

use quickact_time::{TimeContext, find_all, leading_number};

use super::{Intent, Listing, Reading, words::join_times};
use crate::provider::local::text::find_any;

pub(super) fn list(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let lower = text.to_lowercase();
    let matches = find_all(text, ctx);
    let asks = if chinese {
        let asking = ["有什么", "有哪些", "有啥", "哪些", "看看", "查看", "列出", "显示", "查一下", "看一下", "查询", "最紧急", "最重要"]
            .iter()
            .any(|w| text.contains(w))
            || starts_with_count(text);
        let about_the_planner = !matches.is_empty() || ["安排", "待办", "任务", "日程", "会议", "提醒", "计划", "事"].iter().any(|w| text.contains(w));
        asking && about_the_planner
    } else {
        let starts = ["what's on", "whats on", "what is on", "what do i have", "what have i got", "what's happening", "what are my", "show", "list", "display", "any "];
        starts.iter().any(|w| lower.starts_with(w))
            || find_any(&lower, &["agenda", "my schedule", "do i have"]).is_some()
            || find_any(&lower, &["top"]).is_some_and(|(at, _)| leading_number(lower[at + 3..].trim_start()).is_some())
            // "top3": the count glued to the word
            || lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w.strip_prefix("top").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())))
    };
    if !asks {
        return None;
    }
    let kind = if chinese {
        if ["待办", "任务", "要做"].iter().any(|w| text.contains(w)) {
            Some("todo")
        } else if text.contains("提醒") {
            Some("reminder")
        } else if ["会议", "会", "活动"].iter().any(|w| text.contains(w)) && !text.contains("安排") {
            Some("event")
        } else {
            None
        }
    } else if find_any(&lower, &["todo", "todos", "to-dos", "to-do", "task", "tasks"]).is_some() {
        Some("todo")
    } else if find_any(&lower, &["reminder", "reminders"]).is_some() {
        Some("reminder")
    } else if find_any(&lower, &["meeting", "meetings", "event", "events"]).is_some() {
        Some("event")
    } else {
        None
    };
    let by_priority = if chinese {
        ["紧急", "重要", "优先"].iter().any(|w| text.contains(w))
    } else {
        find_any(&lower, &["urgent", "important", "priority", "pressing"]).is_some()
    };
    Some(Reading::Understood(Intent::List(Listing { date: join_times(&matches, chinese, ctx), kind, by_priority, query: None })))
}

pub(super) fn starts_with_count(text: &str) -> bool {
    text.strip_prefix('前').is_some_and(|rest| leading_number(rest).is_some())
}
