//! `/api/webhooks`: the caller's webhook endpoints, which hear of their tasks' endings
//! (docs/webhooks.md), and their recent deliveries; `/api/admin/webhook-deliveries/{id}/resend`
//! for admins. An endpoint's secret is shown once, when it is created. Another user's endpoint is
//! 404, like an unknown one.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use quickact_shared::{
    store::webhooks::{self as store, Delivery, Endpoint},
    webhooks::{DestinationRefused, VERDICTS, check_destination, check_verdicts, generate_secret},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    actions::parse_uuid_or_404,
    error::ApiError,
    extract::{Admin, Caller, JsonBody, QueryParams},
    openapi::ErrorBody,
    state::AppState,
};

/// Deliveries listed when no `limit` is given, and the most one page holds.
const DEFAULT_DELIVERIES: i64 = 20;
const MAX_DELIVERIES: i64 = 100;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookRequest {
    /// Where to POST: http or https. Private and loopback addresses are refused unless the
    /// deployment allows them (`QUICKACT_WEBHOOK_ALLOW_PRIVATE`).
    url: String,
    /// The verdict types to hear: `action_completed`, `need_clarification`, `error` (default all).
    #[schema(value_type = Option<Vec<quickact_shared::domain::task::ResultType>>, min_items = 1)]
    verdicts: Option<Vec<String>>,
    /// Default true.
    enabled: Option<bool>,
}

/// An endpoint as just created, with its secret (shown this once).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookCreated {
    #[serde(flatten)]
    endpoint: Endpoint,
    /// `whsec_...`: verify deliveries with it (any Standard Webhooks library does).
    secret: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookList {
    endpoints: Vec<Endpoint>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DeliveryList {
    deliveries: Vec<Delivery>,
}

/// A URL an endpoint may have, or 422 saying why not.
async fn checked_url(state: &AppState, url: &str) -> Result<String, ApiError> {
    match check_destination(url, state.config.webhooks.allow_private).await {
        Ok(url) => Ok(url.to_string()),
        Err(refused @ DestinationRefused::Private { .. }) => Err(ApiError::unprocessable("private_address", refused.to_string())),
        Err(refused) => Err(ApiError::unprocessable("invalid_url", refused.to_string())),
    }
}

fn checked_verdicts(verdicts: Vec<String>) -> Result<Vec<String>, ApiError> {
    check_verdicts(&verdicts).map_err(|reason| ApiError::unprocessable("invalid_verdicts", reason))?;
    Ok(verdicts)
}

/// Register an endpoint; the answer holds its secret, shown this once.
#[utoipa::path(post, operation_id = "create_webhook", path = "/api/webhooks", tag = "webhooks", request_body = CreateWebhookRequest,
    responses(
        (status = 201, description = "The endpoint, with its secret", body = WebhookCreated, links(
            ("GetWebhook" = (operation_id = "get_webhook", parameters(("id" = "$response.body#/id")))),
            ("UpdateWebhook" = (operation_id = "update_webhook", parameters(("id" = "$response.body#/id")))),
            ("DeleteWebhook" = (operation_id = "delete_webhook", parameters(("id" = "$response.body#/id")))),
            ("ListWebhookDeliveries" = (operation_id = "list_webhook_deliveries", parameters(("id" = "$response.body#/id")))),
        )),
        (status = 422, description = "A bad URL, a private address, an unknown verdict type", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    Caller(user): Caller,
    JsonBody(request): JsonBody<CreateWebhookRequest>,
) -> Result<(StatusCode, Json<WebhookCreated>), ApiError> {
    // The verdict types first: checking them costs no DNS lookup.
    let verdicts = checked_verdicts(request.verdicts.unwrap_or_else(|| VERDICTS.iter().map(|v| v.to_string()).collect()))?;
    let url = checked_url(&state, &request.url).await?;
    let secret = generate_secret();
    let endpoint = store::create_endpoint(&state.pool, user.id, &url, &secret, &verdicts, request.enabled.unwrap_or(true)).await?;
    tracing::info!(user_id = %user.id, endpoint_id = %endpoint.id, "webhook endpoint registered");
    Ok((StatusCode::CREATED, Json(WebhookCreated { endpoint, secret })))
}

/// The caller's endpoints, oldest first (without their secrets).
#[utoipa::path(get, operation_id = "list_webhooks", path = "/api/webhooks", tag = "webhooks",
    responses((status = 200, description = "The caller's endpoints", body = WebhookList)))]
pub async fn list(State(state): State<AppState>, Caller(user): Caller) -> Result<Json<WebhookList>, ApiError> {
    Ok(Json(WebhookList { endpoints: store::list_endpoints(&state.pool, user.id).await? }))
}

