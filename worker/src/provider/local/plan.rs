//! The next step of a local run: from the sentence's frames and what the tools have answered so far, the
//! tool call a good model would make, or the `finish` that ends the run.
//!
//! Tool results are read as data: the few fields this reader needs are deserialised into the small
//! types below from the full results the journal recorded, never from the compact view or the
//! display lines written for a model.

use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use quickact_shared::{domain::task::ResultType, phrases::replies::Done};

use quickact_reader::{Act, Change, Frame, Listing, Selector, lexicon::lexicon};
pub use super::say::Say;

mod anchor;
use anchor::create_anchored;
use crate::{
    provider::AnsweredCall,
    tools::{
        names::{COMPLETE_TODO, CREATE_ITEM, DELETE_ITEM, FINISH, SEARCH_ITEMS, UPDATE_ITEM},
        state::MAX_OPTIONS,
    },
};

/// What the tools answered so far, in order.
pub type History = [AnsweredCall];

/// The next tool call of a plan: the tool and its arguments (not a journal step).
pub type NextCall = (&'static str, Value);

/// A search's answer.
#[derive(Debug, Default, Deserialize)]
struct Found {
    #[serde(default)]
    count: u64,
    /// Every match, when the page holds fewer.
    #[serde(default)]
    total: u64,
    #[serde(default)]
    items: Vec<Candidate>,
}

/// An item a search found.
#[derive(Debug, Clone, Deserialize)]
struct Candidate {
    id: String,
    title: String,
    #[serde(default)]
    date: Option<String>,
    #[serde(default)]
    start_time: Option<String>,
    #[serde(default)]
    end_time: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    priority: Option<u8>,
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

/// Most items one sentence acts on at once ("drop every reminder for today"); more is a question.
pub const MAX_BULK: usize = 20;

/// The step after `history` for `frame`; the verdict's words by `say`.
pub fn next_step(frame: &Frame, history: &History, say: &Say) -> NextCall {
    match frame.act {
        Act::Create => match frame.item.as_ref().and_then(|item| item.anchor.as_ref().map(|anchor| (item, anchor))) {
            Some((item, anchor)) => create_anchored(item, anchor, history, say),
            None => match history.last() {
                None => (CREATE_ITEM, json!(frame.item)),
                Some(call) => finish_after_change(&call.result, Done::Created, say),
            },
        },
        Act::List => match history.last().map(|call| &call.result) {
            None => (SEARCH_ITEMS, list_arguments(frame.listing.as_ref().unwrap_or(&Listing::default()))),
            // "我下一个会是几点": no title says 会; the events are what a meeting is.
            Some(Ok(result)) if history.len() == 1 && read_as::<Found>(result).items.is_empty() && only_the_kind(frame.listing.as_ref()) => {
                let mut arguments = list_arguments(frame.listing.as_ref().unwrap_or(&Listing::default()));
                arguments.as_object_mut().map(|a| a.remove("query"));
                (SEARCH_ITEMS, arguments)
            }
            Some(Ok(result)) => finish("action_completed", say.listed(result), None),
            Some(Err(error)) => finish("error", say.failed(error), Some(say.rephrase())),
        },
        Act::Complete | Act::Delete | Act::Move | Act::Shift => {
            let selector = frame.target.clone().unwrap_or_default();
            act_on_target(&selector, frame.act, frame.change.as_ref(), history, say)
        }
    }
}

/// The call that does `act` to item `id`.
fn action_call(act: Act, change: Option<&Change>, id: &str) -> NextCall {
    match (act, change) {
        (Act::Complete, _) => (COMPLETE_TODO, json!({ "id": id })),
        (Act::Delete, _) => (DELETE_ITEM, json!({ "id": id })),
        (_, Some(Change::To(when))) => (UPDATE_ITEM, json!({ "id": id, "when": when })),
        (_, Some(Change::By(by))) => (UPDATE_ITEM, json!({ "id": id, "shift": by })),
        (_, None) => (UPDATE_ITEM, json!({ "id": id })),
    }
}

fn done_of(act: Act) -> Done {
    match act {
        Act::Complete => Done::Completed,
        Act::Delete => Done::Deleted,
        Act::Create => Done::Created,
        _ => Done::Moved,
    }
}

/// The step after `history` for a sentence of several clauses: each clause runs in turn on the
/// calls made since the one before finished (the plan of one clause is a function of its own
/// calls), and the run ends with one `finish` that states every clause's outcome in `actions`.
pub fn next_step_of_all(frames: &[Frame], history: &History, say: &Say) -> NextCall {
    let mut start = 0;
    let mut actions = Vec::new();
    for frame in frames {
        let mut made = 0;
        let (outcome, calls) = loop {
            let calls = &history[start..start + made];
            let step = next_step(frame, calls, say);
            if step.0 == FINISH {
                break (step.1, calls);
            }
            if start + made == history.len() {
                return step;
            }
            made += 1;
        };
        start += made;
        actions.push(action_of(&frame.text, outcome, calls));
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

/// A listing whose words only say the kind of item it asks for ("几个会", "next meeting").
fn only_the_kind(listing: Option<&Listing>) -> bool {
    listing.and_then(|l| l.query.as_deref()).is_some_and(|q| q.split_whitespace().all(|w| lexicon().names_only_a_kind(w)))
}

fn list_arguments(listing: &Listing) -> Value {
    let mut arguments = json!({ "status": if listing.completed { "completed" } else { "open" } });
    if let Some(date) = &listing.when {
        // "am I free friday 10am": what is at that time, not what is that day.
        let at_a_time = listing.free && quickact_time::resolve(date, &quickact_time::TimeContext::new(chrono::DateTime::UNIX_EPOCH, chrono_tz::UTC)).is_some_and(|r| r.start_time.is_some());
        if at_a_time {
            // "am I free at 3 tmrw": what is on at that moment (2:30-3:30 is).
            arguments["date_from"] = json!(date);
            arguments["date_to"] = json!(date);
            arguments["kind"] = json!("event");
        } else {
            arguments["date"] = json!(date);
        }
    }
    if listing.from_now {
        // "what's next", "how many are left this week": from now on, within the period if any.
        arguments["date_from"] = json!("now");
    }
    if let Some(kind) = listing.kind {
        arguments["kind"] = json!(kind.as_str());
    }
    if listing.by_priority {
        arguments["sort"] = json!("priority");
    }
    if let Some(query) = &listing.query {
        arguments["query"] = json!(query);
    }
    if let Some(limit) = listing.limit {
        arguments["limit"] = json!(limit.clamp(1, MAX_BULK as u32));
    }
    arguments
}

/// The search for a target: its words, kind, and the time it is described by. A time of day in
/// it ("明天下午3点的会", "tonight's dinner", "上午的那个会") goes as `time`, which picks the items
/// at that time (and on the day it names, if any); a day alone goes as `date`. Several at once
/// ("every reminder for today") and a place among several ("the second call") read a whole page.
fn target_search(target: &Selector) -> Value {
    let mut arguments = json!({ "status": "open" });
    if !target.words.is_empty() {
        arguments["query"] = json!(target.query());
    }
    if let Some(kind) = target.kind {
        arguments["kind"] = json!(kind.as_str());
    }
    if let Some(when) = &target.when {
        let field = if target.timed { "time" } else { "date" };
        arguments[field] = json!(when);
    }
    if target.all || target.position.is_some() || target.priority.is_some() {
        arguments["limit"] = json!(MAX_BULK);
    }
    arguments
}

/// The same search without the words, when the words found nothing but a time of day or a kind
/// says where to look ("the workout at 7am monday", "my reminder tonight"): what is there is a
/// question, not an error. A day alone is too wide: "my haircut on friday" is not found.
fn narrowed_search(target: &Selector) -> Option<Value> {
    if target.words.is_empty() || target.all || !(target.timed || target.kind.is_some()) {
        return None;
    }
    // The narrowed search keeps only what the sentence said: not the events its words implied.
    let mut arguments = target_search(target);
    arguments.as_object_mut()?.remove("query");
    Some(arguments)
}

/// Search for the target, then act on a single match (or an exact title match among several, or
/// the one at the place the sentence names), ask about several, report none; with "all", act on
/// each match; then finish on the actions' results.
fn act_on_target(target: &Selector, act: Act, change: Option<&Change>, history: &History, say: &Say) -> NextCall {
    let Some(search) = history.first() else {
        let mut arguments = target_search(target);
        // "move the meeting to 4": among events (what is completed is a to-do, whatever its words).
        if target.event && target.kind.is_none() && act != Act::Complete {
            arguments["kind"] = json!("event");
        }
        return (SEARCH_ITEMS, arguments);
    };
    let found = match &search.result {
        Ok(result) => read_as::<Found>(result),
        Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
    };
    // An item named by its time alone ("my 4pm") is told by that time.
    let named = if target.words.is_empty() { target.when.clone().unwrap_or_default() } else { target.query() };
    if target.all {
        return act_on_all(&found, act, change, &history[1..], (&named, &target.query()), say);
    }
    let (candidates, calls) = match (found.items.is_empty(), narrowed_search(target)) {
        (true, Some(narrowed)) => match history.get(1) {
            None => return (SEARCH_ITEMS, narrowed),
            Some(call) => match &call.result {
                // "明天上午10点那个会": words that only say the kind, and one item at that time.
                Ok(result) => match read_as::<Found>(result).items {
                    nearby if nearby.len() == 1 && target.words.iter().all(|w| lexicon().names_only_a_kind(w)) => match history.get(2) {
                        Some(call) => return finish_after_change(&call.result, done_of(act), say),
                        None => return action_call(act, change, &nearby[0].id),
                    },
                    nearby => return ask_among_nearby(nearby, &named, say),
                },
                Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
            },
        },
        _ => (found.items, &history[1..]),
    };
    // "the p1 todo": the priority the words name picks among the matches.
    let candidates: Vec<Candidate> = match target.priority {
        Some(p) => candidates.into_iter().filter(|c| c.priority == Some(p)).collect(),
        None => candidates,
    };
    if let Some(call) = calls.last() {
        return finish_after_change(&call.result, done_of(act), say);
    }
    let exact: Vec<&Candidate> =
        candidates.iter().filter(|c| !target.words.is_empty() && c.title.trim().eq_ignore_ascii_case(target.query().trim())).collect();
    // "the first one tomorrow": the first of the items that have a time of day, when some do.
    let timed: Vec<Candidate> = candidates.iter().filter(|c| c.start_time.is_some()).cloned().collect();
    let placed = target.position.and_then(|n| at_position(if timed.is_empty() { &candidates } else { &timed }, n));
    // "called the plumber already": what is done is the to-do, not the reminder of it; "emailed the
    // landlord": the one whose title says so.
    let todos: Vec<&Candidate> = candidates.iter().filter(|c| act == Act::Complete && c.kind.as_deref() == Some("todo")).collect();
    let hinted: Vec<&Candidate> = match &target.hint {
        Some(hint) => candidates.iter().filter(|c| c.title.to_lowercase().contains(&hint.to_lowercase())).collect(),
        None => Vec::new(),
    };
    let today = say.today.map(|d| d.to_string());
    let todays: Vec<&Candidate> = candidates.iter().filter(|c| today.is_some() && c.date == today).collect();
    match (candidates.len(), exact.len(), placed) {
        (0, _, _) => finish("error", say.not_found(&named), Some(say.check_title())),
        (_, _, Some(item)) => action_call(act, change, &item.id),
        (1, _, _) => action_call(act, change, &candidates[0].id),
        (_, 1, _) => action_call(act, change, &exact[0].id),
        (_, _, _) if hinted.len() == 1 => action_call(act, change, &hinted[0].id),
        (_, _, _) if todos.len() == 1 => action_call(act, change, &todos[0].id),
        // "已经遛过狗了": the same to-do on several days is done on the earliest.
        (_, _, _) if act == Act::Complete && same_title(&candidates) => action_call(act, change, &candidates[0].id),
        // "push my 2pm back an hour", "下午的牙医改到…", "move standup to 10": a time of day with no
        // day, or a repeating item moved to a time of day, is today's when one of them is today.
        (_, _, _) if todays.len() == 1 && (target.timed && !states_a_day(target.when.as_deref()) || matches!(act, Act::Move | Act::Shift) && same_title(&candidates) && !change_states_a_day(change)) => {
            action_call(act, change, &todays[0].id)
        }
        (n, _, _) => {
            let options: Vec<&str> = candidates.iter().map(|c| c.id.as_str()).collect();
            let mut step = finish("need_clarification", say.several(n, &named), Some(say.be_precise()));
            step.1["options"] = json!(options);
            step
        }
    }
}

/// Whether a time as written names its day ("tomorrow 3pm", 周五); none names none.
fn states_a_day(when: Option<&str>) -> bool {
    let any_moment = quickact_time::TimeContext::new(chrono::DateTime::UNIX_EPOCH, chrono_tz::UTC);
    when.and_then(|w| quickact_time::resolve(w, &any_moment)).is_some_and(|r| r.day_stated)
}

/// Whether a change names a day ("to friday"), not only a clock time or a length under a day.
fn change_states_a_day(change: Option<&Change>) -> bool {
    match change {
        Some(Change::To(when)) => states_a_day(Some(when)),
        Some(Change::By(by)) => {
            let any_moment = quickact_time::TimeContext::new(chrono::DateTime::UNIX_EPOCH, chrono_tz::UTC);
            quickact_time::resolve(by.trim_start_matches('-'), &any_moment).and_then(|r| r.duration_minutes).is_none_or(|m| m >= 24 * 60)
        }
        None => true,
    }
}

/// One item that repeats: every candidate has one title, each on a day of its own (two of one
/// title on one day are two things to tell apart).
fn same_title(candidates: &[Candidate]) -> bool {
    let mut days: Vec<Option<&str>> = candidates.iter().map(|c| c.date.as_deref()).collect();
    days.sort_unstable();
    let distinct_days = days.windows(2).all(|w| w[0] != w[1]);
    distinct_days && candidates.windows(2).all(|w| w[0].title.trim().eq_ignore_ascii_case(w[1].title.trim()))
}

/// The n-th of the candidates (1-based, negative from the end), in the search's order (by time).
fn at_position(candidates: &[Candidate], n: i8) -> Option<&Candidate> {
    let index = if n > 0 { usize::from(n.unsigned_abs()) - 1 } else { candidates.len().checked_sub(usize::from(n.unsigned_abs()))? };
    candidates.get(index)
}

/// The words found nothing, but the day, time or kind found these: a question with them (one is
/// still not what the words said: it is offered, not acted on).
fn ask_among_nearby(nearby: Vec<Candidate>, named: &str, say: &Say) -> NextCall {
    if nearby.len() < 2 || nearby.len() > MAX_OPTIONS {
        return finish("error", say.not_found(named), Some(say.check_title()));
    }
    let options: Vec<&str> = nearby.iter().map(|c| c.id.as_str()).collect();
    let mut step = finish("need_clarification", say.replies().not_found_but_nearby(named), Some(say.be_precise()));
    step.1["options"] = json!(options);
    step
}

/// "Every reminder for today": each match in turn, at most [`MAX_BULK`]; more is a question.
fn act_on_all(found: &Found, act: Act, change: Option<&Change>, calls: &History, (named, words): (&str, &str), say: &Say) -> NextCall {
    if found.items.is_empty() {
        return finish("error", say.not_found(named), Some(say.check_title()));
    }
    if found.count.max(found.total) as usize > MAX_BULK {
        let options: Vec<&str> = found.items.iter().take(MAX_OPTIONS).map(|c| c.id.as_str()).collect();
        let mut step = finish("need_clarification", say.replies().too_many(found.total as usize), Some(say.be_precise()));
        step.1["options"] = json!(options);
        return step;
    }
    // "把所有的健身都删了": the items titled just so, when there are any (not 续健身卡).
    let exact: Vec<&Candidate> = found.items.iter().filter(|c| !words.is_empty() && c.title.trim().eq_ignore_ascii_case(words.trim())).collect();
    let items: Vec<&Candidate> = if exact.is_empty() { found.items.iter().collect() } else { exact };
    if let Some(item) = items.get(calls.len()) {
        return action_call(act, change, &item.id);
    }
    finish_after_all(calls, done_of(act), say)
}

/// The verdict after acting on several items: each one's line, or the first refusal.
fn finish_after_all(calls: &History, done: Done, say: &Say) -> NextCall {
    let mut lines = Vec::new();
    for call in calls {
        let changed = match &call.result {
            Ok(result) => read_as::<Changed>(result),
            Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
        };
        if changed.outcome.is_some() {
            return finish_after_change(&call.result, done, say);
        }
        lines.push(changed.item.as_ref().map(|item| say.words().line(item, false)).unwrap_or_default());
    }
    finish("action_completed", say.replies().done(done, &say.language.join_list(&lines)), None)
}

/// The verdict after a create/update/delete/complete call.
fn finish_after_change(result: &Result<Value, String>, done: Done, say: &Say) -> NextCall {
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

fn finish(result_type: &str, message: String, suggestion: Option<String>) -> NextCall {
    let mut arguments = json!({ "result_type": result_type, "message": message });
    if let Some(suggestion) = suggestion {
        arguments["suggestion"] = json!(suggestion);
    }
    (FINISH, arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_of(words: &[&str], when: Option<&str>, timed: bool) -> Value {
        target_search(&Selector { words: words.iter().map(|w| w.to_string()).collect(), when: when.map(str::to_owned), timed, ..Default::default() })
    }

    #[test]
    fn a_time_of_day_in_the_target_is_searched_as_time_and_a_day_as_date() {
        assert_eq!(search_of(&["会"], Some("明天下午3点"), true), json!({ "query": "会", "status": "open", "time": "明天下午3点" }));
        assert_eq!(search_of(&["健身"], Some("明天"), false), json!({ "query": "健身", "status": "open", "date": "明天" }));
        assert_eq!(search_of(&["book club"], Some("feb 20"), false), json!({ "query": "book club", "status": "open", "date": "feb 20" }));
        assert_eq!(search_of(&["周会"], None, false), json!({ "query": "周会", "status": "open" }));
        assert_eq!(search_of(&[], Some("4pm tomorrow"), true), json!({ "status": "open", "time": "4pm tomorrow" }), "named by its time alone");
        let every = Selector { kind: Some(quickact_reader::Kind::Reminder), when: Some("today".into()), all: true, ..Default::default() };
        assert_eq!(target_search(&every), json!({ "kind": "reminder", "status": "open", "date": "today", "limit": MAX_BULK }));
    }

    #[test]
    fn a_place_among_several_counts_from_either_end() {
        let candidates: Vec<Candidate> =
            ["a", "b", "c"].iter().map(|id| Candidate { id: id.to_string(), title: String::new(), date: None, start_time: None, end_time: None, kind: None, priority: None }).collect();
        let at = |n| at_position(&candidates, n).map(|c| c.id.as_str());
        assert_eq!((at(1), at(2), at(-1), at(-3), at(4), at(-4)), (Some("a"), Some("b"), Some("c"), Some("a"), None, None));
    }
}

#[cfg(test)]
mod place_tests {
    use quickact_shared::phrases::Language;

    use super::*;

    #[test]
    fn a_place_counts_the_items_that_have_a_time() {
        let found = json!({ "count": 3, "total": 3, "items": [
            { "id": "todo", "title": "buy birthday card", "date": "2026-02-10", "kind": "todo" },
            { "id": "coffee", "title": "coffee", "date": "2026-02-10", "start_time": "08:30", "end_time": "09:00", "kind": "event" },
            { "id": "review", "title": "design review", "date": "2026-02-10", "start_time": "13:00", "end_time": "14:00", "kind": "event" },
        ]});
        let history = [AnsweredCall { tool: SEARCH_ITEMS.into(), result: Ok(found) }];
        let target = Selector { when: Some("tomorrow".into()), position: Some(1), ..Default::default() };
        let say = Say::new(Language::English, None);
        let step = act_on_target(&target, Act::Move, Some(&Change::To("at 11".into())), &history, &say);
        assert_eq!(step.1["id"], "coffee", "{step:?}");
    }
}
