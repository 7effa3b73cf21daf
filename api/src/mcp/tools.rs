//! The MCP tools. Each one calls the REST handler it stands for (`POST /api/quick-action`,
//! `GET /api/quick-action/{id}`, `GET /api/items`, `POST /api/parse-time`) in process, as the
//! authenticated caller: the same checks, limits (submit rate, unfinished tasks, waits per user),
//! idempotency and JSON, so MCP and REST cannot part. A handler's answer becomes the tool's
//! structured content (and a JSON text block, for clients that read only text) beside a short
//! text; its error envelope becomes a tool error (`isError`) carrying the same `{"error": {...}}`.

use std::{any::Any, future::Future, sync::Arc};

use axum::{
    body::to_bytes,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, request::Parts},
    response::{IntoResponse, Response},
};
use chrono::DateTime;
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
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use crate::{
    error::ApiError,
    extract::{Caller, JsonBody, QueryParams},
    limits::InFlight,
    mcp::render,
    routes::{items, parse_time, quick_action},
    state::AppState,
};

/// Longest a `quick_action` or `get_quick_action` call waits for a verdict, in seconds: MCP
/// clients commonly give up on a tool call after about a minute.
pub const MAX_WAIT_SECS: i64 = 60;
const DEFAULT_WAIT_SECS: i64 = 30;
/// A task's time limit when the wait is shorter: `POST /api/quick-action`'s default.
const DEFAULT_TASK_TIMEOUT_SECS: i64 = 30;
/// Largest handler answer read back (a listing of 200 items is well under it).
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

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
        if let Some(refusal) = check_moment(args.now.as_deref()) {
            return refusal;
        }
        let mut headers = HeaderMap::new();
        if let Some(key) = &args.idempotency_key {
            match HeaderValue::from_str(key) {
                Ok(value) => headers.insert("idempotency-key", value),
                Err(_) => return invalid_input("idempotency_key must be visible ASCII"),
            };
        }
        // The task's own time limit is `POST /api/quick-action`'s default, or the wait when that is
        // longer: a short wait does not cut the task short, it only answers before the verdict.
        let time_limit = wait.max(DEFAULT_TASK_TIMEOUT_SECS);
        let body = json!({ "text": args.text, "timeout": time_limit, "tz": args.tz, "now": args.now });
        let request = match from_json::<quick_action::CreateRequest>(body) {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let created = quick_action::create(State(self.state.clone()), Caller(user.clone()), headers, JsonBody(request));
        let created = match read_answer(created.await.into_response()).await {
            Ok(task) => task,
            Err(envelope) => return error_result(&envelope),
        };
        let Some(task_id) = created["task_id"].as_str().map(str::to_owned) else {
            tracing::error!("POST /api/quick-action answered without a task_id");
            return internal_error();
        };
        // The submission is done: whatever happens to the wait, the answer names the task, so the
        // assistant asks again rather than submitting twice.
        let task = match self.wait_for_verdict(user, task_id, wait).await {
            Ok(task) => task,
            Err(envelope) => {
                tracing::warn!(error = %envelope, "an MCP quick_action could not wait for its verdict; answering with the task as submitted");
                created
            }
        };
        success_result(task, render::task)
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
        match self.wait_for_verdict(user, args.task_id, wait).await {
            Ok(task) => success_result(task, render::task),
            Err(envelope) => error_result(&envelope),
        }
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
        // The query string's shape: every value a string but the limit.
        let query = json!({
            "kind": args.kind, "status": args.status, "date_from": args.date_from,
            "date_to": args.date_to, "q": args.q, "limit": args.limit,
        });
        let params = match from_json::<items::ListParams>(query) {
            Ok(params) => params,
            Err(refusal) => return refusal,
        };
        let listing = items::list(State(self.state.clone()), Caller(user), QueryParams(params));
        tool_result(read_answer(self.within_request_time(&parts, listing).await).await, render::items)
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
        if let Some(refusal) = check_moment(args.now.as_deref()) {
            return refusal;
        }
        let request = match from_json::<parse_time::ParseTimeRequest>(json!({ "text": args.text, "tz": args.tz, "now": args.now })) {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let parsed = parse_time::parse_time(State(self.state.clone()), Caller(user), JsonBody(request));
        tool_result(read_answer(self.within_request_time(&parts, parsed).await).await, render::parsed_times)
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "quickact",
    instructions = "quickact keeps one user's schedule and to-dos. quick_action does what one sentence asks (in the user's own words, any language) and returns the verdict; list_items shows the items; parse_time reads dates and times in a text."
)]
impl ServerHandler for QuickactTools {}

