//! Deletions: "删除明天的会议", "取消瑜伽课", "cancel yoga".

use quickact_time::{TimeContext, find_all};

use super::{Intent, Reading, target::target, words::{leading_verb, strip_leading, strip_verb, trailing_verb}};

/// Saying one will not go or do it, after the item ("明天的健身不去了", "周会不开了").
const NOT_GOING: [&str; 10] = ["不去了", "不去", "不开了", "不开", "不参加了", "不参加", "不用去了", "去不了了", "不办了", "不约了"];

/// A reminder no longer wanted, before what it is about.
const NO_MORE_REMINDING: [&str; 8] = ["不用再提醒我", "不用提醒我", "不需要再提醒我", "不需要提醒我", "不要再提醒我", "不要提醒我", "别再提醒我", "别提醒我"];

/// "stop reminding me to drink water", "no need to remind me about the bins": the item.
fn not_needed_en<'a>(text: &'a str, lower: &str) -> Option<&'a str> {
    ["stop reminding me to ", "stop reminding me about ", "no need to remind me to ", "no need to remind me about ", "don't remind me to ", "don't remind me about "]
        .iter()
        .find(|lead| lower.starts_with(**lead))
        .map(|lead| text[lead.len()..].trim())
        .filter(|rest| !rest.is_empty())
}

/// "I can't make it to the yoga class tomorrow, cancel it": a reason that names the item, then a
/// cancel of "it".
fn reason_then_cancel<'a>(text: &'a str, lower: &str) -> Option<&'a str> {
    const ENDS: [&str; 10] = [
        ", cancel it", ", so cancel it", " so cancel it", ", please cancel it", ", delete it", ", remove it", ", drop it", ", cancel that", ", scrap it", ", call it off",
    ];
    let trimmed = lower.trim_end_matches(['.', '!', ' ']);
    let end = ENDS.iter().find_map(|e| trimmed.strip_suffix(e))?.len();
    let reason = &text[..end];
    const REASONS: [&str; 9] = [
        "i can't make it to ", "i cannot make it to ", "i won't make it to ", "i can't go to ", "i won't go to ", "i'm not going to ", "i am not going to ",
        "i'm skipping ", "i have to skip ",
    ];
    let lower_reason = &lower[..end];
    Some(REASONS.iter().find(|r| lower_reason.starts_with(**r)).map_or(reason, |r| &reason[r.len()..]).trim())
}

pub(super) fn delete(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let object = if chinese {
        let body = strip_leading(text, &["请", "帮我", "麻烦", "我要", "我想"]);
        leading_verb(body, &["删除", "删掉", "删了", "取消", "去掉", "移除", "清除", "撤销"])
            // "不用提醒我喝水了": a reminder no longer needed is taken away.
            .or_else(|| leading_verb(body, &NO_MORE_REMINDING).map(|rest| rest.trim_end_matches(['了', '啦', '吧']).trim()).filter(|rest| !rest.is_empty()))
            .or_else(|| {
                let body = strip_leading(body, &["把", "将"]);
                // Without 把, a trailing verb ends an item described by its time or as "that one"
                // ("明天的会取消", "上午那个会取消吧"), not a to-do of cancelling something ("记得把
                // 自动续费取消", "提醒我取消").
                let pointed = ["那个", "这个", "那场", "这场"].iter().any(|w| body.contains(w)) || !find_all(body, ctx).is_empty();
                let described = pointed && !["提醒", "记得", "别忘"].iter().any(|w| body.contains(w));
                (body.len() < text.len() || text.starts_with('把') || described)
                    .then(|| trailing_verb(body, &["删除", "删掉", "删了", "取消", "去掉", "移除", "取消掉"]))
                    .flatten()
                    // "明天的健身不去了", "周会不开了": not going is calling it off.
                    .or_else(|| trailing_verb(body, &NOT_GOING))
            })?
    } else {
        let lower = text.to_lowercase();
        ["delete", "remove", "cancel", "drop", "erase", "scrap", "get rid of", "clear", "nix", "trash", "axe", "scratch", "strike"]
            .iter()
            .find_map(|v| strip_verb(&lower, text, v))
            .or_else(|| not_needed_en(text, &lower))
            .or_else(|| reason_then_cancel(text, &lower))?
    };
    Some(match target(object, ctx, chinese) {
        Some(target) => Reading::Understood(Intent::Delete(target)),
        None => Reading::NotUnderstood("no item named"),
    })
}
