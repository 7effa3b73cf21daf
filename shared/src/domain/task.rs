//! The quick-action task: its lifecycle, its verdict and its row. How a task is shown to clients
//! belongs to the API (`quickact_api::views`).

use std::{fmt, str::FromStr};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

pub use super::names::UnknownName;

/// Where a task is in its life. `pending -> processing -> success | failed | timeout | cancelled`.
/// Stored as text under a CHECK constraint, by the same names as in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    Processing,
    Success,
    Failed,
    Timeout,
    Cancelled,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 6] = [
        TaskStatus::Pending,
        TaskStatus::Processing,
        TaskStatus::Success,
        TaskStatus::Failed,
        TaskStatus::Timeout,
        TaskStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Processing => "processing",
            TaskStatus::Success => "success",
            TaskStatus::Failed => "failed",
            TaskStatus::Timeout => "timeout",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// A final state never changes again.
    pub fn is_final(self) -> bool {
        !matches!(self, TaskStatus::Pending | TaskStatus::Processing)
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskStatus {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskStatus::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| UnknownName(s.to_owned()))
    }
}

/// How soon a task is served. Interactive tasks (someone waits for them) go before batch ones
/// (scripts, imports), except that a batch task waiting longer than the aging time
/// (`QUICKACT_BATCH_AGING_SECS`) is served as interactive, so batch work is slowed, never starved.
/// Stored as text, like [`TaskStatus`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum TaskPriority {
    #[default]
    Interactive,
    Batch,
}

impl TaskPriority {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskPriority::Interactive => "interactive",
            TaskPriority::Batch => "batch",
        }
    }
}

/// The verdict of a run: exactly one per finished task. Stored as text, like [`TaskStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum ResultType {
    ActionCompleted,
    NeedClarification,
    Error,
}

impl ResultType {
    pub const ALL: [ResultType; 3] = [ResultType::ActionCompleted, ResultType::NeedClarification, ResultType::Error];

    pub fn as_str(self) -> &'static str {
        match self {
            ResultType::ActionCompleted => "action_completed",
            ResultType::NeedClarification => "need_clarification",
            ResultType::Error => "error",
        }
    }

    /// The lifecycle state a run that ends with this verdict gets: `success` exactly when the
    /// action was done. A clarification leaves the request undone like an error, so both are
    /// `failed`; clients tell them apart by `result.type`.
    pub fn final_status(self) -> TaskStatus {
        match self {
            ResultType::ActionCompleted => TaskStatus::Success,
            ResultType::NeedClarification | ResultType::Error => TaskStatus::Failed,
        }
    }
}

impl FromStr for ResultType {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ResultType::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| UnknownName(s.to_owned()))
    }
}

/// What a finished task tells the user (`result` in the API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Verdict {
    #[serde(rename = "type")]
    pub result_type: ResultType,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// Candidates of a clarification, rendered by the backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<crate::planner::item::ItemView>>)]
    pub options: Option<Vec<Value>>,
    /// The items the verdict is about, rendered by the backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<crate::planner::item::ItemView>>)]
    pub items: Option<Vec<Value>>,
    /// For a sentence that asks for several actions: each action's own outcome, in the sentence's
    /// order (the verdict's `type` is `action_completed` only when every one was done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<ActionOutcome>>,
    /// For `need_clarification`: what kind of question it is, so a client can head it (and a
    /// reply can be read) by kind. Derived from the run's journal, never from the model's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Question>,
    /// Every tool call of the run, in order (name, arguments, ok, result).
    // Not stored with the verdict: built from the run's journal whenever a client reads it
    // (`store::steps::list_run`), as `model_turns` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<Value>,
    /// Why an error verdict was given, for the causes a client may act on:
    /// `budget_exhausted` (a cost budget refused the run; see `renews_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "budget_exhausted")]
    pub reason: Option<String>,
    /// With `reason: budget_exhausted`: when the budget that refused the run renews (UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renews_at: Option<DateTime<Utc>>,
    /// Every model turn of the run, in order: the model that answered it (or was asked, for a
    /// failed request), whether it answered, and, where the run went on with the next model of the
    /// fallback chain, that model (`fallback_to`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_turns: Vec<Value>,
}

