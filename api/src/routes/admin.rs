//! `/api/admin/*`: everyone's history, user creation and key revocation. Admins only.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use chrono::{DateTime, NaiveDate, Utc};
use quickact_shared::{
    domain::{
        task::{ResultType, TaskStatus},
        user::{User, generate_api_key},
    },
    store::{tasks::TaskFilter, users},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{
    actions::{parse_time_zone, parse_uuid_or_404},
    error::ApiError,
    extract::{Admin, JsonBody, QueryParams},
    routes::quick_action::list_page,
    openapi::{ErrorBody, KeyListDoc, UserCreatedDoc},
    state::AppState,
    views::TaskPage,
};

/// The admin listing's query (also the admin page's history filters).
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AdminListParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Everyone's tasks, newest first, filtered.
///
/// `since`/`until` take RFC 3339 or `YYYY-MM-DD` (`until` exclusive); `q` is a case-insensitive
/// substring of the sentence.
#[utoipa::path(get, operation_id = "admin_list_quick_actions", path = "/api/admin/quick-actions", tag = "admin", params(AdminListParams),
    responses((status = 200, description = "One page of tasks", body = TaskPage)))]
pub async fn list_quick_actions(
    State(state): State<AppState>,
    Admin(_): Admin,
    QueryParams(params): QueryParams<AdminListParams>,
) -> Result<Json<TaskPage>, ApiError> {
    let filter = task_filter(params.clone())?;
    list_page(&state, &filter, params.limit, params.cursor.as_deref()).await.map(Json)
}

/// The task filter the query asks for (400 for a malformed value).
pub fn task_filter(params: AdminListParams) -> Result<TaskFilter, ApiError> {
    let non_empty = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    Ok(TaskFilter {
        user_id: non_empty(params.user_id)
            .map(|id| id.parse::<Uuid>().map_err(|_| ApiError::bad_request("invalid_query", "user_id must be a UUID")))
            .transpose()?,
        status: non_empty(params.status)
            .map(|s| {
                s.parse::<TaskStatus>()
                    .map_err(|_| ApiError::bad_request("invalid_query", format!("unknown status {s:?}")))
            })
            .transpose()?,
        result_type: non_empty(params.result_type)
            .map(|s| {
                s.parse::<ResultType>()
                    .map_err(|_| ApiError::bad_request("invalid_query", format!("unknown result_type {s:?}")))
            })
            .transpose()?,
        since: non_empty(params.since).map(|s| parse_instant(&s, "since")).transpose()?,
        until: non_empty(params.until).map(|s| parse_instant(&s, "until")).transpose()?,
        text: non_empty(params.q),
        model: non_empty(params.model),
    })
}

/// RFC 3339, or a bare date (its midnight, UTC).
pub fn parse_instant(text: &str, name: &str) -> Result<DateTime<Utc>, ApiError> {
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(instant.with_timezone(&Utc));
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    Err(ApiError::bad_request("invalid_query", format!("{name} must be an RFC 3339 time or a YYYY-MM-DD date")))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "alice", "tz": "Asia/Shanghai"}))]
pub struct CreateUserRequest {
    name: String,
    #[serde(default)]
    is_admin: bool,
    #[serde(default)]
    tz: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// Create a user and their first API key (shown this once).
#[utoipa::path(post, operation_id = "admin_create_user", path = "/api/admin/users", tag = "admin", request_body = CreateUserRequest,
    responses(
        (status = 201, description = "The user and their key", body = UserCreatedDoc, links(
            ("ListUserKeys" = (operation_id = "admin_list_user_keys", parameters(("id" = "$response.body#/user/id")))),
            ("GetUserBudget" = (operation_id = "admin_get_user_budget", parameters(("id" = "$response.body#/user/id")))),
            ("SetUserBudget" = (operation_id = "admin_set_user_budget", parameters(("id" = "$response.body#/user/id")))),
        )),
        (status = 422, description = "An unknown time zone", body = ErrorBody),
    ))]
pub async fn create_user(
    State(state): State<AppState>,
    Admin(admin): Admin,
    JsonBody(request): JsonBody<CreateUserRequest>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (user, key) = create_user_with_key(&state, &admin, &request.name, request.is_admin, request.tz.as_deref(), request.model.as_deref()).await?;
    Ok((StatusCode::CREATED, Json(json!({ "user": user, "api_key": key }))))
}

/// Creates a user with a first API key (also the admin page's form); returns both, the key in clear
/// this once.
pub async fn create_user_with_key(
    state: &AppState,
    admin: &User,
    name: &str,
    is_admin: bool,
    tz: Option<&str>,
    model: Option<&str>,
) -> Result<(User, String), ApiError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(ApiError::bad_request("invalid_input", "name must be 1 to 200 characters"));
    }
    // Postgres text cannot hold NUL: refuse it here rather than fail on the insert.
    if name.contains('\0') || model.is_some_and(|m| m.contains('\0')) {
        return Err(ApiError::bad_request("invalid_input", "name and model must not contain NUL characters"));
    }
    let tz = match tz.map(str::trim).filter(|tz| !tz.is_empty()) {
        Some(tz) => parse_time_zone(tz)?,
        None => state.config.default_tz,
    };
    let model = model.map(str::trim).filter(|m| !m.is_empty());
    let key = generate_api_key();
    let mut tx = state.pool.begin().await?;
    let user = users::insert_user(&mut *tx, name, is_admin, tz.name(), model).await?;
    users::insert_api_key(&mut *tx, user.id, &key).await?;
    tx.commit().await?;
    tracing::info!(user_id = %user.id, created_by = %admin.id, is_admin = user.is_admin, "user created");
    Ok((user, key))
}

/// Any user's keys (never the secrets).
#[utoipa::path(get, operation_id = "admin_list_user_keys", path = "/api/admin/users/{id}/keys", tag = "admin", params(("id" = Uuid, Path, description = "The user")),
    responses(
        (status = 200, description = "The user's keys", body = KeyListDoc),
        (status = 404, description = "No such user", body = ErrorBody),
    ))]
pub async fn list_user_keys(State(state): State<AppState>, Admin(_): Admin, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    users::find_user(&state.pool, id).await?.ok_or(ApiError::NotFound("no such user"))?;
    Ok(Json(json!({ "keys": users::list_api_keys(&state.pool, id).await? })))
}

/// Revoke anyone's key, at once on every API process.
#[utoipa::path(delete, operation_id = "admin_revoke_key", path = "/api/admin/keys/{id}", tag = "admin", params(("id" = Uuid, Path, description = "The key")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 404, description = "No such key", body = ErrorBody),
    ))]
pub async fn revoke_key(State(state): State<AppState>, Admin(admin): Admin, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    revoke_any_key(&state, &admin, parse_uuid_or_404(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Revokes anyone's key `id` (also the admin page's button) and tells this process's key cache at
/// once (other processes hear it over LISTEN). Returns the key's owner.
pub async fn revoke_any_key(state: &AppState, admin: &User, id: Uuid) -> Result<Uuid, ApiError> {
    let key = users::revoke_api_key(&state.pool, id, None).await?.ok_or(ApiError::NotFound("no such key"))?;
    state.notifications.credentials().invalidate_user(key.user_id);
    tracing::info!(key_id = %id, user_id = %key.user_id, revoked_by = %admin.id, "API key revoked by an admin");
    Ok(key.user_id)
}