impl QuickactTools {
    /// Task `task_id` with its journal as `GET /api/quick-action/{id}?wait=true&timeout=<wait>`
    /// answers it (at once when `wait` is 0); the error envelope when that fails.
    async fn wait_for_verdict(&self, user: User, task_id: String, wait: i64) -> Result<Value, Value> {
        let params = from_json::<quick_action::GetParams>(json!({ "wait": (wait > 0).to_string(), "timeout": wait }))
            .expect("the query of a wait reads");
        read_answer(quick_action::get(State(self.state.clone()), Caller(user), Path(task_id), QueryParams(params)).await.into_response()).await
    }

    /// A tool that does not wait for a verdict gets the time limit and the in-flight bound `/api`
    /// requests get (`QUICKACT_REQUEST_TIMEOUT_SECS`, `QUICKACT_MAX_CONCURRENT_REQUESTS`): `/mcp`
    /// requests, which may wait a minute, are timed by the long-poll bound instead and hold no
    /// slot until they turn out not to wait (see `crate::limits`).
    async fn within_request_time<T: IntoResponse>(&self, parts: &Parts, call: impl Future<Output = Result<T, ApiError>>) -> Response {
        let _slot = match parts.extensions.get::<InFlight>().map(InFlight::take) {
            Some(Err(refused)) => return refused.into_response(),
            Some(Ok(slot)) => Some(slot),
            None => None,
        };
        match tokio::time::timeout(self.state.config.http.request_timeout, call).await {
            Ok(answer) => answer.into_response(),
            Err(_) => {
                tracing::warn!(timeout_secs = self.state.config.http.request_timeout.as_secs(), "MCP tool call timed out");
                ApiError::Overloaded("the request took too long").into_response()
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
        error_result(&json!({ "error": { "code": "unauthorized", "message": ApiError::Unauthorized.to_string() } }))
    })?;
    let args = from_json(Value::Object(arguments))?;
    Ok((user, args))
}

fn from_json<T: DeserializeOwned>(value: Value) -> Result<T, CallToolResult> {
    serde_json::from_value(value).map_err(|error| invalid_input(&format!("invalid arguments: {error}")))
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

/// A `now` that is not RFC 3339 is refused here with a message that says so (the handlers'
/// typed fields would only say that some value did not parse).
fn check_moment(now: Option<&str>) -> Option<CallToolResult> {
    let now = now?;
    DateTime::parse_from_rfc3339(now)
        .is_err()
        .then(|| invalid_input(&format!("now must be an RFC 3339 moment (e.g. 2026-02-07T09:00:00+08:00), got {now:?}")))
}

fn invalid_input(message: &str) -> CallToolResult {
    error_result(&json!({ "error": { "code": "invalid_input", "message": message } }))
}

/// A handler's JSON answer, or its error envelope (`{"error": {"code", "message"}}`).
async fn read_answer(response: Response) -> Result<Value, Value> {
    let status = response.status();
    let json = match to_bytes(response.into_body(), MAX_ANSWER_BYTES).await {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes).ok(),
        Err(error) => {
            tracing::error!(%error, "reading a handler's answer for an MCP tool failed");
            None
        }
    };
    match json {
        Some(json) if status.is_success() => Ok(json),
        Some(envelope) if envelope["error"]["code"].is_string() => Err(envelope),
        _ => Err(internal_envelope()),
    }
}

/// The tool's answer for a handler's: its JSON, or a tool error with the error envelope.
fn tool_result(answer: Result<Value, Value>, text: fn(&Value) -> String) -> CallToolResult {
    match answer {
        Ok(json) => success_result(json, text),
        Err(envelope) => error_result(&envelope),
    }
}

/// `json` as structured content (and as a JSON text block, for clients that read only text),
/// after `text`'s rendering of it.
fn success_result(json: Value, text: fn(&Value) -> String) -> CallToolResult {
    let rendered = text(&json);
    let mut result = CallToolResult::structured(json);
    result.content.insert(0, ContentBlock::text(rendered));
    result
}

/// A tool error carrying the error envelope `{"error": {"code", "message"}}`, its message first
/// as text.
fn error_result(envelope: &Value) -> CallToolResult {
    let mut result = CallToolResult::structured_error(envelope.clone());
    result.content.insert(0, ContentBlock::text(render::error(envelope)));
    result
}

fn internal_envelope() -> Value {
    json!({ "error": { "code": "internal", "message": "internal error" } })
}

fn internal_error() -> CallToolResult {
    error_result(&internal_envelope())
}
