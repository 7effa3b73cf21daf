//! `/api/keys`: the caller's own API keys. A key is shown once, when it is created; afterwards only
//! its first characters. Rotating is creating a new key and revoking the old one, in one request
//! if the caller asks (`{"rotate": true}` revokes the key that made the request).

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
};
use quickact_shared::{domain::user::generate_api_key, store::users};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    actions::parse_uuid_or_404,
    error::ApiError,
    extract::{Caller, JsonBody, bearer_key},
    openapi::{ErrorBody, KeyCreatedDoc, KeyListDoc},
    state::AppState,
};

/// The caller's keys, newest first, revoked ones with `revoked_at`.
#[utoipa::path(get, operation_id = "list_keys", path = "/api/keys", tag = "keys", responses((status = 200, description = "The caller's keys", body = KeyListDoc)))]
pub async fn list(State(state): State<AppState>, Caller(user): Caller, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let current = match bearer_key(&headers) {
        Some(key) => users::find_api_key_id(&state.pool, key).await?,
        None => None,
    };
    let keys = users::list_api_keys(&state.pool, user.id).await?;
    let keys: Vec<Value> = keys
        .iter()
        .map(|key| {
            let mut shown = json!(key);
            shown["current"] = json!(Some(key.id) == current);
            shown
        })
        .collect();
    Ok(Json(json!({ "keys": keys })))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// Also revoke the key this request was made with.
    #[serde(default)]
    rotate: bool,
}

/// Create a key (shown this once); `{"rotate": true}` also revokes the key of this request.
#[utoipa::path(post, operation_id = "create_key", path = "/api/keys", tag = "keys", request_body(content = Option<CreateKeyRequest>, description = "Optional"),
    responses((status = 201, description = "The new key", body = KeyCreatedDoc)))]
pub async fn create(
    State(state): State<AppState>,
    Caller(user): Caller,
    headers: HeaderMap,
    body: Option<JsonBody<CreateKeyRequest>>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let request = body.map(|JsonBody(request)| request).unwrap_or_default();
    let secret = generate_api_key();
    let mut tx = state.pool.begin().await?;
    let key = users::insert_api_key(&mut *tx, user.id, &secret).await?.ok_or(ApiError::Unavailable)?;
    let mut revoked = None;
    if request.rotate {
        let current = match bearer_key(&headers) {
            Some(key) => users::find_api_key_id(&mut *tx, key).await?,
            None => None,
        };
        if let Some(id) = current {
            revoked = users::revoke_api_key(&mut *tx, id, Some(user.id)).await?;
        }
    }
    tx.commit().await?;
    if revoked.is_some() {
        // Other processes hear it from the trigger; this one answers the next request right.
        state.notifications.credentials().invalidate_user(user.id);
    }
    tracing::info!(user_id = %user.id, key_id = %key.id, rotated = revoked.is_some(), "API key created");
    let mut body = json!({ "key": key, "api_key": secret });
    if let Some(revoked) = revoked {
        body["revoked"] = json!(revoked);
    }
    Ok((StatusCode::CREATED, Json(body)))
}

/// Revoke one of the caller's keys, at once on every API process.
///
/// Another user's key is 404, like an unknown one.
#[utoipa::path(delete, operation_id = "revoke_key", path = "/api/keys/{id}", tag = "keys", params(("id" = Uuid, Path, description = "The key")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 404, description = "No such key", body = ErrorBody),
    ))]
pub async fn revoke(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    users::revoke_api_key(&state.pool, id, Some(user.id)).await?.ok_or(ApiError::NotFound("no such key"))?;
    state.notifications.credentials().invalidate_user(user.id);
    tracing::info!(user_id = %user.id, key_id = %id, "API key revoked");
    Ok(StatusCode::NO_CONTENT)
}
