//! Tasks and journal steps as clients see them: the JSON of `GET /api/quick-action/{id}` (and the
//! listings'), rendered here rather than in the API because webhook deliveries carry the same
//! document ("the task as `GET` returns it"): the worker renders it from the same code. The rows come
//! from [`crate::store`]; their shapes here are the API's contract.

use chrono::{DateTime, Utc};
use crate::{
    domain::task::{TaskPriority, TaskRecord, TaskStatus},
    pricing::nanos_to_amount,
    store::{
        steps::{Step, StepKind, list_run},
        tasks::TaskRead,
    },
    telemetry::traces::trace_id_of,
};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

/// Where a task is read: `GET` on this path.
pub fn status_url(id: Uuid) -> String {
    format!("/api/quick-action/{id}")
}

/// A task.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Task)]
pub struct TaskView {
    pub task_id: Uuid,
    pub status: TaskStatus,
    pub status_url: String,
    pub input_text: String,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    /// Seconds from start to completion, to the millisecond.
    pub duration: Option<f64>,
    /// The verdict, once there is one.
    #[schema(value_type = Option<crate::domain::task::Verdict>)]
    pub result: Option<Value>,
    pub tokens_used: TaskTokens,
    pub cost: Cost,
    pub model_used: Option<String>,
    /// The time budget in seconds.
    pub timeout: i32,
    /// How soon it is served: `interactive`, or `batch` (after interactive tasks, until it has
    /// waited `QUICKACT_BATCH_AGING_SECS`).
    pub priority: TaskPriority,
    pub attempts: i32,
    /// The moment the sentence was written, which its dates are read against.
    pub reference_time: DateTime<Utc>,
    pub tz: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// For an undo (`POST /api/quick-action/{id}/undo`), the task it reverted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undoes: Option<Uuid>,
    /// For a reply (`POST /api/quick-action/{id}/reply`), the task whose question it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<Uuid>,
    /// The OpenTelemetry trace the task is part of (32 hex digits): the caller's when its POST
    /// carried a W3C `traceparent`, else one the API began. Present only when the API that took
    /// the task exports traces (`OTEL_EXPORTER_OTLP_ENDPOINT`, docs/tracing.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "4bf92f3577b34da6a3ce929d0e0e4736", pattern = "^[0-9a-f]{32}$")]
    pub trace_id: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TaskTokens {
    pub input: i64,
    pub output: i64,
    pub cached: i64,
    /// Input plus output (cached input tokens are part of the input).
    pub total: i64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Cost {
    pub amount: f64,
    pub currency: String,
}

impl TaskView {
    /// The task as clients read it, its verdict listing what its run did from `journal`, the
    /// task's whole journal (a verdict's row does not repeat it, see [`list_run`]). An unfinished
    /// task has no verdict, and its journal is not read: `&[]`.
    pub fn new(task: TaskRecord, journal: &[Step]) -> Self {
        let result = task.result.map(|mut verdict| {
            list_run(&mut verdict, journal);
            verdict
        });
        let duration = match (task.started_at, task.completed_at) {
            (Some(start), Some(end)) => Some((end - start).num_milliseconds() as f64 / 1000.0),
            _ => None,
        };
        TaskView {
            task_id: task.id,
            status: task.status,
            status_url: status_url(task.id),
            input_text: task.input_text,
            created_at: task.created_at,
            started_at: task.started_at,
            completed_at: task.completed_at,
            duration,
            result,
            tokens_used: TaskTokens {
                input: task.input_tokens,
                output: task.output_tokens,
                cached: task.cached_tokens,
                total: task.input_tokens + task.output_tokens,
            },
            cost: Cost { amount: nanos_to_amount(task.cost_nanos), currency: task.currency },
            model_used: task.model_used,
            timeout: task.timeout_seconds,
            priority: task.priority,
            attempts: task.attempts,
            reference_time: task.reference_time,
            tz: task.time_zone,
            idempotency_key: task.idempotency_key,
            undoes: task.undoes,
            reply_to: task.reply_to,
            trace_id: task.trace_parent.as_deref().and_then(trace_id_of).map(str::to_owned),
        }
    }
}

/// A task as read ([`TaskRead`]: a final one with its journal).
impl From<TaskRead> for TaskView {
    fn from(read: TaskRead) -> Self {
        TaskView::new(read.task, read.journal.as_deref().unwrap_or_default())
    }
}

impl TaskWithSteps {
    /// Task `task` with its whole `journal` (and `replies`), as `GET` answers.
    pub fn new(task: TaskRecord, journal: Vec<Step>, replies: Vec<Uuid>) -> Self {
        TaskWithSteps { task: TaskView::new(task, &journal), steps: journal.into_iter().map(Into::into).collect(), replies }
    }
}

/// A task with its journal (`GET /api/quick-action/{id}`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TaskWithSteps {
    #[serde(flatten)]
    pub task: TaskView,
    #[schema(value_type = Vec<StepDoc>)]
    pub steps: Vec<StepView>,
    /// For a task that asked a question (`need_clarification`), the replies to it
    /// (`POST /api/quick-action/{id}/reply`), oldest first: how a client following the task
    /// finds the task that goes on from it. Absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<Uuid>,
}

/// A journal step: a model turn or a tool call.
#[derive(Debug, Serialize)]
pub struct StepView {
    pub seq: i32,
    pub kind: StepKind,
    /// The model of a turn, the tool of a call.
    pub name: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub latency_ms: i32,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub attempt: i32,
    #[serde(flatten)]
    pub detail: StepDetail,
}

/// What only one kind of step has.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum StepDetail {
    ModelTurn {
        tokens: StepTokens,
        cost: f64,
        /// The assistant message.
        message: Option<Value>,
    },
    ToolCall {
        tool_call_id: Option<String>,
        arguments: Option<Value>,
        result: Option<Value>,
    },
}

