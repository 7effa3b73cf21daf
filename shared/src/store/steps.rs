//! The journal of a run: one row per model turn and per tool call.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgExecutor;
use uuid::Uuid;

/// What a step is. Stored as text under a CHECK constraint, by the same names as in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum StepKind {
    ModelTurn,
    ToolCall,
}

impl StepKind {
    /// The name stored in the journal's `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::ModelTurn => "model_turn",
            StepKind::ToolCall => "tool_call",
        }
    }
}

/// A journal row (its JSON, as Postgres writes a row's, is read too: see
/// [`super::tasks::read_tasks`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Step {
    pub task_id: Uuid,
    pub seq: i32,
    pub kind: StepKind,
    pub name: String,
    pub tool_call_id: Option<String>,
    pub arguments: Option<Value>,
    pub result: Option<Value>,
    pub ok: bool,
    pub error: Option<String>,
    pub input_tokens: i32,
    pub output_tokens: i32,
    pub cached_tokens: i32,
    pub cost_nanos: i64,
    pub latency_ms: i32,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub attempt: i32,
}

impl Step {
    /// The step as an entry of the verdict's `tool_calls` (`None` for a model turn): the call with
    /// its result as recorded, minus the compact `model_view` that was only for the model. A
    /// successful `finish` has no result there: its result is the verdict itself.
    pub fn tool_call_entry(&self) -> Option<Value> {
        if self.kind != StepKind::ToolCall {
            return None;
        }
        let mut entry = json!({
            "name": self.name,
            "arguments": self.arguments,
            "ok": self.ok,
            "duration_ms": self.latency_ms,
            "at": self.started_at,
        });
        if self.ok && self.name == FINISH_TOOL {
            return Some(entry);
        }
        let result = self.ok.then(|| self.result.clone()).flatten().map(|mut result| {
            if let Some(object) = result.as_object_mut() {
                object.remove("model_view");
            }
            result
        });
        entry["result"] = result.unwrap_or(Value::Null);
        entry["error"] = json!(self.error);
        Some(entry)
    }
}

impl Step {
    /// A model turn as the verdict lists it: the model that answered (or, for a failed request,
    /// was asked), whether it answered, its tokens, and the model the run fell back to after it.
    pub fn model_turn_entry(&self) -> Option<Value> {
        if self.kind != StepKind::ModelTurn {
            return None;
        }
        let mut entry = json!({ "model": self.name, "ok": self.ok, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens });
        if let Some(to) = self.result.as_ref().and_then(|result| result.get(FALLBACK_TO)).filter(|_| !self.ok) {
            entry[FALLBACK_TO] = to.clone();
        }
        Some(entry)
    }
}

/// `result`, a verdict as stored, as a client reads it: with what it lists of its run, built from
/// the run's `journal`: `tool_calls` (every call, [`Step::tool_call_entry`]) and `model_turns`
/// (when there were turns, [`Step::model_turn_entry`]). The journal holds them once; the verdict's
/// row does not repeat them (one written before it stopped doing so has them replaced by the
/// same lists).
pub fn list_run(result: &mut Value, journal: &[Step]) {
    let Some(verdict) = result.as_object_mut() else { return };
    let tool_calls: Vec<Value> = journal.iter().filter_map(Step::tool_call_entry).collect();
    let model_turns: Vec<Value> = journal.iter().filter_map(Step::model_turn_entry).collect();
    verdict.insert("tool_calls".into(), Value::Array(tool_calls));
    if model_turns.is_empty() {
        verdict.remove("model_turns");
    } else {
        verdict.insert("model_turns".into(), Value::Array(model_turns));
    }
}

/// The key of a failed model turn's result that says the run went on with another model after it
/// (the model's retries were exhausted, see `QUICKACT_MODEL_FALLBACK`).
pub const FALLBACK_TO: &str = "fallback_to";

