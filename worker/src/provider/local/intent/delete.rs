//! Deletions: "删除明天的会议", "取消瑜伽课", "cancel yoga".

use quickact_time::{TimeContext, find_all};

use super::{Intent, Reading, target::target, words::{leading_verb, strip_leading, strip_verb, trailing_verb}};

/// Saying one will not go or do it, after the item ("明天的健身不去了", "周会不开了").
const NOT_GOING: [&str; 10] = ["不去了", "不去", "不开了", "不开", "不参加了", "不参加", "不用去了", "去不了了", "不办了", "不约了"];

pub(super) fn delete(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let object = if chinese {
        let body = strip_leading(text, &["请", "帮我", "麻烦", "我要", "我想"]);
        leading_verb(body, &["删除", "删掉", "删了", "取消", "去掉", "移除", "清除", "撤销"])
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
        ["delete", "remove", "cancel", "drop", "erase", "scrap"].iter().find_map(|v| strip_verb(&lower, text, v))?
    };
    Some(match target(object, ctx, chinese) {
        Some(target) => Reading::Understood(Intent::Delete(target)),
        None => Reading::NotUnderstood("no item named"),
    })
}
