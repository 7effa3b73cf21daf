//! The agent loop of one run: model turns and tool calls until `finish`, at most
//! [`MAX_MODEL_TURNS`] turns.
//!
//! Steps are journaled in the run's open transaction, which first checks the task is still ours
//! (not cancelled, not taken over) and then holds the task's row lock: a tool's change, its journal
//! row and, for `finish`, the task's final state commit together. The transaction commits at
//! checkpoints: before the run waits on anything but the database (a remote model's turn, a
//! backoff), right after a remote turn (its tokens are paid for; a turn whose calls only read
//! commits with what they read, before the run acts on it), and at the end. A local run
//! (the local provider answers in microseconds) is therefore ONE transaction from its first step to
//! its verdict. Whatever was not committed is lost together with its effects: after a crash or a
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
use chrono_tz::Tz;
use quickact_shared::{
    batch::Batcher,
    db::{is_unavailable, retry_unavailable},
    domain::task::{TaskRecord, Verdict},
    notify::StepEvents,
    pricing::PriceTable,
    store::{
        ending::{Ending, FinalState, end_one},
        steps::{Step, StepKind, insert_steps, list_steps},
        tasks::{OwnerCheck, Usage, add_usage, lock_for_owner, record_if_owner, try_lock_for_owner},
    },
};
use quickact_time::TimeContext;
use serde_json::{Value, json};
use sqlx::{Acquire, PgConnection, PgExecutor, PgPool, Postgres, Transaction};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    journal::{HANDED_OVER_TO, Replay, tool_calls_of},
    prompt::{SYSTEM_MESSAGE, user_message},
};
use crate::{
    provider::{ChatRequest, ModelProvider, ModelReply, ProviderError, RunInput, ToolCall},
    tools::{DatabaseUse, FINISH, SEARCH_ITEMS, ToolContext, ToolError, ToolOutput, ToolRegistry, parse_arguments_text, prepare_arguments},
};

/// Most model turns of one run.
pub const MAX_MODEL_TURNS: usize = 10;
/// Most attempts at one model turn before the run gives up on the model.
const MAX_MODEL_ATTEMPTS: usize = 6;
/// Most tool calls (other than `finish`) run from one model turn; the rest of the turn's calls are
/// answered as refused, not run. Bounds what one reply can write.
pub const MAX_TOOL_CALLS_PER_TURN: usize = 8;
/// Most tool calls (other than `finish`) one run makes; later ones are refused and the model is
/// told to finish.
pub const MAX_TOOL_CALLS_PER_RUN: usize = 30;

/// This process's loop that writes the endings of runs with nothing open, many in one statement
/// (see [`quickact_shared::store::ending::end_tasks`]): a verdict notifies, and Postgres commits
/// notifying transactions one at a time, each through its own WAL flush. Answers the task as it
/// ended, `None` inside when it was no longer ours; `None` outside when the batch failed (the run
/// then ends alone).
pub type Endings = Batcher<(String, FinalState), Option<Option<TaskRecord>>>;

/// Everything a run needs.
pub struct RunContext<'a> {
    pub pool: &'a PgPool,
    /// For the journal's statements made with nothing open (a turn's record, an ending in one
    /// statement): they find their rows by key, and this pool plans them once per connection (see
    /// `quickact_shared::db::planning_once`); the tools' statements, whose plans depend on the
    /// values, go through `pool`.
    pub journal: &'a PgPool,
    /// Where the run says that steps it wrote committed (see [`StepEvents`]).
    pub step_events: &'a StepEvents,
    /// Where a run with nothing open ends (see [`Endings`]); `None`: in a statement of its own.
    pub endings: Option<&'a Endings>,
    pub task: &'a TaskRecord,
    /// Who holds the task's lease: this worker's claim (see `crate::queue::Claimed::holder`).
    pub owner: &'a str,
    /// Which attempt at the task this is (journal rows record it).
    pub attempt: i32,
    pub model: &'a str,
    pub provider: &'a dyn ModelProvider,
    /// With the local fast path and a model configured: the model provider and model name the run
    /// hands over to (see the module documentation).
    pub hand_over_to: Option<(&'a dyn ModelProvider, &'a str)>,
    pub tools: &'a ToolRegistry,
    pub prices: &'a PriceTable,
    pub time_zone: Tz,
    /// When the task's time budget ends.
    pub deadline: Instant,
    /// Cancelled when the run must stop at once (task cancelled or taken over, shutdown).
    pub abort: CancellationToken,
}

