//! A case's run checked against its row, and the run classified.
//!
//! Problems come in two lists: what is wrong with the user's items afterwards (`effect`: an item
//! created, changed, completed or deleted that the row did not expect, or an expected change not
//! made as written) and what is wrong with the answer (`answer`: the verdict, the question's kind,
//! the options, the listing, the suggestion, the accounting). [`classify`] reads both.

use std::collections::HashMap;

use serde_json::Value;

use super::{
    Classification,
    case::{Case, Effect, Expect, NewItem, Slot, When},
    report::{item_line, item_lines},
};

/// What a case's run left behind, to check.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The task as `GET /api/quick-action/{id}` answers it once final.
    pub task: Value,
    /// The setup items as `POST /api/items` answered them: `#i` is `seeded[i]`.
    pub seeded: Vec<Value>,
    /// `GET /api/items` before and after the sentence.
    pub before: Vec<Value>,
    pub after: Vec<Value>,
    /// For each item of `before` missing from `after`: the status `GET /api/items/{id}` answered.
    pub gone: HashMap<String, u16>,
}

impl Observed {
    fn id_of(&self, i: usize) -> String {
        self.seeded.get(i).and_then(|item| item["id"].as_str()).unwrap_or_default().to_owned()
    }

    /// Anything created, changed or deleted.
    pub fn changed(&self) -> bool {
        self.after.len() != self.before.len() || self.before.iter().any(|was| find(&self.after, id(was)) != Some(was))
    }

    fn new_items(&self) -> Vec<&Value> {
        self.after.iter().filter(|item| find(&self.before, id(item)).is_none()).collect()
    }

    fn verdict_type(&self) -> &str {
        self.task["result"]["type"].as_str().unwrap_or_default()
    }
}

/// Everything wrong with a run, as sentences.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Problems {
    /// About the items afterwards.
    pub effect: Vec<String>,
    /// About the answer.
    pub answer: Vec<String>,
}

impl Problems {
    pub fn is_empty(&self) -> bool {
        self.effect.is_empty() && self.answer.is_empty()
    }

    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.effect.iter().chain(&self.answer)
    }
}

/// Every check of `case` on what its run left behind.
pub fn check(case: &Case, seen: &Observed) -> Problems {
    let mut p = Problems::default();
    check_accounting(&seen.task, &mut p.answer);
    match &case.expect {
        Expect::Effects(effects) => check_effects(effects, seen, &mut p),
        Expect::Lists { items, ordered } => {
            verdict(&seen.task, "action_completed", &mut p.answer);
            unchanged(seen, &mut p.effect);
            let want: Vec<String> = items.iter().map(|i| seen.id_of(*i)).collect();
            let got = ids(&seen.task["result"]["items"]);
            let right = if *ordered { got == want } else { sorted(&got) == sorted(&want) };
            if !right {
                let order = if *ordered { "in this order " } else { "" };
                p.answer.push(format!("result.items is [{}], expected {order}[{}]", titles_of(&got, seen), titles_of(&want, seen)));
            }
        }
        Expect::AsksWhich(_) | Expect::AsksWhat | Expect::AsksTimePassed | Expect::AsksConflict(_) => check_question(&case.expect, seen, &mut p),
        Expect::NotFound | Expect::Declines => check_error(&case.expect, seen, &mut p),
    }
    p
}

/// How a run went against its row (see [`Classification`]).
pub fn classify(case: &Case, seen: &Observed, problems: &Problems) -> Classification {
    if problems.is_empty() {
        return Classification::Right;
    }
    let verdict = seen.verdict_type();
    let asked_or_refused = verdict == "error" || verdict == "need_clarification";
    match &case.expect {
        Expect::Effects(_) if !seen.changed() => {
            if asked_or_refused {
                Classification::Declined
            } else {
                Classification::WrongAnswer
            }
        }
        // A change that is not the one expected, or only part of what was expected.
        Expect::Effects(_) if !problems.effect.is_empty() => Classification::WrongEffect,
        // The right change, a wrong answer about it.
        Expect::Effects(_) => Classification::WrongAnswer,
        _ if seen.changed() => Classification::WrongEffect,
        Expect::Lists { .. } if asked_or_refused => Classification::Declined,
        Expect::Lists { .. } => Classification::WrongAnswer,
        // A success where a question or an error was expected claims to have done something.
        _ if verdict == "action_completed" => Classification::WrongEffect,
        expect @ (Expect::AsksWhich(_) | Expect::AsksWhat | Expect::AsksTimePassed | Expect::AsksConflict(_)) => {
            let same_question = verdict == "need_clarification" && seen.task["result"]["question"].as_str() == expect.question();
            if same_question { Classification::WrongAnswer } else { Classification::Declined }
        }
        _ => Classification::WrongAnswer,
    }
}