#[derive(Debug, Serialize)]
pub struct StepTokens {
    pub input: i32,
    pub output: i32,
    pub cached: i32,
}

impl From<Step> for StepView {
    fn from(step: Step) -> Self {
        let detail = match step.kind {
            StepKind::ModelTurn => StepDetail::ModelTurn {
                tokens: StepTokens { input: step.input_tokens, output: step.output_tokens, cached: step.cached_tokens },
                cost: nanos_to_amount(step.cost_nanos),
                message: step.result,
            },
            StepKind::ToolCall => StepDetail::ToolCall {
                tool_call_id: step.tool_call_id,
                arguments: step.arguments,
                result: step.result,
            },
        };
        StepView {
            seq: step.seq,
            kind: step.kind,
            name: step.name,
            ok: step.ok,
            error: step.error,
            latency_ms: step.latency_ms,
            started_at: step.started_at,
            finished_at: step.finished_at,
            attempt: step.attempt,
            detail,
        }
    }
}

// The schema of [`StepView`], which flattens an untagged enum and so cannot derive one.
/// A journal step: a model turn (`tokens`, `cost`, `message`) or a tool call (`tool_call_id`,
/// `arguments`, `result`).
#[derive(utoipa::ToSchema)]
#[schema(as = Step)]
pub struct StepDoc {
    /// Position in the journal, from 0; the SSE event id.
    pub seq: i32,
    pub kind: StepKind,
    /// The model of a turn, the tool of a call.
    pub name: String,
    pub ok: bool,
    pub error: Option<String>,
    pub latency_ms: i32,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub attempt: i32,
    /// Model turns: tokens of the turn.
    pub tokens: Option<StepTokensDoc>,
    /// Model turns: cost of the turn in the task's currency.
    pub cost: Option<f64>,
    /// Model turns: the assistant message.
    pub message: Option<Value>,
    pub tool_call_id: Option<String>,
    pub arguments: Option<Value>,
    /// Tool calls: what the tool answered (`null` for a `finish` that ended the run: its result is
    /// the task's verdict).
    pub result: Option<Value>,
}

#[derive(utoipa::ToSchema)]
#[schema(as = StepTokens)]
pub struct StepTokensDoc {
    pub input: i32,
    pub output: i32,
    pub cached: i32,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn step(kind: StepKind) -> Step {
        let at = DateTime::parse_from_rfc3339("2026-02-07T01:30:00Z").unwrap().with_timezone(&Utc);
        Step {
            task_id: Uuid::nil(),
            seq: 3,
            kind,
            name: "fake-model".into(),
            tool_call_id: None,
            arguments: None,
            result: None,
            ok: true,
            error: None,
            input_tokens: 10,
            output_tokens: 2,
            cached_tokens: 4,
            cost_nanos: 1_500_000,
            latency_ms: 7,
            started_at: at,
            finished_at: at,
            attempt: 1,
        }
    }

    #[test]
    fn a_model_turn_shows_tokens_cost_and_message_and_no_error_when_it_has_none() {
        let view = serde_json::to_value(StepView::from(step(StepKind::ModelTurn))).unwrap();
        assert_eq!(
            view,
            json!({
                "seq": 3, "kind": "model_turn", "name": "fake-model", "ok": true, "latency_ms": 7,
                "started_at": "2026-02-07T01:30:00Z", "finished_at": "2026-02-07T01:30:00Z", "attempt": 1,
                "tokens": {"input": 10, "output": 2, "cached": 4}, "cost": 0.0015, "message": null,
            })
        );
    }

    #[test]
    fn a_tool_call_shows_its_id_arguments_result_and_error() {
        let mut failed = step(StepKind::ToolCall);
        failed.ok = false;
        failed.error = Some("boom".into());
        let view = serde_json::to_value(StepView::from(failed)).unwrap();
        assert_eq!(
            view,
            json!({
                "seq": 3, "kind": "tool_call", "name": "fake-model", "ok": false, "error": "boom", "latency_ms": 7,
                "started_at": "2026-02-07T01:30:00Z", "finished_at": "2026-02-07T01:30:00Z", "attempt": 1,
                "tool_call_id": null, "arguments": null, "result": null,
            })
        );
    }
}
