//! Traces over OpenTelemetry (OTLP/HTTP with protobuf bodies), one trace per task: the API's
//! submit span, the worker's run, its model turns and tool calls, and the webhook deliveries
//! (docs/tracing.md has the span tree and the attributes).
//!
//! Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, and
//! off means free: no layer in the subscriber, no exporter, no `traceparent` read or stored, and
//! the spans only traces need ([`span_if_exporting`]) are not even created. [`exporting`] is the
//! one switch the rest of the code asks.
//!
//! The OpenTelemetry SDK reads its own variables: the endpoint and headers
//! (`OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`), the timeout, `OTEL_SERVICE_NAME` and
//! `OTEL_RESOURCE_ATTRIBUTES`, the sampler (`OTEL_TRACES_SAMPLER`, default parent-based always-on:
//! a caller's unsampled `traceparent` stays unsampled) and the batching (`OTEL_BSP_*`). Only
//! `http/protobuf` is built in: gRPC would bring tonic and its HTTP/2 stack into both binaries for
//! what any collector also takes over HTTP, so another `OTEL_EXPORTER_OTLP_PROTOCOL` is refused at
//! start-up rather than silently exporting nothing.
//!
//! A task's trace crosses the queue as the W3C `traceparent` of the span that submitted it, stored
//! on the task row (`quick_action_tasks.trace_parent`): the worker that claims the task makes its
//! run span a child of it ([`continue_trace`]), as does whoever else acts for the task later (a
//! webhook delivery: [`span_with_parent`]).

use std::{
    collections::HashMap,
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use opentelemetry::{
    Context, KeyValue,
    propagation::{Extractor, Injector, TextMapPropagator},
    trace::{TraceContextExt, TracerProvider as _},
};
use opentelemetry_sdk::{
    Resource, propagation::TraceContextPropagator, runtime, trace::SdkTracerProvider,
    trace::span_processor_with_async_runtime::BatchSpanProcessor,
};
use tracing::{Level, Span, Subscriber};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::{Layer, filter::filter_fn, registry::LookupSpan};

/// Set once, when [`start`] built the exporter: the switch every traced code path asks.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether this process exports traces. Code that would do work only for traces (read a
/// `traceparent`, create a span no log line needs) asks this first.
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Whether the environment asks for traces: an OTLP endpoint is set (and `OTEL_SDK_DISABLED` is
/// not `true`, the SDKs' standard off switch).
pub fn configured() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// The exporter of this process, kept to flush what is still batched when the process stops.
#[derive(Debug)]
pub struct TraceExport {
    provider: SdkTracerProvider,
}

/// Longest a stopping process waits for its last spans to be sent: a collector that is gone must
/// not hold the shutdown for the exporter's own timeout and retries.
const FLUSH_PATIENCE: Duration = Duration::from_secs(5);

impl TraceExport {
    /// Sends the spans still batched and stops the exporter. The SDK's shutdown blocks its thread
    /// until the batch task (on this runtime) answers, so it runs on a blocking thread.
    pub async fn shutdown(self) {
        let provider = self.provider;
        let flushed = tokio::time::timeout(FLUSH_PATIENCE, tokio::task::spawn_blocking(move || provider.shutdown())).await;
        match flushed {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(error))) => tracing::warn!(%error, "could not flush the last spans"),
            Ok(Err(error)) => tracing::warn!(%error, "the span flush panicked"),
            Err(_) => tracing::warn!(patience_secs = FLUSH_PATIENCE.as_secs(), "gave up flushing the last spans"),
        }
    }
}

/// Builds the exporter (for `default_service_name`, unless `OTEL_SERVICE_NAME` or
/// `OTEL_RESOURCE_ATTRIBUTES` names the service) and the layer that feeds it, and turns
/// [`exporting`] on. Must run on the tokio runtime: the batch span processor is a task of it, so
/// exports share the process's runtime instead of a thread and a blocking HTTP client of their own.
pub fn start<S>(default_service_name: &'static str) -> Result<(TraceExport, impl Layer<S> + Send + Sync + 'static), String>
where
    S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
{
    check_protocol(|name| std::env::var(name).ok())?;
    // reqwest is built without a crypto provider of its own (`rustls-no-provider`): the process's
    // is ring, installed here for the exporter's client, which the API would otherwise lack (the
    // worker installs the same one for its model client; a second install is a no-op).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|error| format!("the OTLP trace exporter: {error}"))?;
    let processor = BatchSpanProcessor::builder(exporter, runtime::Tokio).build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(resource(default_service_name))
        .build();
    let tracer = provider.tracer("quickact");
    // Our own spans only (`quickact_*` targets): they are the trace's shape (docs/tracing.md). The
    // access log's request spans, sqlx's and hyper's would make a root trace of every poll and
    // health check. Events at WARN and above go on their span (a failed model request, a tool that
    // failed on the database); the rest are logs, not trace events.
    let ours = filter_fn(|metadata| {
        metadata.target().starts_with("quickact") && (metadata.is_span() || *metadata.level() <= Level::WARN)
    });
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_filter(ours);
    EXPORTING.store(true, Ordering::Relaxed);
    Ok((TraceExport { provider }, layer))
}

