//! `POST /api/quick-action/{id}/reply`: answer a task's question.
//!
//! A task that ended with `need_clarification` lists numbered options (or asks about a conflict, a
//! passed time); the user answers with an option (its item id or its 1-based number) and/or a short
//! sentence ("the second one", "改到明天", "add it anyway"). The answer is a task of its own,
//! submitted as `POST /api/quick-action` submits one (same checks, limits, idempotency and wait),
//! with `reply_to` naming the asked task: its run reads the question's context from that task
//! (the worker's `agent::question`).

use axum::{
    extract::{Path, State},
    http::HeaderMap,
    response::Response,
};
use chrono::{DateTime, FixedOffset};
use quickact_shared::{
    domain::task::{ResultType, TaskPriority, TaskRecord},
    store::tasks,
};
use serde::Deserialize;
use serde_json::Value;

use super::quick_action::{CreateRequest, submitted};
use crate::{
    actions::{parse_uuid_or_404, submit::submit_sentence},
    error::ApiError,
    extract::{Caller, JsonBody},
    longpoll::visible_to,
    openapi::ErrorBody,
    state::AppState,
    views::TaskView,
};

/// An answer to a task's question: an option, a sentence, or both.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"option": 2, "wait": true}))]
pub struct ReplyRequest {
    /// A short sentence answering the question ("the second one", "第二个", "改到明天",
    /// "add it anyway"), 1 to 2000 characters.
    #[serde(default)]
    text: Option<String>,
    /// One of the question's options: its item id, or its number in `result.options` (from 1).
    #[serde(default)]
    #[schema(example = 2)]
    option: Option<OptionRef>,
    /// As on `POST /api/quick-action`.
    #[serde(default)]
    timeout: Option<i64>,
    /// As on `POST /api/quick-action`: answer once the reply's verdict exists.
    #[serde(default)]
    wait: bool,
    /// As on `POST /api/quick-action`.
    #[serde(default)]
    now: Option<DateTime<FixedOffset>>,
    /// As on `POST /api/quick-action`.
    #[serde(default)]
    tz: Option<String>,
}

/// An option as a client names it: its number (from 1), or text holding its number or its item id.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum OptionRef {
    Number(i64),
    Text(String),
}

/// Answer a task's question.
///
/// The asked task must have ended with `need_clarification`. The reply runs as a new task
/// (`reply_to` names the asked one) with the question as its context: the sentence, the question,
/// its numbered options and the proposed change. An `option` is stored as `#N` in the reply's
/// `input_text` (`#N <text>` with a sentence too), N its number among the options.
#[utoipa::path(post, operation_id = "reply_to_quick_action", path = "/api/quick-action/{id}/reply", tag = "quick actions",
    request_body = ReplyRequest,
    params(("id" = Uuid, Path, description = "The task whose question this answers"),
           ("Idempotency-Key" = Option<String>, Header, description = "1 to 255 visible ASCII characters")),
    responses(
        (status = 201, description = "The reply's task (`reply_to` set): pending, or final when `wait` was asked", body = TaskView, links(
            ("GetTask" = (operation_id = "get_quick_action", parameters(("id" = "$response.body#/task_id")))),
            ("StreamTask" = (operation_id = "stream_quick_action_events", parameters(("id" = "$response.body#/task_id")))),
        )),
        (status = 404, description = "No such task (or another user's)", body = ErrorBody),
        (status = 409, description = "`task_not_finished` (the task has no verdict yet) or `not_a_question` (its verdict is not `need_clarification`)", body = ErrorBody),
        (status = 422, description = "`invalid_option` (a number out of range, an id not among the options, a question without options), or as on `POST /api/quick-action`", body = ErrorBody),
        (status = 429, description = "As on `POST /api/quick-action`", body = ErrorBody),
    ))]
pub async fn reply(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    JsonBody(request): JsonBody<ReplyRequest>,
) -> Result<Response, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let asked = tasks::find_task(&state.pool, id).await?.filter(|task| visible_to(task, &user)).ok_or(ApiError::NotFound("no such task"))?;
    let text = reply_text(&asked, request.text.as_deref(), request.option.as_ref())?;
    let sentence = CreateRequest {
        text,
        timeout: request.timeout,
        wait: request.wait,
        now: request.now,
        tz: request.tz,
        priority: TaskPriority::default(),
    };
    Ok(submitted(submit_sentence(&state, &user, sentence.into_sentence(&headers, Some(asked.id))).await?))
}

/// The reply's sentence, once the asked task is known to ask and the option is one of its own.
fn reply_text(asked: &TaskRecord, text: Option<&str>, option: Option<&OptionRef>) -> Result<String, ApiError> {
    if asked.completed_at.is_none() {
        return Err(ApiError::Conflict {
            code: "task_not_finished",
            message: format!("the task is still {}; a reply answers a task's question once it has asked it", asked.status),
        });
    }
    if asked.result_type != Some(ResultType::NeedClarification) {
        return Err(ApiError::Conflict {
            code: "not_a_question",
            message: "the task did not end with a question (need_clarification); submit a new sentence instead".into(),
        });
    }
    let text = match text {
        Some(text) if text.trim().is_empty() => return Err(ApiError::bad_request("invalid_input", "text must not be empty")),
        Some(text) => Some(text.trim()),
        None => None,
    };
    let number = match option {
        Some(option) => Some(option_number(asked, option)?),
        None => None,
    };
    match (number, text) {
        (Some(number), Some(text)) => Ok(format!("#{number} {text}")),
        (Some(number), None) => Ok(format!("#{number}")),
        (None, Some(text)) => Ok(text.to_owned()),
        (None, None) => Err(ApiError::bad_request("invalid_input", "give text, option, or both")),
    }
}

/// The option's number (from 1) among the asked task's `result.options`.
fn option_number(asked: &TaskRecord, option: &OptionRef) -> Result<usize, ApiError> {
    let options: Vec<&str> = asked
        .result
        .as_ref()
        .and_then(|result| result.get("options"))
        .and_then(Value::as_array)
        .map(|options| options.iter().filter_map(|option| option.get("id").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let invalid = |message: String| ApiError::unprocessable("invalid_option", message);
    if options.is_empty() {
        return Err(invalid("the question lists no options; answer it with text".into()));
    }
    let in_range = |number: i64| {
        usize::try_from(number)
            .ok()
            .filter(|n| (1..=options.len()).contains(n))
            .ok_or_else(|| invalid(format!("option must be between 1 and {}, got {number}", options.len())))
    };
    match option {
        OptionRef::Number(number) => in_range(*number),
        OptionRef::Text(text) => {
            let text = text.trim();
            if let Ok(number) = text.parse::<i64>() {
                return in_range(number);
            }
            options
                .iter()
                .position(|id| id.eq_ignore_ascii_case(text))
                .map(|at| at + 1)
                .ok_or_else(|| invalid(format!("{text:?} is not one of the question's options")))
        }
    }
}
