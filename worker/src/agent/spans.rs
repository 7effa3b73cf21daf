//! The spans a run adds to its task's trace (docs/tracing.md): the run itself, each model turn and
//! each tool call. Attribute names follow OpenTelemetry's GenAI conventions where they have one
//! (`gen_ai.*`); cost has none, so it is `quickact.cost` with `quickact.currency`.
//!
//! The run span exists anyway (its fields are on every line the run logs); the others exist for
//! traces only, and are disabled spans, costing nothing, when the process exports none. Local runs
//! (the deterministic provider) get the run span alone: their "turns" are no model's, and their
//! tool calls take microseconds inside one group transaction, so spans of them would cost more
//! than they tell.

use quickact_shared::{
    domain::task::TaskRecord,
    pricing::nanos_to_amount,
    telemetry::traces::{continue_trace, exporting, span_if_exporting},
};
use tracing::{Span, field::Empty};

use crate::provider::{ModelReply, ProviderError};

/// The span of one claim's run of `task` in worker `worker`: a child of the span that submitted
/// the task, when its trace crossed the queue (`task.trace_parent`).
pub fn run_span(task: &TaskRecord, worker: &str) -> Span {
    if !exporting() {
        return tracing::info_span!("run", task_id = %task.id, user_id = %task.user_id, worker = %worker);
    }
    let span = tracing::info_span!(
        "run",
        task_id = %task.id,
        user_id = %task.user_id,
        worker = %worker,
        otel.name = "task.run",
        otel.kind = "consumer",
        messaging.system = "postgresql",
        quickact.task.attempt = task.attempts,
        quickact.task.priority = task.priority.as_str(),
    );
    continue_trace(&span, task.trace_parent.as_deref());
    span
}

/// The span of one request to `model` (a child of the current span, the run's).
pub fn model_turn_span(model: &str) -> Span {
    span_if_exporting(|| {
        tracing::info_span!(
            "model_turn",
            otel.name = %format_args!("chat {model}"),
            otel.kind = "client",
            otel.status_code = Empty,
            gen_ai.operation.name = "chat",
            gen_ai.request.model = %model,
            gen_ai.response.model = Empty,
            gen_ai.response.finish_reasons = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.usage.cache_read.input_tokens = Empty,
            quickact.cost = Empty,
            quickact.currency = Empty,
            error.type = Empty,
        )
    })
}

/// What a turn used and cost, on its span.
pub fn record_turn(span: &Span, reply: &ModelReply, cost_nanos: i64, currency: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("gen_ai.response.model", reply.model.as_str());
    if let Some(reason) = &reply.finish_reason {
        span.record("gen_ai.response.finish_reasons", reason.as_str());
    }
    span.record("gen_ai.usage.input_tokens", reply.usage.input);
    span.record("gen_ai.usage.output_tokens", reply.usage.output);
    span.record("gen_ai.usage.cache_read.input_tokens", reply.usage.cached);
    span.record("quickact.cost", nanos_to_amount(cost_nanos));
    span.record("quickact.currency", currency);
}

/// A failed request, on its span.
pub fn record_turn_failure(span: &Span, error: &ProviderError) {
    if span.is_disabled() {
        return;
    }
    span.record("otel.status_code", "ERROR");
    span.record("error.type", if error.is_transient() { "transient" } else { "fatal" });
}

/// The span of one tool call (a child of the current span, the run's).
pub fn tool_call_span(name: &str, call_id: &str) -> Span {
    span_if_exporting(|| {
        tracing::info_span!(
            "tool_call",
            otel.name = %format_args!("execute_tool {name}"),
            otel.status_code = Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %name,
            gen_ai.tool.call.id = %call_id,
            quickact.tool.ok = Empty,
            quickact.tool.error = Empty,
            error.type = Empty,
        )
    })
}

/// How a call went, on its span: `error`, what the model was told went wrong (free text, so not
/// the low-cardinality `error.type`).
pub fn record_tool_call(span: &Span, ok: bool, error: Option<&str>) {
    if span.is_disabled() {
        return;
    }
    span.record("quickact.tool.ok", ok);
    if !ok {
        span.record("otel.status_code", "ERROR");
        span.record("error.type", "tool_error");
        if let Some(error) = error {
            span.record("quickact.tool.error", error);
        }
    }
}
