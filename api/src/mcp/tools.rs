//! The MCP tools. Each one calls the action it stands for ([`crate::actions`]: submit a sentence
//! and read its task, read a task, list items, parse times) as the authenticated caller, as the
//! REST routes do: the same checks, limits (submit rate, unfinished tasks, waits per user),
//! idempotency and results, so MCP and REST cannot part. An action's result, serialised as the
//! REST route answers it, becomes the tool's structured content (and a JSON text block, for
//! clients that read only text) beside a short text; an [`ApiError`] becomes a tool error
//! (`isError`) carrying the envelope `{"error": {...}}` that `/api` answers with.

use std::{any::Any, future::Future, sync::Arc};

use axum::http::{HeaderValue, request::Parts};
use chrono::{DateTime, FixedOffset};
use quickact_shared::domain::user::User;
use rmcp::{
    ServerHandler,
    handler::server::{
        common::schema_for_input,
        router::tool::ToolRouter,
        tool::Extension,
    },
    model::{CallToolResult, ContentBlock, JsonObject},
    schemars::JsonSchema,
    tool, tool_handler, tool_router,
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::{
    actions::{
        items::{ItemFilter, list_items},
        parse_time::{TextToRead, parse_time},
        parse_uuid_or_404,
        submit::{self, Sentence, submit_sentence},
        tasks::{ReadTask, read_task},
    },
    error::ApiError,
    limits::InFlight,
    mcp::render,
    state::AppState,
};

/// Longest a `quick_action` or `get_quick_action` call waits for a verdict, in seconds: MCP
/// clients commonly give up on a tool call after about a minute.
pub const MAX_WAIT_SECS: i64 = 60;
const DEFAULT_WAIT_SECS: i64 = 30;

/// Submit a sentence and wait for its verdict.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct QuickActionArgs {
    /// One sentence about the user's schedule or to-dos, in their words, 1 to 2000 characters
    /// (e.g. "明天下午3点到4点开会", "remind me to call mom on Friday", "what's on next week?").
    pub text: String,
    /// Seconds to wait for the verdict: 1 to 60, default 30. When they pass first, the answer is
    /// the task as it is (with its task_id); `get_quick_action` waits again. The task itself may
    /// take 30 seconds, or this timeout when it is longer.
    #[serde(default)]
    pub timeout: Option<i64>,
    /// IANA time zone the sentence's dates are read in (e.g. "Asia/Shanghai"); default the
    /// user's own.
    #[serde(default)]
    pub tz: Option<String>,
    /// When the sentence was written (RFC 3339), within a few minutes of the server's clock;
    /// default now.
    #[serde(default)]
    pub now: Option<String>,
    /// Any 1 to 255 visible ASCII characters: calling again with the same key and text returns the
    /// same task instead of acting twice (for retries).
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// Read a task submitted earlier, optionally waiting for its verdict.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct GetQuickActionArgs {
    /// The task's `task_id`, as `quick_action` answered it.
    pub task_id: String,
    /// Seconds to wait for the verdict if the task is unfinished: 0 (answer at once) to 60,
    /// default 30.
    #[serde(default)]
    pub wait: Option<i64>,
}

/// The user's items (events, to-dos, reminders), by date and time.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ListItemsArgs {
    /// Only items of this kind: "event", "todo" or "reminder".
    #[serde(default)]
    pub kind: Option<String>,
    /// "open", "completed" or "all"; default both open and completed.
    #[serde(default)]
    pub status: Option<String>,
    /// First date (YYYY-MM-DD), inclusive.
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last date (YYYY-MM-DD), inclusive.
    #[serde(default)]
    pub date_to: Option<String>,
    /// Words that must appear in the title or description.
    #[serde(default)]
    pub q: Option<String>,
    /// Most items returned: 1 to 200, default 50.
    #[serde(default)]
    pub limit: Option<i64>,
}

/// Find every time expression in a text.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ParseTimeArgs {
    /// The text, up to 2000 characters.
    pub text: String,
    /// IANA time zone to read it in; default the user's own.
    #[serde(default)]
    pub tz: Option<String>,
    /// The moment to read it at (RFC 3339); default now.
    #[serde(default)]
    pub now: Option<String>,
}

/// The tools, with what they reach. One value serves every request (cloned per request by the
/// transport, and held while a call waits: hence the shared router); the caller is in each
/// request's extensions (put there by `authenticate`, in `mcp`).
#[derive(Clone)]
pub struct QuickactTools {
    state: AppState,
    tool_router: Arc<ToolRouter<Self>>,
}

impl QuickactTools {
    pub fn new(state: AppState) -> Self {
        QuickactTools { state, tool_router: Arc::new(Self::tool_router()) }
    }
}

