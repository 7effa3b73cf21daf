//! The worker's own small HTTP listener for `GET /metrics` (`QUICKACT_WORKER_METRICS_BIND`): the
//! tasks it ended, its model turns, tokens, cost and tool calls, the queue's gauges and the tasks it
//! runs now (see `quickact_shared::metrics` for every series).

use std::sync::Arc;

use axum::{Router, extract::State, http::header, response::IntoResponse, routing::get};
use metrics::gauge;
use quickact_shared::metrics::{self as shared_metrics, CONTENT_TYPE, WORKER_RUNNING};
use tokio::net::TcpListener;

use crate::runner::Runner;

/// Serves `GET /metrics` on `listener` until `shutdown` completes.
pub async fn serve_metrics(listener: TcpListener, runner: Arc<Runner>, shutdown: impl Future<Output = ()> + Send + 'static) {
    let app = Router::new().route("/metrics", get(render)).with_state(runner);
    if let Err(err) = axum::serve(listener, app).with_graceful_shutdown(shutdown).await {
        tracing::error!(error = %err, "the metrics listener failed");
    }
}

async fn render(State(runner): State<Arc<Runner>>) -> impl IntoResponse {
    gauge!(WORKER_RUNNING).set(runner.running_count() as f64);
    let body = shared_metrics::render(&shared_metrics::install(), &runner.pool).await;
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], body)
}
