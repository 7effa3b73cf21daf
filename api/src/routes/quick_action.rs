//! `/api/quick-action`: submit a sentence, read (and long-poll) a task, list one's history, cancel.

use std::time::Duration;

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use chrono::{DateTime, FixedOffset, Utc};
use quickact_shared::{
    domain::{task::{ResultType, TaskPriority, TaskRecord}, user::User},
    telemetry::traces,
    phrases::Language,
    planner::undo::{UndoOutcome, undo_task},
    store::{
        ending::{CancelOutcome, cancel_task},
        tasks::{self, Cursor, TaskFilter},
    },
};
use serde::Deserialize;
use tracing::{Instrument, Span};
use uuid::Uuid;

use crate::{
    error::ApiError,
    events::task_events,
    openapi::ErrorBody,
    extract::{Caller, JsonBody, QueryParams},
    limits::{WaitKind, check_text_length},
    longpoll::{visible_to, wait_from, wait_until_final},
    routes::{parse_time_zone, parse_uuid_or_404},
    state::AppState,
    submit::{Submission, Submitted, submit},
    submit_span,
    views::{TaskPage, TaskView, TaskWithSteps, status_url},
};

const DEFAULT_TIMEOUT_SECS: i64 = 30;
const MAX_TIMEOUT_SECS: i64 = 120;
const DEFAULT_WAIT_SECS: u64 = 30;
const MAX_WAIT_SECS: u64 = 60;
const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// A sentence to execute.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"text": "明天下午3点到4点开会", "timeout": 30, "wait": false}))]
pub struct CreateRequest {
    /// The sentence, 1 to 2000 characters.
    pub(super) text: String,
    /// Seconds the task may take from submission, 1 to 120 (default 30).
    #[serde(default)]
    pub(super) timeout: Option<i64>,
    /// Answer only once the verdict exists (or the timeout passes).
    #[serde(default)]
    pub(super) wait: bool,
    /// When the user wrote the sentence (RFC 3339), within a few minutes of the server's clock;
    /// default the server's clock.
    #[serde(default)]
    pub(super) now: Option<DateTime<FixedOffset>>,
    /// IANA zone overriding the user's own.
    #[serde(default)]
    pub(super) tz: Option<String>,
    /// `interactive` (the default: someone waits for the answer) or `batch` (scripts, imports):
    /// batch tasks are served after interactive ones, until they have waited
    /// `QUICKACT_BATCH_AGING_SECS`.
    #[serde(default)]
    pub(super) priority: TaskPriority,
}

