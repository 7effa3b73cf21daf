//! A tool call: run (or refused), journaled, and, for a successful `finish`, the run's end.

use chrono::Utc;
use quickact_shared::{
    db::is_unavailable,
    domain::task::Verdict,
    store::{
        ending::Ending,
        steps::{Step, StepKind},
    },
};
use quickact_time::TimeContext;
use serde_json::Value;
use sqlx::{Acquire, PgConnection};
use tokio::time::Instant;
use tracing::{Instrument, Span};

use super::{
    context::RunContext,
    ledger::{Recorded, StepWrite},
    outcome::{RunEnd, RunError, elapsed_ms},
    state::Run,
    spans,
};
use crate::{
    provider::ToolCall,
    tools::{DatabaseUse, RunState, ToolContext, ToolError, ToolOutput, parse_arguments_text, prepare_arguments},
};

/// Whether the call's tool may change the user's items (unknown tools change nothing).
pub(super) fn may_write(cx: &RunContext<'_>, call: &ToolCall) -> bool {
    cx.tools.get(&call.name).is_some_and(|tool| tool.database_use() == DatabaseUse::Writes)
}

/// How a tool call's step is written, and so where the call runs: a call that may change items
/// (`writes`), or any call once the run's transaction is open, runs in that transaction and its
/// step is kept there ([`StepWrite::Keep`]). A call that changes nothing runs on a connection of
/// its own when it is the last of its turn (written now, with the steps held) or when the whole
/// turn changes nothing (held for the turn's last).
fn step_write(writes: bool, last: bool, turn_changes_nothing: bool, open: bool) -> StepWrite {
    match (writes || open, last, turn_changes_nothing) {
        (true, _, _) | (false, false, false) => StepWrite::Keep,
        (false, true, _) => StepWrite::Now,
        (false, false, true) => StepWrite::Hold,
    }
}

impl Run<'_> {
    /// Executes one tool call (or records it as refused, with `refusal`) and journals it: a call
    /// that may change items runs in the run's transaction, in a savepoint, and its step is kept
    /// there, so the change and its step commit together or not at all. A successful `finish` also
    /// ends the task.
    ///
    /// `last`: the last call of its turn; `turn_changes_nothing`: no call of the turn may change
    /// the user's items (`finish` aside). A call that changes nothing runs without a transaction
    /// when it is the last of its turn, or when the whole turn changes nothing: its step is then
    /// written with the turn's last one, in one statement (or by the statement that ends the
    /// task), instead of a transaction that locks the task's row for calls that need no lock.
    /// Otherwise the turn's next calls would each commit on their own too, where one transaction
    /// commits them all. A crash before that statement loses only calls that changed nothing,
    /// which the run asks again when it resumes.
    pub(super) async fn call_tool(
        &mut self,
        call: &ToolCall,
        refusal: Option<String>,
        last: bool,
        turn_changes_nothing: bool,
    ) -> Result<Recorded<Option<RunEnd>>, RunError> {
        // Local runs' calls get no span of their own (see `super::spans`).
        let span = if self.provider.is_local() { Span::none() } else { spans::tool_call_span(&call.name, &call.id) };
        self.call_tool_in(&span, call, refusal, last, turn_changes_nothing).instrument(span.clone()).await
    }

    /// [`Run::call_tool`] inside the call's `span`.
    async fn call_tool_in(
        &mut self,
        span: &Span,
        call: &ToolCall,
        refusal: Option<String>,
        last: bool,
        turn_changes_nothing: bool,
    ) -> Result<Recorded<Option<RunEnd>>, RunError> {
        // An external tool's call is journaled before it is made (see `super::external_call`); one
        // made already is made again whatever the caps say now (they allowed it then).
        if let Some(servers) = self.cx.tools.external()
            && let Some(tool) = servers.find(self.cx.pool, self.cx.task.user_id, &call.name).await?
        {
            let in_flight = self.replay.in_flight.get(&call.id).copied();
            if refusal.is_none() || in_flight.is_some() {
                return self.call_external(servers, &tool, call, in_flight).await;
            }
        }
        let arguments = parse_arguments_text(&call.arguments);
        let started_at = self.cx.clock.now();
        let started = Instant::now();
        let write = step_write(refusal.is_none() && may_write(self.cx, call), last, turn_changes_nothing, self.ledger.is_open());
        let output = match refusal {
            Some(reason) => Err(ToolError::Refused(reason)),
            None if write != StepWrite::Keep => {
                // The tool's connection goes back to its pool: a run holds one connection at a time.
                let mut conn = self.cx.pool.acquire().await?;
                execute_tool(self.cx, &self.replay.state, &mut conn, call, &arguments, ToolOn::Connection).await?
            }
            None => {
                if let Recorded::NotOurs(check) = self.ledger.open().await? {
                    return Ok(Recorded::NotOurs(check));
                }
                let on = if self.ledger.in_group() { ToolOn::Group } else { ToolOn::Transaction };
                let conn = self.ledger.connection().expect("the ledger was just opened");
                execute_tool(self.cx, &self.replay.state, conn, call, &arguments, on).await?
            }
        };
        let (step, verdict) = self.tool_step(call, &arguments, output, started_at, elapsed_ms(started));
        quickact_shared::metrics::tool_call(self.tool_label(call), step.ok);
        spans::record_tool_call(span, step.ok, step.error.as_deref());
        self.replay.apply(&step);
        if let Some(verdict) = verdict {
            self.ledger.hold(step, None);
            return Ok(Recorded::Done(Some(self.ledger.end(Ending::Finished(verdict)).await?)));
        }
        Ok(match self.ledger.record(step, None, write).await? {
            Recorded::Done(()) => Recorded::Done(None),
            Recorded::NotOurs(check) => Recorded::NotOurs(check),
        })
    }

    /// The metrics label of a call's tool: names outside the registry (a model's invention) share
    /// one label, so the series are bounded.
    fn tool_label(&self, call: &ToolCall) -> &'static str {
        self.cx.tools.get(&call.name).map_or("unknown", |tool| tool.name())
    }

    /// The journal step of a tool call, and the verdict if it was a successful `finish`.
    fn tool_step(
        &self,
        call: &ToolCall,
        arguments: &Result<Value, ToolError>,
        output: Result<ToolOutput, ToolError>,
        started_at: chrono::DateTime<Utc>,
        latency_ms: i32,
    ) -> (Step, Option<Verdict>) {
        let mut step = self.new_step(StepKind::ToolCall, &call.name, started_at, latency_ms, output.is_ok());
        step.tool_call_id = Some(call.id.clone());
        // Arguments that were not JSON are kept as the text the model sent.
        step.arguments = Some(match arguments {
            Ok(value) => value.clone(),
            Err(_) => Value::String(call.arguments.clone()),
        });
        let mut verdict = None;
        match output {
            Ok(ToolOutput::Result(value)) => step.result = Some(value),
            Ok(ToolOutput::Finish(finished)) => {
                step.result = Some(serde_json::to_value(&finished).expect("a verdict serialises"));
                verdict = Some(finished);
            }
            Err(ToolError::Database(err)) => {
                tracing::error!(task_id = %self.cx.task.id, tool = %call.name, error = %err, "tool failed on the database");
                step.error = Some("the tool failed because of an internal error".into());
            }
            Err(err) => step.error = Some(err.to_string()),
        }
        (step, verdict)
    }
}