/// `query!` around an insert of `$steps` into the journal, as `$before INSERT ... SELECT ... FROM
/// jsonb_populate_recordset(.., $1) $after` (the steps as [`rows_json`]), with `$arg`s from `$2`
/// on (the query macros take a concatenation of literals, so the column list lives here once).
macro_rules! steps_insert {
    ($before:literal, $after:literal, $steps:expr $(, $arg:expr)* $(,)?) => {
        sqlx::query!(
            $before + "INSERT INTO quick_action_steps
               (task_id, seq, kind, name, tool_call_id, arguments, result, ok, error,
                input_tokens, output_tokens, cached_tokens, cost_nanos, latency_ms, started_at, finished_at, attempt)
             SELECT task_id, seq, kind, name, tool_call_id, arguments, result, ok, error,
                    input_tokens, output_tokens, cached_tokens, cost_nanos, latency_ms, started_at, finished_at, attempt
             FROM jsonb_populate_recordset(NULL::quick_action_steps, $1)" + $after,
            $crate::store::steps::rows_json($steps)
            $(, $arg)*
        )
    };
}
pub(crate) use steps_insert;

/// The terminal tool, whose successful call ends the run with its verdict.
pub const FINISH_TOOL: &str = "finish";

/// Appends a step. The primary key (task, seq) makes a second writer of the same position fail
/// instead of silently forking the journal.
pub async fn insert_step(db: impl PgExecutor<'_>, step: &Step) -> Result<(), sqlx::Error> {
    insert_steps(db, std::slice::from_ref(step)).await
}

/// Appends several steps (of one task or several) in one statement: what a run recorded since its
/// last write, at the point it must be in the database (a commit, or the verdict read from it).
pub async fn insert_steps(db: impl PgExecutor<'_>, steps: &[Step]) -> Result<(), sqlx::Error> {
    if steps.is_empty() {
        return Ok(());
    }
    steps_insert!("", "", steps).execute(db).await?;
    Ok(())
}

/// `steps` as a JSON array of journal rows, keyed by column: how every statement that appends to
/// the journal takes them, in one parameter (`jsonb_populate_recordset`). Times keep
/// microseconds, as Postgres does.
pub fn rows_json(steps: &[Step]) -> Value {
    let micros = |at: &DateTime<Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    Value::Array(
        steps
            .iter()
            .map(|s| {
                json!({
                    "task_id": s.task_id,
                    "seq": s.seq,
                    "kind": s.kind.as_str(),
                    "name": s.name,
                    "tool_call_id": s.tool_call_id,
                    "arguments": s.arguments,
                    "result": s.result,
                    "ok": s.ok,
                    "error": s.error,
                    "input_tokens": s.input_tokens,
                    "output_tokens": s.output_tokens,
                    "cached_tokens": s.cached_tokens,
                    "cost_nanos": s.cost_nanos,
                    "latency_ms": s.latency_ms,
                    "started_at": micros(&s.started_at),
                    "finished_at": micros(&s.finished_at),
                    "attempt": s.attempt,
                })
            })
            .collect(),
    )
}

/// `query_as!` into [`Step`]: every column of the journal, then `$rest` (the query macros take a
/// concatenation of literals, so the column list lives here once).
macro_rules! select_steps {
    ($rest:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Step,
            r#"SELECT task_id, seq, kind AS "kind: StepKind", name, tool_call_id, arguments, result, ok, error,
                  input_tokens, output_tokens, cached_tokens, cost_nanos, latency_ms, started_at, finished_at, attempt
               FROM quick_action_steps "# + $rest
            $(, $arg)*
        )
    };
}

/// The whole journal of a task, in order.
pub async fn list_steps(db: impl PgExecutor<'_>, task_id: Uuid) -> Result<Vec<Step>, sqlx::Error> {
    list_steps_after(db, task_id, -1).await
}