/// Submit a sentence.
///
/// Stores it as a task and queues it for a worker. The same `Idempotency-Key` from the same user
/// returns the same task (with `Idempotent-Replayed: true`).
#[utoipa::path(post, operation_id = "submit_quick_action", path = "/api/quick-action", tag = "quick actions", request_body = CreateRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1 to 255 visible ASCII characters")),
    responses(
        (status = 201, description = "The task: pending, or final when `wait` was asked", body = TaskView, links(
            ("GetTask" = (operation_id = "get_quick_action", parameters(("id" = "$response.body#/task_id")))),
            ("StreamTask" = (operation_id = "stream_quick_action_events", parameters(("id" = "$response.body#/task_id")))),
            ("CancelTask" = (operation_id = "cancel_quick_action", parameters(("id" = "$response.body#/task_id")))),
            ("UndoTask" = (operation_id = "undo_quick_action", parameters(("id" = "$response.body#/task_id")))),
        )),
        (status = 422, description = "A timeout out of range, an unknown zone, a `now` far from the server's clock, a reused idempotency key", body = ErrorBody),
        (status = 429, description = "Too many unfinished tasks or submissions per minute; see `Retry-After`", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    Caller(user): Caller,
    headers: HeaderMap,
    JsonBody(request): JsonBody<CreateRequest>,
) -> Result<Response, ApiError> {
    accept_traced(state, user, headers, request, None).await
}

/// [`accept`] in the submit span, whose `traceparent` is stored with the task: how a sentence and a
/// reply (`reply_to`, see [`super::reply`]) are taken in.
pub(super) async fn accept_traced(
    state: AppState,
    user: User,
    headers: HeaderMap,
    request: CreateRequest,
    reply_to: Option<Uuid>,
) -> Result<Response, ApiError> {
    let span = submit_span::submit_span(&headers);
    let trace_parent = traces::trace_parent_of(&span);
    let answer = accept(state, user, headers, request, reply_to, trace_parent).instrument(span.clone()).await;
    submit_span::record_answer(&span, &answer);
    answer
}

/// [`create`] in its span; `trace_parent`: the span's, stored with the task. `reply_to`: the task
/// whose question the sentence answers (see [`super::reply`]).
async fn accept(
    state: AppState,
    user: User,
    headers: HeaderMap,
    request: CreateRequest,
    reply_to: Option<Uuid>,
    trace_parent: Option<String>,
) -> Result<Response, ApiError> {
    Span::current().record("user_id", tracing::field::display(user.id));
    let text = request.text.trim();
    if text.is_empty() {
        return Err(ApiError::bad_request("invalid_input", "text must not be empty"));
    }
    check_text_length(text)?;
    let timeout = request.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(1..=MAX_TIMEOUT_SECS).contains(&timeout) {
        return Err(ApiError::unprocessable(
            "invalid_timeout",
            format!("timeout must be between 1 and {MAX_TIMEOUT_SECS} seconds, got {timeout}"),
        ));
    }
    let time_zone = match &request.tz {
        Some(tz) => parse_time_zone(tz)?.name().to_owned(),
        None => user.time_zone.clone(),
    };
    let idempotency_key = idempotency_key(&headers)?;
    let reference_time = reference_time(request.now, state.config.reference_time_window)?;

    if let Some(key) = idempotency_key
        && let Some(existing) = tasks::find_by_idempotency_key(&state.pool, user.id, key).await? {
            return replay(existing, text, reply_to);
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
        priority: request.priority,
        trace_parent,
        reply_to,
    };
    // A waiting client hears every change after the commit: it subscribes before.
    let subscription = request.wait.then(|| state.notifications.subscribe_task(submission.id));
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
            return replay(existing.ok_or(ApiError::NotFound("no such task"))?, text, reply_to);
        }
    };
    quickact_shared::metrics::task_submitted();
    Span::current().record("task_id", tracing::field::display(task.id));
    tracing::info!(task_id = %task.id, user_id = %user.id, "quick action accepted");

    let task = match subscription {
        Some(subscription) => wait_from(&state, &user, subscription, Duration::from_secs(timeout as u64), Some(task)).await?.task,
        None => task,
    };
    Ok((StatusCode::CREATED, [("location", status_url(task.id))], Json(TaskView::from(task))).into_response())
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

