//! Submitting a sentence (`POST /api/quick-action`, a reply to a question, MCP's `quick_action`):
//! the checks (text, time limit, zone, moment, idempotency key), the submit rate, the cap of
//! unfinished tasks, idempotency, and the wait for the verdict when it is asked for.

use std::time::Duration;

use chrono::{DateTime, FixedOffset, Utc};
use quickact_shared::{
    domain::{task::{TaskPriority, TaskRecord}, user::User},
    store::tasks,
    telemetry::traces,
};
use tracing::{Instrument, Span};
use uuid::Uuid;

use crate::{
    actions::parse_time_zone,
    error::ApiError,
    limits::check_text_length,
    longpoll::wait_from,
    state::AppState,
    submit::{Submission, Submitted, submit},
    submit_span::{CallerTrace, record_answer, submit_span},
    views::TaskView,
};

/// A task's time limit when the sentence names none, in seconds.
pub const DEFAULT_TIMEOUT_SECS: i64 = 30;
const MAX_TIMEOUT_SECS: i64 = 120;
const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// A sentence to execute, and how.
#[derive(Debug, Default)]
pub struct Sentence {
    /// The sentence, 1 to 2000 characters once trimmed.
    pub text: String,
    /// Seconds the task may take from submission, 1 to 120 (default [`DEFAULT_TIMEOUT_SECS`]).
    pub timeout: Option<i64>,
    /// Answer only once the verdict exists (or the timeout passes).
    pub wait: bool,
    /// When the user wrote the sentence, within a few minutes of the server's clock; default the
    /// server's clock.
    pub now: Option<DateTime<FixedOffset>>,
    /// IANA zone overriding the user's own.
    pub tz: Option<String>,
    pub priority: TaskPriority,
    /// 1 to 255 visible ASCII characters: the same key from the same user answers with the same
    /// task instead of acting twice.
    pub idempotency_key: Option<String>,
    /// The task whose question the sentence answers (a reply).
    pub reply_to: Option<Uuid>,
    /// The caller's trace, which the submission's span continues.
    pub caller_trace: CallerTrace,
}

/// The task a sentence is.
#[derive(Debug)]
pub struct SubmittedTask {
    /// Pending, or final when the sentence asked to wait and the verdict came in time.
    pub task: TaskView,
    /// The idempotency key was used before: `task` is the one it submitted then, as it is now.
    pub replayed: bool,
}

/// Submits `sentence` as `user`'s task, in the submit span (whose `traceparent` is stored with the
/// task). 400 for an empty text or a malformed idempotency key, 413 for a text too long, 422 for a
/// timeout out of range, an unknown zone, a `now` far from the server's clock or a key used before
/// with another text, 429 past the submit rate or the cap of unfinished tasks.
pub async fn submit_sentence(state: &AppState, user: &User, sentence: Sentence) -> Result<SubmittedTask, ApiError> {
    let span = submit_span(&sentence.caller_trace);
    let trace_parent = traces::trace_parent_of(&span);
    let answer = accept(state, user, sentence, trace_parent).instrument(span.clone()).await;
    record_answer(&span, &answer);
    answer
}