#[tool_router]
impl QuickactTools {
    #[tool(
        description = "Do what one sentence about the user's schedule or to-dos asks (create, change, complete, delete or look up events, to-dos and reminders), and return the verdict: its `result.type` (action_completed, need_clarification or error) and `result.message`, with the items it touched. Waits up to `timeout` seconds; if the task is still unfinished then, call get_quick_action with its task_id.",
        input_schema = input_schema::<QuickActionArgs>()
    )]
    async fn quick_action(&self, Extension(parts): Extension<Parts>, arguments: JsonObject) -> CallToolResult {
        let (user, args) = match caller_and::<QuickActionArgs>(&parts, arguments) {
            Ok(found) => found,
            Err(refusal) => return refusal,
        };
        let wait = match seconds(args.timeout, DEFAULT_WAIT_SECS, 1, "timeout") {
            Ok(wait) => wait,
            Err(refusal) => return refusal,
        };
        let now = match moment(args.now.as_deref()) {
            Ok(now) => now,
            Err(refusal) => return refusal,
        };
        // The key is what `Idempotency-Key` carries on `/api`: one no header could carry is refused here.
        if args.idempotency_key.as_deref().is_some_and(|key| HeaderValue::from_str(key).is_err()) {
            return invalid_input("idempotency_key must be visible ASCII");
        }
        // The task's own time limit is `POST /api/quick-action`'s default, or the wait when that is
        // longer: a short wait does not cut the task short, it only answers before the verdict.
        let time_limit = wait.max(submit::DEFAULT_TIMEOUT_SECS);
        let sentence = Sentence { text: args.text, timeout: Some(time_limit), now, tz: args.tz, idempotency_key: args.idempotency_key, ..Sentence::default() };
        let created = match submit_sentence(&self.state, &user, sentence).await {
            Ok(submitted) => submitted.task,
            Err(refused) => return api_error_result(refused),
        };
        // The submission is done: whatever happens to the wait, the answer names the task, so the
        // assistant asks again rather than submitting twice.
        match read_task(&self.state, &user, ReadTask { id: created.task_id, wait: Some(secs(wait)) }).await {
            Ok(task) => tool_result(Ok(task), render::task),
            Err(error) => {
                let envelope = error.to_envelope();
                tracing::warn!(error = %envelope, "an MCP quick_action could not wait for its verdict; answering with the task as submitted");
                tool_result(Ok(created), render::task)
            }
        }
    }

    #[tool(
        description = "Read a task that quick_action submitted (its verdict, or its status while unfinished), waiting up to `wait` seconds for the verdict. Includes the run's steps (model turns and tool calls).",
        input_schema = input_schema::<GetQuickActionArgs>()
    )]
    async fn get_quick_action(&self, Extension(parts): Extension<Parts>, arguments: JsonObject) -> CallToolResult {
        let (user, args) = match caller_and::<GetQuickActionArgs>(&parts, arguments) {
            Ok(found) => found,
            Err(refusal) => return refusal,
        };
        let wait = match seconds(args.wait, DEFAULT_WAIT_SECS, 0, "wait") {
            Ok(wait) => wait,
            Err(refusal) => return refusal,
        };
        let read = async {
            // A wait of 0 answers at once.
            let read = ReadTask { id: parse_uuid_or_404(&args.task_id)?, wait: (wait > 0).then(|| secs(wait)) };
            read_task(&self.state, &user, read).await
        };
        tool_result(read.await, render::task)
    }

    #[tool(
        description = "List the user's items (events, to-dos, reminders) by date and time, optionally only of a kind, a status, a date range or with some words.",
        input_schema = input_schema::<ListItemsArgs>(),
        annotations(read_only_hint = true)
    )]
    async fn list_items(&self, Extension(parts): Extension<Parts>, arguments: JsonObject) -> CallToolResult {
        let (user, args) = match caller_and::<ListItemsArgs>(&parts, arguments) {
            Ok(found) => found,
            Err(refusal) => return refusal,
        };
        let filter = ItemFilter { kind: args.kind, status: args.status, date_from: args.date_from, date_to: args.date_to, q: args.q, limit: args.limit };
        tool_result(self.within_request_time(&parts, list_items(&self.state, &user, filter)).await, render::items)
    }

    #[tool(
        description = "Find every date and time expression in a text (e.g. \"明天下午3点\", \"next Friday 10am\") and what each resolves to, read in the user's time zone.",
        input_schema = input_schema::<ParseTimeArgs>(),
        annotations(read_only_hint = true)
    )]
    async fn parse_time(&self, Extension(parts): Extension<Parts>, arguments: JsonObject) -> CallToolResult {
        let (user, args) = match caller_and::<ParseTimeArgs>(&parts, arguments) {
            Ok(found) => found,
            Err(refusal) => return refusal,
        };
        let now = match moment(args.now.as_deref()) {
            Ok(now) => now,
            Err(refusal) => return refusal,
        };
        let text = TextToRead { text: args.text, now, tz: args.tz };
        tool_result(self.within_request_time(&parts, async { parse_time(&user, text) }).await, render::parsed_times)
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "quickact",
    instructions = "quickact keeps one user's schedule and to-dos. quick_action does what one sentence asks (in the user's own words, any language) and returns the verdict; list_items shows the items; parse_time reads dates and times in a text."
)]
impl ServerHandler for QuickactTools {}