/// Where a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolOn {
    /// A connection of its own, nothing open.
    Connection,
    /// The run's transaction: a tool that sends statements runs in a savepoint of it, so a failed
    /// tool leaves no partial change behind and the transaction usable.
    Transaction,
    /// The transaction of a group of local runs, in the run's own savepoint (`crate::groups`): no
    /// savepoint per tool (two statements a call). A tool that fails on the database, or a writer
    /// that fails at all, stops the run ([`RunError::RunAlone`]): its group rolls it back, and it
    /// runs alone, where the tool's failure is undone in a savepoint of its own and told to the
    /// model.
    Group,
}

/// Runs the named tool on `conn`, `on` says how. An unknown tool or malformed arguments are errors
/// for the model; `Err` is for a database that went away (the whole try is then retried) or a
/// grouped run that must run alone.
async fn execute_tool(
    cx: &RunContext<'_>,
    state: &RunState,
    conn: &mut PgConnection,
    call: &ToolCall,
    arguments: &Result<Value, ToolError>,
    on: ToolOn,
) -> Result<Result<ToolOutput, ToolError>, RunError> {
    let (tool, arguments) = match (cx.tools.get(&call.name), arguments) {
        (None, _) => {
            let names = cx.tools.names().join(", ");
            return Ok(Err(ToolError::InvalidArguments(format!("unknown tool {:?}; the tools are: {names}", call.name))));
        }
        (Some(_), Err(err)) => return Ok(Err(ToolError::InvalidArguments(err.to_string()))),
        (Some(tool), Ok(arguments)) => (tool, arguments),
    };
    let arguments = match prepare_arguments(tool.as_ref(), arguments.clone()) {
        Ok(arguments) => arguments,
        Err(err) => return Ok(Err(err)),
    };
    let context = ToolContext {
        task_id: cx.task.id,
        user_id: cx.task.user_id,
        input_text: &cx.task.input_text,
        time: TimeContext::new(cx.task.reference_time, cx.time_zone),
        state,
    };
    let database_use = tool.database_use();
    if on == ToolOn::Connection || database_use == DatabaseUse::None {
        return match tool.execute(&context, conn, arguments).await {
            Err(ToolError::Database(err)) if is_unavailable(&err) => Err(err.into()),
            output => Ok(output),
        };
    }
    if on == ToolOn::Group {
        return match tool.execute(&context, conn, arguments).await {
            Err(ToolError::Database(err)) if is_unavailable(&err) => Err(err.into()),
            Err(ToolError::Database(_)) => Err(RunError::RunAlone),
            Err(_) if database_use == DatabaseUse::Writes => Err(RunError::RunAlone),
            output => Ok(output),
        };
    }
    let mut savepoint = conn.begin().await?;
    match tool.execute(&context, &mut savepoint, arguments).await {
        Ok(output) => {
            savepoint.commit().await?;
            Ok(Ok(output))
        }
        Err(ToolError::Database(err)) if is_unavailable(&err) => Err(err.into()),
        Err(err) => {
            savepoint.rollback().await?;
            Ok(Err(err))
        }
    }
}