/// [`submit_sentence`] in its span; `trace_parent`: the span's, stored with the task.
async fn accept(state: &AppState, user: &User, sentence: Sentence, trace_parent: Option<String>) -> Result<SubmittedTask, ApiError> {
    Span::current().record("user_id", tracing::field::display(user.id));
    let text = sentence.text.trim();
    if text.is_empty() {
        return Err(ApiError::bad_request("invalid_input", "text must not be empty"));
    }
    check_text_length(text)?;
    let timeout = sentence.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(1..=MAX_TIMEOUT_SECS).contains(&timeout) {
        return Err(ApiError::unprocessable(
            "invalid_timeout",
            format!("timeout must be between 1 and {MAX_TIMEOUT_SECS} seconds, got {timeout}"),
        ));
    }
    let time_zone = match &sentence.tz {
        Some(tz) => parse_time_zone(tz)?.name().to_owned(),
        None => user.time_zone.clone(),
    };
    let idempotency_key = sentence.idempotency_key.as_deref().map(checked_idempotency_key).transpose()?;
    let reference_time = reference_time(sentence.now, state.config.reference_time_window)?;
    let reply_to = sentence.reply_to;

    if let Some(key) = idempotency_key
        && let Some(existing) = tasks::find_by_idempotency_key(&state.pool, user.id, key).await? {
            return replay(state, existing, text, reply_to).await;
        }
    state.submit_rate.take(&state.pool, user.id).await?;
    // The row (the queue's job) and its room under the user's cap commit together (see `crate::submit`).
    let submission = Submission {
        id: Uuid::now_v7(),
        user_id: user.id,
        input_text: text.to_owned(),
        timeout_seconds: timeout as i32,
        idempotency_key: idempotency_key.map(str::to_owned),
        reference_time,
        time_zone,
        currency: state.config.model.currency.clone(),
        cap: state.config.max_active_tasks_per_user,
        priority: sentence.priority,
        trace_parent,
        reply_to,
    };
    // A waiting client hears every change after the commit: it subscribes before.
    let subscription = sentence.wait.then(|| state.notifications.subscribe_task(submission.id));
    let task = match submit(&state.submissions, &state.pool, &state.notifications, submission).await? {
        Submitted::Created(task) => *task,
        Submitted::AtCap => {
            let active = tasks::count_active(&state.pool, user.id).await?;
            return Err(ApiError::TooManyRequests {
                message: format!("you already have {active} unfinished tasks; wait for some to finish"),
                retry_after_secs: 5,
            });
        }
        Submitted::KeyTaken => {
            // A concurrent request with the same key won the race: answer with its task.
            let key = idempotency_key.unwrap_or_default();
            let existing = tasks::find_by_idempotency_key(&state.pool, user.id, key).await?;
            return replay(state, existing.ok_or(ApiError::NotFound("no such task"))?, text, reply_to).await;
        }
    };
    quickact_shared::metrics::task_submitted();
    Span::current().record("task_id", tracing::field::display(task.id));
    tracing::info!(task_id = %task.id, user_id = %user.id, "quick action accepted");

    let task = match subscription {
        Some(subscription) => TaskView::from(wait_from(state, user, subscription, Duration::from_secs(timeout as u64), Some(task)).await?),
        None => TaskView::new(task, &[]),
    };
    Ok(SubmittedTask { task, replayed: false })
}

/// The moment the sentence was written: the client's `now` when it is within `window` of the
/// server's clock (422 otherwise: a client must not backdate a sentence past the passed-time rule),
/// else the server's clock.
fn reference_time(now: Option<DateTime<FixedOffset>>, window: Duration) -> Result<DateTime<Utc>, ApiError> {
    let server = Utc::now();
    let Some(now) = now.map(|now| now.with_timezone(&Utc)) else { return Ok(server) };
    let off_by = (now - server).abs().to_std().unwrap_or(Duration::MAX);
    if off_by > window {
        return Err(ApiError::unprocessable(
            "invalid_now",
            format!("now must be within {} seconds of the server's clock ({}), got {}", window.as_secs(), server.to_rfc3339(), now.to_rfc3339()),
        ));
    }
    Ok(now)
}

/// The answer to a sentence whose idempotency key was seen before: the same task, as Stripe-style
/// APIs replay the original response.
async fn replay(state: &AppState, existing: TaskRecord, text: &str, reply_to: Option<Uuid>) -> Result<SubmittedTask, ApiError> {
    if existing.input_text != text || existing.reply_to != reply_to {
        return Err(ApiError::unprocessable(
            "idempotency_key_reused",
            "this Idempotency-Key was already used with a different text (or reply)",
        ));
    }
    // A final task's verdict lists its run from the journal; an unfinished one has no verdict yet.
    let read = tasks::with_journals(&state.pool, vec![existing]).await?.pop().expect("one task in, one out");
    Ok(SubmittedTask { task: TaskView::from(read), replayed: true })
}

/// The key, trimmed, when it is visible ASCII (as an HTTP header's value may be read as text) of
/// 1 to 255 characters; 400 otherwise.
fn checked_idempotency_key(key: &str) -> Result<&str, ApiError> {
    if !key.bytes().all(|byte| byte == b'\t' || (b' '..=b'~').contains(&byte)) {
        return Err(ApiError::bad_request("invalid_idempotency_key", "Idempotency-Key must be visible ASCII"));
    }
    let key = key.trim();
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_LEN {
        return Err(ApiError::bad_request(
            "invalid_idempotency_key",
            format!("Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_LEN} characters"),
        ));
    }
    Ok(key)
}
