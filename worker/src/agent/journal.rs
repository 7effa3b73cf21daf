//! Rebuilding a run from its journal.
//!
//! A run is a deterministic function of its journal: the conversation sent to the model is the
//! system prompt, the user message, and then, step by step, each recorded assistant message and
//! each recorded tool result. A worker that takes over an interrupted task replays the journal and
//! continues where it stopped: recorded model turns are not requested (nor paid for) again and
//! recorded tool calls are not executed again.

use std::collections::HashMap;

use quickact_shared::store::steps::{FALLBACK_TO, Step, StepKind};
use serde_json::{Value, json};

use super::prompt::CORRECTIVE_MESSAGE;
use crate::{
    mcp::RESULT_SERVER,
    provider::{AnsweredCall, ToolCall},
    tools::{FINISH, RunState},
};

/// Largest tool result the model sees, in bytes; longer ones are cut (the journal keeps all of
/// it), so long lists cannot flood the model's context.
pub const MAX_TOOL_RESULT_BYTES: usize = 4000;

/// The key of the result a hand-over to the model records (see [`super::run`]).
pub const HANDED_OVER_TO: &str = "handed_over_to";

/// What the journal says about a run so far.
#[derive(Debug, Default)]
pub struct Replay {
    /// Messages after the system prompt and the user message.
    pub messages: Vec<Value>,
    pub state: RunState,
    /// Successful model turns.
    pub model_turns: usize,
    /// Turns that answered with text and no tool call.
    pub plain_text_turns: usize,
    /// The last turn's tool calls that have no recorded result yet.
    pub pending_calls: Vec<ToolCall>,
    /// The text of the most recent plain-text answer.
    pub last_text: Option<String>,
    /// Tool calls (other than `finish`) answered since the last model turn, and in the whole run:
    /// what the caps on tool calls count, also after a takeover.
    pub tool_calls_in_turn: usize,
    pub tool_calls_in_run: usize,
    /// Every answered tool call, as data (for providers that read the run, not the conversation).
    pub answered: Vec<AnsweredCall>,
    /// The local reading handed the run over to the model.
    pub handed_over: bool,
    /// Failed model requests since the last answer or fallback: the retries spent on the model the
    /// run uses now, also across hand-backs and takeovers.
    pub failed_in_a_row: usize,
    /// The models the run fell back from, in order, and the one it went on with last.
    pub left_models: Vec<String>,
    pub fallback_model: Option<String>,
    /// External calls made and not answered yet, by call id: the position of their journal row,
    /// which they are made again with (the same idempotency key) and answered in (see
    /// `super::external_call`).
    pub in_flight: HashMap<String, i32>,
    /// The last external call that failed, as the tool's name and why, until one succeeds: what
    /// a run that ends without a verdict of the model names.
    pub failed_external: Option<(String, String)>,
}

impl Replay {
    pub fn from_steps(steps: &[Step]) -> Self {
        let mut replay = Replay::default();
        for step in steps {
            replay.apply(step);
        }
        replay
    }

