//! The span of a submission (`POST /api/quick-action`, a reply, MCP's `quick_action`), where a
//! task's trace starts (docs/tracing.md).
//!
//! It continues the caller's W3C `traceparent` (and `tracestate`) when the request carries one, so
//! the task's trace is part of the caller's; its own `traceparent` is stored with the task, and
//! the worker's run continues it. Only when this process exports traces: otherwise no header is
//! read and the span is disabled (see `quickact_shared::telemetry::traces`).
//!
//! This span, not the access log's request span, is the server span of the trace: the exported
//! spans are ours only, so a poll or a health check is not a trace of its own.

use axum::http::{HeaderMap, StatusCode};
use quickact_shared::telemetry::traces::{continue_callers_trace, exporting, span_if_exporting};
use tracing::{Span, field::Empty};

use crate::error::ApiError;

/// The caller's W3C trace context, as its request's `traceparent` and `tracestate` carried it
/// (MCP calls carry none: their submissions start a trace of their own).
#[derive(Debug, Default)]
pub struct CallerTrace {
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
}

impl CallerTrace {
    /// The context a request's headers name; none read unless this process exports traces.
    pub fn of_headers(headers: &HeaderMap) -> Self {
        if !exporting() {
            return CallerTrace::default();
        }
        let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
        CallerTrace { traceparent: header("traceparent"), tracestate: header("tracestate") }
    }
}

/// The submit span, a child of the caller's span when `caller` names one (else a new trace).
pub fn submit_span(caller: &CallerTrace) -> Span {
    span_if_exporting(|| {
        let span = tracing::info_span!(
            "submit",
            otel.name = "POST /api/quick-action",
            otel.kind = "server",
            http.request.method = "POST",
            http.route = "/api/quick-action",
            http.response.status_code = Empty,
            otel.status_code = Empty,
            user_id = Empty,
            task_id = Empty,
        );
        continue_callers_trace(&span, caller.traceparent.as_deref(), caller.tracestate.as_deref());
        span
    })
}

/// Records the answer's status on the span (a submission answers 201): a 5xx is the span's error
/// (a 4xx is the caller's, as OpenTelemetry's HTTP conventions have it for server spans).
pub fn record_answer<T>(span: &Span, answer: &Result<T, ApiError>) {
    if span.is_disabled() {
        return;
    }
    let status = match answer {
        Ok(_) => StatusCode::CREATED,
        Err(error) => error.status(),
    };
    span.record("http.response.status_code", status.as_u16());
    if status.is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
}
