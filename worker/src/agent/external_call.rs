//! An external tool's call (a tool of an MCP server, see [`crate::mcp`]): journaled before it is
//! made, made with an idempotency key, answered in the same journal row.
//!
//! A planner tool's change and its journal step commit in one transaction; an external tool's
//! effect happens on another machine and cannot share it. So the call's row is written first,
//! with its name, arguments and position but no result (an *in-flight* row, see
//! [`Step::is_in_flight`](quickact_shared::store::steps::Step::is_in_flight)), with everything the run recorded before it, and made
//! durable (not left to `synchronous_commit = off`); only then is the call made, with
//! `_meta.idempotency_key = "<task_id>:<step>"`, the row's position; its outcome (result or
//! error, latency) is then written into that row, if the run still holds the task.
//!
//! After a crash, a pause or a takeover, the run rebuilt from the journal finds the row in flight
//! and makes the call again, with the same key: never skipped (its effect may not have happened),
//! never with a new key (it may have). A server that keys its effects by the idempotency key
//! makes each once. A run that lost the task meanwhile records nothing (the row is fenced by the
//! lease holder, as every journal write is); the task's new holder makes the call again.

use std::time::Duration;

use quickact_shared::{
    db::flush_commits,
    store::steps::{Step, StepKind},
};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    ledger::Recorded,
    outcome::{RunEnd, RunError, elapsed_ms},
    state::Run,
};
use crate::{
    mcp::{ExternalTool, IDEMPOTENCY_KEY, IN_FLIGHT, McpServers, RESULT_SERVER, idempotency_key},
    provider::ToolCall,
    tools::parse_arguments_text,
};

/// Time kept back from a call's wait before the task's deadline, so a call that hangs is
/// answered (as failed, naming the tool) before the deadline ends the task as a timeout.
const DEADLINE_MARGIN: Duration = Duration::from_secs(2);

/// What the error of an in-flight row says: true while the call runs (a live stream shows the
/// row then) and for a task that ended before the call was answered.
const NOT_ANSWERED: &str = "the call was made; its answer is not recorded";

impl Run<'_> {
    /// Makes `call` to `tool` (see the module docs) and journals it; `in_flight`: the position of
    /// its row when a run before this one made it already.
    pub(super) async fn call_external(
        &mut self,
        servers: &McpServers,
        tool: &ExternalTool,
        call: &ToolCall,
        in_flight: Option<i32>,
    ) -> Result<Recorded<Option<RunEnd>>, RunError> {
        let (task_id, server) = (self.cx.task.id, tool.server.name.clone());
        let arguments = match parse_arguments_text(&call.arguments) {
            Ok(arguments) => arguments,
            Err(err) => {
                // Nothing is called: the step records the model's mistake, as for any tool.
                let mut step = self.new_step(StepKind::ToolCall, &call.name, self.cx.clock.now(), 0, false);
                step.tool_call_id = Some(call.id.clone());
                step.arguments = Some(Value::String(call.arguments.clone()));
                step.error = Some(err.to_string());
                return self.record_answer(step, None).await;
            }
        };
        let seq = match in_flight {
            Some(seq) => seq,
            None => {
                let mut step = self.new_step(StepKind::ToolCall, &call.name, self.cx.clock.now(), 0, false);
                step.tool_call_id = Some(call.id.clone());
                step.arguments = Some(arguments.clone());
                step.result = Some(json!({ IN_FLIGHT: true, RESULT_SERVER: server, IDEMPOTENCY_KEY: idempotency_key(task_id, step.seq) }));
                step.error = Some(NOT_ANSWERED.into());
                let seq = step.seq;
                self.replay.apply(&step);
                if let Recorded::NotOurs(check) = self.ledger.write_now(step, None).await? {
                    return Ok(Recorded::NotOurs(check));
                }
                // The row must outlast a crash of the database too, before the effect happens.
                flush_commits(self.cx.pool).await?;
                seq
            }
        };
        let key = idempotency_key(task_id, seq);
        let timeout = Duration::from_secs(tool.server.timeout_secs)
            .min(self.cx.deadline.saturating_duration_since(Instant::now()).saturating_sub(DEADLINE_MARGIN))
            .max(Duration::from_millis(100));
        let started_at = self.cx.clock.now();
        let started = Instant::now();
        let outcome = tokio::select! {
            outcome = servers.call(self.cx.pool, self.cx.task.user_id, tool, arguments.clone(), (task_id, seq), timeout) => outcome,
            // The row stays in flight: whoever runs the task next makes the call again, same key.
            _ = self.cx.abort.cancelled() => return Ok(Recorded::Done(Some(RunEnd::Aborted))),
        };
        let latency_ms = elapsed_ms(started);
        quickact_shared::metrics::tool_call("external", outcome.is_ok());
        let mut step = self.new_step(StepKind::ToolCall, &call.name, started_at, latency_ms, outcome.is_ok());
        step.seq = seq;
        step.tool_call_id = Some(call.id.clone());
        step.arguments = Some(arguments);
        match outcome {
            Ok(answer) => {
                // The model reads the tool's answer only; the journal keeps where it came from.
                let mut result = json!({ RESULT_SERVER: server, IDEMPOTENCY_KEY: key, "model_view": answer.clone() });
                if let (Some(result), Value::Object(answer)) = (result.as_object_mut(), answer) {
                    result.extend(answer);
                }
                step.result = Some(result);
            }
            Err(err) => {
                tracing::warn!(task_id = %task_id, tool = %call.name, error = %err, "an external tool call failed");
                step.result = Some(json!({ RESULT_SERVER: server, IDEMPOTENCY_KEY: key }));
                step.error = Some(err);
            }
        }
        // The call's span (see `Run::call_tool`) says how it went, as a planner tool's does.
        super::spans::record_tool_call(&tracing::Span::current(), step.ok, step.error.as_deref());
        self.record_answer(step, Some(seq)).await
    }

    /// Journals an external call's answer: into its in-flight row (`row`), or as a new step.
    async fn record_answer(&mut self, step: Step, row: Option<i32>) -> Result<Recorded<Option<RunEnd>>, RunError> {
        let recorded = match row {
            Some(_) => self.ledger.complete(step.clone()).await?,
            None => self.ledger.write_now(step.clone(), None).await?,
        };
        if let Recorded::NotOurs(check) = recorded {
            return Ok(Recorded::NotOurs(check));
        }
        self.replay.apply(&step);
        Ok(Recorded::Done(None))
    }

    /// `message` with, when the run's last external call failed, which tool and why: what a run
    /// that ends without the model's verdict tells the user.
    pub(super) fn naming_failed_tool(&self, message: String) -> String {
        match &self.replay.failed_external {
            Some((tool, error)) => {
                // The error said which tool, for the model: said once here.
                let why = error.strip_prefix(&format!("{tool} failed: ")).unwrap_or(error);
                self.replies().0.join_sentences(&[message, self.replies().external_tool_failed(tool, &clip_error(why))])
            }
            None => message,
        }
    }
}

fn clip_error(error: &str) -> String {
    let mut out: String = error.chars().take(300).collect();
    if error.chars().count() > 300 {
        out.push('…');
    }
    out
}
