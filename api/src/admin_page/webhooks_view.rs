//! Webhook endpoints, the deployment's and every user's: each with how many of its deliveries were
//! delivered, are pending and failed, its recent deliveries with their last error, and a button to
//! send one again (through the same store function as `POST /api/admin/webhook-deliveries/{id}/resend`).

use askama::Template;
use axum::{
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use quickact_shared::store::webhooks as store;
use uuid::Uuid;

use super::{
    page::{Chrome, Moment, PageError, html},
    session::{AdminSession, ButtonPress},
};
use crate::{actions::parse_uuid_or_404, state::AppState};

/// Recent deliveries shown per endpoint.
const DELIVERIES_SHOWN: i64 = 10;

pub struct EndpointRow {
    pub id: Uuid,
    /// The owner's name, or `deployment` for a configured endpoint.
    pub owner: String,
    pub url: String,
    pub verdicts: String,
    pub enabled: bool,
    pub disabled_reason: String,
    pub delivered: i64,
    pub pending: i64,
    pub failed: i64,
    pub deliveries: Vec<DeliveryRow>,
}

pub struct DeliveryRow {
    pub id: Uuid,
    pub event_id: String,
    pub task_id: Uuid,
    pub result_type: String,
    pub status: &'static str,
    pub attempts: i32,
    /// The last attempt's HTTP status, if one answered.
    pub last_status: String,
    pub last_error: String,
    pub created_at: Moment,
}

#[derive(Template)]
#[template(path = "admin/webhooks.html")]
struct WebhooksPage {
    chrome: Chrome,
    endpoints: Vec<EndpointRow>,
}

/// `GET /admin/webhooks`
pub async fn list(State(state): State<AppState>, session: AdminSession) -> Result<Response, PageError> {
    let mut endpoints = Vec::new();
    for summary in store::endpoint_summaries(&state.pool).await? {
        let deliveries = store::list_deliveries(&state.pool, summary.endpoint.id, DELIVERIES_SHOWN)
            .await?
            .into_iter()
            .map(|d| {
                let last = d.attempt_log.as_array().and_then(|log| log.last()).cloned().unwrap_or_default();
                DeliveryRow {
                    id: d.id,
                    event_id: d.event_id,
                    task_id: d.task_id,
                    result_type: d.result_type,
                    status: d.status.as_str(),
                    attempts: d.attempts,
                    last_status: last["status_code"].as_i64().map(|s| s.to_string()).unwrap_or_default(),
                    last_error: d.last_error.unwrap_or_default(),
                    created_at: Moment::of(&d.created_at),
                }
            })
            .collect();
        let endpoint = summary.endpoint;
        endpoints.push(EndpointRow {
            id: endpoint.id,
            owner: summary.user_name.unwrap_or_else(|| "deployment".to_owned()),
            url: endpoint.url,
            verdicts: endpoint.verdicts.join(", "),
            enabled: endpoint.enabled,
            disabled_reason: endpoint.disabled_reason.unwrap_or_default(),
            delivered: summary.delivered,
            pending: summary.pending,
            failed: summary.failed,
            deliveries,
        });
    }
    Ok(html(&WebhooksPage { chrome: Chrome { admin: session.user.name, csrf: session.csrf, section: "webhooks" }, endpoints }))
}

/// `POST /admin/webhook-deliveries/{id}/resend`: makes the delivery due again and shows the page.
pub async fn resend(State(state): State<AppState>, Path(id): Path<String>, ButtonPress(session): ButtonPress) -> Result<Response, PageError> {
    let id = parse_uuid_or_404(&id)?;
    if !store::resend_delivery(&state.pool, id).await? {
        return Err(PageError::new(axum::http::StatusCode::NOT_FOUND, "no such delivery"));
    }
    tracing::info!(admin_id = %session.user.id, delivery_id = %id, "webhook delivery sent again (admin page)");
    Ok(Redirect::to("/admin/webhooks").into_response())
}
