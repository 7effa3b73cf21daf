//! The span of `POST /api/quick-action`, where a task's trace starts (docs/tracing.md).
//!
//! It continues the caller's W3C `traceparent` (and `tracestate`) when the request carries one, so
//! the task's trace is part of the caller's; its own `traceparent` is stored with the task, and
//! the worker's run continues it. Only when this process exports traces: otherwise no header is
//! read and the span is disabled (see `quickact_shared::telemetry::traces`).
//!
//! This span, not the access log's request span, is the server span of the trace: the exported
//! spans are ours only, so a poll or a health check is not a trace of its own.

use axum::{http::HeaderMap, response::Response};
use quickact_shared::telemetry::traces::{continue_callers_trace, span_if_exporting};
use tracing::{Span, field::Empty};

use crate::error::ApiError;

/// The submit span, a child of the caller's span when the headers name one (else a new trace).
pub fn submit_span(headers: &HeaderMap) -> Span {
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
        let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        continue_callers_trace(&span, header("traceparent"), header("tracestate"));
        span
    })
}

/// Records the answer's status on the span: a 5xx is the span's error (a 4xx is the caller's, as
/// OpenTelemetry's HTTP conventions have it for server spans).
pub fn record_answer(span: &Span, answer: &Result<Response, ApiError>) {
    if span.is_disabled() {
        return;
    }
    let status = match answer {
        Ok(response) => response.status(),
        Err(error) => error.status(),
    };
    span.record("http.response.status_code", status.as_u16());
    if status.is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
}
