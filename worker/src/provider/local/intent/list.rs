//! Listings: "明天有什么安排", "前3个最紧急的任务", "what's on friday".

use quickact_time::{TimeContext, find_all, leading_number};

use super::{Intent, Listing, Reading, words::{join_times, strip_leading}};
use crate::provider::local::text::{find_any, remove_spans, trim_fillers};

pub(super) fn list(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let lower = text.to_lowercase();
    let matches = find_all(text, ctx);
    let asks = if chinese {
        let asking = ["有什么", "有哪些", "有啥", "有没有", "哪些", "看看", "查看", "列出", "显示", "查一下", "看一下", "查询", "找一下", "查找", "搜索", "搜一下", "最紧急", "最重要", "有几个", "有几件", "有多少"]
            .iter()
            .any(|w| text.contains(w))
            || starts_with_count(text)
            // "我明天有安排吗", "周五有会吗": asking whether there is anything is asking for the list.
            || (text.ends_with('吗') && ["有安排", "有会", "有事", "有什么事", "有日程", "有计划", "有约"].iter().any(|w| text.contains(w)));
        let about_the_planner = !matches.is_empty() || ["安排", "待办", "任务", "日程", "会议", "提醒", "计划", "事"].iter().any(|w| text.contains(w));
        asking && about_the_planner
    } else {
        let starts = ["what's on", "whats on", "what is on", "what do i have", "what have i got", "what's happening", "what are my", "show", "list", "display", "any ",
            "anything on ", "anything for ", "anything planned", "anything scheduled", "anything else on ", "what's coming up", "whats coming up",
            "what is coming up", "coming up"];
        starts.iter().any(|w| lower.starts_with(w))
            // "find my todos about taxes", "which meetings are with Alex": only about the planner's
            // items ("find a plumber" is a to-do)
            || (["find ", "search ", "which "].iter().any(|w| lower.starts_with(w))
                && find_any(&lower, &["todos", "to-dos", "tasks", "meetings", "events", "reminders", "items", "appointments"]).is_some())
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
    let query = topic(text, ctx, chinese);
    Some(Reading::Understood(Intent::List(Listing { date: join_times(&matches, chinese, ctx), kind, by_priority, query })))
}

/// What a listing is about, when it says ("跟报告有关的待办", "和客户相关的会议", "关于预算的",
/// "todos about the report", "meetings with Alex"): the words the items must contain. A listing that
/// names nothing lists everything of its kind and day.
fn topic(text: &str, ctx: &TimeContext, chinese: bool) -> Option<String> {
    let phrase = if chinese { zh_topic(text)? } else { en_topic(text)? };
    // Time words of the sentence are its day, not the topic ("Alex this week").
    let spans: Vec<(usize, usize)> = find_all(&phrase, ctx).into_iter().map(|m| m.span).collect();
    let rest = remove_spans(&phrase, &spans);
    let fillers: &[&str] = if chinese { &["的", "那些", "这些", "所有", "我的", "跟", "和", "与"] } else { &["the", "my", "a", "an", "our", "any", "all"] };
    let words = trim_fillers(&rest, fillers);
    let words = if chinese { words.split_whitespace().collect::<Vec<_>>().join(" ") } else { words };
    (!words.is_empty()).then_some(words)
}

/// "跟X有关", "和X相关", "与X有关": X between the companion word and 有关/相关; "关于X", "有关X的",
/// "涉及X", "包含X": X up to the next 的.
fn zh_topic(text: &str) -> Option<String> {
    const RELATED: [&str; 4] = ["有关", "相关", "有關", "相關"];
    const WITH: [&str; 3] = ["跟", "和", "与"];
    const ABOUT: [&str; 7] = ["关于", "關於", "有关", "涉及", "包含", "含有", "提到"];
    for related in RELATED {
        let Some(at) = text.find(related) else { continue };
        let after = &text[at + related.len()..];
        // "有关X的" is the other order: handled below.
        if related == "有关" && !(after.is_empty() || after.starts_with('的') || after.starts_with("事")) {
            continue;
        }
        let before = &text[..at];
        // The first companion word ("跟参与者有关", "和同事相关": one inside the topic is part of
        // it); time words and a second companion word are trimmed later ("今天和明天跟报告有关").
        return Some(match WITH.iter().filter_map(|w| before.find(w).map(|i| i + w.len())).min() {
            Some(start) => before[start..].to_owned(),
            // "报告相关的待办有哪些": the topic opens the sentence, after any asking words.
            None => strip_leading(before, &["有哪些", "有什么", "列出", "查看", "看看", "显示", "查一下", "看一下", "查询", "我的", "所有"]).to_owned(),
        });
    }
    for about in ABOUT {
        let Some(at) = text.find(about) else { continue };
        let after = &text[at + about.len()..];
        let end = after.find('的').unwrap_or(after.len());
        return Some(after[..end].to_owned());
    }
    None
}

/// "about X", "related to X", "regarding X", "with X", "mentioning X": X to the end of the sentence.
fn en_topic(text: &str) -> Option<String> {
    const MARKERS: [&str; 15] = [
        " about ", " related to ", " relating to ", " regarding ", " concerning ", " mentioning ", " mentions ", " mention ", " involving ", " containing ",
        " with ", " called ", " named ", " titled ",
        // "tasks for the launch"; "for today" is a day, which the caller takes out
        " for ",
    ];
    let (at, marker) = find_any(text, &MARKERS)?;
    let rest = &text[at + marker.len()..];
    const NOTHING_IN_PARTICULAR: [&str; 6] = ["me", "us", "everything", "anything", "now", "later"];
    (!NOTHING_IN_PARTICULAR.contains(&rest.trim().to_lowercase().as_str())).then(|| rest.to_owned())
}

pub(super) fn starts_with_count(text: &str) -> bool {
    text.strip_prefix('前').is_some_and(|rest| leading_number(rest).is_some())
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use quickact_time::TimeContext;

    use super::super::{Intent, Listing, Reading, read};

    fn listing(text: &str) -> Listing {
        let ctx = TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
        match read(text, &ctx) {
            Reading::Understood(Intent::List(listing)) => listing,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_listing_about_something_carries_its_words() {
        for (text, topic) in [
            ("有哪些和发票相关的待办", "发票"),
            ("看看跟装修有关的任务", "装修"),
            ("列出与供应商有关的会议", "供应商"),
            ("关于预算的待办有哪些", "预算"),
            ("有没有和老王有关的安排", "老王"),
            ("找一下跟合同有关的任务", "合同"),
            ("今天和明天跟报告有关的待办有哪些", "报告"),
            ("列出和同事相关的提醒", "同事"),
            ("find my todos about the garden", "garden"),
            ("which meetings are with Priya", "Priya"),
            ("list my tasks for the product launch", "product launch"),
            ("下周跟面试相关的安排有哪些", "面试"),
            ("show my tasks related to the launch", "launch"),
            ("list todos about taxes", "taxes"),
            ("any events with Maria next week", "Maria"),
            ("show meetings regarding the budget review", "budget review"),
            ("which todos mention the landlord", "landlord"),
        ] {
            assert_eq!(listing(text).query.as_deref(), Some(topic), "{text}");
        }
        let weekly = listing("下周跟面试相关的安排有哪些");
        assert_eq!(weekly.date.as_deref(), Some("下周"));
        assert_eq!(listing("any events with Maria next week").date.as_deref(), Some("next week"));
    }

    #[test]
    fn a_listing_about_nothing_in_particular_has_no_words() {
        for text in [
            "明天有什么安排",
            "这周有哪些待办",
            "show my todos",
            "what do I have on monday",
            "show my reminders for today",
            "前3个最紧急的任务",
            "what do I have for tomorrow",
            "show my tasks for next week",
            "list everything for me",
        ] {
            assert_eq!(listing(text).query, None, "{text}");
        }
    }
}
