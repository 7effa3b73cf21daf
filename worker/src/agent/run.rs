//! The agent loop of one run: model turns and tool calls until `finish`, at most
//! [`MAX_MODEL_TURNS`] turns. It reads top to bottom: answer the last turn's calls
//! ([`super::tool_call`]), stop when the run cannot reach a verdict, ask for the next turn
//! ([`super::turn`]), hand the run over to the model when the local reading cannot finish.
//!
//! Every write goes through the run's [`Ledger`] (see [`super::ledger`]): a tool's change, its
//! journal row and, for `finish`, the task's final state commit together. The run's transaction
//! commits at checkpoints: before the run waits on anything but the database (a remote model's
//! turn, a backoff), right after a remote turn (its tokens are paid for; a turn whose calls only
//! read commits with what they read, before the run acts on it), and at the end. A local run (the
//! local provider answers in microseconds) is therefore ONE transaction from its first step to its
//! verdict. Whatever was not committed is lost together with its effects: after a crash or a
//! database outage the run resumes from the committed journal, so nothing is done twice.
//! Transient model failures are retried with backoff while the task's time budget lasts; database
//! outages are waited out the same way.
//!
//! Hand-over (the fast path's escalation): a run served by the local provider while a model is
//! configured hands the rest of the run to the model when the local reading cannot finish the
//! action because its search found nothing or several items (the model may find what plain text
//! search missed, or tell the candidates apart). The local turn's `finish` is then answered, not
//! run, with a step that records the hand-over (`{"handed_over_to", "reason"}`), and every later
//! turn, after a takeover too, is the model's.

use std::time::Duration;

use chrono::Utc;
use quickact_shared::{
    db::{is_unavailable, retry_unavailable},
    store::{
        ending::Ending,
        steps::{Step, StepKind, list_steps},
    },
};
use serde_json::{Value, json};
use tokio::time::Instant;

pub use super::outcome::{RunEnd, RunError};
pub(super) use super::state::Run;
use super::{
    context::RunContext,
    journal::{HANDED_OVER_TO, Replay},
    ledger::{Ledger, Recorded, RunTransaction},
    tool_call::may_write,
    turn::Asked,
};
use crate::{
    provider::{ProviderError, ToolCall},
    tools::{FINISH, SEARCH_ITEMS, parse_arguments_text},
};

/// Most model turns of one run.
pub const MAX_MODEL_TURNS: usize = 10;
/// Most tool calls (other than `finish`) run from one model turn; the rest of the turn's calls are
/// answered as refused, not run. Bounds what one reply can write.
pub const MAX_TOOL_CALLS_PER_TURN: usize = 8;
/// Most tool calls (other than `finish`) one run makes; later ones are refused and the model is
/// told to finish.
pub const MAX_TOOL_CALLS_PER_RUN: usize = 30;

/// Runs (or resumes, from `journal`) the agent for one task.
pub async fn run_agent(cx: &RunContext<'_>, journal: &[Step]) -> Result<RunEnd, RunError> {
    Run::resuming(cx, journal, None).drive().await
}

/// How a grouped run ([`run_agent_grouped`]) stopped.
#[derive(Debug)]
pub enum Grouped {
    /// As a run alone would have ended, except that a verdict is `Decided` (for the group to
    /// write); only `Decided` is kept.
    Ended(RunEnd),
    /// At a checkpoint (it must wait on a model, after a hand-over): what it recorded is kept, and
    /// it goes on alone once the group committed.
    Checkpoint,
    /// Nothing of it is kept (its task's row was held by another transaction, or one of its tools
    /// failed, see [`RunError::RunAlone`]): it runs alone.
    Busy,
}

/// Runs the agent for one task inside `tx`, a transaction shared with other runs, without
/// committing: where a run alone would commit, a grouped run leaves its work in `tx` for the
/// group's one commit. Meant for local runs, which wait on nothing but the database. The caller
/// has locked the task's row, as its holder, in the run's savepoint (`crate::groups`). Gives `tx`
/// back unless a failure on the database lost it; the caller rolls back to its savepoint whatever
/// did not end in `Decided` or a checkpoint.
pub async fn run_agent_grouped(cx: &RunContext<'_>, journal: &[Step], tx: RunTransaction) -> (Result<Grouped, RunError>, Option<RunTransaction>) {
    let mut run = Run::resuming(cx, journal, Some(tx));
    let result = match run.drive_from_replay().await {
        Err(RunError::Checkpoint) => Ok(Grouped::Checkpoint),
        Err(RunError::RunAlone) => Ok(Grouped::Busy),
        other => other.map(Grouped::Ended),
    };
    (result, run.ledger.into_group_transaction())
}