/// The kind of question a `need_clarification` verdict asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// Several items match and the sentence cannot tell them apart: `options` lists them.
    WhichItem,
    /// The new time overlaps items (`options`): another time, or add it anyway?
    Conflict,
    /// The time has already passed: nothing was written; the suggestion names the next occurrence.
    TimePassed,
    /// The sentence does not say enough to act on (no candidates to choose from).
    Details,
}

impl Question {
    pub fn as_str(self) -> &'static str {
        match self {
            Question::WhichItem => "which_item",
            Question::Conflict => "conflict",
            Question::TimePassed => "time_passed",
            Question::Details => "details",
        }
    }
}

/// One action of a sentence that asks for several, and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ActionOutcome {
    /// The action, in a few words of the user's language.
    pub action: String,
    #[serde(rename = "type")]
    pub result_type: ResultType,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// The items this action is about, rendered by the backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<crate::planner::item::ItemView>>)]
    pub items: Option<Vec<Value>>,
    /// Candidates of this action's clarification, rendered by the backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<crate::planner::item::ItemView>>)]
    pub options: Option<Vec<Value>>,
}

impl ResultType {
    /// The verdict of several actions: done when every one was done, an error when any failed,
    /// else a clarification.
    pub fn of_all(types: impl IntoIterator<Item = ResultType>) -> ResultType {
        let mut all = ResultType::ActionCompleted;
        for t in types {
            match t {
                ResultType::Error => return ResultType::Error,
                ResultType::NeedClarification => all = ResultType::NeedClarification,
                ResultType::ActionCompleted => {}
            }
        }
        all
    }
}

impl Verdict {
    pub fn error(message: impl Into<String>, suggestion: Option<String>) -> Self {
        Verdict::new(ResultType::Error, message, suggestion)
    }

    /// A verdict of `result_type` that says `message` (and `suggestion`), and nothing else yet.
    pub fn new(result_type: ResultType, message: impl Into<String>, suggestion: Option<String>) -> Self {
        Verdict {
            result_type,
            message: message.into(),
            suggestion,
            options: None,
            items: None,
            actions: None,
            question: None,
            tool_calls: Vec::new(),
            reason: None,
            renews_at: None,
            model_turns: Vec::new(),
        }
    }
}

/// A task row as stored (the lease columns aside: only the lease queries read them). Read by the
/// store's `query_tasks!`, and by name from the rows the SQL functions answer.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TaskRecord {
    pub id: Uuid,
    pub user_id: Uuid,
    pub input_text: String,
    pub status: TaskStatus,
    pub result_type: Option<ResultType>,
    pub result: Option<Value>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cached_tokens: i64,
    pub cost_nanos: i64,
    pub currency: String,
    pub model_used: Option<String>,
    pub timeout_seconds: i32,
    pub idempotency_key: Option<String>,
    pub reference_time: DateTime<Utc>,
    pub time_zone: String,
    pub attempts: i32,
    /// For an undo, the task whose item changes it reverted.
    pub undoes: Option<Uuid>,
    pub priority: TaskPriority,
    /// The W3C `traceparent` of the span that submitted the task, when the API that took it
    /// exported traces: the run continues that trace (see `crate::telemetry::traces`).
    pub trace_parent: Option<String>,
    /// For a reply (`POST /api/quick-action/{id}/reply`), the task whose question it answers.
    pub reply_to: Option<Uuid>,
}

impl TaskRecord {
    /// When the task's time budget runs out: its timeout counts from submission, because that is
    /// how long the user agreed to wait for the answer.
    pub fn deadline(&self) -> DateTime<Utc> {
        self.created_at + chrono::Duration::seconds(i64::from(self.timeout_seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_completed_actions_count_as_success() {
        assert_eq!(ResultType::ActionCompleted.final_status(), TaskStatus::Success);
        assert_eq!(ResultType::NeedClarification.final_status(), TaskStatus::Failed);
        assert_eq!(ResultType::Error.final_status(), TaskStatus::Failed);
    }

    #[test]
    fn statuses_round_trip_through_their_names() {
        for status in TaskStatus::ALL {
            assert_eq!(status.as_str().parse::<TaskStatus>().unwrap(), status);
        }
        assert!("done".parse::<TaskStatus>().is_err());
    }

    #[test]
    fn verdict_serialises_with_type_field() {
        let v = Verdict::error("boom", Some("try again".into()));
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["type"], "error");
        assert_eq!(json["suggestion"], "try again");
        assert!(json.get("options").is_none());
    }
}
