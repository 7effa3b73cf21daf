//! Limits every request passes through, so a slow database or a flood of clients degrades the API
//! into quick, clear refusals instead of a pile of hanging connections:
//! - a time limit (`QUICKACT_REQUEST_TIMEOUT_SECS`), past which the request is answered 503;
//! - a bound on requests in flight (`QUICKACT_MAX_CONCURRENT_REQUESTS`): past it a request is shed
//!   at once with 503 and `Retry-After`, not queued;
//! - a bound on the long-polls one user holds open (`QUICKACT_MAX_LONG_POLLS_PER_USER`), 429 past it;
//! - a per-user submit rate (`QUICKACT_SUBMIT_RATE_PER_MINUTE`), 429 with `Retry-After` past it,
//!   held across every API process by a budget in Postgres ([`SubmitRate`]).
//!
//! Requests that may long-poll (`POST /api/quick-action`, whose body may ask to wait,
//! `GET /api/quick-action/{id}?wait=...`, and `POST /mcp`, whose tool call may wait) hold no slot
//! of the in-flight bound, since thousands may wait at once on one cheap notification fan-out;
//! their time is bounded by their own wait (at most the task's timeout) plus a margin.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    extract::{MatchedPath, Request, State},
    http::Method,
    middleware::Next,
    response::{IntoResponse, Response},
};
use governor::{DefaultKeyedRateLimiter, Quota, clock::Clock};
use quickact_shared::{
    config::HttpConfig,
    metrics::{self, OpenGuard},
    store::budgets::take_submit_budget,
};
use sqlx::PgPool;
use tokio::sync::Semaphore;
use uuid::Uuid;

use crate::error::ApiError;

/// Largest request body read. A 2000-character sentence is at most ~8 KB of UTF-8, but a body a bit
/// over that is still read whole, so the client gets a clean 413 about its text instead of a
/// connection cut mid-upload; only bodies over this limit are refused unread.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Longest sentence accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 2000;

/// The path the MCP endpoint is served at (`crate::mcp`).
pub const MCP_PATH: &str = "/mcp";

/// 413 for a text over [`MAX_TEXT_CHARS`]: a submission's, or one read without being run.
pub fn check_text_length(text: &str) -> Result<(), ApiError> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(ApiError::PayloadTooLarge(format!("text is {chars} characters long; the limit is {MAX_TEXT_CHARS}")));
    }
    Ok(())
}

/// Longest a long-poll may wait: the longest task timeout (POST) and `?timeout` (GET) allowed.
const LONGEST_WAIT: Duration = Duration::from_secs(120);
/// Time a long-poll may take beyond its wait (reading the task, writing the answer).
const WAIT_MARGIN: Duration = Duration::from_secs(10);

/// The request limits of one API process.
pub struct RequestLimits {
    timeout: Duration,
    in_flight: Arc<Semaphore>,
}

impl RequestLimits {
    pub fn new(config: &HttpConfig) -> Arc<Self> {
        Arc::new(RequestLimits { timeout: config.request_timeout, in_flight: Arc::new(Semaphore::new(config.max_concurrent_requests)) })
    }
}

/// The middleware: bounds the request's time and, unless it may long-poll, its slot among the
/// requests in flight; then counts the request it lets through (see [`counted`]). One middleware,
/// not two, because each `from_fn` layer boxes a future per request, and a held long-poll keeps it
/// for as long as it waits (their measured sizes are in docs/performance.md). (Both are
/// `async move` blocks, not `async fn`s, whose futures would hold the request twice: as argument
/// and as local.)
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
pub fn limit_requests(State(limits): State<Arc<RequestLimits>>, mut request: Request, next: Next) -> impl Future<Output = Response> {
    async move {
        if may_long_poll(&request) {
            // What the request turns out to be is known only inside it (an MCP call that does not
            // wait): such a request takes its slot itself (see [`InFlight`]).
            request.extensions_mut().insert(InFlight(limits.in_flight.clone()));
            return match tokio::time::timeout(LONGEST_WAIT + WAIT_MARGIN, counted(request, next)).await {
                Ok(response) => response,
                Err(_) => ApiError::Overloaded("the request took too long").into_response(),
            };
        }
        let Ok(_slot) = limits.in_flight.clone().try_acquire_owned() else {
            tracing::warn!("request shed: too many requests in flight");
            return ApiError::Overloaded("too many requests in flight").into_response();
        };
        match tokio::time::timeout(limits.timeout, counted(request, next)).await {
            Ok(response) => response,
            Err(_) => {
                tracing::warn!(timeout_secs = limits.timeout.as_secs(), "request timed out");
                ApiError::Overloaded("the request took too long").into_response()
            }
        }
    }
}

/// The bound on requests in flight, handed to a request that holds no slot by its route (one that
/// may long-poll): when it turns out not to wait (an MCP `tools/call` of `list_items` or
/// `parse_time`, known only once its body is read), it takes a slot here, so such calls are shed
/// under load as `/api` requests are.
#[derive(Clone)]
pub struct InFlight(Arc<Semaphore>);

impl InFlight {
    /// A slot for the rest of the request, or 503 when every slot is taken.
    pub fn take(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.0.clone().try_acquire_owned().map_err(|_| {
            tracing::warn!("request shed: too many requests in flight");
            ApiError::Overloaded("too many requests in flight")
        })
    }
}

/// Runs the request and counts its answer in `quickact_http_requests_total` and
/// `quickact_http_request_seconds`, labelled with the route's pattern (never the raw path, so ids
/// make no new series; unrouted paths count as `unmatched`).
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
fn counted(request: Request, next: Next) -> impl Future<Output = Response> {
    async move {
        let route = request.extensions().get::<MatchedPath>().map_or("unmatched", |path| path.as_str()).to_owned();
        let method = request.method().clone();
        let started = std::time::Instant::now();
        let response = next.run(request).await;
        metrics::http_request(method.as_str(), &route, response.status().as_u16(), started.elapsed());
        response
    }
}

