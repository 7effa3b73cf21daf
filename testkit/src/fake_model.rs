//! A scripted fake of an OpenAI-compatible chat-completions endpoint: a real HTTP server on port 0
//! that answers `POST /v1/chat/completions` with tool calls, text, usage, error statuses, rate
//! limits or garbage, in the order a test scripts, and records every request it receives and when.
//!
//! Scripts are keyed by a piece of the user's sentence, so tasks running at the same time each get
//! their own script. Models may be given latencies of their own ([`FakeModel::model_latency`]),
//! and the whole endpoint a rate-limit storm ([`FakeModel::rate_limit_everything`]).

use std::{
    collections::{HashMap, VecDeque},
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::post,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

/// One scripted answer.
#[derive(Clone)]
pub enum Reply {
    /// An assistant message calling tools: (name, JSON arguments).
    Tools(Vec<(String, Value)>),
    /// Tool calls with raw argument text (for malformed JSON).
    RawTools(Vec<(String, String)>),
    /// A plain-text answer.
    Text(String),
    /// An HTTP error with an OpenAI-style error body.
    Status(u16, String),
    /// A rate limit: `429` with `Retry-After: <retry_after_secs>` and an OpenAI-style error body.
    RateLimited { retry_after_secs: u64 },
    /// A 200 whose body is not a chat completion.
    Garbage(String),
    /// Waits until the `Notify` is notified (`notify_one` before or `notify_waiters` during the wait),
    /// then answers with the inner reply.
    Gated(Arc<Notify>, Box<Reply>),
    /// Waits this long, then answers with the inner reply.
    Delayed(Duration, Box<Reply>),
    /// Sets the usage reported with the inner reply.
    WithUsage(ReportedUsage, Box<Reply>),
    /// Answers in the name of another model than the one requested (providers answer with dated
    /// snapshots such as `gpt-4o-mini-2024-07-18`).
    AnsweredAs(String, Box<Reply>),
    /// Decided when the request arrives (e.g. to act on an id a search returned).
    Dynamic(Responder),
}

/// Holds a [`Reply::Gated`] gate open, for the turns waiting at it and those still to come, until
/// dropped. `notify_waiters` reaches only the turns already waiting, so it is repeated.
pub struct GateHeldOpen(tokio::task::JoinHandle<()>);

impl GateHeldOpen {
    pub fn new(gate: Arc<Notify>) -> Self {
        GateHeldOpen(tokio::spawn(async move {
            loop {
                gate.notify_waiters();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }))
    }
}

impl Drop for GateHeldOpen {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reported token usage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReportedUsage {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
}

impl Default for ReportedUsage {
    fn default() -> Self {
        ReportedUsage { prompt: 100, completion: 20, cached: 0 }
    }
}

impl Reply {
    /// A single tool call.
    pub fn tool(name: &str, arguments: Value) -> Self {
        Reply::Tools(vec![(name.to_owned(), arguments)])
    }

    /// `finish` with a result type and message.
    pub fn finish(result_type: &str, message: &str) -> Self {
        Reply::tool("finish", json!({ "result_type": result_type, "message": message }))
    }

    /// One turn that searches the user's items and finishes with `action_completed`: the agent runs
    /// `finish` last, after the search, which backs the completed action (`action_completed` needs a
    /// change or a lookup in the run). For scripts whose subject is not the planner.
    pub fn look_up_and_finish(message: &str) -> Self {
        Reply::Tools(vec![
            ("search_items".to_owned(), json!({})),
            ("finish".to_owned(), json!({ "result_type": "action_completed", "message": message })),
        ])
    }

    pub fn with_usage(self, prompt: u64, completion: u64, cached: u64) -> Self {
        Reply::WithUsage(ReportedUsage { prompt, completion, cached }, Box::new(self))
    }

    /// This reply, in the name of `model`.
    pub fn answered_as(self, model: &str) -> Self {
        Reply::AnsweredAs(model.to_owned(), Box::new(self))
    }

    pub fn delayed(self, delay: Duration) -> Self {
        Reply::Delayed(delay, Box::new(self))
    }

    /// A reply computed from the request.
    pub fn dynamic(responder: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        Reply::Dynamic(Arc::new(responder))
    }

    /// A reply computed from what the model last read from a tool (see [`last_tool_result`]).
    pub fn on_tool_result(responder: impl Fn(Value) -> Reply + Send + Sync + 'static) -> Self {
        Reply::dynamic(move |request| responder(last_tool_result(request)))
    }
}

/// The JSON the model last read from a tool in `request` (the content of the last tool message).
pub fn last_tool_result(request: &Value) -> Value {
    request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .and_then(|content| serde_json::from_str(content).ok())
        .unwrap_or(Value::Null)
}

/// A handle on a running fake endpoint.
#[derive(Clone)]
pub struct FakeModel {
    address: SocketAddr,
    state: Arc<Shared>,
}

type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

/// A request as the fake received it.
#[derive(Clone, Debug)]
pub struct Received {
    /// When it arrived (before its reply was chosen or delayed), to measure how far apart a
    /// client's retries are.
    pub at: Instant,
    pub body: Value,
}

struct Shared {
    scripts: Mutex<Vec<(String, VecDeque<Reply>)>>,
    /// How long each model takes to answer, before its reply (a provider's models differ).
    latencies: Mutex<HashMap<String, Duration>>,
    /// Until when every request is answered `429` with `Retry-After` (a provider's rate-limit
    /// storm), whatever the scripts say.
    storm: Mutex<Option<(Instant, u64)>>,
    fallback: Mutex<Option<Responder>>,
    requests: Mutex<Vec<Received>>,
    /// Counts requests received, so a test can wait for one instead of polling.
    received: watch::Sender<usize>,
}

impl FakeModel {
    /// Starts the server on 127.0.0.1, port 0; it runs until the test process ends.
    pub async fn start() -> Self {
        let state = Arc::new(Shared {
            scripts: Mutex::new(Vec::new()),
            latencies: Mutex::new(HashMap::new()),
            storm: Mutex::new(None),
            fallback: Mutex::new(None),
            requests: Mutex::new(Vec::new()),
            received: watch::Sender::new(0),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .route("/chat/completions", post(complete))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the fake model");
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeModel { address, state }
    }

    /// The base URL to configure as `OPENAI_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// Answers requests whose user message contains `sentence` with `replies`, in order.
    pub fn script(&self, sentence: &str, replies: Vec<Reply>) {
        self.state.scripts.lock().unwrap().push((sentence.to_owned(), replies.into()));
    }

    /// Answers requests that no script matches.
    pub fn fallback(&self, responder: impl Fn(&Value) -> Reply + Send + Sync + 'static) {
        *self.state.fallback.lock().unwrap() = Some(Arc::new(responder));
    }

    /// Makes every answer of `model` take `latency` first (requests of other models are not held).
    pub fn model_latency(&self, model: &str, latency: Duration) {
        self.state.latencies.lock().unwrap().insert(model.to_owned(), latency);
    }

    /// For the next `duration`, answers every request `429` with `Retry-After: <retry_after_secs>`
    /// (scripts and the fallback are left untouched, and go on after it).
    pub fn rate_limit_everything(&self, duration: Duration, retry_after_secs: u64) {
        *self.state.storm.lock().unwrap() = Some((Instant::now() + duration, retry_after_secs));
    }

    /// Requests that asked for `model`.
    pub fn requests_of_model(&self, model: &str) -> Vec<Received> {
        let requests = self.state.requests.lock().unwrap();
        requests.iter().filter(|received| received.body["model"] == model).cloned().collect()
    }

    /// Every request received so far, with when each arrived.
    pub fn received(&self) -> Vec<Received> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.state.requests.lock().unwrap().iter().map(|received| received.body.clone()).collect()
    }

    /// Requests whose user message contains `sentence`.
    pub fn requests_for(&self, sentence: &str) -> Vec<Value> {
        self.requests().into_iter().filter(|r| user_text(r).contains(sentence)).collect()
    }

    /// Requests whose user message contains `sentence`, with when each arrived, in order.
    pub fn received_for(&self, sentence: &str) -> Vec<Received> {
        let requests = self.state.requests.lock().unwrap();
        requests.iter().filter(|received| user_text(&received.body).contains(sentence)).cloned().collect()
    }

    /// Returns once `n` requests whose user message contains `sentence` have arrived (the moment
    /// the last one does); panics if they have not after `timeout`.
    pub async fn wait_for_requests(&self, sentence: &str, n: usize, timeout: Duration) {
        let mut received = self.state.received.subscribe();
        let arrived = async {
            let _ = received.wait_for(|_| self.requests_for(sentence).len() >= n).await;
        };
        if tokio::time::timeout(timeout, arrived).await.is_err() {
            let got = self.requests_for(sentence).len();
            panic!("waited {timeout:?} for {n} model requests for {sentence:?} in vain; {got} arrived");
        }
    }
}

/// The user's sentence in a request (the first user message).
pub fn user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

async fn complete(State(state): State<Arc<Shared>>, Json(request): Json<Value>) -> Response {
    state.requests.lock().unwrap().push(Received { at: Instant::now(), body: request.clone() });
    state.received.send_modify(|count| *count += 1);
    let model = request["model"].as_str().unwrap_or("fake").to_owned();
    let storm = *state.storm.lock().unwrap();
    if let Some((until, retry_after_secs)) = storm
        && Instant::now() < until
    {
        return render(Reply::RateLimited { retry_after_secs }, &model, ReportedUsage::default(), request_count(&state)).await;
    }
    let latency = state.latencies.lock().unwrap().get(&model).copied();
    if let Some(latency) = latency {
        tokio::time::sleep(latency).await;
    }
    let text = user_text(&request);
    let scripted = {
        let mut scripts = state.scripts.lock().unwrap();
        scripts.iter_mut().find(|(key, _)| text.contains(key.as_str())).and_then(|(_, replies)| replies.pop_front())
    };
    let reply = match scripted {
        Some(reply) => reply,
        None => match state.fallback.lock().unwrap().clone() {
            Some(responder) => responder(&request),
            None => Reply::Status(500, format!("the fake model has no scripted reply for {text:?}")),
        },
    };
    let reply = match reply {
        Reply::Dynamic(responder) => responder(&request),
        other => other,
    };
    render(reply, &model, ReportedUsage::default(), request_count(&state)).await
}

fn request_count(state: &Shared) -> usize {
    state.requests.lock().unwrap().len()
}

fn render(reply: Reply, model: &str, usage: ReportedUsage, serial: usize) -> BoxFuture<'static, Response> {
    let model = model.to_owned();
    Box::pin(async move {
        match reply {
            Reply::Gated(gate, inner) => {
                gate.notified().await;
                render(*inner, &model, usage, serial).await
            }
            Reply::Delayed(delay, inner) => {
                tokio::time::sleep(delay).await;
                render(*inner, &model, usage, serial).await
            }
            Reply::WithUsage(usage, inner) => render(*inner, &model, usage, serial).await,
            Reply::AnsweredAs(answering, inner) => render(*inner, &answering, usage, serial).await,
            Reply::Status(status, message) => {
                let status = StatusCode::from_u16(status).expect("a valid status");
                (status, Json(json!({ "error": { "message": message, "type": "fake_error", "param": null, "code": null } }))).into_response()
            }
            Reply::RateLimited { retry_after_secs } => {
                let message = format!("Rate limit reached for {model}. Please try again in {retry_after_secs}s.");
                let error = json!({ "error": { "message": message, "type": "requests", "param": null, "code": "rate_limit_exceeded" } });
                (StatusCode::TOO_MANY_REQUESTS, [("retry-after", retry_after_secs.to_string())], Json(error)).into_response()
            }
            Reply::Garbage(body) => (StatusCode::OK, [("content-type", "application/json")], body).into_response(),
            Reply::Text(text) => Json(completion(&model, json!({ "role": "assistant", "content": text }), "stop", usage)).into_response(),
            Reply::Tools(calls) => {
                let calls = calls.into_iter().map(|(name, args)| (name, args.to_string())).collect();
                Json(completion(&model, tool_message(calls, serial), "tool_calls", usage)).into_response()
            }
            Reply::RawTools(calls) => Json(completion(&model, tool_message(calls, serial), "tool_calls", usage)).into_response(),
            Reply::Dynamic(_) => (StatusCode::INTERNAL_SERVER_ERROR, "nested dynamic replies are not supported").into_response(),
        }
    })
}

fn tool_message(calls: Vec<(String, String)>, serial: usize) -> Value {
    let calls: Vec<Value> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            json!({ "id": format!("call_{serial}_{i}"), "type": "function", "function": { "name": name, "arguments": arguments } })
        })
        .collect();
    json!({ "role": "assistant", "content": null, "tool_calls": calls })
}

fn completion(model: &str, message: Value, finish_reason: &str, usage: ReportedUsage) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
        "usage": {
            "prompt_tokens": usage.prompt,
            "completion_tokens": usage.completion,
            "total_tokens": usage.prompt + usage.completion,
            "prompt_tokens_details": { "cached_tokens": usage.cached }
        }
    })
}