impl<'a> Run<'a> {
    /// A run that goes on from `journal` (what is committed), alone or in `group`'s transaction.
    fn resuming(cx: &'a RunContext<'a>, journal: &[Step], group: Option<RunTransaction>) -> Self {
        let replay = Replay::from_steps(journal);
        let (provider, mut model) = match cx.hand_over_to {
            Some(to) if replay.handed_over => to,
            _ => (cx.provider, cx.model),
        };
        // A run that fell back goes on with the model it fell back to (served by the same provider).
        if let Some(fallback) = replay.fallback_model.as_deref().and_then(|name| cx.gate.model_in_chain(name))
            && !provider.is_local()
        {
            model = fallback;
        }
        Run { cx, provider, model, replay, ledger: Ledger::new(cx, journal, group), model_tools: None }
    }

    /// Drives the run; a database outage rolls back what was not committed and the run resumes
    /// from the committed journal once the database answers again (within the task's time).
    async fn drive(&mut self) -> Result<RunEnd, RunError> {
        loop {
            match self.drive_from_replay().await {
                Err(err @ (RunError::Database(_) | RunError::JournalLost)) if resumable(&err) && Instant::now() < self.cx.deadline => {
                    if let RunError::Database(err) = &err {
                        quickact_shared::metrics::database_error(err);
                    }
                    tracing::warn!(task_id = %self.cx.task.id, error = %err, "resuming from the journal");
                    let (pool, task_id) = (self.cx.pool, self.cx.task.id);
                    let journal = retry_unavailable(self.patience(), || list_steps(pool, task_id)).await?;
                    *self = Run::resuming(self.cx, &journal, None);
                }
                // Whatever ends the run uncommitted (stopped, aborted, a failure) is rolled back
                // when the transaction drops; a finished run committed already.
                other => return other,
            }
        }
    }

    pub(super) async fn drive_from_replay(&mut self) -> Result<RunEnd, RunError> {
        loop {
            if self.cx.abort.is_cancelled() {
                return Ok(RunEnd::Aborted);
            }
            // Answer the last turn's calls first (after a crash, some may be answered already).
            // `finish` goes last, so every other call of the turn is answered before the run ends.
            let mut pending = std::mem::take(&mut self.replay.pending_calls);
            pending.sort_by_key(|call| call.name == FINISH);
            let calls = pending.len();
            let changes_nothing = pending.iter().all(|call| !may_write(self.cx, call));
            for (i, call) in pending.into_iter().enumerate() {
                if self.cx.abort.is_cancelled() {
                    return Ok(RunEnd::Aborted);
                }
                let refusal = (call.name != FINISH).then(|| self.tool_call_limit()).flatten();
                match self.call_tool(&call, refusal, i + 1 == calls, changes_nothing).await? {
                    Recorded::Done(Some(end)) => return Ok(end),
                    Recorded::Done(None) => {}
                    Recorded::NotOurs(check) => return Ok(RunEnd::Stopped(check)),
                }
            }

            if self.replay.plain_text_turns >= 2 {
                let text = self.replay.last_text.clone().unwrap_or_default();
                let (message, suggestion) = self.replies().answered_without_acting(&clip(&text, 300));
                return self.ledger.end(Ending::Error { message: self.naming_failed_tool(message), suggestion }).await;
            }
            if self.replay.model_turns >= MAX_MODEL_TURNS {
                let (message, suggestion) = self.replies().too_many_turns(MAX_MODEL_TURNS);
                return self.ledger.end(Ending::Error { message: self.naming_failed_tool(message), suggestion }).await;
            }

            if !self.provider.is_local() {
                // A remote turn takes seconds: commit first, so no lock is held while we wait.
                self.ledger.checkpoint().await?;
                self.list_external_tools().await;
                // A paid turn only if the user's budgets have room (a local turn costs nothing).
                if let Some(refusal) = self.budget_refusal().await? {
                    return self.end_for_the_budget(refusal).await;
                }
            }
            let turn = match self.request_turn().await? {
                Recorded::Done(Asked::Answered(turn)) => turn,
                Recorded::Done(Asked::Wait(wait)) => {
                    let wait = wait.min(self.cx.deadline.saturating_duration_since(Instant::now()));
                    return Ok(RunEnd::WaitForModel { model: self.model.to_owned(), wait });
                }
                Recorded::Done(Asked::Failed(_)) if self.cx.abort.is_cancelled() => return Ok(RunEnd::Aborted),
                Recorded::Done(Asked::Failed(err)) => return self.end_for_the_model(err).await,
                Recorded::NotOurs(check) => return Ok(RunEnd::Stopped(check)),
            };
            if let Recorded::NotOurs(check) = self.record_turn(turn).await? {
                return Ok(RunEnd::Stopped(check));
            }
            if let Some((call, reason)) = self.hand_over_reason() {
                if let Recorded::NotOurs(check) = self.hand_over(&call, reason).await? {
                    return Ok(RunEnd::Stopped(check));
                }
                continue;
            }
        }
    }

    /// Ends the run when the model could not be used. The provider's own words (status codes,
    /// masked keys, upstream text) stay in the journal's failed turns and the log; the user gets a
    /// plain sentence.
    async fn end_for_the_model(&mut self, err: ProviderError) -> Result<RunEnd, RunError> {
        tracing::warn!(task_id = %self.cx.task.id, error = %err, "the model could not be used; ending the run");
        let (message, suggestion) = self.replies().model_unusable(err.is_transient());
        let message = self.naming_failed_tool(message);
        self.ledger.end(Ending::Error { message, suggestion }).await
    }