// ---------------------------------------------------------------------------------------------
// Effects
// ---------------------------------------------------------------------------------------------

fn check_effects(effects: &[Effect], seen: &Observed, p: &mut Problems) {
    verdict(&seen.task, "action_completed", &mut p.answer);
    let named: Vec<String> = Expect::Effects(effects.to_vec()).indexes().into_iter().map(|i| seen.id_of(i)).collect();
    untouched(seen, &named, &mut p.effect);
    let creates: Vec<&NewItem> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Creates(new) => Some(new),
            _ => None,
        })
        .collect();
    check_creates(&creates, seen, p);
    for effect in effects {
        match effect {
            Effect::Creates(_) => {}
            Effect::Completes(items) => items.iter().for_each(|i| check_completed(&seen.id_of(*i), seen, p)),
            Effect::Deletes(items) => items.iter().for_each(|i| check_deleted(&seen.id_of(*i), seen, p)),
            Effect::Moves(i, slot) => check_moved(&seen.id_of(*i), slot, seen, p),
        }
    }
}

/// Exactly the new items the creates describe: one create takes the one new item whatever its
/// title; several are matched to new items by title.
fn check_creates(creates: &[&NewItem], seen: &Observed, p: &mut Problems) {
    let new = seen.new_items();
    if new.len() != creates.len() {
        p.effect.push(match (new.len(), creates.len()) {
            (0, _) => "no item was created".to_owned(),
            (n, 0) => format!("{n} item(s) were created, expected none: {}", item_lines(new.iter().copied())),
            (n, want) => format!("{n} items were created, expected {want}: {}", item_lines(new.iter().copied())),
        });
    }
    if let ([want], [item]) = (creates, new.as_slice()) {
        check_new_item(item, want, seen, p);
        return;
    }
    let mut unmatched = new;
    for want in creates {
        match unmatched.iter().position(|item| want.titles.iter().any(|t| item["title"] == *t)) {
            Some(k) => check_new_item(unmatched.remove(k), want, seen, p),
            None if !seen.new_items().is_empty() => p.effect.push(format!("no item titled {} was created", show_titles(&want.titles))),
            None => {}
        }
    }
}

fn check_new_item(item: &Value, want: &NewItem, seen: &Observed, p: &mut Problems) {
    let e = &mut p.effect;
    compare(e, "kind", text(&item["kind"]), Some(&want.kind));
    let title = text(&item["title"]);
    if !want.titles.iter().any(|t| title.as_deref() == Some(t)) {
        e.push(format!("title is {}, expected {}", show(title.as_deref()), show_titles(&want.titles)));
    }
    compare(e, "date", text(&item["date"]), Some(&want.date));
    check_when(e, "", item, want.when.as_ref());
    compare(e, "priority", text(&item["priority"]), want.priority.map(|n| n.to_string()).as_ref());
    compare(e, "recurrence", text(&item["recurrence"]), want.recurrence.as_ref());
    compare(e, "description", text(&item["description"]), want.note.as_ref());
    compare(e, "status", text(&item["status"]), Some(&"open".to_owned()));
    result_has(&seen.task, id(item), &mut p.answer);
}

fn check_completed(target: &str, seen: &Observed, p: &mut Problems) {
    let Some(item) = find(&seen.after, target) else {
        p.effect.push("the item to complete is gone".into());
        return;
    };
    if item["status"] != "completed" {
        p.effect.push(format!("the item to complete has status {}, expected \"completed\"", item["status"]));
    }
    if !item["completed_at"].is_string() {
        p.effect.push("the item to complete has no completed_at".into());
    }
    let was = find(&seen.before, target).cloned().unwrap_or_default();
    same_fields(&was, item, &["kind", "title", "date", "start_time", "end_time", "segment", "priority", "recurrence"], &mut p.effect);
    result_has(&seen.task, target, &mut p.answer);
}

