//! Replies to a question, read locally: "#2", "2", "第二个", "最后一个", "the second one", "the one
//! at 3pm", "the dentist one", "改到明天", "tomorrow at 4 instead", "add it anyway", "都删了".
//!
//! The reply is read against the question it answers (`agent::question`): which options it
//! lists, what the first sentence asked for, the change that hit a conflict or a passed time.
//! Then the run does what the first sentence asked, settled by the reply: the action on the chosen
//! item(s), or the proposed change with the new time, or forced despite the conflict. The verdict
//! is written by the same plan as any local run ([`super::plan`]), fed a search that found exactly
//! the chosen item: a reply never searches again, so it acts on what the user saw. What the reply
//! says is read in `meaning`.

mod meaning;

use chrono::NaiveDate;
use quickact_shared::{
    domain::task::Question as QuestionKind,
    phrases::{Language, replies::Replies},
};
use quickact_time::{TimeContext, resolve};
use serde_json::{Value, json};

use quickact_reader::{Act, Change, Frame, NewItem, Selector, read};

use self::meaning::{Reply, option_prefix};
use super::plan::{Say, NextCall, next_step, next_step_of_all};
use crate::{
    agent::question::Question,
    provider::{AnsweredCall, RunInput},
    tools::names::{FINISH, SEARCH_ITEMS, UPDATE_ITEM},
};

/// The next step of a reply's run.
pub fn next_reply_step(question: &Question, run: &RunInput<'_>) -> NextCall {
    let (number, said) = option_prefix(run.sentence);
    // A bare "2" is in no language: the answer follows the question's.
    let language = Language::of(if said.chars().any(char::is_alphanumeric) { said } else { &question.sentence });
    let say = Say::new(language, Some(run.time.today()));
    let first_time = TimeContext::new(question.reference_time, question.time_zone);
    let reading = Reply::read(said, number, question, &run.time);
    let step = match question.kind {
        QuestionKind::WhichItem => act_on_options(question, &reading, &first_time, run.answered, &say),
        QuestionKind::Conflict | QuestionKind::TimePassed => {
            let asked_time = TimeContext::new(question.asked_reference_time, question.time_zone);
            redo_change(question, &reading, &asked_time, run.answered, &say)
        }
        QuestionKind::Details => None,
    };
    step.unwrap_or_else(|| not_understood(question, &say))
}

/// A candidates question: the first sentence's action on the chosen option(s).
fn act_on_options(question: &Question, reply: &Reply, first_time: &TimeContext, answered: &[AnsweredCall], say: &Say) -> Option<NextCall> {
    if reply.picked.is_empty() {
        return None;
    }
    let reading = read(&question.sentence, first_time);
    if !reading.is_certain() {
        return None;
    }
    let mut frame = reading.frames.into_iter().find(|f| matches!(f.act, Act::Complete | Act::Delete | Act::Move | Act::Shift))?;
    if let (Act::Move | Act::Shift, Some(when)) = (frame.act, &reply.new_time) {
        frame.act = Act::Move;
        frame.change = Some(Change::To(when.clone()));
    }
    // One at a time: the chosen item is what the search found.
    if let Some(target) = frame.target.as_mut() {
        target.all = false;
        target.position = None;
    }
    // Several at once only to complete or delete what the user saw listed.
    if reply.picked.len() > 1 && matches!(frame.act, Act::Move | Act::Shift) {
        return None;
    }
    let chosen: Vec<&Value> = reply.picked.iter().map(|at| &question.options[*at]).collect();
    // The plan, fed a search that found the chosen item before each of its calls.
    let found = |option: &Value| AnsweredCall {
        tool: SEARCH_ITEMS.to_owned(),
        result: Ok(json!({ "count": 1, "items": [{ "id": option["id"], "title": option["title"] }] })),
    };
    if chosen.len() == 1 {
        let mut history = vec![found(chosen[0])];
        history.extend(answered.iter().cloned());
        let mut step = next_step(&frame, &history, say);
        // The first sentence's new time names its day from the first sentence's moment.
        if step.0 == UPDATE_ITEM && reply.new_time.is_none()
            && let Some(arguments) = step.1.as_object_mut() {
                pin_day(arguments, first_time);
            }
        return Some(step);
    }
    let clauses: Vec<Frame> = chosen.iter().map(|option| Frame { text: option["title"].as_str().unwrap_or("").to_owned(), ..frame.clone() }).collect();
    let mut history = Vec::new();
    for (at, option) in chosen.iter().enumerate() {
        history.push(found(option));
        match answered.get(at) {
            Some(call) => history.push(call.clone()),
            None => break,
        }
    }
    Some(next_step_of_all(&clauses, &history, say))
}

