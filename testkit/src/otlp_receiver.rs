//! An OTLP/HTTP trace receiver: a real HTTP server on loopback port 0 that takes what an
//! OpenTelemetry exporter sends to `POST /v1/traces` (protobuf `ExportTraceServiceRequest`), and
//! records every span, with its service, for tests to read (and the bench to count).
//!
//! It answers as a collector does (200 with an empty `ExportTraceServiceResponse`), and 400 to a
//! body that is not one, so an exporter that sent something else fails visibly.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, body::Bytes, extract::State, http::StatusCode, routing::post};
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::{AnyValue, KeyValue, any_value},
};
use prost::Message;
use tokio::sync::watch;

/// A span as the receiver recorded it: ids in lowercase hex, attributes as JSON-like values.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedSpan {
    /// `service.name` of the resource that sent it.
    pub service: String,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    pub name: String,
    /// OTLP's `SpanKind` (1 internal, 2 server, 3 client, 4 producer, 5 consumer).
    pub kind: i32,
    pub attributes: HashMap<String, serde_json::Value>,
    /// OTLP's status code (0 unset, 1 ok, 2 error).
    pub status_code: i32,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
}

impl ReceivedSpan {
    /// The attribute `key` as text (strings as they are, numbers and booleans written out).
    pub fn attribute(&self, key: &str) -> Option<String> {
        self.attributes.get(key).map(|value| match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    }
}

#[derive(Default)]
struct Received {
    spans: Mutex<Vec<ReceivedSpan>>,
    /// How many export requests arrived (batches).
    requests: Mutex<usize>,
}

/// The receiver; stops when dropped.
pub struct OtlpReceiver {
    address: SocketAddr,
    received: Arc<Received>,
    /// Bumped at every export, so waiters wake on arrivals instead of polling.
    arrivals: watch::Receiver<usize>,
    server: tokio::task::JoinHandle<()>,
}

impl OtlpReceiver {
    pub async fn start() -> Self {
        let received = Arc::new(Received::default());
        let (arrived, arrivals) = watch::channel(0);
        let app = Router::new()
            .route("/v1/traces", post(export))
            .with_state((received.clone(), Arc::new(arrived)));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the OTLP receiver");
        let address = listener.local_addr().expect("the receiver's address");
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OtlpReceiver { address, received, arrivals, server }
    }

    /// What to set as `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.received.spans.lock().unwrap().clone()
    }

    /// How many spans arrived so far (cheaper than [`OtlpReceiver::spans`] for counting).
    pub fn span_count(&self) -> usize {
        self.received.spans.lock().unwrap().len()
    }

    /// How many export requests arrived so far.
    pub fn export_requests(&self) -> usize {
        *self.received.requests.lock().unwrap()
    }

    /// The spans of trace `trace_id`.
    pub fn trace(&self, trace_id: &str) -> Vec<ReceivedSpan> {
        self.spans().into_iter().filter(|span| span.trace_id == trace_id).collect()
    }

    /// Returns the spans once `done` holds for them (checked at each arrival); panics with what
    /// arrived if it does not within `timeout`.
    pub async fn wait_for(&self, what: &str, timeout: Duration, done: impl Fn(&[ReceivedSpan]) -> bool) -> Vec<ReceivedSpan> {
        let mut arrivals = self.arrivals.clone();
        let arrived = async {
            loop {
                let spans = self.spans();
                if done(&spans) {
                    return spans;
                }
                if arrivals.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        match tokio::time::timeout(timeout, arrived).await {
            Ok(spans) => spans,
            Err(_) => panic!("waited {timeout:?} for {what} in vain; received: {:#?}", self.spans()),
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

type ReceiverState = (Arc<Received>, Arc<watch::Sender<usize>>);

async fn export(State((received, arrived)): State<ReceiverState>, body: Bytes) -> Result<Vec<u8>, (StatusCode, String)> {
    let request = ExportTraceServiceRequest::decode(body).map_err(|e| (StatusCode::BAD_REQUEST, format!("not an ExportTraceServiceRequest: {e}")))?;
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .iter()
            .flat_map(|resource| &resource.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.as_ref())
            .map(text_of)
            .unwrap_or_default();
        for span in resource_spans.scope_spans.into_iter().flat_map(|scope| scope.spans) {
            spans.push(ReceivedSpan {
                service: service.clone(),
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: hex(&span.parent_span_id),
                name: span.name,
                kind: span.kind,
                attributes: span.attributes.iter().map(|KeyValue { key, value, .. }| (key.clone(), value.as_ref().map_or(serde_json::Value::Null, json_of))).collect(),
                status_code: span.status.map_or(0, |status| status.code),
                start_unix_nanos: span.start_time_unix_nano,
                end_unix_nanos: span.end_time_unix_nano,
            });
        }
    }
    received.spans.lock().unwrap().extend(spans);
    *received.requests.lock().unwrap() += 1;
    arrived.send_modify(|n| *n += 1);
    // An empty ExportTraceServiceResponse: no partial success to report.
    Ok(Vec::new())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text_of(value: &AnyValue) -> String {
    match json_of(value) {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    }
}

fn json_of(value: &AnyValue) -> serde_json::Value {
    match &value.value {
        Some(any_value::Value::StringValue(text)) => text.clone().into(),
        Some(any_value::Value::BoolValue(b)) => (*b).into(),
        Some(any_value::Value::IntValue(n)) => (*n).into(),
        Some(any_value::Value::DoubleValue(x)) => (*x).into(),
        Some(any_value::Value::ArrayValue(array)) => array.values.iter().map(json_of).collect(),
        Some(other) => format!("{other:?}").into(),
        None => serde_json::Value::Null,
    }
}
