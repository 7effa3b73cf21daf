//! Liveness and readiness, outside `/api` and without authentication.

use axum::{
    Json,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
};
use serde_json::{Value, json};

use crate::{
    openapi::{HealthDoc, ReadinessDoc},
    state::AppState,
};

/// The process is up.
#[utoipa::path(get, operation_id = "health", path = "/health", tag = "health", responses((status = 200, description = "Up", body = HealthDoc)))]
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// This process's Prometheus metrics (the queue's gauges read now). Like `/health` it takes no
/// key: it shows counts and latencies, never a task's content or a user.
#[utoipa::path(get, operation_id = "metrics", path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain", body = String)))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let body = quickact_shared::metrics::render(&state.metrics, &state.pool).await;
    ([(header::CONTENT_TYPE, quickact_shared::metrics::CONTENT_TYPE)], body)
}

/// The database answers and the notification listener is connected (long-poll wakeups would
/// otherwise be late).
#[utoipa::path(get, operation_id = "ready", path = "/ready", tag = "health",
    responses(
        (status = 200, description = "Ready", body = ReadinessDoc),
        (status = 503, description = "Not ready", body = ReadinessDoc),
    ))]
pub async fn ready(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let database = sqlx::query_scalar!("SELECT 1 AS \"one!\"").fetch_one(&state.pool).await.is_ok();
    let listener = state.notifications.is_connected();
    let status = if database && listener { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({ "database": database, "listener": listener, "ready": status == StatusCode::OK })))
}
