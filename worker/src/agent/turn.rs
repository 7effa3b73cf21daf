//! A model turn: the request (system prompt, the sentence, the conversation so far), the call with
//! retries inside the task's time, and how the turn is journaled.

use std::time::Duration;

use chrono::Utc;
use quickact_shared::store::{
    providers::Ticket,
    steps::{FALLBACK_TO, Step, StepKind},
    tasks::Usage,
};
use quickact_time::TimeContext;
use serde_json::{Value, json};
use tokio::time::Instant;
use tracing::{Instrument, Span};

use super::{
    journal::tool_calls_of,
    ledger::{Recorded, StepWrite},
    prompt::{SYSTEM_MESSAGE, reply_message, user_message},
    outcome::{RunError, elapsed_ms},
    state::Run,
    spans,
    tool_call::may_write,
};
use crate::provider::{
    ChatRequest, ModelReply, ProviderError, RunInput,
    gate::{Passage, SHORT_WAIT},
};

/// Most attempts at one model turn before the run gives up on the model (or, with a fallback
/// chain, goes on with the next model). Counted from the journal, so hand-backs and takeovers do
/// not start the count again.
const MAX_MODEL_ATTEMPTS: usize = 6;

/// A successful model answer and when it was asked for.
pub(super) struct Turn {
    reply: ModelReply,
    started_at: chrono::DateTime<Utc>,
    latency_ms: i32,
}

/// What one pass of a turn's loop leaves: go on with `T`, try again, or the turn's end.
enum Next<T> {
    Go(T),
    Again,
    Done(Recorded<Asked>),
}

/// How asking for a turn went.
pub(super) enum Asked {
    Answered(Turn),
    /// The model could not be used (its retries spent, or the request refused).
    Failed(ProviderError),
    /// The model cannot be asked before `wait` is over (a pause it asked for, the fleet's budget
    /// of it spent, a long backoff): the run hands its task back meanwhile (see `crate::runner`).
    Wait(Duration),
}

impl<'a> Run<'a> {
    /// One model turn, retried with backoff on transient failures; each failed attempt is journaled.
    ///
    /// Every request first passes the fleet's gate of its model (see [`crate::provider::gate`]):
    /// a wait of more than a moment ends the run's stay in this worker ([`Asked::Wait`]), unless it
    /// outlasts the task and a fallback model can take over.
    ///
    /// A wait the provider asks for (`Retry-After`) pauses the model for every worker, and is
    /// honoured, but never as less than the backoff (a `Retry-After: 0` or a `retry-after-ms: 20`
    /// would burn every attempt in a blink). Such rate limits slow a run and do not use up its
    /// retries, unless a fallback model can take over; other failures (5xx, timeouts) do. When the
    /// retries are spent, or the wait does not end before the deadline, the run goes on with the
    /// next model of the fallback chain, if any, at once; else the turn fails.
    pub(super) async fn request_turn(&mut self) -> Result<Recorded<Asked>, RunError> {
        let user = self.user_turn();
        loop {
            let ticket = if self.provider.is_local() {
                None
            } else {
                match self.pass_the_gate().await? {
                    Next::Go(ticket) => ticket,
                    Next::Again => continue,
                    Next::Done(done) => return Ok(done),
                }
            };
            let started_at = self.cx.clock.now();
            let started = Instant::now();
            let request = self.request(&user);
            let span = if self.provider.is_local() { Span::none() } else { spans::model_turn_span(self.model) };
            let result = tokio::select! {
                result = self.provider.complete(&request).instrument(span.clone()) => result,
                _ = self.cx.abort.cancelled() => {
                    return Ok(Recorded::Done(Asked::Failed(ProviderError::Fatal { message: "the run was stopped".into() })));
                }
            };
            drop(request);
            let latency_ms = elapsed_ms(started);
            quickact_shared::metrics::model_turn(self.model, result.is_ok(), started.elapsed());
            let err = match result {
                Ok(reply) => {
                    // The turn's span ends with the answer, its usage and cost on it (the same
                    // cost its step records, in `turn_step`).
                    if !span.is_disabled() {
                        let usage = reply.usage;
                        let cost = self.cx.prices.cost_nanos(self.model, &reply.model, usage.input, usage.output, usage.cached);
                        spans::record_turn(&span, &reply, cost, &self.cx.task.currency);
                    }
                    drop(span);
                    // Best effort: a budget that missed one turn's tokens only lets the next
                    // request go a little early; the turn, paid for, must not be lost over it.
                    let tokens = reply.usage.input + reply.usage.output;
                    if let Err(err) = self.cx.gate.settle(self.model, ticket, tokens).await {
                        tracing::warn!(task_id = %self.cx.task.id, error = %err, "could not debit the model's budget");
                    }
                    return Ok(Recorded::Done(Asked::Answered(Turn { reply, started_at, latency_ms })));
                }
                Err(err) => err,
            };
            spans::record_turn_failure(&span, &err);
            drop(span);
            match self.after_a_failed_attempt(err, started_at, latency_ms).await? {
                Next::Go(()) | Next::Again => continue,
                Next::Done(done) => return Ok(done),
            }
        }
    }

