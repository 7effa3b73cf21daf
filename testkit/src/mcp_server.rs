//! An MCP server built with `rmcp` (streamable HTTP on 127.0.0.1, port 0) whose tools count their
//! effects, for the worker's external tools (worker/src/mcp.rs).
//!
//! - `book_room {room, at}`: books a room, an effect kept by the call's idempotency key
//!   (`_meta.idempotency_key`): a call with a key seen before makes no new booking and answers as
//!   the first did. Calls and effects are counted apart, so a test tells a call made twice from
//!   an effect made twice.
//! - `guest_note {}`: answers with the text set by [`FakeMcpServer::set_note`] (e.g. words that
//!   read like instructions, to check they reach the model as data).
//!
//! On cue, calls hang after their effect (as a server whose answer is lost, [`FakeMcpServer::hold_calls`]),
//! or fail ([`FakeMcpServer::fail_calls`]). Every call's headers are kept, to check a user's token
//! was passed through.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool},
    service::RequestContext,
    transport::{
        StreamableHttpServerConfig, StreamableHttpService,
        streamable_http_server::session::local::LocalSessionManager,
    },
};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// One call as the server received it.
#[derive(Debug, Clone)]
pub struct SeenCall {
    pub tool: String,
    pub arguments: Value,
    /// `_meta.idempotency_key`, if sent.
    pub key: Option<String>,
    /// The whole `_meta` sent.
    pub meta: Value,
    /// The request's headers (lower-case names).
    pub headers: HashMap<String, String>,
}

/// What calls do besides their tool's work.
#[derive(Debug, Clone, PartialEq)]
enum Cue {
    Answer,
    /// Make the effect, then never answer (until told otherwise).
    Hold,
    /// Answer with a tool error carrying this text.
    Fail(String),
}

#[derive(Default)]
struct Shared {
    calls: Mutex<Vec<SeenCall>>,
    /// Bookings by idempotency key (a call without a key books under a fresh one).
    bookings: Mutex<HashMap<String, String>>,
    cue: Mutex<Option<Cue>>,
    /// Raised whenever a call's answer may change (a cue changed): held calls look again.
    cue_changed: Mutex<Option<watch::Sender<u64>>>,
    note: Mutex<String>,
    /// Counts calls received, so a test waits for one instead of polling.
    received: Mutex<Option<watch::Sender<usize>>>,
    listings: Mutex<usize>,
}