fn check_deleted(target: &str, seen: &Observed, p: &mut Problems) {
    if let Some(now) = find(&seen.after, target) {
        let was = find(&seen.before, target).filter(|was| *was != now);
        let changed = was.map(|was| format!(", and changed: {} -> {}", item_line(was), item_line(now))).unwrap_or_default();
        p.effect.push(format!("the item to delete is still listed{changed}"));
    } else if let Some(status) = seen.gone.get(target).filter(|s| **s != 404) {
        p.effect.push(format!("GET /api/items/{{id}} of the deleted item answered {status}, expected 404"));
    }
}

fn check_moved(target: &str, slot: &Slot, seen: &Observed, p: &mut Problems) {
    let Some(item) = find(&seen.after, target) else {
        p.effect.push("the item to move is gone".into());
        return;
    };
    compare(&mut p.effect, "moved date", text(&item["date"]), Some(&slot.date));
    check_when(&mut p.effect, "moved ", item, slot.when.as_ref());
    let was = find(&seen.before, target).cloned().unwrap_or_default();
    same_fields(&was, item, &["kind", "title", "priority", "status", "recurrence"], &mut p.effect);
    result_has(&seen.task, target, &mut p.answer);
}

/// start_time, end_time and segment exactly as `when` writes them (absent where it has none).
fn check_when(e: &mut Vec<String>, prefix: &str, item: &Value, when: Option<&When>) {
    let (start, end, segment) = When::fields(when);
    let owned = |v: Option<&str>| v.map(str::to_owned);
    compare(e, &format!("{prefix}start_time"), text(&item["start_time"]), owned(start).as_ref());
    compare(e, &format!("{prefix}end_time"), text(&item["end_time"]), owned(end).as_ref());
    compare(e, &format!("{prefix}segment"), text(&item["segment"]), owned(segment).as_ref());
}

// ---------------------------------------------------------------------------------------------
// Questions and errors
// ---------------------------------------------------------------------------------------------

fn check_question(expect: &Expect, seen: &Observed, p: &mut Problems) {
    let task = &seen.task;
    verdict(task, "need_clarification", &mut p.answer);
    unchanged(seen, &mut p.effect);
    let want = expect.question().unwrap_or_default();
    if task["result"]["question"] != want {
        p.answer.push(format!("the question is {}, expected \"{want}\"", task["result"]["question"]));
    }
    let got = ids(&task["result"]["options"]);
    match expect {
        Expect::AsksWhich(items) | Expect::AsksConflict(items) => {
            let want: Vec<String> = items.iter().map(|i| seen.id_of(*i)).collect();
            if sorted(&got) != sorted(&want) {
                p.answer.push(format!("result.options is [{}], expected [{}]", titles_of(&got, seen), titles_of(&want, seen)));
            }
        }
        Expect::AsksWhat if !got.is_empty() => p.answer.push(format!("result.options is [{}], expected none", titles_of(&got, seen))),
        Expect::AsksTimePassed => {
            let suggestion = task["result"]["suggestion"].as_str().unwrap_or_default().to_lowercase();
            if !(suggestion.contains("明天") || suggestion.contains("tomorrow")) {
                p.answer.push(format!("the suggestion {} does not mention 明天 / tomorrow", task["result"]["suggestion"]));
            }
        }
        _ => {}
    }
    suggestion(task, &mut p.answer);
}