/// The whole journals of several tasks in one statement: their steps by task, each in order.
pub async fn list_steps_of(db: impl PgExecutor<'_>, task_ids: &[Uuid]) -> Result<Vec<Step>, sqlx::Error> {
    select_steps!("WHERE task_id = ANY($1) ORDER BY task_id, seq", task_ids).fetch_all(db).await
}

/// The steps of a task after position `after`, in order (a stream resuming where it left off).
pub async fn list_steps_after(db: impl PgExecutor<'_>, task_id: Uuid, after: i32) -> Result<Vec<Step>, sqlx::Error> {
    select_steps!("WHERE task_id = $1 AND seq > $2 ORDER BY seq", task_id, after).fetch_all(db).await
}

/// The steps of a task after position `after`, to show a client: when the task was unfinished as
/// read (`unfinished`), its run committed them without waiting for the disk, and they are made
/// durable first ([`crate::db::flush_commits`], on this same connection), so a database crash
/// cannot take back a step someone saw.
pub async fn steps_to_show(conn: &mut sqlx::PgConnection, task_id: Uuid, after: i32, unfinished: bool) -> Result<Vec<Step>, sqlx::Error> {
    let journal = list_steps_after(&mut *conn, task_id, after).await?;
    if unfinished && !journal.is_empty() {
        crate::db::flush_commits(&mut *conn).await?;
    }
    Ok(journal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(seq: i32, kind: StepKind, name: &str, ok: bool, result: Value) -> Step {
        Step {
            task_id: Uuid::nil(),
            seq,
            kind,
            name: name.into(),
            tool_call_id: (kind == StepKind::ToolCall).then(|| format!("call_{seq}")),
            arguments: Some(json!({})),
            result: Some(result),
            ok,
            error: (!ok).then(|| "refused".to_owned()),
            input_tokens: 3,
            output_tokens: 1,
            cached_tokens: 0,
            cost_nanos: 0,
            latency_ms: 2,
            started_at: Utc::now(),
            finished_at: Utc::now(),
            attempt: 1,
        }
    }

    #[test]
    fn a_verdict_lists_its_runs_calls_and_turns_from_the_journal() {
        let journal = vec![
            step(0, StepKind::ModelTurn, "m1", false, json!({ FALLBACK_TO: "m2" })),
            step(1, StepKind::ModelTurn, "m2", true, json!({"role": "assistant"})),
            step(2, StepKind::ToolCall, "update_item", true, json!({"item": {"id": "a"}, "model_view": "a -> y"})),
            step(3, StepKind::ToolCall, "delete_item", false, json!({"item": {"id": "d"}})),
            step(4, StepKind::ToolCall, FINISH_TOOL, true, json!({"type": "error", "message": "m"})),
        ];
        let mut verdict = json!({"type": "error", "message": "m", "tool_calls": [{"name": "stale"}]});
        list_run(&mut verdict, &journal);
        let calls = verdict["tool_calls"].as_array().unwrap();
        assert_eq!(calls.iter().map(|c| c["name"].as_str().unwrap()).collect::<Vec<_>>(), ["update_item", "delete_item", FINISH_TOOL]);
        assert_eq!(calls[0]["result"], json!({"item": {"id": "a"}}), "the model's copy stays out");
        assert_eq!((&calls[1]["result"], &calls[1]["error"]), (&Value::Null, &json!("refused")));
        assert!(calls[2].get("result").is_none() && calls[2].get("error").is_none(), "a finish is listed without its verdict: {}", calls[2]);
        let turns = verdict["model_turns"].as_array().unwrap();
        assert_eq!((turns.len(), &turns[0][FALLBACK_TO], turns[1].get(FALLBACK_TO)), (2, &json!("m2"), None));

        let mut undo = json!({"type": "action_completed", "message": "m", "model_turns": [{"model": "stale"}]});
        list_run(&mut undo, &journal[2..3]);
        assert_eq!(undo["tool_calls"].as_array().unwrap().len(), 1);
        assert!(undo.get("model_turns").is_none(), "a run without turns lists none");
    }
}