/// How a run ended.
#[derive(Debug)]
pub enum RunEnd {
    /// A verdict was reached and written with the task's final state: the task as it ended.
    Finished(Box<TaskRecord>),
    /// The task stopped being ours (cancelled, finished or taken over by another worker).
    Stopped(OwnerCheck),
    /// `abort` fired.
    Aborted,
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A grouped run reached a checkpoint (see [`run_agent_grouped`]).
    #[error("the run must commit before it goes on")]
    Checkpoint,
    /// The group a run was part of failed to commit (see [`crate::groups`]).
    #[error("{0}")]
    Group(String),
}

/// Runs (or resumes, from `journal`) the agent for one task.
pub async fn run_agent(cx: &RunContext<'_>, journal: &[Step]) -> Result<RunEnd, RunError> {
    Run::resuming(cx, journal).drive().await
}

/// How a grouped run ([`run_agent_grouped`]) stopped.
#[derive(Debug)]
pub enum Grouped {
    /// As a run alone would have ended; only `Finished` is kept.
    Ended(RunEnd),
    /// At a checkpoint (it must wait on a model, after a hand-over): what it recorded is kept, and
    /// it goes on alone once the group committed.
    Checkpoint,
    /// Its task's row was held by another transaction: nothing was done; it runs alone.
    Busy,
}

/// Runs the agent for one task inside `tx`, a transaction shared with other runs, without
/// committing: where a run alone would commit, a grouped run leaves its work in `tx` for the
/// group's one commit. Meant for local runs, which wait on nothing but the database. The task's
/// row is locked without waiting: the group holds locks of the runs before (their rows, their
/// users' room under the cap, which a task's ending takes), and whoever holds this row (the
/// runner ending it at its deadline, a cancel) may be waiting on one of them. Gives `tx` back
/// unless a failure on the database lost it; the caller rolls back to its savepoint whatever
/// did not end in `Finished` or a checkpoint.
pub async fn run_agent_grouped(
    cx: &RunContext<'_>,
    journal: &[Step],
    tx: Transaction<'static, Postgres>,
) -> (Result<Grouped, RunError>, Option<Transaction<'static, Postgres>>) {
    let mut run = Run::resuming(cx, journal);
    run.grouped = true;
    let mut tx = tx;
    match try_lock_for_owner(&mut tx, cx.task.id, cx.owner).await {
        Ok(Some(OwnerCheck::Owned)) => {}
        Ok(Some(check)) => return (Ok(Grouped::Ended(RunEnd::Stopped(check))), Some(tx)),
        Ok(None) => return (Ok(Grouped::Busy), Some(tx)),
        Err(err) => return (Err(err.into()), Some(tx)),
    }
    run.tx = Some(tx);
    let result = match run.drive_from_replay().await {
        Err(RunError::Checkpoint) => Ok(Grouped::Checkpoint),
        other => other.map(Grouped::Ended),
    };
    (result, run.tx.take())
}

struct Run<'a> {
    cx: &'a RunContext<'a>,
    /// Who answers the turns now: the context's provider, or the model after a hand-over.
    provider: &'a dyn ModelProvider,
    model: &'a str,
    replay: Replay,
    next_seq: i32,
    /// The whole journal: what was committed before this run began and every step since.
    journal: Vec<Step>,
    /// How many steps of `journal` are written (committed, or in the open transaction). The rest
    /// are written together, in one statement, before the transaction commits.
    written: usize,
    /// The open transaction, holding the task's row lock, with the steps not yet committed.
    tx: Option<Transaction<'static, Postgres>>,
    /// Whether the task's `model_used` is recorded in this run (written, or in `usage`): a later
    /// turn that costs nothing has nothing to add.
    model_recorded: bool,
    /// Usage of turns recorded and not yet added to the task's totals: added with the next write of
    /// the steps, or by the statement that ends the task.
    usage: Option<Usage>,
    /// Part of a group ([`run_agent_grouped`]): `tx` is the group's and is never committed here.
    grouped: bool,
}