    /// The fleet's gate of the run's model: go (with the ticket the request is debited on), wait
    /// (the run hands its task back), or, when the wait outlasts the task, go on with the next
    /// model of the fallback chain (journaled) and try again.
    async fn pass_the_gate(&mut self) -> Result<Next<Option<Ticket>>, RunError> {
        let passage = tokio::select! {
            passage = self.cx.gate.pass(self.model, self.cx.deadline) => passage?,
            _ = self.cx.abort.cancelled() => {
                return Ok(Next::Done(Recorded::Done(Asked::Failed(ProviderError::Fatal { message: "the run was stopped".into() }))));
            }
        };
        let (wait, paused) = match passage {
            Passage::Go(ticket) => return Ok(Next::Go(ticket)),
            Passage::Wait { wait, paused } => (wait, paused),
        };
        // A wait that outlasts the task would end it as a timeout: a fallback model takes over
        // instead, if the chain has one.
        let next = self.cx.gate.next_model(self.model, &self.replay.left_models);
        let Some(next) = next.filter(|_| Instant::now() + wait >= self.cx.deadline) else {
            return Ok(Next::Done(Recorded::Done(Asked::Wait(wait))));
        };
        let mut step = self.new_step(StepKind::ModelTurn, self.model, self.cx.clock.now(), 0, false);
        let why = if paused { "is paused" } else { "has no budget left" };
        step.error = Some(format!("not asked: the model {why} for {:.1} s, past the task's deadline", wait.as_secs_f64()));
        step.result = Some(json!({ FALLBACK_TO: next }));
        self.replay.apply(&step);
        if let Recorded::NotOurs(check) = self.ledger.write_now(step, None).await? {
            return Ok(Next::Done(Recorded::NotOurs(check)));
        }
        self.fall_back_to(next).await;
        Ok(Next::Again)
    }

