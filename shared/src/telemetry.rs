//! Logging set-up (and, when asked for, trace export: [`traces`]) and the shutdown signal both
//! binaries use.

pub mod traces;

/// How log lines are written (`QUICKACT_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One human-readable line per event (the default).
    Text,
    /// One JSON object per line, for log collectors: the event's fields at the top level, the
    /// fields of the spans it happened in under `span` (innermost) and `spans` (all of them), so a
    /// run's lines carry its `task_id`, `user_id` and `worker`.
    Json,
}

impl LogFormat {
    /// Reads `QUICKACT_LOG_FORMAT` (`text` or `json`, default `text`).
    pub fn from_env() -> Result<Self, String> {
        Self::parse(std::env::var("QUICKACT_LOG_FORMAT").ok().as_deref())
    }

    fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("text") => Ok(LogFormat::Text),
            Some("json") => Ok(LogFormat::Json),
            Some(other) => Err(format!("QUICKACT_LOG_FORMAT must be \"text\" or \"json\", not {other:?}")),
        }
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`), in the format `QUICKACT_LOG_FORMAT`
/// names. An unknown format is an error, so a typo does not silently give collectors text.
///
/// With an OTLP endpoint set ([`traces::configured`]), also exports traces as
/// `default_service_name` (unless `OTEL_SERVICE_NAME` says otherwise), and returns the exporter,
/// to flush at shutdown. Without one, the subscriber is the logs alone, as if traces did not exist.
pub fn init(default_service_name: &'static str) -> Result<Option<traces::TraceExport>, String> {
    use tracing_subscriber::EnvFilter;
    let format = LogFormat::from_env()?;
    // rmcp logs every MCP session it opens and closes at INFO: three lines per external call.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,apalis=warn,apalis_core=warn,rmcp=warn"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    if traces::configured() {
        return init_with_traces(default_service_name, format, filter, ansi).map(Some);
    }
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(true).try_init(),
        // Colours only on a terminal: log files and collectors get plain text.
        LogFormat::Text => builder.with_ansi(ansi).try_init(),
    };
    Ok(None)
}

/// [`init`] with the OpenTelemetry layer beside the log's. `RUST_LOG` filters the log lines only
/// (a per-layer filter), so quieting the logs does not drop spans from traces; the trace layer has
/// its own filter (see [`traces::start`]).
fn init_with_traces(
    default_service_name: &'static str,
    format: LogFormat,
    filter: tracing_subscriber::EnvFilter,
    ansi: bool,
) -> Result<traces::TraceExport, String> {
    use tracing_subscriber::{Layer, Registry, layer::SubscriberExt, util::SubscriberInitExt};
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log: Box<dyn Layer<Registry> + Send + Sync> = match format {
        LogFormat::Json => log.json().with_current_span(true).with_span_list(true).boxed(),
        LogFormat::Text => log.with_ansi(ansi).boxed(),
    };
    let (export, trace_layer) = traces::start(default_service_name)?;
    let _ = tracing_subscriber::registry().with(log.with_filter(filter)).with(trace_layer).try_init();
    Ok(export)
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => tracing::info!("SIGINT received, shutting down"),
        _ = terminate => tracing::info!("SIGTERM received, shutting down"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_format_is_text_unless_json_is_asked_for_and_a_typo_is_refused() {
        assert_eq!(LogFormat::parse(None), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some("TEXT")), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some(" json ")), Ok(LogFormat::Json));
        assert!(LogFormat::parse(Some("jsno")).unwrap_err().contains("QUICKACT_LOG_FORMAT"));
    }
}