/// The answer to a request whose idempotency key was seen before: the same task, as Stripe-style
/// APIs replay the original response (same status, plus a header saying it is a replay).
fn replay(existing: TaskRecord, text: &str, reply_to: Option<Uuid>) -> Result<Response, ApiError> {
    if existing.input_text != text || existing.reply_to != reply_to {
        return Err(ApiError::unprocessable(
            "idempotency_key_reused",
            "this Idempotency-Key was already used with a different text (or reply)",
        ));
    }
    let mut response = (StatusCode::CREATED, Json(TaskView::from(existing))).into_response();
    response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    Ok(response)
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else { return Ok(None) };
    let key = value
        .to_str()
        .map_err(|_| ApiError::bad_request("invalid_idempotency_key", "Idempotency-Key must be visible ASCII"))?
        .trim();
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_LEN {
        return Err(ApiError::bad_request(
            "invalid_idempotency_key",
            format!("Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_LEN} characters"),
        ));
    }
    Ok(Some(key))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GetParams {
    /// `true` holds the request until the task is final or `timeout` passes.
    #[serde(default)]
    wait: Option<String>,
    /// Seconds to wait, default 30, at most 60.
    #[serde(default)]
    timeout: Option<u64>,
}

/// Read a task, optionally long-polling for its verdict.
#[utoipa::path(get, operation_id = "get_quick_action", path = "/api/quick-action/{id}", tag = "quick actions",
    params(("id" = Uuid, Path, description = "The task"), GetParams),
    responses(
        (status = 200, description = "The task with its journal", body = TaskWithSteps),
        (status = 404, description = "No such task (or another user's)", body = ErrorBody),
        (status = 429, description = "Too many long-polls open", body = ErrorBody),
    ))]
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
pub fn get(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    QueryParams(params): QueryParams<GetParams>,
) -> impl Future<Output = Result<Json<TaskWithSteps>, ApiError>> {
    // An `async move` block, not an `async fn` (whose future holds its arguments twice): a
    // long-poll holds this future for its whole wait.
    async move {
        let id = parse_uuid_or_404(&id)?;
        let wait = match params.wait.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("false") | Some("0") | Some("no") => Ok(false),
            Some("true") | Some("1") | Some("yes") | Some("") => Ok(true),
            Some(other) => Err(ApiError::bad_request("invalid_query", format!("wait must be true or false, got {other:?}"))),
        };
        let read = if let Ok(true) = wait {
            let seconds = params.timeout.unwrap_or(DEFAULT_WAIT_SECS).min(MAX_WAIT_SECS);
            wait_until_final(&state, &user, id, Duration::from_secs(seconds)).await?
        } else {
            // Whose the task is comes before what the query asks (another user's task is a 404 however asked).
            let read = state.reads.task(id).await?.filter(|read| visible_to(&read.task, &user)).ok_or(ApiError::NotFound("no such task"))?;
            wait?;
            read
        };
        let (task, journal) = state.reads.journal(read).await?;
        // Only a question can have replies: other tasks pay no read for them.
        let replies = match task.result_type {
            Some(ResultType::NeedClarification) => tasks::reply_ids(&state.pool, task.id).await?,
            _ => Vec::new(),
        };
        Ok(Json(TaskWithSteps { task: task.into(), steps: journal.into_iter().map(Into::into).collect(), replies }))
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Page size, default 20, at most 100.
    #[serde(default)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    cursor: Option<String>,
}

/// The caller's own tasks, newest first.
#[utoipa::path(get, operation_id = "list_quick_actions", path = "/api/quick-action", tag = "quick actions", params(ListParams),
    responses((status = 200, description = "One page of tasks", body = TaskPage)))]
pub async fn list(
    State(state): State<AppState>,
    Caller(user): Caller,
    QueryParams(params): QueryParams<ListParams>,
) -> Result<Json<TaskPage>, ApiError> {
    let filter = TaskFilter { user_id: Some(user.id), ..TaskFilter::default() };
    list_page(&state, &filter, params.limit, params.cursor.as_deref()).await.map(Json)
}

/// One page of a listing, `{tasks, count, total, next_cursor}`.
pub async fn list_page(
    state: &AppState,
    filter: &TaskFilter,
    limit: Option<i64>,
    cursor: Option<&str>,
) -> Result<TaskPage, ApiError> {
    let limit = limit.unwrap_or(20);
    if limit < 1 {
        return Err(ApiError::bad_request("invalid_query", "limit must be at least 1"));
    }
    let limit = limit.min(100);
    let cursor = match cursor.filter(|c| !c.is_empty()) {
        Some(text) => Some(Cursor::decode(text).ok_or_else(|| ApiError::bad_request("invalid_cursor", "cursor is not valid"))?),
        None => None,
    };
    let listing = tasks::page_of_tasks(&state.pool, filter, cursor, limit).await?;
    let tasks: Vec<TaskView> = listing.tasks.into_iter().map(TaskView::from).collect();
    Ok(TaskPage { count: tasks.len(), total: listing.total, next_cursor: listing.next_cursor, tasks })
}

/// Cancel a pending or processing task.
#[utoipa::path(post, operation_id = "cancel_quick_action", path = "/api/quick-action/{id}/cancel", tag = "quick actions",
    params(("id" = Uuid, Path, description = "The task")),
    responses(
        (status = 200, description = "The cancelled task", body = TaskView),
        (status = 404, description = "No such task (or another user's)", body = ErrorBody),
        (status = 409, description = "The task already finished (`task_finished`)", body = ErrorBody),
    ))]
