//! Completions: "完成报告提交", "mark buy milk as done".

use quickact_time::{TimeContext, find_all, is_han};

use super::{Intent, Reading, target::target, words::{leading_verb, strip_leading, strip_verb, trailing_verb}};
use crate::provider::local::text::find_any;

/// A verb of the work and "finished" after the item ("周报写完了", "房租交好了"): the item is done.
const DONE_WITH_VERB: [&str; 22] = [
    "写完了", "写好了", "做好了", "弄完了", "弄好了", "看完了", "读完了", "交完了", "交好了", "交了", "买好了", "买完了", "处理完了", "处理好了",
    "整理完了", "整理好了", "改完了", "改好了", "办好了", "搞完了", "修好了", "发完了",
];

/// Past forms of the verbs to-dos start with, and the form a to-do is written in.
const PAST: [(&str, &str); 16] = [
    ("paid", "pay"), ("sent", "send"), ("bought", "buy"), ("called", "call"), ("finished", "finish"), ("submitted", "submit"), ("booked", "book"),
    ("emailed", "email"), ("renewed", "renew"), ("returned", "return"), ("picked up", "pick up"), ("cleaned", "clean"), ("filed", "file"),
    ("wrote", "write"), ("did", "do"), ("mailed", "mail"),
];

/// "I already paid the electric bill", "already sent the invoice": the to-do, written as one writes
/// it ("pay the electric bill"). Only with "already": a plain past ("I paid ...") may be a record.
fn already_done(text: &str, lower: &str) -> Option<String> {
    if !text.is_ascii() {
        return None;
    }
    let rest = ["i've already ", "i have already ", "i already ", "already "].iter().find_map(|lead| lower.strip_prefix(lead))?;
    let (past, base) = PAST.iter().find(|(past, _)| rest.starts_with(past) && rest[past.len()..].starts_with(' '))?;
    // ASCII: the lowered text has the same byte offsets as the text.
    Some(format!("{base}{}", &text[text.len() - rest.len() + past.len()..]))
}

/// The item before the work's verb and done: the listed forms, or any one-character verb before
/// 完了 / 好了 ("蛋糕取完了", "车洗好了"); the item is at least two characters.
fn done_with_verb(body: &str) -> Option<&str> {
    let object = trailing_verb(body, &DONE_WITH_VERB).or_else(|| {
        let chars: Vec<char> = body.chars().collect();
        let n = chars.len();
        let done = n >= 3 && matches!((chars[n - 2], chars[n - 1]), ('完', '了') | ('好', '了')) && is_han(chars[n - 3]);
        done.then(|| {
            let cut: usize = chars[..n - 3].iter().map(|c| c.len_utf8()).sum();
            body[..cut].trim()
        })
    })?;
    (object.chars().count() >= 2).then_some(object)
}

pub(super) fn complete(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let object = if chinese {
        // "已经给妈妈打过电话了": 已经, the work with 过, 了: done.
        if let Some(done) = ["我已经", "已经"].iter().find_map(|lead| text.strip_prefix(lead))
            && done.contains('过')
            && let Some(work) = done.strip_suffix('了')
        {
            let work = work.replacen('过', "", 1);
            return Some(match target(&work, ctx, chinese) {
                Some(target) => Reading::Understood(Intent::Complete(target)),
                None => Reading::NotUnderstood("no item named"),
            });
        }
        let body = strip_leading(text, &["我已经", "我", "已经", "请", "帮我"]);
        leading_verb(body, &["完成了", "完成", "做完了", "做完", "搞定了", "搞定", "已完成", "标记完成"])
            .or_else(|| {
                let body = strip_leading(body, &["把", "将"]);
                trailing_verb(body, &["已经完成了", "完成了", "做完了", "搞定了", "已完成", "标记为完成", "标记完成", "完成", "办完了", "搞定", "做完", "完事了", "完事"])
                    // "周报写完了", "房租交好了": the work's own verb, then done.
                    // Not after 把 ("下班前把报销单交了" asks for it to be done).
                    .or_else(|| (!text.contains('把')).then(|| done_with_verb(body)).flatten())
            })?
    } else {
        let lower = text.to_lowercase();
        if let Some(object) = already_done(text, &lower) {
            return Some(match target(&object, ctx, chinese) {
                Some(target) => Reading::Understood(Intent::Complete(target)),
                None => Reading::NotUnderstood("no item named"),
            });
        }
        let body = ["i have", "i've", "i", "please"].iter().find_map(|p| strip_verb(&lower, text, p)).unwrap_or(text);
        let lower_body = body.to_lowercase();
        if let Some(rest) = strip_verb(&lower_body, body, "mark").or_else(|| strip_verb(&lower_body, body, "check off")).or_else(|| strip_verb(&lower_body, body, "tick off")) {
            let rest_lower = rest.to_lowercase();
            let end = ["as done", "as complete", "as completed", "as finished", "done", "complete", "completed", "off"]
                .iter()
                .find_map(|s| rest_lower.trim_end().strip_suffix(s).map(|r| r.len()))
                .unwrap_or(rest.len());
            &rest[..end]
        } else if let Some(rest) =
            ["done with", "finished with", "done:", "done", "finished", "finish", "completed", "complete"].iter().find_map(|v| strip_verb(&lower_body, body, v))
        {
            rest
        } else {
            let trimmed = lower_body.trim_end();
            let end = [" is done", " is finished", " is complete", " done", " finished", " completed"]
                .iter()
                .find_map(|s| trimmed.strip_suffix(s).map(|r| r.len()))?;
            &body[..end]
        }
    };
    // "finish the report by friday" asks for a to-do with a deadline, not to tick one off.
    if !chinese && find_any(object, &["by", "before", "due"]).is_some() && !find_all(object, ctx).is_empty() {
        return None;
    }
    Some(match target(object, ctx, chinese) {
        Some(target) => Reading::Understood(Intent::Complete(target)),
        None => Reading::NotUnderstood("no item named"),
    })
}
