//! The journal of a run: one row per model turn with the calls written with it, in order.
//!
//! A run's steps are positions `seq` 0, 1, 2, ...: model turns and tool calls. They are stored as
//! one row per model turn, which carries the calls written in the same statement (`calls`, its
//! nth at `seq + n`); a call written after its turn (an external call, flushed before it is made
//! and completed in place) is a row of its own, as every call was before
//! (`migrations/20261130000005_turn_rows.sql`). [`rows_json`] makes the rows; every read goes
//! through the view `quick_action_journal` (`migrations/functions/journal.sql`), which gives one
//! [`Step`] per position whichever way it was stored.

use std::collections::HashMap;

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

/// The key of an external call's result while the call is under way: its row, written before the
/// call is made, is completed in place once it answers.
pub const IN_FLIGHT: &str = "in_flight";

impl Step {
    /// Whether this is an external call written before it is made and not answered yet (see
    /// [`IN_FLIGHT`]).
    pub fn is_in_flight(&self) -> bool {
        self.kind == StepKind::ToolCall && !self.ok && self.result.as_ref().is_some_and(|r| r.get(IN_FLIGHT) == Some(&Value::Bool(true)))
    }

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
                input_tokens, output_tokens, cached_tokens, cost_nanos, latency_ms, started_at, finished_at, attempt, calls)
             SELECT task_id, seq, kind, name, tool_call_id, arguments, result, ok, error,
                    input_tokens, output_tokens, cached_tokens, cost_nanos, latency_ms, started_at, finished_at, attempt, calls
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

/// `steps` (consecutive positions of one task, or several tasks' runs one after another) as a JSON
/// array of journal rows, keyed by column: how every statement that appends to the journal takes
/// them, in one parameter (`jsonb_populate_recordset`). A model turn's row carries the calls that
/// follow it here (`calls`: each call's columns but the task, the position and the kind, which
/// its place tells, the tokens and cost a call never has, and an error or attempt it has not or
/// shares with the turn); a call with no turn before it
/// here, or written while in flight ([`Step::is_in_flight`], which is completed in place later),
/// is a row of its own, and so is every call after it up to the next turn. A successful `finish`
/// is stored without its result: that is the verdict, which the task's row holds (and a run that
/// finished is never replayed). Times keep microseconds, as Postgres does.
pub fn rows_json(steps: &[Step]) -> Value {
    let micros = |at: &DateTime<Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let mut rows: Vec<Value> = Vec::new();
    // The last row while it is a turn that takes the next position as its call: its task, the
    // position it has reached and its attempt.
    let mut turn: Option<(Uuid, i32, i32)> = None;
    for s in steps {
        let verdict = s.kind == StepKind::ToolCall && s.ok && s.name == FINISH_TOOL;
        let mut call = json!({
            "name": s.name,
            "tool_call_id": s.tool_call_id,
            "arguments": s.arguments,
            "result": if verdict { &Value::Null } else { s.result.as_ref().unwrap_or(&Value::Null) },
            "ok": s.ok,
            "error": s.error,
            "latency_ms": s.latency_ms,
            "started_at": micros(&s.started_at),
            "finished_at": micros(&s.finished_at),
            "attempt": s.attempt,
        });
        let joins = s.kind == StepKind::ToolCall
            && !s.is_in_flight()
            && turn.is_some_and(|(task, seq, _)| task == s.task_id && seq == s.seq - 1);
        if joins && let Some(Value::Array(calls)) = rows.last_mut().and_then(|row| row.get_mut("calls")) {
            // What goes without saying is left out: no error, the turn's attempt.
            let object = call.as_object_mut().expect("a call is an object");
            if s.error.is_none() {
                object.remove("error");
            }
            if turn.is_some_and(|(_, _, attempt)| attempt == s.attempt) {
                object.remove("attempt");
            }
            calls.push(call);
            turn = turn.map(|(task, _, attempt)| (task, s.seq, attempt));
            continue;
        }
        call["task_id"] = json!(s.task_id);
        call["seq"] = json!(s.seq);
        call["kind"] = json!(s.kind.as_str());
        call["input_tokens"] = json!(s.input_tokens);
        call["output_tokens"] = json!(s.output_tokens);
        call["cached_tokens"] = json!(s.cached_tokens);
        call["cost_nanos"] = json!(s.cost_nanos);
        call["calls"] = if s.kind == StepKind::ModelTurn { json!([]) } else { Value::Null };
        turn = (s.kind == StepKind::ModelTurn).then_some((s.task_id, s.seq, s.attempt));
        rows.push(call);
    }
    // A turn that no call followed carries none.
    for row in &mut rows {
        if row["calls"].as_array().is_some_and(Vec::is_empty) {
            row["calls"] = Value::Null;
        }
    }
    Value::Array(rows)
}