pub async fn cancel(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<TaskView>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    match cancel_task(&state.pool, id, user.id).await? {
        CancelOutcome::Cancelled(task) => {
            quickact_shared::metrics::task_finished(&task);
            tracing::info!(task_id = %id, "quick action cancelled");
            Ok(Json(task.into()))
        }
        CancelOutcome::AlreadyFinal(task) => Err(ApiError::Conflict {
            code: "task_finished",
            message: format!("the task already finished with status {}", task.status),
        }),
        CancelOutcome::NotFound => Err(ApiError::NotFound("no such task")),
    }
}

/// Stream a task's steps live (Server-Sent Events).
///
/// Events: `status` (`{status, attempts, started_at}`, while unfinished, no id), `step` (a journal
/// step as in `GET /api/quick-action/{id}`, event id = its `seq`), then `verdict` (the task) and the
/// stream ends. `Last-Event-ID: <seq>` resumes after that step.
#[utoipa::path(get, operation_id = "stream_quick_action_events", path = "/api/quick-action/{id}/events", tag = "quick actions",
    params(("id" = Uuid, Path, description = "The task"),
           ("Last-Event-ID" = Option<i32>, Header, minimum = -1, maximum = 2147483647, description = "Resume after this step")),
    responses(
        (status = 200, description = "An event stream: `status`, `step`..., `verdict`", content_type = "text/event-stream", body = crate::openapi::TaskEventDoc),
        (status = 404, description = "No such task (or another user's)", body = ErrorBody),
        (status = 429, description = "Too many long-polls and streams open", body = ErrorBody),
    ))]
pub async fn events(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let after = match headers.get("last-event-id") {
        None => -1,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok())
            .filter(|seq| *seq >= -1)
            .ok_or_else(|| ApiError::bad_request("invalid_last_event_id", "Last-Event-ID must be a step's seq (a whole number)"))?,
    };
    match tasks::find_task(&state.pool, id).await? {
        Some(task) if visible_to(&task, &user) => {}
        _ => return Err(ApiError::NotFound("no such task")),
    }
    let slot = state.long_polls.take(user.id, state.config.http.max_long_polls_per_user, WaitKind::EventStream)?;
    Ok(task_events(state, id, after, slot).into_response())
}

/// Undo the item changes a task made.
///
/// Created items are deleted, changed ones get their previous values, completed ones are open
/// again, deleted ones come back. The undo is itself a task (`undoes` names the task it reverted).
#[utoipa::path(post, operation_id = "undo_quick_action", path = "/api/quick-action/{id}/undo", tag = "quick actions",
    params(("id" = Uuid, Path, description = "The task to undo")),
    responses(
        (status = 201, description = "The undo task, finished", body = TaskView),
        (status = 404, description = "No such task (or another user's)", body = ErrorBody),
        (status = 409, description = "`task_not_finished`, `nothing_to_undo`, `already_undone`, `changed_since` (an item changed again since) or `item_quota`", body = ErrorBody),
    ))]
pub async fn undo(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let conflict = |code, message: String| Err(ApiError::Conflict { code, message });
    match undo_task(&state.pool, id, &user, state.config.planner.max_items_per_user).await? {
        UndoOutcome::Undone(task) => {
            quickact_shared::metrics::task_submitted();
            quickact_shared::metrics::task_finished(&task);
            tracing::info!(task_id = %task.id, undoes = %id, "quick action undone");
            Ok((StatusCode::CREATED, [("location", status_url(task.id))], Json(TaskView::from(*task))).into_response())
        }
        UndoOutcome::NotFound => Err(ApiError::NotFound("no such task")),
        refused => {
            // The refusal is read by the person who wrote the sentence: in its language.
            let sentence = tasks::find_task(&state.pool, id).await?.map(|task| task.input_text).unwrap_or_default();
            let (code, message) = refused.refusal(Language::of(&sentence)).expect("a refused undo");
            conflict(code, message)
        }
    }
}