/// Refuses an OTLP protocol this build does not speak (see the module docs); `var` reads the
/// environment.
fn check_protocol(var: impl Fn(&str) -> Option<String>) -> Result<(), String> {
    for name in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
        if let Some(value) = var(name) {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            if value != "http/protobuf" {
                return Err(format!("{name}={value:?}: quickact exports traces over \"http/protobuf\" only"));
            }
            // The more specific variable wins, as in the SDK.
            return Ok(());
        }
    }
    Ok(())
}

/// The process's resource: what the SDK reads from the environment, with our service's name when
/// the environment names none (the SDK would say `unknown_service`).
fn resource(default_service_name: &'static str) -> Resource {
    let from_env = Resource::builder().build();
    let named = from_env
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        from_env
    } else {
        Resource::builder()
            .with_service_name(default_service_name)
            .with_attribute(KeyValue::new("service.namespace", "quickact"))
            .build()
    }
}

/// `make()`'s span when this process exports traces, else a disabled span: for spans that exist
/// for traces only (a model turn, a tool call), which then cost nothing when tracing is off.
pub fn span_if_exporting(make: impl FnOnce() -> Span) -> Span {
    if exporting() { make() } else { Span::none() }
}

/// Makes `span` a child of the span that `trace_parent` (a W3C `traceparent`) names, continuing
/// that trace. Nothing when not exporting, or without (or with a malformed) `traceparent`: the
/// span is then a root, or the child of the current span. Call it before the span is entered.
pub fn continue_trace(span: &Span, trace_parent: Option<&str>) {
    continue_callers_trace(span, trace_parent, None);
}

/// [`continue_trace`] from a caller's W3C headers: `traceparent`, and `tracestate` (vendors' data
/// that travels with the trace).
pub fn continue_callers_trace(span: &Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    if !exporting() || traceparent.is_none() {
        return;
    }
    if let Some(parent) = remote_context(traceparent, tracestate) {
        let _ = span.set_parent(parent);
    }
}

/// A span named `name` (as OpenTelemetry shows it) in the trace of `trace_parent`, the task's
/// stored `traceparent`: for work done for a task after its submission, outside its run (a webhook
/// delivery). Attributes are set with [`OpenTelemetrySpanExt::set_attribute`]. Disabled when not
/// exporting.
pub fn span_with_parent(name: &str, trace_parent: Option<&str>) -> Span {
    let span = span_if_exporting(|| tracing::info_span!("traced", otel.name = name));
    continue_trace(&span, trace_parent);
    span
}

/// The context a caller's W3C headers name (`traceparent`, and `tracestate` with it), if they are
/// well formed.
pub fn remote_context(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<Context> {
    let headers = W3cHeaders { traceparent, tracestate };
    let context = TraceContextPropagator::new().extract(&headers);
    context.span().span_context().is_valid().then_some(context)
}

/// `span`'s W3C `traceparent`, to store with what continues its trace elsewhere (the task row);
/// `None` when not exporting (the span is then not recorded by OpenTelemetry).
pub fn trace_parent_of(span: &Span) -> Option<String> {
    if !exporting() {
        return None;
    }
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut Carrier(&mut carrier));
    carrier.remove("traceparent")
}

/// The trace id (32 hex digits) of a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`).
pub fn trace_id_of(trace_parent: &str) -> Option<&str> {
    let mut parts = trace_parent.split('-');
    let (_version, trace_id) = (parts.next()?, parts.next()?);
    (trace_id.len() == 32 && trace_id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(trace_id)
}

/// A caller's trace headers, as the propagator reads them.
struct W3cHeaders<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
}

impl Extractor for W3cHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent,
            "tracestate" => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        let mut keys = Vec::with_capacity(2);
        if self.traceparent.is_some() {
            keys.push("traceparent");
        }
        if self.tracestate.is_some() {
            keys.push("tracestate");
        }
        keys
    }
}

struct Carrier<'a>(&'a mut HashMap<String, String>);

impl Injector for Carrier<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_id_is_read_from_a_well_formed_traceparent_only() {
        assert_eq!(
            trace_id_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(trace_id_of("00-4bf92f35-00f067aa0ba902b7-01"), None);
        assert_eq!(trace_id_of("garbage"), None);
    }

    #[test]
    fn a_callers_traceparent_is_a_remote_parent_and_a_malformed_one_is_none() {
        let context = remote_context(Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Some("vendor=1"))
            .expect("a well-formed traceparent");
        let span = context.span();
        let parent = span.span_context();
        assert!(parent.is_remote());
        assert_eq!(format!("{:032x}", parent.trace_id()), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.trace_state().get("vendor"), Some("1"));
        assert!(remote_context(Some("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), None).is_none());
        assert!(remote_context(Some("nonsense"), None).is_none());
        assert!(remote_context(None, None).is_none());
    }

    #[test]
    fn only_http_protobuf_is_accepted_as_the_protocol_and_the_traces_variable_wins() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
        };
        assert!(check_protocol(env(&[])).is_ok());
        assert!(check_protocol(env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")])).is_ok());
        let refused = check_protocol(env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(refused.contains("OTEL_EXPORTER_OTLP_PROTOCOL"), "{refused}");
        assert!(
            check_protocol(env(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]))
                .is_ok()
        );
        assert!(check_protocol(env(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")])).is_err());
    }
}