/// A conflict or a passed time: the proposed change again, with the new time, or despite the
/// conflict, or (a plain yes to a passed time) on the suggested next occurrence. `asked_time`: the
/// moment the proposed change's time expressions were read against; the day they named is kept
/// even when the reply is written on another day.
fn redo_change(question: &Question, reply: &Reply, asked_time: &TimeContext, answered: &[AnsweredCall], say: &Say) -> Option<NextCall> {
    let proposed = question.proposed.as_ref()?;
    if let Some(call) = answered.last() {
        // The change was made (or refused): the plan's verdict on it.
        return Some(match proposed.tool.as_str() {
            UPDATE_ITEM => {
                let id = proposed.arguments["id"].as_str().unwrap_or_default();
                let frame = settled(Act::Move, Some(Selector::default()), None);
                let history = [
                    AnsweredCall { tool: SEARCH_ITEMS.to_owned(), result: Ok(json!({ "count": 1, "items": [{ "id": id, "title": "" }] })) },
                    call.clone(),
                ];
                next_step(&frame, &history, say)
            }
            _ => next_step(&settled(Act::Create, None, Some(NewItem::default())), std::slice::from_ref(call), say),
        });
    }
    let mut arguments = proposed.arguments.clone();
    let object = arguments.as_object_mut()?;
    let conflict = question.kind == QuestionKind::Conflict;
    if let Some(when) = &reply.new_time {
        let date_only = resolve(when, asked_time).is_some_and(|r| r.start_time.is_none() && r.segment.is_none());
        if date_only {
            object.insert("date".into(), json!(when));
        } else {
            let original_date = proposed_date(&proposed.arguments, asked_time);
            for key in ["when", "date", "start_time", "end_time", "segment"] {
                object.remove(key);
            }
            object.insert("when".into(), json!(when));
            if !states_a_day(when, asked_time)
                && let Some(date) = original_date {
                    object.insert("date".into(), json!(date.to_string()));
                }
        }
        object.remove("allow_conflict");
        if conflict && reply.force {
            object.insert("allow_conflict".into(), json!(true));
        }
    } else if conflict && (reply.force || reply.yes) {
        object.insert("allow_conflict".into(), json!(true));
        pin_day(object, asked_time);
    } else if !conflict && reply.yes {
        let date = proposed.outcome["next_occurrence"]["date"].as_str()?;
        object.insert("date".into(), json!(date));
    } else {
        return None;
    }
    let tool: &'static str = if proposed.tool == UPDATE_ITEM { UPDATE_ITEM } else { crate::tools::names::CREATE_ITEM };
    Some((tool, arguments))
}

/// A `when` that names its day relative to the asked moment ("明天下午3点") is pinned to that day
/// (`date`, which the tools apply after `when`), so a reply written on another day keeps it.
fn pin_day(arguments: &mut serde_json::Map<String, Value>, asked_time: &TimeContext) {
    if arguments.contains_key("date") || arguments.contains_key("recurrence") {
        return;
    }
    let Some(when) = arguments.get("when").and_then(Value::as_str) else { return };
    if !states_a_day(when, asked_time) {
        return;
    }
    if let Some(resolution) = resolve(when, asked_time).filter(|r| r.rrule.is_none() && r.end_date.is_none()) {
        arguments.insert("date".into(), json!(resolution.date.to_string()));
    }
}

/// The day the proposed change was for, read as its run read it.
fn proposed_date(arguments: &Value, first_time: &TimeContext) -> Option<NaiveDate> {
    if let Some(date) = arguments["date"].as_str() {
        if let Ok(date) = NaiveDate::parse_from_str(date, "%Y-%m-%d") {
            return Some(date);
        }
        return resolve(date, first_time).map(|r| r.date);
    }
    let when = arguments["when"].as_str()?;
    states_a_day(when, first_time).then(|| resolve(when, first_time).map(|r| r.date)).flatten().or_else(|| Some(first_time.today()))
}

/// Whether `text` names a day (not only a time of day).
fn states_a_day(text: &str, time: &TimeContext) -> bool {
    resolve(text, time).is_some_and(|r| r.day_stated)
}

/// A frame for the plan to finish a change the reply made (only its act matters then).
fn settled(act: Act, target: Option<Selector>, item: Option<NewItem>) -> Frame {
    Frame { act, text: String::new(), span: (0, 0), rule: "reply", target, item, change: Some(Change::To(String::new())), listing: None, parts: Vec::new() }
}

/// The reply was not read: say how to answer.
fn not_understood(question: &Question, say: &Say) -> NextCall {
    let replies = Replies(say.language);
    let (message, suggestion) = match question.kind {
        QuestionKind::WhichItem => replies.reply_names_no_option(question.options.len()),
        _ => replies.reply_names_no_change(),
    };
    (FINISH, json!({ "result_type": "error", "message": message, "suggestion": suggestion }))
}