/// `query_as!` into [`Step`]: every column of the journal, one row per position (the view
/// `quick_action_journal`, whose columns Postgres cannot tell are never null: the `!`s), then
/// `$rest` (the query macros take a concatenation of literals, so the column list lives here
/// once).
macro_rules! select_steps {
    ($rest:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Step,
            r#"SELECT task_id AS "task_id!", seq AS "seq!", kind AS "kind!: StepKind", name AS "name!", tool_call_id,
                  arguments, result, ok AS "ok!", error, input_tokens AS "input_tokens!", output_tokens AS "output_tokens!",
                  cached_tokens AS "cached_tokens!", cost_nanos AS "cost_nanos!", latency_ms AS "latency_ms!",
                  started_at AS "started_at!", finished_at AS "finished_at!", attempt AS "attempt!"
               FROM quick_action_journal "# + $rest
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

/// [`list_steps_of`] by task: each task's journal in order (a task with no steps is absent).
pub async fn journals_of(db: impl PgExecutor<'_>, task_ids: &[Uuid]) -> Result<HashMap<Uuid, Vec<Step>>, sqlx::Error> {
    let mut journals: HashMap<Uuid, Vec<Step>> = HashMap::new();
    for step in list_steps_of(db, task_ids).await? {
        journals.entry(step.task_id).or_default().push(step);
    }
    Ok(journals)
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

/// A step for the tests of the journal's readers: at position `seq`, answered with `result` (a
/// failed one with the error "refused"), no tokens.
#[cfg(test)]
pub(crate) fn test_step(seq: i32, kind: StepKind, name: &str, ok: bool, result: Value) -> Step {
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
        input_tokens: 0,
        output_tokens: 0,
        cached_tokens: 0,
        cost_nanos: 0,
        latency_ms: 2,
        started_at: Utc::now(),
        finished_at: Utc::now(),
        attempt: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::{test_step as step, *};

    #[test]
    fn a_turn_carries_the_calls_written_with_it_and_a_call_in_flight_is_a_row_of_its_own() {
        let other = Uuid::from_u128(7);
        let mut in_flight = step(3, StepKind::ToolCall, "rooms__book", false, json!({ IN_FLIGHT: true }));
        in_flight.error = None;
        let of_other = |mut step: Step| {
            step.task_id = other;
            step
        };
        let steps = [
            step(0, StepKind::ModelTurn, "m", true, json!({"role": "assistant"})),
            step(1, StepKind::ToolCall, "search_items", true, json!({"items": []})),
            step(2, StepKind::ToolCall, "create_item", true, json!({"item": {"id": "a"}})),
            in_flight,
            step(4, StepKind::ToolCall, "search_items", true, json!({})),
            step(5, StepKind::ModelTurn, "m", true, json!({})),
            of_other(step(0, StepKind::ModelTurn, "local", true, json!({}))),
            of_other(step(1, StepKind::ToolCall, FINISH_TOOL, true, json!({"type": "action_completed"}))),
        ];
        let rows = rows_json(&steps);
        let rows = rows.as_array().unwrap();
        let shape: Vec<(bool, i64, &str, Option<usize>)> = rows
            .iter()
            .map(|r| (r["task_id"] == json!(other), r["seq"].as_i64().unwrap(), r["kind"].as_str().unwrap(), r["calls"].as_array().map(Vec::len)))
            .collect();
        let expected = [
            (false, 0, "model_turn", Some(2)),
            (false, 3, "tool_call", None),
            (false, 4, "tool_call", None),
            (false, 5, "model_turn", None),
            (true, 0, "model_turn", Some(1)),
        ];
        assert_eq!(shape, expected, "{rows:#?}");
        let create = &rows[0]["calls"][1];
        assert_eq!((&create["name"], &create["result"]), (&json!("create_item"), &json!({"item": {"id": "a"}})));
        for key in ["task_id", "seq", "kind", "input_tokens", "cost_nanos", "calls", "error", "attempt"] {
            assert!(create.get(key).is_none(), "a call's place tells its {key}: {create}");
        }
        assert_eq!(rows[1]["result"][IN_FLIGHT], true);
        assert_eq!(rows[4]["calls"][0]["result"], Value::Null, "a finish's verdict is the task's, stored once");
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
