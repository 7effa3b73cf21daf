//! The next step of a local run: from the intent and what the tools have answered so far, the
//! tool call a good model would make, or the `finish` that ends the run.
//!
//! Tool results are read as data: the few fields this reader needs are deserialised into the small
//! types below from the full results the journal recorded, never from the compact view or the
//! display lines written for a model.

use quickact_time::{TimeContext, resolve};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use quickact_shared::domain::task::ResultType;

use super::intent::{Change, Clause, Intent, Listing, Target};
use crate::{
    provider::AnsweredCall,
    tools::names::{COMPLETE_TODO, CREATE_ITEM, DELETE_ITEM, FINISH, SEARCH_ITEMS, UPDATE_ITEM},
};

/// What the tools answered so far, in order.
pub type History = [AnsweredCall];

/// One step: a tool and its arguments.
pub type Step = (&'static str, Value);

/// A search's answer.
#[derive(Debug, Default, Deserialize)]
struct Found {
    #[serde(default)]
    count: u64,
    #[serde(default)]
    items: Vec<Candidate>,
}

/// An item a search (or a conflict) names.
#[derive(Debug, Deserialize)]
struct Candidate {
    id: String,
    title: String,
}

/// A change's answer: written (with the item), or an outcome the user must decide.
#[derive(Debug, Default, Deserialize)]
struct Changed {
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    item: Option<ChangedItem>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    next_occurrence: Option<NextOccurrence>,
    #[serde(default)]
    conflicts: Vec<Candidate>,
}

#[derive(Debug, Deserialize)]
struct ChangedItem {
    title: String,
    date: String,
    start_time: Option<String>,
    end_time: Option<String>,
    segment: Option<String>,
    status: String,
}

impl ChangedItem {
    /// `2026-02-08 15:00-16:00 开会`: when, then what.
    fn line(&self) -> String {
        let when = match (&self.start_time, &self.end_time, &self.segment) {
            (Some(start), Some(end), _) => format!(" {start}-{end}"),
            (Some(start), None, _) => format!(" {start}"),
            (None, _, Some(segment)) => format!(" ({segment})"),
            _ => String::new(),
        };
        let done = if self.status == "completed" { " (done)" } else { "" };
        format!("{}{when} {}{done}", self.date, self.title)
    }
}

#[derive(Debug, Deserialize)]
struct NextOccurrence {
    date: Option<String>,
    start_time: Option<String>,
}

/// A result read as `T` (missing fields take their defaults).
fn read_as<T: DeserializeOwned + Default>(result: &Value) -> T {
    serde_json::from_value(result.clone()).unwrap_or_default()
}

/// The step after `history` for `intent`.
pub fn next_step(intent: &Intent, history: &History, chinese: bool) -> Step {
    let say = Say { chinese };
    match intent {
        Intent::Create(item) => match history.last() {
            None => (CREATE_ITEM, json!(item)),
            Some(call) => finish_after_change(&call.result, say.created(), &say),
        },
        Intent::Complete(target) => act_on_target(target, history, &say, |id| (COMPLETE_TODO, json!({ "id": id })), say.completed()),
        Intent::Delete(target) => act_on_target(target, history, &say, |id| (DELETE_ITEM, json!({ "id": id })), say.deleted()),
        Intent::Reschedule { target, change } => {
            let change = change.clone();
            act_on_target(
                target,
                history,
                &say,
                move |id| {
                    let arguments = match &change {
                        Change::To(when) => json!({ "id": id, "when": when }),
                        Change::By(by) => json!({ "id": id, "shift": by }),
                    };
                    (UPDATE_ITEM, arguments)
                },
                say.moved(),
            )
        }
        Intent::List(listing) => match history.last().map(|call| &call.result) {
            None => (SEARCH_ITEMS, list_arguments(listing)),
            Some(Ok(result)) => finish("action_completed", say.listed(read_as::<Found>(result).count), None),
            Some(Err(error)) => finish("error", say.failed(error), Some(say.rephrase())),
        },
    }
}

/// The step after `history` for a sentence of several clauses: each clause runs in turn on the
/// calls made since the one before finished (the plan of one clause is a function of its own
/// calls), and the run ends with one `finish` that states every clause's outcome in `actions`.
pub fn next_step_of_all(clauses: &[Clause], history: &History, chinese: bool) -> Step {
    let mut start = 0;
    let mut actions = Vec::new();
    for clause in clauses {
        let mut made = 0;
        let (outcome, calls) = loop {
            let calls = &history[start..start + made];
            let step = next_step(&clause.intent, calls, chinese);
            if step.0 == FINISH {
                break (step.1, calls);
            }
            if start + made == history.len() {
                return step;
            }
            made += 1;
        };
        start += made;
        actions.push(action_of(&clause.text, outcome, calls));
    }
    let types: Vec<ResultType> = actions.iter().filter_map(|a| serde_json::from_value(a["result_type"].clone()).ok()).collect();
    let message = actions.iter().filter_map(|a| a["message"].as_str()).collect::<Vec<_>>().join(if chinese { "；" } else { "; " });
    let mut arguments = finish(ResultType::of_all(types).as_str(), message, None).1;
    arguments["actions"] = Value::Array(actions);
    (FINISH, arguments)
}

/// One clause's entry in `actions`: its own finish, plus the ids of the items its calls changed
/// (or, for a listing, found).
fn action_of(text: &str, mut outcome: Value, calls: &History) -> Value {
    let mut ids: Vec<String> = Vec::new();
    for result in calls.iter().filter_map(|call| call.result.as_ref().ok()) {
        let changed = read_as::<Changed>(result);
        if let (None, Some(item)) = (changed.outcome.as_deref(), result.get("item").and_then(|i| i["id"].as_str())) {
            ids.push(item.to_owned());
        }
    }
    if ids.is_empty() && outcome["result_type"] == "action_completed" {
        // A listing: what its last search found.
        let found = calls.iter().rev().find_map(|call| call.result.as_ref().ok());
        ids = found.map(|r| read_as::<Found>(r).items).unwrap_or_default().into_iter().map(|c| c.id).collect();
    }
    outcome["action"] = json!(text);
    if !ids.is_empty() {
        outcome["item_ids"] = json!(ids);
    }
    outcome
}

fn list_arguments(listing: &Listing) -> Value {
    let mut arguments = json!({ "status": "open" });
    if let Some(date) = &listing.date {
        arguments["date"] = json!(date);
    }
    if let Some(kind) = listing.kind {
        arguments["kind"] = json!(kind);
    }
    if listing.by_priority {
        arguments["sort"] = json!("priority");
    }
    if let Some(query) = &listing.query {
        arguments["query"] = json!(query);
    }
    arguments
}

/// The search for a target: its words, and the time it is described by. A time of day in it ("明天
/// 下午3点的会", "tonight's dinner", "上午的那个会") goes as `time`, which picks the items at that
/// time (and on the day it names, if any); a day alone goes as `date`.
fn target_search(target: &Target) -> Value {
    let mut arguments = json!({ "status": "open" });
    if !target.query.is_empty() {
        arguments["query"] = json!(target.query);
    }
    if let Some(when) = &target.date {
        let field = if names_a_time_of_day(when) { "time" } else { "date" };
        arguments[field] = json!(when);
    }
    arguments
}

/// Whether `text` names a clock time or a part of the day. That does not depend on the moment it
/// is read at, so any moment will do.
fn names_a_time_of_day(text: &str) -> bool {
    let any_moment = TimeContext::new(chrono::DateTime::UNIX_EPOCH, chrono_tz::UTC);
    resolve(text, &any_moment).is_some_and(|r| r.start_time.is_some() || r.segment.is_some())
}

/// Search for the target, then act on a single match (or an exact title match among several), ask
/// about several, report none; then finish on the action's result.
fn act_on_target(target: &Target, history: &History, say: &Say, action: impl Fn(&str) -> Step, done: &'static str) -> Step {
    match history.len() {
        0 => (SEARCH_ITEMS, target_search(target)),
        1 => {
            let candidates = match &history[0].result {
                Ok(result) => read_as::<Found>(result).items,
                Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
            };
            let exact: Vec<&Candidate> =
                candidates.iter().filter(|c| !target.query.is_empty() && c.title.trim().eq_ignore_ascii_case(target.query.trim())).collect();
            // An item named by its time alone ("my 4pm") is told by that time.
            let named = if target.query.is_empty() { target.date.as_deref().unwrap_or_default() } else { target.query.as_str() };
            match (candidates.len(), exact.len()) {
                (0, _) => finish("error", say.not_found(named), Some(say.check_title())),
                (1, _) => action(&candidates[0].id),
                (_, 1) => action(&exact[0].id),
                (n, _) => {
                    let options: Vec<&str> = candidates.iter().map(|c| c.id.as_str()).collect();
                    let mut step = finish("need_clarification", say.several(n, named), Some(say.be_precise()));
                    step.1["options"] = json!(options);
                    step
                }
            }
        }
        _ => finish_after_change(&history[history.len() - 1].result, done, say),
    }
}

/// The verdict after a create/update/delete/complete call.
fn finish_after_change(result: &Result<Value, String>, done: &str, say: &Say) -> Step {
    let changed = match result {
        Ok(result) => read_as::<Changed>(result),
        Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
    };
    match changed.outcome.as_deref() {
        Some("time_passed") => {
            let suggestion = match changed.next_occurrence {
                Some(NextOccurrence { date: Some(date), start_time }) => say.try_tomorrow(&date, start_time.as_deref()),
                _ => say.future_date(),
            };
            finish("need_clarification", say.passed(), Some(suggestion))
        }
        Some("conflict") => {
            let titles: Vec<&str> = changed.conflicts.iter().map(|c| c.title.as_str()).collect();
            finish("need_clarification", say.conflict(&titles.join(", ")), Some(say.another_time()))
        }
        _ => {
            let mut message = format!("{done}{}", changed.item.as_ref().map(ChangedItem::line).unwrap_or_default());
            if changed.notes.iter().any(|n| n.contains("default duration")) {
                message.push_str(say.default_duration());
            }
            finish("action_completed", message, None)
        }
    }
}

fn finish(result_type: &str, message: String, suggestion: Option<String>) -> Step {
    let mut arguments = json!({ "result_type": result_type, "message": message });
    if let Some(suggestion) = suggestion {
        arguments["suggestion"] = json!(suggestion);
    }
    (FINISH, arguments)
}

/// The local provider's words, in the user's language.
pub struct Say {
    pub chinese: bool,
}

impl Say {
    fn pick(&self, zh: &str, en: &str) -> String {
        if self.chinese { zh.to_owned() } else { en.to_owned() }
    }

    fn created(&self) -> &'static str {
        if self.chinese { "已创建：" } else { "Created: " }
    }
    fn completed(&self) -> &'static str {
        if self.chinese { "已完成：" } else { "Marked as done: " }
    }
    fn deleted(&self) -> &'static str {
        if self.chinese { "已删除：" } else { "Deleted: " }
    }
    fn moved(&self) -> &'static str {
        if self.chinese { "已改期：" } else { "Rescheduled: " }
    }
    fn default_duration(&self) -> &'static str {
        if self.chinese { "（未说明结束时间，按默认时长安排）" } else { " (no end time given: the default duration applies)" }
    }
    fn listed(&self, count: u64) -> String {
        match (self.chinese, count) {
            (true, 0) => "没有找到符合条件的事项。".into(),
            (true, n) => format!("找到{n}项："),
            (false, 0) => "Nothing found.".into(),
            (false, 1) => "1 item:".into(),
            (false, n) => format!("{n} items:"),
        }
    }
    fn not_found(&self, query: &str) -> String {
        if self.chinese { format!("没有找到与“{query}”匹配的事项，没有做任何修改。") } else { format!("No item matches \"{query}\"; nothing was changed.") }
    }
    fn check_title(&self) -> String {
        self.pick("请检查事项名称，或使用完整标题再试一次。", "Check the item's title, or use its full title.")
    }
    fn several(&self, n: usize, query: &str) -> String {
        if self.chinese { format!("找到{n}个与“{query}”匹配的事项，请说明是哪一个。") } else { format!("{n} items match \"{query}\"; which one do you mean?") }
    }
    fn be_precise(&self) -> String {
        self.pick("加上日期或完整标题，例如“删除2月8日的项目会议”。", "Add the date or the full title, e.g. \"delete the team meeting on Feb 8\".")
    }
    fn passed(&self) -> String {
        self.pick("这个时间已经过去了，没有写入。", "That time has already passed; nothing was written.")
    }
    fn try_tomorrow(&self, date: &str, time: Option<&str>) -> String {
        let when = match time {
            Some(time) => format!("{date} {time}"),
            None => date.to_owned(),
        };
        if self.chinese { format!("如果是明天，请说“明天……”（{when}）。") } else { format!("If you mean tomorrow, say \"tomorrow ...\" ({when}).") }
    }
    fn future_date(&self) -> String {
        self.pick("请给出一个将来的日期。", "Give a date in the future.")
    }
    fn conflict(&self, titles: &str) -> String {
        if self.chinese { format!("与已有日程冲突：{titles}，没有创建。") } else { format!("It overlaps {titles}; nothing was written.") }
    }
    fn another_time(&self) -> String {
        self.pick("换一个时间，或说明“冲突也要添加”。", "Pick another time, or say to add it anyway.")
    }
    fn failed(&self, error: &str) -> String {
        if self.chinese { format!("操作没有完成：{error}") } else { format!("The action could not be done: {error}") }
    }
    pub fn rephrase(&self) -> String {
        self.pick(
            "请换一种说法，一句话说明一件事，例如“明天下午3点开会”“完成报告提交”“把会议改到周五上午10点”；复杂的请求需要配置模型（OPENAI_API_KEY）。",
            "Rephrase it as one action, e.g. \"meeting tomorrow 3pm\", \"mark buy milk as done\", \"move the dentist appointment to Friday 10am\"; for anything more, configure a model (OPENAI_API_KEY).",
        )
    }
    pub fn not_understood(&self) -> String {
        self.pick("没能理解这句话，没有做任何修改。", "I could not read this sentence as an action; nothing was changed.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_of(query: &str, date: Option<&str>) -> Value {
        target_search(&Target { query: query.into(), date: date.map(str::to_owned) })
    }

    #[test]
    fn a_time_of_day_in_the_target_is_searched_as_time_and_a_day_as_date() {
        assert_eq!(search_of("会", Some("明天下午3点")), json!({ "query": "会", "status": "open", "time": "明天下午3点" }));
        assert_eq!(search_of("dinner", Some("tonight")), json!({ "query": "dinner", "status": "open", "time": "tonight" }));
        assert_eq!(search_of("会", Some("上午")), json!({ "query": "会", "status": "open", "time": "上午" }));
        assert_eq!(search_of("call", Some("10:30")), json!({ "query": "call", "status": "open", "time": "10:30" }));
        assert_eq!(search_of("健身", Some("明天")), json!({ "query": "健身", "status": "open", "date": "明天" }));
        assert_eq!(search_of("book club", Some("feb 20")), json!({ "query": "book club", "status": "open", "date": "feb 20" }));
        assert_eq!(search_of("周会", None), json!({ "query": "周会", "status": "open" }));
        assert_eq!(search_of("", Some("4pm tomorrow")), json!({ "status": "open", "time": "4pm tomorrow" }), "named by its time alone");
    }
}