    /// Takes in one recorded step (used for replay and, live, right after each step is recorded).
    pub fn apply(&mut self, step: &Step) {
        match step.kind {
            StepKind::ModelTurn if step.ok => {
                let message = step.result.clone().unwrap_or_else(|| json!({ "role": "assistant", "content": null }));
                let calls = tool_calls_of(&message);
                self.model_turns += 1;
                self.failed_in_a_row = 0;
                self.tool_calls_in_turn = 0;
                self.messages.push(message.clone());
                if calls.is_empty() {
                    self.plain_text_turns += 1;
                    self.last_text = message.get("content").and_then(Value::as_str).map(str::to_owned);
                    if self.plain_text_turns == 1 {
                        self.messages.push(json!({ "role": "user", "content": CORRECTIVE_MESSAGE }));
                    }
                }
                self.pending_calls = calls;
            }
            // Failed model requests are journaled for the record but are not part of the
            // conversation; they count the retries, and the last of a model's says which model the
            // run went on with.
            StepKind::ModelTurn => match step.result.as_ref().and_then(|result| result.get(FALLBACK_TO)).and_then(Value::as_str) {
                Some(next) => {
                    self.left_models.push(step.name.clone());
                    self.fallback_model = Some(next.to_owned());
                    self.failed_in_a_row = 0;
                }
                None => self.failed_in_a_row += 1,
            },
            StepKind::ToolCall if step.is_in_flight() => {
                self.in_flight.insert(step.tool_call_id.clone().unwrap_or_default(), step.seq);
            }
            StepKind::ToolCall => {
                if let Some(id) = &step.tool_call_id {
                    self.in_flight.remove(id);
                }
                if step.result.as_ref().is_some_and(|r| r.get(RESULT_SERVER).is_some()) {
                    self.failed_external = match step.ok {
                        true => None,
                        false => Some((step.name.clone(), step.error.clone().unwrap_or_default())),
                    };
                }
                if step.name != FINISH {
                    self.tool_calls_in_turn += 1;
                    self.tool_calls_in_run += 1;
                }
                let result = match (step.ok, &step.result) {
                    (true, result) => Ok(result.clone().unwrap_or_else(|| json!({}))),
                    (false, _) => Err(step.error.clone().unwrap_or_else(|| "the tool failed".into())),
                };
                self.handed_over |= step.result.as_ref().is_some_and(|r| r.get(HANDED_OVER_TO).is_some());
                self.answered.push(AnsweredCall { tool: step.name.clone(), result });
                let call_id = step.tool_call_id.clone().unwrap_or_default();
                self.pending_calls.retain(|call| call.id != call_id);
                let content = tool_content(step);
                self.messages.push(json!({ "role": "tool", "tool_call_id": call_id, "content": content }));
                if step.ok
                    && let Some(result) = &step.result {
                        self.state.observe(&step.name, result);
                    }
            }
        }
    }
}