/// `not found` looked for the item (a tool call besides `finish`) and found nothing; `declines`
/// did not read a request to act on, so it called nothing but `finish`.
fn check_error(expect: &Expect, seen: &Observed, p: &mut Problems) {
    let task = &seen.task;
    verdict(task, "error", &mut p.answer);
    unchanged(seen, &mut p.effect);
    suggestion(task, &mut p.answer);
    let looked = tool_names(task).iter().any(|name| name != "finish");
    if seen.verdict_type() != "error" {
        return;
    }
    match expect {
        Expect::NotFound if !looked => p.answer.push("the run looked for nothing (no tool call but finish): a decline, not `not found`".into()),
        Expect::Declines if looked => p.answer.push(format!(
            "the run called {} before its error: it read a request (`not found`), not a decline",
            tool_names(task).join(", ")
        )),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers (they collect problems instead of panicking)
// ---------------------------------------------------------------------------------------------

/// A local run names the local model and costs nothing.
fn check_accounting(task: &Value, p: &mut Vec<String>) {
    if task["model_used"] != "local" {
        p.push(format!("model_used is {}, expected \"local\"", task["model_used"]));
    }
    if task["tokens_used"]["total"].as_i64() != Some(0) {
        p.push(format!("tokens_used is {}, expected a total of 0", task["tokens_used"]));
    }
    if task["cost"]["amount"].as_f64() != Some(0.0) {
        p.push(format!("cost is {}, expected an amount of 0", task["cost"]));
    }
}

fn verdict(task: &Value, want: &str, p: &mut Vec<String>) {
    let status = if want == "action_completed" { "success" } else { "failed" };
    let (got, got_status) = (task["result"]["type"].as_str().unwrap_or("(none)"), task["status"].as_str().unwrap_or("(none)"));
    if got != want || got_status != status {
        p.push(format!("verdict is {got}/{got_status}, expected {want}/{status}"));
    }
}

fn suggestion(task: &Value, p: &mut Vec<String>) {
    if task["result"]["suggestion"].as_str().is_none_or(|s| s.trim().is_empty()) {
        p.push("result.suggestion is missing".into());
    }
}

/// The verdict's `result.items` holds the backend's rendering of the item the action was about.
fn result_has(task: &Value, target: &str, p: &mut Vec<String>) {
    if !ids(&task["result"]["items"]).iter().any(|i| i == target) {
        p.push("result.items does not hold the changed item".into());
    }
}

/// The names of the run's tool calls (`result.tool_calls`), in order.
pub fn tool_names(task: &Value) -> Vec<String> {
    let calls = task["result"]["tool_calls"].as_array().cloned().unwrap_or_default();
    calls.iter().filter_map(|call| call["name"].as_str().map(str::to_owned)).collect()
}

fn compare(p: &mut Vec<String>, field: &str, got: Option<String>, want: Option<&String>) {
    if got.as_ref() != want {
        p.push(format!("{field} is {}, expected {}", show(got.as_deref()), show(want.map(String::as_str))));
    }
}

fn show(v: Option<&str>) -> String {
    v.map(|s| format!("{s:?}")).unwrap_or_else(|| "absent".into())
}

fn show_titles(titles: &[String]) -> String {
    titles.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(" or ")
}

/// A field as text: strings as they are, numbers printed; null or missing is `None`.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn same_fields(was: &Value, now: &Value, fields: &[&str], p: &mut Vec<String>) {
    for field in fields {
        if was[*field] != now[*field] {
            p.push(format!("the target's {field} changed from {} to {}", was[*field], now[*field]));
        }
    }
}

fn id(item: &Value) -> &str {
    item["id"].as_str().unwrap_or_default()
}

fn find<'a>(items: &'a [Value], target: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["id"] == target)
}

/// Every item of `before` except `except` is still there, exactly as it was.
fn untouched(seen: &Observed, except: &[String], p: &mut Vec<String>) {
    for item in &seen.before {
        if except.iter().any(|e| e == id(item)) {
            continue;
        }
        match find(&seen.after, id(item)) {
            Some(now) if now == item => {}
            Some(now) => p.push(format!("an item that should be untouched changed: {} -> {}", item_line(item), item_line(now))),
            None => p.push(format!("an item that should be untouched is gone: {}", item_line(item))),
        }
    }
}

/// Nothing was created, changed or deleted.
fn unchanged(seen: &Observed, p: &mut Vec<String>) {
    untouched(seen, &[], p);
    for item in seen.new_items() {
        p.push(format!("an item was created: {}", item_line(item)));
    }
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array().map(|a| a.iter().filter_map(|i| i["id"].as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn titles_of(targets: &[String], seen: &Observed) -> String {
    targets
        .iter()
        .map(|t| find(&seen.before, t).and_then(|i| i["title"].as_str()).map(str::to_owned).unwrap_or_else(|| format!("<{t}>")))
        .collect::<Vec<_>>()
        .join(", ")
}