    /// A failed attempt, journaled: the fleet paused when the provider named a wait, then the next
    /// model of the fallback chain, a retry after a backoff, a hand-back for a long wait, or the
    /// end of the turn when the retries are spent or the deadline is too near.
    async fn after_a_failed_attempt(&mut self, err: ProviderError, started_at: chrono::DateTime<Utc>, latency_ms: i32) -> Result<Next<()>, RunError> {
        tracing::warn!(task_id = %self.cx.task.id, error = %err, "model request failed");
        let asked_to_wait = match &err {
            ProviderError::Transient { retry_after, .. } => *retry_after,
            ProviderError::Fatal { .. } => None,
        };
        if let Some(wait) = asked_to_wait
            && !self.provider.is_local()
            && let Err(db) = self.cx.gate.pause(self.model, wait).await
        {
            tracing::warn!(task_id = %self.cx.task.id, error = %db, "could not pause the model for the fleet");
        }

        let failed = self.replay.failed_in_a_row + 1;
        let backoff = Duration::from_millis(500).saturating_mul(1 << (failed - 1).min(5) as u32).min(Duration::from_secs(8));
        let wait = asked_to_wait.map_or(backoff, |asked| asked.max(backoff));
        let next_model = if err.is_transient() && !self.provider.is_local() {
            self.cx.gate.next_model(self.model, &self.replay.left_models)
        } else {
            None
        };
        let spent = match &err {
            ProviderError::Fatal { .. } => true,
            // A rate limit that named its wait slows the run; it gives up on the model only
            // for another one.
            ProviderError::Transient { .. } => failed >= MAX_MODEL_ATTEMPTS && (asked_to_wait.is_none() || next_model.is_some()),
        };
        let too_late = Instant::now() + wait >= self.cx.deadline;

        let mut step = self.new_step(StepKind::ModelTurn, self.model, started_at, latency_ms, false);
        step.error = Some(err.to_string());
        let fall_back_to = next_model.filter(|_| spent || too_late);
        if let Some(next) = fall_back_to {
            step.result = Some(json!({ FALLBACK_TO: next }));
        }
        self.replay.apply(&step);
        if let Recorded::NotOurs(check) = self.ledger.write_now(step, None).await? {
            return Ok(Next::Done(Recorded::NotOurs(check)));
        }
        if let Some(next) = fall_back_to {
            self.fall_back_to(next).await;
            return Ok(Next::Again);
        }
        if spent || too_late {
            return Ok(Next::Done(Recorded::Done(Asked::Failed(err))));
        }
        if wait > SHORT_WAIT && !self.provider.is_local() {
            return Ok(Next::Done(Recorded::Done(Asked::Wait(wait))));
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => Ok(Next::Again),
            _ = self.cx.abort.cancelled() => Ok(Next::Done(Recorded::Done(Asked::Failed(err)))),
        }
    }

    /// Goes on with `next`, the model after the run's in the fallback chain (the step that says so
    /// is journaled already).
    async fn fall_back_to(&mut self, next: &'a str) {
        tracing::warn!(task_id = %self.cx.task.id, from = %self.model, to = %next, "the model failed the run: going on with the next model");
        if let Err(db) = self.cx.gate.fell_back(self.model, next).await {
            tracing::warn!(task_id = %self.cx.task.id, error = %db, "could not count the fallback");
        }
        self.model = next;
    }

    /// Journals a successful turn. A local turn costs nothing and is kept in the open transaction,
    /// committed with what the run does next. A model's turn is paid for: it is committed before
    /// the run acts on the reply, on its own, or, when no call of the turn may change items (reads,
    /// `finish`, calls refused or unknown), held and written with the last of its calls (or by the
    /// statement that ends the task, for a `finish`), both or neither: one commit instead of two.
    /// What the run does before that commit is read; a crash meanwhile loses the turn's record, as
    /// a crash while the turn's own statement ran would, and the run asks again.
    pub(super) async fn record_turn(&mut self, turn: Turn) -> Result<Recorded<()>, RunError> {
        let (step, usage) = self.turn_step(turn);
        self.replay.apply(&step);
        let how = if self.provider.is_local() {
            StepWrite::Keep
        } else {
            let calls = step.result.as_ref().map(tool_calls_of).unwrap_or_default();
            let only_reads = !calls.is_empty() && !calls.iter().any(|call| may_write(self.cx, call));
            if self.ledger.is_open() || !only_reads { StepWrite::Now } else { StepWrite::Hold }
        };
        self.ledger.record(step, usage, how).await
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
            question: self.cx.question,
        };
        let tools = match (&self.model_tools, self.provider.is_local()) {
            (Some(tools), false) => tools.clone(),
            _ => self.cx.tools.definitions(),
        };
        ChatRequest { model: self.model, messages, tools, run }
    }

    /// The user's message that opens every request of the run: the sentence and when it was written.
    fn user_turn(&self) -> Value {
        let content = match self.cx.question {
            Some(question) => reply_message(&self.cx.task.input_text, question, self.cx.task.reference_time, self.cx.time_zone),
            None => user_message(&self.cx.task.input_text, self.cx.task.reference_time, self.cx.time_zone),
        };
        json!({ "role": "user", "content": content })
    }
}

fn clamp_i32(n: u64) -> i32 {
    n.min(i32::MAX as u64) as i32
}