/// The tool calls of a recorded assistant message.
pub fn tool_calls_of(message: &Value) -> Vec<ToolCall> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|call| ToolCall {
                    id: call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    name: call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    arguments: call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the model reads as a tool's answer: the result's `model_view` if it has one (a compact
/// form; the journal keeps the whole result), else the result, or the error; capped.
fn tool_content(step: &Step) -> String {
    let text = if step.ok {
        match step.result.as_ref() {
            Some(result) => result.get("model_view").unwrap_or(result).to_string(),
            None => "{}".to_owned(),
        }
    } else {
        json!({ "error": step.error.as_deref().unwrap_or("the tool failed") }).to_string()
    };
    cap(text)
}

fn cap(mut text: String) -> String {
    if text.len() <= MAX_TOOL_RESULT_BYTES {
        return text;
    }
    let mut end = MAX_TOOL_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str("…(truncated)");
    text
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use uuid::Uuid;

    use super::*;

    fn step(seq: i32, kind: StepKind, name: &str, call_id: Option<&str>, result: Value, ok: bool) -> Step {
        Step {
            task_id: Uuid::nil(),
            seq,
            kind,
            name: name.into(),
            tool_call_id: call_id.map(str::to_owned),
            arguments: None,
            result: Some(result),
            ok,
            error: (!ok).then(|| "boom".to_owned()),
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            cost_nanos: 0,
            latency_ms: 1,
            started_at: Utc::now(),
            finished_at: Utc::now(),
            attempt: 1,
        }
    }

    fn assistant_calling(calls: &[(&str, &str)]) -> Value {
        json!({
            "role": "assistant", "content": null,
            "tool_calls": calls.iter().map(|(id, name)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": "{}"}})).collect::<Vec<_>>()
        })
    }

    #[test]
    fn unanswered_calls_of_the_last_turn_are_pending() {
        let steps = vec![
            step(0, StepKind::ModelTurn, "m", None, assistant_calling(&[("a", "search_items"), ("b", "finish")]), true),
            step(1, StepKind::ToolCall, "search_items", Some("a"), json!({"items": []}), true),
        ];
        let replay = Replay::from_steps(&steps);
        assert_eq!(replay.model_turns, 1);
        assert_eq!(replay.pending_calls.len(), 1);
        assert_eq!(replay.pending_calls[0].id, "b");
        assert_eq!(replay.messages.len(), 2);
        assert_eq!(replay.state.last_search, Some(vec![]));
    }

    #[test]
    fn answered_calls_carry_full_results_and_errors_in_order() {
        // A result far over the model's cap: the model reads it cut, the run's data keeps it whole.
        let long_title = "x".repeat(2 * MAX_TOOL_RESULT_BYTES);
        let search = json!({ "items": [{ "id": "1", "title": long_title }], "model_view": { "count": 1 } });
        let steps = vec![
            step(0, StepKind::ModelTurn, "m", None, assistant_calling(&[("a", "search_items"), ("b", "update_item")]), true),
            step(1, StepKind::ToolCall, "search_items", Some("a"), search.clone(), true),
            step(2, StepKind::ToolCall, "update_item", Some("b"), Value::Null, false),
        ];
        let replay = Replay::from_steps(&steps);
        assert_eq!(replay.answered.len(), 2);
        assert_eq!((replay.answered[0].tool.as_str(), &replay.answered[0].result), ("search_items", &Ok(search)));
        assert_eq!((replay.answered[1].tool.as_str(), &replay.answered[1].result), ("update_item", &Err("boom".to_owned())));
        assert!(replay.messages[1]["content"].as_str().unwrap().len() <= MAX_TOOL_RESULT_BYTES + 20, "the model's copy is capped");
    }

    #[test]
    fn failed_model_requests_are_not_replayed_into_the_conversation() {
        let steps = vec![step(0, StepKind::ModelTurn, "m", None, Value::Null, false)];
        let replay = Replay::from_steps(&steps);
        assert_eq!(replay.model_turns, 0);
        assert!(replay.messages.is_empty());
    }

    #[test]
    fn a_plain_text_turn_gets_one_corrective_message() {
        let text = json!({"role": "assistant", "content": "done!"});
        let steps = vec![step(0, StepKind::ModelTurn, "m", None, text.clone(), true), step(1, StepKind::ModelTurn, "m", None, text, true)];
        let replay = Replay::from_steps(&steps);
        assert_eq!(replay.plain_text_turns, 2);
        let corrective = replay.messages.iter().filter(|m| m["role"] == "user").count();
        assert_eq!(corrective, 1);
        assert_eq!(replay.last_text.as_deref(), Some("done!"));
    }

    #[test]
    fn long_tool_results_are_capped_for_the_model() {
        let big = json!({"items": vec!["x".repeat(100); 100]});
        let steps = vec![
            step(0, StepKind::ModelTurn, "m", None, assistant_calling(&[("a", "search_items")]), true),
            step(1, StepKind::ToolCall, "search_items", Some("a"), big, true),
        ];
        let replay = Replay::from_steps(&steps);
        let content = replay.messages[1]["content"].as_str().unwrap();
        assert!(content.len() <= MAX_TOOL_RESULT_BYTES + 20);
        assert!(content.ends_with("(truncated)"));
    }

    #[test]
    fn a_recorded_hand_over_is_known_after_a_takeover() {
        let mut steps = vec![
            step(0, StepKind::ModelTurn, "local", None, assistant_calling(&[("a", "search_items")]), true),
            step(1, StepKind::ToolCall, "search_items", Some("a"), json!({"items": []}), true),
            step(2, StepKind::ModelTurn, "local", None, assistant_calling(&[("b", "finish")]), true),
        ];
        assert!(!Replay::from_steps(&steps).handed_over);
        steps.push(step(3, StepKind::ToolCall, "finish", Some("b"), json!({HANDED_OVER_TO: "m", "reason": "r"}), false));
        let replay = Replay::from_steps(&steps);
        assert!(replay.handed_over);
        assert!(replay.pending_calls.is_empty(), "the local finish is answered, not run");
    }
}