fn may_long_poll(request: &Request) -> bool {
    let path = request.uri().path().trim_end_matches('/');
    match *request.method() {
        // An MCP tool call that does not wait has its own time limit (see `crate::mcp::tools`).
        Method::POST => path == "/api/quick-action" || path == MCP_PATH,
        Method::GET => {
            path.strip_prefix("/api/quick-action/").is_some_and(|id| !id.contains('/'))
                && request.uri().query().is_some_and(|query| query.split('&').any(|pair| pair.starts_with("wait=")))
        }
        _ => false,
    }
}

/// What a held wait is, for the gauges of open waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKind {
    /// A long-poll (`wait=true`).
    LongPoll,
    /// A task's event stream (SSE).
    EventStream,
}

/// Long-polls held open per user in this process.
#[derive(Default)]
pub struct LongPollSlots {
    held: Mutex<HashMap<Uuid, usize>>,
}

/// One user's held long-poll; released when dropped.
pub struct LongPollSlot {
    slots: Arc<LongPollSlots>,
    user_id: Uuid,
    /// Counts the wait in `quickact_long_polls_open` or `quickact_sse_streams_open` while it lives.
    _open: OpenGuard,
}

impl LongPollSlots {
    /// A slot for one more wait of `user_id`, or 429 when they already hold `max`.
    pub fn take(self: &Arc<Self>, user_id: Uuid, max: usize, kind: WaitKind) -> Result<LongPollSlot, ApiError> {
        let mut held = self.held.lock().expect("long-poll slots lock");
        let count = held.entry(user_id).or_default();
        if *count >= max {
            return Err(ApiError::TooManyRequests {
                message: format!("at most {max} waits per user at once; wait for one to answer first"),
                retry_after_secs: 1,
            });
        }
        *count += 1;
        let gauge = match kind {
            WaitKind::LongPoll => metrics::LONG_POLLS_OPEN,
            WaitKind::EventStream => metrics::SSE_STREAMS_OPEN,
        };
        Ok(LongPollSlot { slots: self.clone(), user_id, _open: OpenGuard::new(gauge) })
    }
}

impl Drop for LongPollSlot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().expect("long-poll slots lock");
        if let Some(count) = held.get_mut(&self.user_id) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.user_id);
            }
        }
    }
}

/// The per-user submit rate. The budget that counts is one row per user in Postgres, shared by every
/// API process; an in-process limiter with the same quota stands in front of it and refuses a flood
/// without a database round trip (when this process alone has seen more than the quota, the shared
/// budget is spent too).
pub struct SubmitRate {
    per_minute: u32,
    local: Option<DefaultKeyedRateLimiter<Uuid>>,
}

/// Keys the in-process limiter keeps before it forgets users whose budget is full again.
const LOCAL_KEYS_KEPT: usize = 10_000;

impl SubmitRate {
    pub fn new(config: &HttpConfig) -> Arc<Self> {
        let local = std::num::NonZeroU32::new(config.submit_rate_per_minute).map(|rate| DefaultKeyedRateLimiter::keyed(Quota::per_minute(rate)));
        Arc::new(SubmitRate { per_minute: config.submit_rate_per_minute, local })
    }

    /// Spends one submission of `user_id`, or 429 with the time until the next one is admitted.
    pub async fn take(&self, pool: &PgPool, user_id: Uuid) -> Result<(), ApiError> {
        let Some(local) = &self.local else { return Ok(()) };
        if let Err(not_until) = local.check_key(&user_id) {
            return Err(self.refusal(not_until.wait_time_from(local.clock().now())));
        }
        if local.len() > LOCAL_KEYS_KEPT {
            local.retain_recent();
        }
        take_submit_budget(pool, user_id, self.per_minute).await?.map_err(|wait| self.refusal(wait))
    }

    fn refusal(&self, wait: Duration) -> ApiError {
        ApiError::TooManyRequests {
            message: format!("at most {} submissions per minute; try again in {:.1} s", self.per_minute, wait.as_secs_f64()),
            retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, uri: &str) -> Request {
        Request::builder().method(method).uri(uri).body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn only_requests_that_can_wait_are_long_polls() {
        assert!(may_long_poll(&request(Method::POST, "/api/quick-action")));
        assert!(may_long_poll(&request(Method::GET, "/api/quick-action/0193?wait=true&timeout=30")));
        assert!(may_long_poll(&request(Method::GET, "/api/quick-action/0193/?timeout=5&wait=1")));
        assert!(!may_long_poll(&request(Method::GET, "/api/quick-action/0193")));
        assert!(!may_long_poll(&request(Method::GET, "/api/quick-action?wait=true")));
        assert!(!may_long_poll(&request(Method::POST, "/api/quick-action/0193/cancel")));
        assert!(!may_long_poll(&request(Method::PATCH, "/api/items/0193?wait=true")));
    }

    #[test]
    fn a_user_holds_at_most_max_slots_and_gets_them_back() {
        let slots = Arc::new(LongPollSlots::default());
        let (alice, bob) = (Uuid::now_v7(), Uuid::now_v7());
        let first = slots.take(alice, 2, WaitKind::LongPoll).unwrap();
        let _second = slots.take(alice, 2, WaitKind::LongPoll).unwrap();
        assert!(slots.take(alice, 2, WaitKind::LongPoll).is_err());
        assert!(slots.take(bob, 2, WaitKind::LongPoll).is_ok(), "per user");
        drop(first);
        assert!(slots.take(alice, 2, WaitKind::LongPoll).is_ok());
    }
}