/// The outcome of recording something on behalf of the task.
enum Recorded<T> {
    Done(T),
    NotOurs(OwnerCheck),
}

/// A successful model answer and when it was asked for.
struct Turn {
    reply: ModelReply,
    started_at: chrono::DateTime<Utc>,
    latency_ms: i32,
}

impl<'a> Run<'a> {
    /// A run that goes on from `journal` (what is committed), with nothing open.
    fn resuming(cx: &'a RunContext<'a>, journal: &[Step]) -> Self {
        let next_seq = journal.last().map_or(0, |s| s.seq + 1);
        let replay = Replay::from_steps(journal);
        let (provider, model) = match cx.hand_over_to {
            Some(to) if replay.handed_over => to,
            _ => (cx.provider, cx.model),
        };
        Run {
            cx,
            provider,
            model,
            replay,
            next_seq,
            journal: journal.to_vec(),
            written: journal.len(),
            tx: None,
            model_recorded: false,
            usage: None,
            grouped: false,
        }
    }

    /// Drives the run; a database outage rolls back what was not committed and the run resumes
    /// from the committed journal once the database answers again (within the task's time).
    async fn drive(&mut self) -> Result<RunEnd, RunError> {
        loop {
            match self.drive_from_replay().await {
                Err(RunError::Database(err)) if is_unavailable(&err) && Instant::now() < self.cx.deadline => {
                    quickact_shared::metrics::database_error(&err);
                    tracing::warn!(task_id = %self.cx.task.id, error = %err, "database unavailable mid-run; resuming from the journal");
                    self.tx = None;
                    let (pool, task_id) = (self.cx.pool, self.cx.task.id);
                    let journal = retry_unavailable(self.patience(), || list_steps(pool, task_id)).await?;
                    *self = Run::resuming(self.cx, &journal);
                }
                // Whatever ends the run uncommitted (stopped, aborted, a failure) is rolled back
                // when the transaction drops; a finished run committed already.
                other => return other,
            }
        }
    }