impl QuickactTools {
    /// A tool that does not wait for a verdict gets the time limit and the in-flight bound `/api`
    /// requests get (`QUICKACT_REQUEST_TIMEOUT_SECS`, `QUICKACT_MAX_CONCURRENT_REQUESTS`): `/mcp`
    /// requests, which may wait a minute, are timed by the long-poll bound instead and hold no
    /// slot until they turn out not to wait (see `crate::limits`).
    async fn within_request_time<T>(&self, parts: &Parts, call: impl Future<Output = Result<T, ApiError>>) -> Result<T, ApiError> {
        let _slot = parts.extensions.get::<InFlight>().map(InFlight::take).transpose()?;
        match tokio::time::timeout(self.state.config.http.request_timeout, call).await {
            Ok(answer) => answer,
            Err(_) => {
                tracing::warn!(timeout_secs = self.state.config.http.request_timeout.as_secs(), "MCP tool call timed out");
                Err(ApiError::Overloaded("the request took too long"))
            }
        }
    }
}

/// A tool's input schema (the arguments' JSON Schema, from their doc comments).
fn input_schema<T: JsonSchema + Any>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|error| panic!("the input schema of {} is valid: {error}", std::any::type_name::<T>()))
}

/// The authenticated caller and the tool's arguments; bad arguments are a tool error naming what
/// is wrong (not a protocol error, so the assistant reads it and can correct its call).
fn caller_and<T: DeserializeOwned>(parts: &Parts, arguments: JsonObject) -> Result<(User, T), CallToolResult> {
    let user = parts.extensions.get::<User>().cloned().ok_or_else(|| {
        // `authenticate` runs before every request reaches the transport.
        tracing::error!("an MCP request reached the tools without an authenticated caller");
        api_error_result(ApiError::Unauthorized)
    })?;
    let args = serde_json::from_value(Value::Object(arguments)).map_err(|error| invalid_input(&format!("invalid arguments: {error}")))?;
    Ok((user, args))
}

/// A number of seconds between `min` and [`MAX_WAIT_SECS`], `default` when absent.
fn seconds(value: Option<i64>, default: i64, min: i64, name: &str) -> Result<i64, CallToolResult> {
    let value = value.unwrap_or(default);
    if (min..=MAX_WAIT_SECS).contains(&value) {
        Ok(value)
    } else {
        Err(invalid_input(&format!("{name} must be between {min} and {MAX_WAIT_SECS} seconds, got {value}")))
    }
}

/// Seconds checked by [`seconds`] as a duration.
fn secs(seconds: i64) -> std::time::Duration {
    std::time::Duration::from_secs(seconds.unsigned_abs())
}

/// The moment a `now` argument names; one that is not RFC 3339 is refused with a message that
/// says so.
fn moment(now: Option<&str>) -> Result<Option<DateTime<FixedOffset>>, CallToolResult> {
    let Some(now) = now else { return Ok(None) };
    DateTime::parse_from_rfc3339(now)
        .map(Some)
        .map_err(|_| invalid_input(&format!("now must be an RFC 3339 moment (e.g. 2026-02-07T09:00:00+08:00), got {now:?}")))
}

fn invalid_input(message: &str) -> CallToolResult {
    api_error_result(ApiError::bad_request("invalid_input", message))
}

/// The tool's answer for an action's: its result as the REST route answers it (structured
/// content, and a JSON text block for clients that read only text) after `text`'s rendering of
/// it; or a tool error with the error envelope.
fn tool_result<T: Serialize>(answer: Result<T, ApiError>, text: fn(&Value) -> String) -> CallToolResult {
    let json = answer.and_then(|value| serde_json::to_value(value).map_err(|error| ApiError::Internal(Box::new(error))));
    match json {
        Ok(json) => {
            let rendered = text(&json);
            let mut result = CallToolResult::structured(json);
            result.content.insert(0, ContentBlock::text(rendered));
            result
        }
        Err(error) => api_error_result(error),
    }
}

/// A tool error carrying the envelope `/api` answers `error` with, `{"error": {"code", "message"}}`,
/// its message first as text.
fn api_error_result(error: ApiError) -> CallToolResult {
    let envelope = error.to_envelope();
    let mut result = CallToolResult::structured_error(envelope.clone());
    result.content.insert(0, ContentBlock::text(render::error(&envelope)));
    result
}