/// One of the caller's endpoints.
#[utoipa::path(get, operation_id = "get_webhook", path = "/api/webhooks/{id}", tag = "webhooks", params(("id" = Uuid, Path, description = "The endpoint")),
    responses(
        (status = 200, description = "The endpoint", body = Endpoint),
        (status = 404, description = "No such endpoint (or another user's)", body = ErrorBody),
    ))]
pub async fn get(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<Json<Endpoint>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let endpoint = store::find_endpoint(&state.pool, id, user.id).await?.ok_or(ApiError::NotFound("no such webhook"))?;
    Ok(Json(endpoint))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhookRequest {
    url: Option<String>,
    verdicts: Option<Vec<String>>,
    /// Enabling an endpoint the service disabled (410 Gone) clears its `disabled_reason`.
    enabled: Option<bool>,
}

/// Change an endpoint's URL, verdict types or switch.
#[utoipa::path(patch, operation_id = "update_webhook", path = "/api/webhooks/{id}", tag = "webhooks", params(("id" = Uuid, Path, description = "The endpoint")),
    request_body = UpdateWebhookRequest,
    responses(
        (status = 200, description = "The endpoint as changed", body = Endpoint),
        (status = 404, description = "No such endpoint (or another user's)", body = ErrorBody),
        (status = 422, description = "A bad URL, a private address, an unknown verdict type", body = ErrorBody),
    ))]
pub async fn update(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    JsonBody(request): JsonBody<UpdateWebhookRequest>,
) -> Result<Json<Endpoint>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    // Whose it is comes before what the request asks.
    store::find_endpoint(&state.pool, id, user.id).await?.ok_or(ApiError::NotFound("no such webhook"))?;
    let verdicts = request.verdicts.map(checked_verdicts).transpose()?;
    let url = match &request.url {
        Some(url) => Some(checked_url(&state, url).await?),
        None => None,
    };
    let endpoint = store::update_endpoint(&state.pool, id, user.id, url.as_deref(), verdicts.as_deref(), request.enabled)
        .await?
        .ok_or(ApiError::NotFound("no such webhook"))?;
    Ok(Json(endpoint))
}

/// Remove an endpoint and its deliveries.
#[utoipa::path(delete, operation_id = "delete_webhook", path = "/api/webhooks/{id}", tag = "webhooks", params(("id" = Uuid, Path, description = "The endpoint")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such endpoint (or another user's)", body = ErrorBody),
    ))]
pub async fn delete(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    if !store::delete_endpoint(&state.pool, id, user.id).await? {
        return Err(ApiError::NotFound("no such webhook"));
    }
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesParams {
    /// How many, newest first: default 20, at most 100.
    limit: Option<i64>,
}

/// An endpoint's recent deliveries, newest first, each with its attempts (status, latency, error).
#[utoipa::path(get, operation_id = "list_webhook_deliveries", path = "/api/webhooks/{id}/deliveries", tag = "webhooks",
    params(("id" = Uuid, Path, description = "The endpoint"), DeliveriesParams),
    responses(
        (status = 200, description = "Recent deliveries", body = DeliveryList, links(
            ("ResendDelivery" = (operation_id = "admin_resend_webhook_delivery", parameters(("id" = "$response.body#/deliveries/0/id")))),
        )),
        (status = 404, description = "No such endpoint (or another user's)", body = ErrorBody),
    ))]
pub async fn deliveries(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    QueryParams(params): QueryParams<DeliveriesParams>,
) -> Result<Json<DeliveryList>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    store::find_endpoint(&state.pool, id, user.id).await?.ok_or(ApiError::NotFound("no such webhook"))?;
    let limit = params.limit.unwrap_or(DEFAULT_DELIVERIES).clamp(1, MAX_DELIVERIES);
    Ok(Json(DeliveryList { deliveries: store::list_deliveries(&state.pool, id, limit).await? }))
}

/// Admins: send a delivery again (a fresh set of attempts, the same event id).
#[utoipa::path(post, operation_id = "admin_resend_webhook_delivery", path = "/api/admin/webhook-deliveries/{id}/resend", tag = "admin",
    params(("id" = Uuid, Path, description = "The delivery")),
    responses(
        (status = 202, description = "Due again now"),
        (status = 404, description = "No such delivery", body = ErrorBody),
    ))]
pub async fn resend(State(state): State<AppState>, Admin(admin): Admin, Path(id): Path<String>) -> Result<(StatusCode, Json<Value>), ApiError> {
    let id = parse_uuid_or_404(&id)?;
    if !store::resend_delivery(&state.pool, id).await? {
        return Err(ApiError::NotFound("no such delivery"));
    }
    tracing::info!(admin_id = %admin.id, delivery_id = %id, "webhook delivery sent again");
    Ok((StatusCode::ACCEPTED, Json(json!({ "delivery_id": id, "status": "pending" }))))
}
