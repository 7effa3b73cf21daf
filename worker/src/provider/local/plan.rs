//! The next step of a local run: from the intent and what the tools have answered so far, the
//! tool call a good model would make, or the `finish` that ends the run.
//!
//! Tool results are read as data: the few fields this reader needs are deserialised into the small
//! types below from the full results the journal recorded, never from the compact view or the
//! display lines written for a model.

use quickact_time::{TimeContext, resolve};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use chrono::NaiveDate;
use quickact_shared::{
    domain::task::ResultType,
    phrases::{
        Language,
        items::ItemWords,
        replies::{Done, Replies},
    },
};

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

/// An item a search found.
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
    item: Option<Value>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    next_occurrence: Option<NextOccurrence>,
    #[serde(default)]
    conflicts: Vec<Value>,
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

/// The step after `history` for `intent`; the verdict's words by `say`.
pub fn next_step(intent: &Intent, history: &History, say: &Say) -> Step {
    match intent {
        Intent::Create(item) => match history.last() {
            None => (CREATE_ITEM, json!(item)),
            Some(call) => finish_after_change(&call.result, Done::Created, say),
        },
        Intent::Complete(target) => act_on_target(target, history, say, |id| (COMPLETE_TODO, json!({ "id": id })), Done::Completed),
        Intent::Delete(target) => act_on_target(target, history, say, |id| (DELETE_ITEM, json!({ "id": id })), Done::Deleted),
        Intent::Reschedule { target, change } => {
            let change = change.clone();
            act_on_target(
                target,
                history,
                say,
                move |id| {
                    let arguments = match &change {
                        Change::To(when) => json!({ "id": id, "when": when }),
                        Change::By(by) => json!({ "id": id, "shift": by }),
                    };
                    (UPDATE_ITEM, arguments)
                },
                Done::Moved,
            )
        }
        Intent::List(listing) => match history.last().map(|call| &call.result) {
            None => (SEARCH_ITEMS, list_arguments(listing)),
            Some(Ok(result)) => finish("action_completed", say.listed(result), None),
            Some(Err(error)) => finish("error", say.failed(error), Some(say.rephrase())),
        },
    }
}

/// The step after `history` for a sentence of several clauses: each clause runs in turn on the
/// calls made since the one before finished (the plan of one clause is a function of its own
/// calls), and the run ends with one `finish` that states every clause's outcome in `actions`.
pub fn next_step_of_all(clauses: &[Clause], history: &History, say: &Say) -> Step {
    let mut start = 0;
    let mut actions = Vec::new();
    for clause in clauses {
        let mut made = 0;
        let (outcome, calls) = loop {
            let calls = &history[start..start + made];
            let step = next_step(&clause.intent, calls, say);
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
    // Each clause's message is a sentence of its own: joined as sentences, not glued by a separator.
    let message = say.language.join_sentences(&actions.iter().filter_map(|a| a["message"].as_str()).collect::<Vec<_>>());
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
fn act_on_target(target: &Target, history: &History, say: &Say, action: impl Fn(&str) -> Step, done: Done) -> Step {
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
fn finish_after_change(result: &Result<Value, String>, done: Done, say: &Say) -> Step {
    let changed = match result {
        Ok(result) => read_as::<Changed>(result),
        Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
    };
    match changed.outcome.as_deref() {
        Some("time_passed") => {
            let suggestion = match changed.next_occurrence {
                Some(NextOccurrence { date: Some(date), start_time }) => say.try_next(&date, start_time.as_deref()),
                _ => say.replies().future_date(),
            };
            finish("need_clarification", say.replies().passed(), Some(suggestion))
        }
        Some("conflict") => {
            // Each item it overlaps, with its day and time, so the user sees what is in the way.
            let items: Vec<String> = changed.conflicts.iter().map(|item| say.words().line(item, false)).collect();
            finish("need_clarification", say.replies().conflict(&say.language.join_list(&items)), Some(say.replies().another_time()))
        }
        _ => {
            let line = changed.item.as_ref().map(|item| say.words().line(item, false)).unwrap_or_default();
            let mut sentences = vec![say.replies().done(done, &line)];
            if changed.notes.iter().any(|n| n.contains("default duration")) {
                sentences.push(say.replies().default_duration());
            }
            finish("action_completed", say.language.join_sentences(&sentences), None)
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

/// The local provider's words, in the user's language (the sentences are in
/// [`quickact_shared::phrases`], shared with the engine's own verdicts).
#[derive(Debug, Clone, Copy)]
pub struct Say {
    pub language: Language,
    /// The user's today: dates in answers read "今天" / "tomorrow" when they are.
    pub today: Option<NaiveDate>,
}

impl Say {
    pub fn new(language: Language, today: Option<NaiveDate>) -> Self {
        Say { language, today }
    }

    fn replies(&self) -> Replies {
        Replies(self.language)
    }

    fn words(&self) -> ItemWords {
        ItemWords { language: self.language, today: self.today }
    }

    /// What a listing found: how many, and each item's line (with its state and recurrence).
    fn listed(&self, result: &Value) -> String {
        let items: Vec<Value> = result.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
        let count = read_as::<Found>(result).count.max(items.len() as u64) as usize;
        self.replies().listed(count, &self.words().lines(&items, true))
    }
    fn not_found(&self, query: &str) -> String {
        self.replies().not_found(query)
    }
    fn check_title(&self) -> String {
        self.replies().check_title()
    }
    fn several(&self, n: usize, query: &str) -> String {
        self.replies().several(n, query)
    }
    fn be_precise(&self) -> String {
        self.replies().be_precise()
    }
    /// The next occurrence of a passed time, as a suggestion: its day in words and its time.
    fn try_next(&self, date: &str, time: Option<&str>) -> String {
        let day = NaiveDate::parse_from_str(date, "%Y-%m-%d").map(|d| self.words().date(d)).unwrap_or_else(|_| date.to_owned());
        let when = match time {
            Some(time) => format!("{day}{}{time}", self.language.pick("", " at ")),
            None => day,
        };
        self.replies().try_next(&when)
    }
    fn failed(&self, error: &str) -> String {
        self.replies().failed(error)
    }
    pub fn rephrase(&self) -> String {
        self.replies().rephrase()
    }
    pub fn not_understood(&self) -> String {
        self.replies().not_understood()
    }
    pub fn what_to_add(&self) -> String {
        self.replies().what_to_add()
    }
    pub fn say_what_and_when(&self) -> String {
        self.replies().say_what_and_when()
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
