//! `/api/quick-action`: submit a sentence, read (and long-poll) a task, list one's history, cancel,
//! stream a task's steps, undo. Submitting, reading and undoing are actions ([`crate::actions`]):
//! their handlers here take the request apart and put the action's answer on the wire.

use std::time::Duration;

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use chrono::{DateTime, FixedOffset};
use quickact_shared::{
    domain::task::TaskPriority,
    store::tasks::{self, Cursor, TaskFilter},
};
use serde::Deserialize;
use uuid::Uuid;

use crate::{
    actions::{
        parse_uuid_or_404,
        submit::{Sentence, SubmittedTask, submit_sentence},
        tasks::{ReadTask, cancel_task, read_task, undo_task, visible_task},
    },
    error::ApiError,
    events::task_events,
    openapi::ErrorBody,
    extract::{Caller, JsonBody, QueryParams},
    limits::WaitKind,
    longpoll::visible_to,
    state::AppState,
    submit_span::CallerTrace,
    views::{TaskPage, TaskView, TaskWithSteps, status_url},
};

const DEFAULT_WAIT_SECS: u64 = 30;

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
    Ok(submitted(submit_sentence(&state, &user, request.into_sentence(&headers, None)).await?))
}

impl CreateRequest {
    /// The sentence a request submits: its body, with the `Idempotency-Key` and the caller's trace
    /// from its headers; `reply_to`: the task whose question it answers (see [`super::reply`]).
    pub(super) fn into_sentence(self, headers: &HeaderMap, reply_to: Option<Uuid>) -> Sentence {
        // Read lossily: a key that is not visible ASCII then holds a character that is not, and
        // the action refuses it as such.
        let idempotency_key = headers.get("idempotency-key").map(|key| String::from_utf8_lossy(key.as_bytes()).into_owned());
        Sentence {
            text: self.text,
            timeout: self.timeout,
            wait: self.wait,
            now: self.now,
            tz: self.tz,
            priority: self.priority,
            idempotency_key,
            reply_to,
            caller_trace: CallerTrace::of_headers(headers),
        }
    }
}

/// The answer to a submission: 201 with the task and its status URL in `Location`; a replay (the
/// idempotency key was seen before) answers as Stripe-style APIs replay the original response,
/// 201 with `Idempotent-Replayed: true`.
pub(super) fn submitted(submitted: SubmittedTask) -> Response {
    if !submitted.replayed {
        return created(submitted.task);
    }
    let mut response = (StatusCode::CREATED, Json(submitted.task)).into_response();
    response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}

/// 201 with a new task, its status URL in `Location`.
fn created(task: TaskView) -> Response {
    (StatusCode::CREATED, [("location", status_url(task.task_id))], Json(task)).into_response()
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
        (status = 404, description = "No such task, or another user's (an admin may act on anyone's)", body = ErrorBody),
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
            None | Some("false") | Some("0") | Some("no") => None,
            Some("true") | Some("1") | Some("yes") | Some("") => Some(Duration::from_secs(params.timeout.unwrap_or(DEFAULT_WAIT_SECS))),
            Some(other) => {
                // Whose the task is comes before what the query asks (another user's task is a 404 however asked).
                visible_task(&state, &user, id).await?;
                return Err(ApiError::bad_request("invalid_query", format!("wait must be true or false, got {other:?}")));
            }
        };
        Ok(Json(read_task(&state, &user, ReadTask { id, wait }).await?))
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
    let tasks: Vec<TaskView> = tasks::with_journals(&state.pool, listing.tasks).await?.into_iter().map(TaskView::from).collect();
    Ok(TaskPage { count: tasks.len(), total: listing.total, next_cursor: listing.next_cursor, tasks })
}

/// Cancel a pending or processing task.
#[utoipa::path(post, operation_id = "cancel_quick_action", path = "/api/quick-action/{id}/cancel", tag = "quick actions",
    params(("id" = Uuid, Path, description = "The task")),
    responses(
        (status = 200, description = "The cancelled task", body = TaskView),
        (status = 404, description = "No such task, or another user's (an admin may act on anyone's)", body = ErrorBody),
        (status = 409, description = "The task already finished (`task_finished`)", body = ErrorBody),
    ))]
pub async fn cancel(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<TaskView>, ApiError> {
    Ok(Json(cancel_task(&state, &user, parse_uuid_or_404(&id)?).await?))
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
        (status = 404, description = "No such task, or another user's (an admin may act on anyone's)", body = ErrorBody),
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
        (status = 404, description = "No such task, or another user's (an admin may act on anyone's)", body = ErrorBody),
        (status = 409, description = "`task_not_finished`, `nothing_to_undo`, `already_undone`, `changed_since` (an item changed again since) or `item_quota`", body = ErrorBody),
    ))]
pub async fn undo(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    Ok(created(undo_task(&state, &user, id).await?))
}