    /// The local turn's `finish` call and why the run hands over to the model instead of running it:
    /// the local reading is about to end without doing the action (clarification or error) right
    /// after a search that found nothing or several items.
    fn hand_over_reason(&self) -> Option<(ToolCall, String)> {
        self.cx.hand_over_to?;
        if !self.provider.is_local() {
            return None;
        }
        let finish = self.replay.pending_calls.iter().find(|call| call.name == FINISH)?;
        let arguments = parse_arguments_text(&finish.arguments).ok()?;
        if arguments["result_type"] == "action_completed" {
            return None;
        }
        let found = self.replay.answered.iter().rev().find(|answered| answered.tool == SEARCH_ITEMS)?;
        let count = found.result.as_ref().ok()?.get("items")?.as_array()?.len();
        let reason = match count {
            0 => "the search found nothing".to_owned(),
            1 => return None,
            n => format!("the search found {n} candidates"),
        };
        Some((finish.clone(), reason))
    }

    /// Answers the local turn's `finish` call with the hand-over (not run) and gives the rest of the
    /// run to the model; the model reads the run so far, the hand-over included.
    async fn hand_over(&mut self, call: &ToolCall, reason: String) -> Result<Recorded<()>, RunError> {
        let (provider, model) = self.cx.hand_over_to.expect("a hand-over has a model to go to");
        tracing::info!(task_id = %self.cx.task.id, %model, %reason, "the local reading hands the run over to the model");
        let mut step = self.new_step(StepKind::ToolCall, FINISH, self.cx.clock.now(), 0, false);
        step.tool_call_id = Some(call.id.clone());
        step.arguments = Some(parse_arguments_text(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone())));
        step.error = Some(format!(
            "not run: handed over to you ({model}) because {reason}; search again (other words, kind, status or dates) and act, or finish"
        ));
        step.result = Some(json!({ HANDED_OVER_TO: model, "reason": reason }));
        self.replay.apply(&step);
        let recorded = self.ledger.keep(step, None).await?;
        if matches!(recorded, Recorded::Done(())) {
            self.provider = provider;
            self.model = model;
        }
        Ok(recorded)
    }

    /// Lists the external tools for the run's model turns, once per run (a local turn never sees
    /// them: the fast path plans only the planner's tools). A server that cannot be listed is
    /// left out (see [`crate::mcp`]).
    async fn list_external_tools(&mut self) {
        let Some(servers) = self.cx.tools.external() else { return };
        if self.model_tools.is_some() {
            return;
        }
        let external = servers.definitions(self.cx.pool, self.cx.task.user_id).await;
        if external.is_empty() {
            self.model_tools = Some(self.cx.tools.definitions());
            return;
        }
        let mut tools = (*self.cx.tools.definitions()).clone();
        tools.extend(external);
        self.model_tools = Some(std::sync::Arc::new(tools));
    }

    /// Why the next tool call may not run, if a cap on tool calls is reached.
    fn tool_call_limit(&self) -> Option<String> {
        if self.replay.tool_calls_in_run >= MAX_TOOL_CALLS_PER_RUN {
            Some(format!("not run: this run has reached its limit of {MAX_TOOL_CALLS_PER_RUN} tool calls; finish now with what has been done"))
        } else if self.replay.tool_calls_in_turn >= MAX_TOOL_CALLS_PER_TURN {
            Some(format!("not run: at most {MAX_TOOL_CALLS_PER_TURN} tool calls run per turn; call it again next turn if it is still needed"))
        } else {
            None
        }
    }

    /// A new journal step at the next position, finished now on the run's clock (the database's).
    pub(super) fn new_step(&self, kind: StepKind, name: &str, started_at: chrono::DateTime<Utc>, latency_ms: i32, ok: bool) -> Step {
        Step {
            task_id: self.cx.task.id,
            seq: self.ledger.next_seq(),
            kind,
            name: name.to_owned(),
            tool_call_id: None,
            arguments: None,
            result: None,
            ok,
            error: None,
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            cost_nanos: 0,
            latency_ms,
            started_at,
            finished_at: self.cx.clock.now(),
            attempt: self.cx.attempt,
        }
    }

    /// How long to wait out a database outage: until the task's deadline, and at least a little.
    fn patience(&self) -> Duration {
        self.cx.deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(2))
    }
}

/// Whether a run that failed this way goes on from its committed journal: the database is away
/// (wait for it), or took back steps the run had written.
fn resumable(err: &RunError) -> bool {
    match err {
        RunError::Database(err) => is_unavailable(err),
        RunError::JournalLost => true,
        RunError::Checkpoint | RunError::RunAlone | RunError::Group(_) => false,
    }
}

fn clip(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().count() > chars {
        out.push('…');
    }
    out
}