/// A running MCP server.
#[derive(Clone)]
pub struct FakeMcpServer {
    /// The streamable HTTP endpoint, e.g. `http://127.0.0.1:1234/mcp`.
    pub url: String,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

#[derive(Clone)]
struct Handler(Arc<Shared>);

impl FakeMcpServer {
    /// Starts the server on 127.0.0.1, port 0; it stops when [`FakeMcpServer::stop`] is called or
    /// the test process ends.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        *shared.cue.lock().unwrap() = Some(Cue::Answer);
        *shared.cue_changed.lock().unwrap() = Some(watch::channel(0).0);
        *shared.received.lock().unwrap() = Some(watch::channel(0).0);
        let stop = CancellationToken::new();
        let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None).with_cancellation_token(stop.child_token());
        let handler = Handler(shared.clone());
        let service: StreamableHttpService<Handler, LocalSessionManager> = StreamableHttpService::new(move || Ok(handler.clone()), Default::default(), config);
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the MCP server");
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let until = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).with_graceful_shutdown(async move { until.cancelled_owned().await }).await;
        });
        FakeMcpServer { url, shared, stop }
    }

    /// The entry of `QUICKACT_MCP_SERVERS` for this server, named `name`, with extra fields
    /// (`timeout_secs`, `header`, `tools`).
    pub fn config(&self, name: &str, extra: Value) -> Value {
        let mut entry = json!({ "name": name, "url": self.url });
        if let (Some(entry), Value::Object(extra)) = (entry.as_object_mut(), extra) {
            entry.extend(extra);
        }
        entry
    }

    /// Every call received so far, in order.
    pub fn calls(&self) -> Vec<SeenCall> {
        self.shared.calls.lock().unwrap().clone()
    }

    /// Bookings made (effects), however many calls asked for them.
    pub fn effects(&self) -> usize {
        self.shared.bookings.lock().unwrap().len()
    }

    /// How many times the tools were listed.
    pub fn listings(&self) -> usize {
        *self.shared.listings.lock().unwrap()
    }

    /// From now on, calls make their effect and then never answer (a server whose answer is lost).
    pub fn hold_calls(&self) {
        self.cue(Cue::Hold);
    }

    /// From now on, calls answer with a tool error saying `message`.
    pub fn fail_calls(&self, message: &str) {
        self.cue(Cue::Fail(message.to_owned()));
    }

    /// From now on, calls answer (held calls too).
    pub fn answer_calls(&self) {
        self.cue(Cue::Answer);
    }

    /// What `guest_note` answers.
    pub fn set_note(&self, note: &str) {
        *self.shared.note.lock().unwrap() = note.to_owned();
    }

    /// Waits until `n` calls have arrived, at most `timeout`.
    pub async fn wait_for_calls(&self, n: usize, timeout: Duration) {
        let mut received = self.shared.received.lock().unwrap().as_ref().unwrap().subscribe();
        let arrived = tokio::time::timeout(timeout, received.wait_for(|count| *count >= n)).await;
        assert!(arrived.is_ok(), "the MCP server got {} of {n} calls within {timeout:?}", self.calls().len());
    }

    /// Stops serving (open sessions end).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    fn cue(&self, cue: Cue) {
        *self.shared.cue.lock().unwrap() = Some(cue);
        self.shared.cue_changed.lock().unwrap().as_ref().unwrap().send_modify(|n| *n += 1);
    }
}

fn object(schema: Value) -> Arc<Map<String, Value>> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are objects"),
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        *self.0.listings.lock().unwrap() += 1;
        let book = object(json!({
            "type": "object",
            "properties": { "room": { "type": "string" }, "at": { "type": "string" } },
            "required": ["room", "at"],
        }));
        let note = object(json!({ "type": "object", "properties": {} }));
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("book_room", "Books a meeting room at a time.", book),
            Tool::new("guest_note", "Reads the note left by the guest.", note),
        ]))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let shared = &self.0;
        let meta = serde_json::to_value(&context.meta).unwrap_or(Value::Null);
        let key = meta.get("idempotency_key").and_then(Value::as_str).map(str::to_owned);
        let headers = context
            .extensions
            .get::<axum::http::request::Parts>()
            .map(|parts| parts.headers.iter().map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned())).collect())
            .unwrap_or_default();
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        shared.calls.lock().unwrap().push(SeenCall { tool: request.name.to_string(), arguments: arguments.clone(), key: key.clone(), meta, headers });
        let mut changed = shared.cue_changed.lock().unwrap().as_ref().unwrap().subscribe();
        shared.received.lock().unwrap().as_ref().unwrap().send_modify(|n| *n += 1);

        if let Some(Cue::Fail(message)) = shared.cue.lock().unwrap().clone() {
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }
        let answer = match request.name.as_ref() {
            "book_room" => {
                let room = arguments["room"].as_str().unwrap_or("?").to_owned();
                let at = arguments["at"].as_str().unwrap_or("?").to_owned();
                let mut bookings = shared.bookings.lock().unwrap();
                let key = key.unwrap_or_else(|| format!("no-key-{}", bookings.len()));
                let number = bookings.len() + 1;
                bookings.entry(key).or_insert_with(|| format!("booked {room} at {at} (booking #{number})")).clone()
            }
            "guest_note" => shared.note.lock().unwrap().clone(),
            other => return Ok(CallToolResult::error(vec![ContentBlock::text(format!("no tool {other}"))]).into()),
        };
        // A held call made its effect; its answer waits for the cue to change (or forever).
        while shared.cue.lock().unwrap().clone() == Some(Cue::Hold) {
            if changed.changed().await.is_err() {
                break;
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(answer)]).into())
    }
}