    async fn drive_from_replay(&mut self) -> Result<RunEnd, RunError> {
        loop {
            if self.cx.abort.is_cancelled() {
                return Ok(RunEnd::Aborted);
            }
            // Answer the last turn's calls first (after a crash, some may be answered already).
            // `finish` goes last, so every other call of the turn is answered before the run ends.
            let mut pending = std::mem::take(&mut self.replay.pending_calls);
            pending.sort_by_key(|call| call.name == FINISH);
            let calls = pending.len();
            let changes_nothing = pending.iter().all(|call| !self.may_write(call));
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
                return self
                    .end_without_finish(Ending::Error {
                        message: format!("The assistant answered without completing the action: {}", clip(&text, 300)),
                        suggestion: "Rephrase the request as one concrete action, e.g. \"明天下午3点开会\".".into(),
                    })
                    .await;
            }
            if self.replay.model_turns >= MAX_MODEL_TURNS {
                return self
                    .end_without_finish(Ending::Error {
                        message: format!("The action could not be completed within {MAX_MODEL_TURNS} model turns."),
                        suggestion: "Split the request into simpler sentences, one action each.".into(),
                    })
                    .await;
            }

            if !self.provider.is_local() {
                // A remote turn takes seconds: commit first, so no lock is held while we wait.
                self.checkpoint().await?;
            }
            let turn = match self.request_turn().await? {
                Recorded::Done(Ok(turn)) => turn,
                Recorded::Done(Err(_)) if self.cx.abort.is_cancelled() => return Ok(RunEnd::Aborted),
                Recorded::Done(Err(err)) => {
                    // The provider's own words (status codes, masked keys, upstream text) stay in the
                    // journal's failed turns and the log; the user gets a plain sentence.
                    tracing::warn!(task_id = %self.cx.task.id, error = %err, "the model could not be used; ending the run");
                    let (message, suggestion) = if err.is_transient() {
                        ("The assistant is busy or cannot be reached right now, so the action was not completed.", "Try again in a minute.")
                    } else {
                        ("The assistant is not available: the service's model settings were refused.", "Ask the administrator to check the model configuration.")
                    };
                    return self.end_without_finish(Ending::Error { message: message.into(), suggestion: suggestion.into() }).await;
                }
                Recorded::NotOurs(check) => return Ok(RunEnd::Stopped(check)),
            };
            // A model's turn is paid for: it is committed before the run acts on the reply (with
            // the reads it asked for, or with the ending: see `record_turn`). A local turn costs
            // nothing and is committed with what the run does next.
            let (step, usage) = self.turn_step(turn);
            let recorded = if self.provider.is_local() { self.record(step, usage).await? } else { self.record_turn(step, usage).await? };
            if let Recorded::NotOurs(check) = recorded {
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

    /// The open transaction, begun if needed, once it has checked the task is still ours (and
    /// locked its row until the transaction ends).
    async fn open(&mut self) -> Result<Recorded<()>, sqlx::Error> {
        if self.tx.is_none() {
            if self.grouped {
                return Err(lost_group_transaction());
            }
            let mut tx = self.cx.pool.begin().await?;
            let check = lock_for_owner(&mut *tx, self.cx.task.id, self.cx.owner).await?;
            if check != OwnerCheck::Owned {
                return Ok(Recorded::NotOurs(check));
            }
            self.tx = Some(tx);
        }
        Ok(Recorded::Done(()))
    }

    /// Commits what the run recorded so far (nothing to do when nothing is open). A grouped run
    /// stops here instead: its group commits.
    async fn checkpoint(&mut self) -> Result<(), RunError> {
        if let Some(tx) = self.tx.take() {
            self.commit(tx).await?;
        }
        if self.grouped { Err(RunError::Checkpoint) } else { Ok(()) }
    }

    /// Writes what the run recorded into `tx` and commits it, or, in a group, leaves it open for the
    /// group's commit.
    async fn commit(&mut self, mut tx: Transaction<'static, Postgres>) -> Result<(), sqlx::Error> {
        self.write_steps(&mut tx).await?;
        if self.grouped {
            self.tx = Some(tx);
            Ok(())
        } else {
            tx.commit().await?;
            self.cx.step_events.stepped(self.cx.task.id);
            Ok(())
        }
    }

    /// Writes the steps recorded since the last write, in one statement, and the usage of their turns.
    async fn write_steps(&mut self, tx: &mut PgConnection) -> Result<(), sqlx::Error> {
        if let Some(usage) = self.usage.take() {
            add_usage(&mut *tx, self.cx.task.id, &usage).await?;
        }
        insert_steps(&mut *tx, &self.journal[self.written..]).await?;
        self.written = self.journal.len();
        Ok(())
    }

    /// Takes in a step recorded in the open transaction (written with the next batch).
    fn remember(&mut self, step: Step) {
        self.next_seq += 1;
        self.replay.apply(&step);
        self.journal.push(step);
    }

    /// The model request of the next turn; `user` is [`Run::user_turn`]'s message.
    fn request<'s>(&'s self, user: &'s Value) -> ChatRequest<'s> {
        let mut messages = Vec::with_capacity(2 + self.replay.messages.len());
        messages.push(&*SYSTEM_MESSAGE);
        messages.push(user);
        messages.extend(&self.replay.messages);
        let run = RunInput {
            sentence: &self.cx.task.input_text,
            time: TimeContext::new(self.cx.task.reference_time, self.cx.time_zone),
            answered: &self.replay.answered,
        };
        ChatRequest { model: self.model, messages, tools: self.cx.tools.definitions(), run }
    }

    /// The user's message that opens every request of the run: the sentence and when it was written.
    fn user_turn(&self) -> Value {
        json!({ "role": "user", "content": user_message(&self.cx.task.input_text, self.cx.task.reference_time, self.cx.time_zone) })
    }

    /// One model turn, retried with backoff on transient failures; each failed attempt is journaled.
    async fn request_turn(&mut self) -> Result<Recorded<Result<Turn, ProviderError>>, RunError> {
        let user = self.user_turn();
        let mut delay = Duration::from_millis(500);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started_at = Utc::now();
            let started = Instant::now();
            let request = self.request(&user);
            let result = tokio::select! {
                result = self.provider.complete(&request) => result,
                _ = self.cx.abort.cancelled() => {
                    return Ok(Recorded::Done(Err(ProviderError::Fatal { message: "the run was stopped".into() })));
                }
            };
            drop(request);
            let latency_ms = elapsed_ms(started);
            quickact_shared::metrics::model_turn(self.model, result.is_ok(), started.elapsed());
            let err = match result {
                Ok(reply) => return Ok(Recorded::Done(Ok(Turn { reply, started_at, latency_ms }))),
                Err(err) => err,
            };
            tracing::warn!(task_id = %self.cx.task.id, attempt, error = %err, "model request failed");
            let mut step = self.new_step(StepKind::ModelTurn, self.model, started_at, latency_ms, false);
            step.error = Some(err.to_string());
            if let Recorded::NotOurs(check) = self.record_now(step, None).await? {
                return Ok(Recorded::NotOurs(check));
            }
            let wait = match &err {
                ProviderError::Transient { retry_after, .. } => retry_after.unwrap_or(delay),
                ProviderError::Fatal { .. } => return Ok(Recorded::Done(Err(err))),
            };
            if attempt >= MAX_MODEL_ATTEMPTS || Instant::now() + wait >= self.cx.deadline {
                return Ok(Recorded::Done(Err(err)));
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.cx.abort.cancelled() => return Ok(Recorded::Done(Err(err))),
            }
            delay = (delay * 2).min(Duration::from_secs(8));
        }
    }

    /// The journal step of a successful turn, with its usage and cost (to add to the task's totals).
    fn turn_step(&self, turn: Turn) -> (Step, Option<Usage>) {
        let Turn { reply, started_at, latency_ms } = turn;
        let usage = reply.usage;
        let cost = self.cx.prices.cost_nanos(self.model, &reply.model, usage.input, usage.output, usage.cached);
        let mut step = self.new_step(StepKind::ModelTurn, &reply.model, started_at, latency_ms, true);
        step.result = Some(reply.to_message());
        step.input_tokens = clamp_i32(usage.input);
        step.output_tokens = clamp_i32(usage.output);
        step.cached_tokens = clamp_i32(usage.cached);
        step.cost_nanos = cost;
        // The task records the model it asked for (what the user's configuration names and prices);
        // the turn's step records the one that answered (often a dated snapshot of it).
        quickact_shared::metrics::model_usage(self.model, usage.input, usage.cached, usage.output, cost, &self.cx.task.currency);
        let usage_row = Usage {
            model: self.model.to_owned(),
            input: usage.input as i64,
            output: usage.output as i64,
            cached: usage.cached as i64,
            cost_nanos: cost,
        };
        (step, Some(usage_row))
    }

    /// Records a journal step (and a turn's usage) in the open transaction, if the task is still ours.
    async fn record(&mut self, step: Step, usage: Option<Usage>) -> Result<Recorded<()>, RunError> {
        if let Recorded::NotOurs(check) = self.open().await? {
            return Ok(Recorded::NotOurs(check));
        }
        self.count_usage(usage);
        self.remember(step);
        Ok(Recorded::Done(()))
    }

    /// Records a journal step (and a turn's usage) and commits it with whatever the run recorded
    /// before, if the task is still ours. With nothing open that is one statement (see
    /// [`record_if_owner`]); otherwise, or in a group, the open transaction takes it and commits.
    async fn record_now(&mut self, step: Step, usage: Option<Usage>) -> Result<Recorded<()>, RunError> {
        if self.tx.is_some() || self.grouped {
            let recorded = self.record(step, usage).await?;
            if let Recorded::Done(()) = recorded {
                self.checkpoint().await?;
            }
            return Ok(recorded);
        }
        self.write_now(self.cx.journal, step, usage).await
    }

    /// [`Run::record_now`] with nothing open and outside a group: one statement on `db`.
    async fn write_now(&mut self, db: impl PgExecutor<'_>, step: Step, usage: Option<Usage>) -> Result<Recorded<()>, RunError> {
        let before = (self.usage.clone(), self.model_recorded);
        self.count_usage(usage);
        let unwritten = self.unwritten_with(&step);
        let check = record_if_owner(db, self.cx.task.id, self.cx.owner, &unwritten, self.usage.as_ref()).await;
        self.settle_write(check, step, before)
    }

    /// A remote turn's [`Run::record_now`]. When no call of the turn may change items (reads,
    /// `finish`, calls refused or unknown), the turn is not written on its own: the loop runs its
    /// calls with nothing open, and the statement that writes the last of them (or the one that
    /// ends the task, for a `finish`) writes the turn with them, both or neither: one commit
    /// instead of two. The run still acts on the reply (changes items, ends the task) only once the
    /// turn is committed; what it does before is read. A crash while it reads loses the turn's
    /// record, as a crash while the turn's own statement ran would: the run asks again.
    async fn record_turn(&mut self, step: Step, usage: Option<Usage>) -> Result<Recorded<()>, RunError> {
        if self.tx.is_some() || self.grouped {
            return self.record_now(step, usage).await;
        }
        let calls = step.result.as_ref().map(tool_calls_of).unwrap_or_default();
        if calls.is_empty() || calls.iter().any(|call| self.may_write(call)) {
            return self.record_now(step, usage).await;
        }
        self.count_usage(usage);
        self.remember(step);
        Ok(Recorded::Done(()))
    }

    /// The steps not written yet, and `step`.
    fn unwritten_with(&self, step: &Step) -> Vec<Step> {
        let mut unwritten = self.journal[self.written..].to_vec();
        unwritten.push(step.clone());
        unwritten
    }

    /// Takes in the outcome of writing the unwritten steps and `step` in one statement: written, the
    /// run goes on from them; not, the run is as it was `before` (its usage to add, and whether its
    /// model is recorded).
    fn settle_write(
        &mut self,
        check: Result<OwnerCheck, sqlx::Error>,
        step: Step,
        before: (Option<Usage>, bool),
    ) -> Result<Recorded<()>, RunError> {
        let (pending_usage, model_recorded) = before;
        match check {
            Ok(OwnerCheck::Owned) => {
                self.cx.step_events.stepped(self.cx.task.id);
                self.usage = None;
                self.remember(step);
                self.written = self.journal.len();
                Ok(Recorded::Done(()))
            }
            // Nothing was written: the run is as it was.
            outcome => {
                (self.usage, self.model_recorded) = (pending_usage, model_recorded);
                Ok(Recorded::NotOurs(outcome?))
            }
        }
    }

    /// Adds a turn's usage to what the next write adds to the task's totals (a turn that cost
    /// nothing adds nothing once the task's model is recorded).
    fn count_usage(&mut self, usage: Option<Usage>) {
        if let Some(u) = usage
            && !(self.model_recorded && u.is_nothing())
        {
            self.usage = Some(match self.usage.take() {
                Some(earlier) => earlier.then(u),
                None => u,
            });
            self.model_recorded = true;
        }
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
        let mut step = self.new_step(StepKind::ToolCall, FINISH, Utc::now(), 0, false);
        step.tool_call_id = Some(call.id.clone());
        step.arguments = Some(parse_arguments_text(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone())));
        step.error = Some(format!(
            "not run: handed over to you ({model}) because {reason}; search again (other words, kind, status or dates) and act, or finish"
        ));
        step.result = Some(json!({ HANDED_OVER_TO: model, "reason": reason }));
        let recorded = self.record(step, None).await?;
        if matches!(recorded, Recorded::Done(())) {
            self.provider = provider;
            self.model = model;
        }
        Ok(recorded)
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

    /// Executes one tool call (or records it as refused, with `refusal`) and journals it in the open
    /// transaction: the tool's change and its step commit together or not at all. A successful
    /// `finish` also ends the task, and commits.
    /// `last`: the last call of its turn; `turn_changes_nothing`: no call of the turn may change the
    /// user's items (`finish` aside). A call that changes nothing runs without a transaction when
    /// it is the last of its turn, or when the whole turn changes nothing: its step is then written
    /// with the turn's last one, in one statement (or by the statement that ends the task), instead
    /// of a transaction that locks the task's row for calls that need no lock. Otherwise the turn's
    /// next calls would each commit on their own too, where one transaction commits them all.
    async fn call_tool(
        &mut self,
        call: &ToolCall,
        refusal: Option<String>,
        last: bool,
        turn_changes_nothing: bool,
    ) -> Result<Recorded<Option<RunEnd>>, RunError> {
        let arguments = parse_arguments_text(&call.arguments);
        let started_at = Utc::now();
        let started = Instant::now();
        let writes = refusal.is_none() && self.may_write(call);
        if (last || turn_changes_nothing) && !writes && self.tx.is_none() && !self.grouped {
            let ran = match refusal {
                Some(reason) => (Err(ToolError::Refused(reason)), started_at, elapsed_ms(started)),
                None => {
                    let mut conn = self.cx.pool.acquire().await?;
                    let output = self.execute_tool(&mut conn, call, &arguments, false).await?;
                    (output, started_at, elapsed_ms(started))
                }
            };
            return self.call_tool_alone(call, arguments, ran, last).await;
        }
        if let Recorded::NotOurs(check) = self.open().await? {
            return Ok(Recorded::NotOurs(check));
        }
        let mut tx = self.tx.take().expect("opened");
        let output = match refusal {
            Some(reason) => Err(ToolError::Refused(reason)),
            None => self.execute_tool(&mut tx, call, &arguments, true).await?,
        };
        let (step, verdict) = self.tool_step(call, &arguments, output, started_at, elapsed_ms(started));
        quickact_shared::metrics::tool_call(self.tool_label(call), step.ok);
        self.remember(step);
        let Some(verdict) = verdict else {
            self.tx = Some(tx);
            return Ok(Recorded::Done(None));
        };
        let end = self.end(&mut tx, Ending::Finished(verdict)).await?;
        self.commit(tx).await?;
        Ok(Recorded::Done(Some(end)))
    }

    /// [`Run::call_tool`] for a call that changes nothing (a tool that only reads or sends no
    /// statement, a refused call, an unknown tool), with nothing open: no transaction is begun for
    /// it. Its step is recorded, with the steps not written yet, in one statement when it is the
    /// last of its turn ([`Run::record_now`]), or, for a successful `finish`, by the one statement
    /// that ends the task; otherwise it waits for the turn's next call. A crash before that
    /// statement loses only calls that changed nothing, which the run asks again when it resumes.
    /// `ran`: what the call gave (run or refused), when it started and how long it took.
    async fn call_tool_alone(
        &mut self,
        call: &ToolCall,
        arguments: Result<Value, ToolError>,
        ran: (Result<ToolOutput, ToolError>, chrono::DateTime<Utc>, i32),
        last: bool,
    ) -> Result<Recorded<Option<RunEnd>>, RunError> {
        let (output, started_at, latency_ms) = ran;
        let (step, verdict) = self.tool_step(call, &arguments, output, started_at, latency_ms);
        quickact_shared::metrics::tool_call(self.tool_label(call), step.ok);
        // The tool's connection is back in its pool: a run holds one connection at a time.
        let Some(verdict) = verdict else {
            if !last {
                self.remember(step);
                return Ok(Recorded::Done(None));
            }
            return Ok(match self.write_now(self.cx.journal, step, None).await? {
                Recorded::Done(()) => Recorded::Done(None),
                Recorded::NotOurs(check) => Recorded::NotOurs(check),
            });
        };
        self.remember(step);
        Ok(Recorded::Done(Some(self.end_alone(Ending::Finished(verdict)).await?)))
    }

    /// Whether the call's tool may change the user's items (unknown tools change nothing).
    fn may_write(&self, call: &ToolCall) -> bool {
        self.cx.tools.get(&call.name).is_some_and(|tool| tool.database_use() == DatabaseUse::Writes)
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

    /// Runs the named tool on `tx`; `in_transaction`: a transaction is open there, and a tool that
    /// sends statements runs in a savepoint of it, so a failed tool leaves no partial change behind
    /// and the transaction usable. An unknown tool or malformed arguments are errors for the model;
    /// `Err` is only for a database that went away (the whole try is then retried).
    async fn execute_tool(
        &self,
        tx: &mut PgConnection,
        call: &ToolCall,
        arguments: &Result<Value, ToolError>,
        in_transaction: bool,
    ) -> Result<Result<ToolOutput, ToolError>, sqlx::Error> {
        let cx = self.cx;
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
            state: &self.replay.state,
        };
        if !in_transaction || tool.database_use() == DatabaseUse::None {
            return match tool.execute(&context, tx, arguments).await {
                Err(ToolError::Database(err)) if is_unavailable(&err) => Err(err),
                output => Ok(output),
            };
        }
        let mut savepoint = tx.begin().await?;
        match tool.execute(&context, &mut savepoint, arguments).await {
            Ok(output) => {
                savepoint.commit().await?;
                Ok(Ok(output))
            }
            Err(ToolError::Database(err)) if is_unavailable(&err) => Err(err),
            Err(err) => {
                savepoint.rollback().await?;
                Ok(Err(err))
            }
        }
    }

    /// Ends the run with a verdict that did not come from `finish` (the model failed, or never
    /// finished).
    async fn end_without_finish(&mut self, ending: Ending) -> Result<RunEnd, RunError> {
        if self.tx.is_none() && !self.grouped {
            return Ok(self.end_alone(ending).await?);
        }
        if let Recorded::NotOurs(check) = self.open().await? {
            return Ok(RunEnd::Stopped(check));
        }
        let mut tx = self.tx.take().expect("opened");
        let end = self.end(&mut tx, ending).await?;
        self.commit(tx).await?;
        Ok(end)
    }

    /// Ends the task in the open transaction `tx` (which holds its row lock), with the steps not
    /// written yet, if it is still ours (see [`end_one`]), else says whose it is now.
    async fn end(&mut self, tx: &mut PgConnection, ending: Ending) -> Result<RunEnd, sqlx::Error> {
        let ended = end_one(&mut *tx, Some(self.cx.owner), &self.final_state(ending)).await?;
        self.ended(ended, &mut *tx).await
    }

    /// [`Run::end`] with nothing open: one statement, shared with other runs' endings when the
    /// process batches them ([`Endings`]), or alone when it does not or that batch failed. The
    /// statement checks the task is still ours, and writes the last steps with the verdict.
    async fn end_alone(&mut self, ending: Ending) -> Result<RunEnd, sqlx::Error> {
        let end = self.final_state(ending);
        if let Some(endings) = self.cx.endings
            && let Some(ended) = endings.call((self.cx.owner.to_owned(), end.clone())).await.flatten()
        {
            return self.ended(ended, self.cx.journal).await;
        }
        let ended = end_one(self.cx.journal, Some(self.cx.owner), &end).await?;
        self.ended(ended, self.cx.journal).await
    }

    /// The task's final state if the run ends this way now.
    fn final_state(&self, ending: Ending) -> FinalState {
        FinalState::new(self.cx.task.id, ending, &self.journal, &self.journal[self.written..], self.usage.as_ref())
    }

    /// Takes in what ending the task gave: the task as it ended (its steps and usage are written),
    /// or, when it was no longer ours, whose it is now (asked on `db`).
    async fn ended(&mut self, ended: Option<TaskRecord>, db: impl PgExecutor<'_>) -> Result<RunEnd, sqlx::Error> {
        Ok(match ended {
            Some(task) => {
                self.usage = None;
                self.written = self.journal.len();
                RunEnd::Finished(Box::new(task))
            }
            None => RunEnd::Stopped(lock_for_owner(db, self.cx.task.id, self.cx.owner).await?),
        })
    }

    fn new_step(&self, kind: StepKind, name: &str, started_at: chrono::DateTime<Utc>, latency_ms: i32, ok: bool) -> Step {
        Step {
            task_id: self.cx.task.id,
            seq: self.next_seq,
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
            finished_at: Utc::now(),
            attempt: self.cx.attempt,
        }
    }

    /// How long to wait out a database outage: until the task's deadline, and at least a little.
    fn patience(&self) -> Duration {
        self.cx.deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(2))
    }
}

/// A grouped run found its group's transaction gone: it went with an earlier failure, which
/// already ended the run; never expected here.
fn lost_group_transaction() -> sqlx::Error {
    sqlx::Error::Protocol("a grouped run lost its group's transaction".into())
}

fn elapsed_ms(started: Instant) -> i32 {
    started.elapsed().as_millis().min(i32::MAX as u128) as i32
}

fn clamp_i32(n: u64) -> i32 {
    n.min(i32::MAX as u64) as i32
}

fn clip(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().count() > chars {
        out.push('…');
    }
    out
}
