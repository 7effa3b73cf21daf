//! `/api/items`: the caller's items, so a client can show and edit what actions changed.
//! Deleted items are never shown; another user's item is 404.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use chrono::{NaiveDate, NaiveTime, Utc};
use quickact_shared::planner::{
    item::ItemFields,
    patch::{ItemError, ItemPatch, parse_kind, parse_segment, parse_status},
    store,
};
use quickact_time::TimeContext;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    actions::{
        items::{ItemFilter, ItemList, list_items},
        parse_time_zone, parse_uuid_or_404,
    },
    error::ApiError,
    extract::{Caller, JsonBody, QueryParams},
    openapi::{ErrorBody, ItemInputDoc, ItemListDoc},
    state::AppState,
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    kind: Option<String>,
    status: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    q: Option<String>,
    limit: Option<i64>,
}

/// The caller's open and completed items, by date and time.
///
/// `kind`, `status` (`open`, `completed` or `all`), `date_from`/`date_to` (`YYYY-MM-DD`, inclusive),
/// `q` (words in the title or description), `limit` (default 50, at most 200).
#[utoipa::path(get, operation_id = "list_items", path = "/api/items", tag = "items", params(ListParams),
    responses((status = 200, description = "The items", body = ItemListDoc)))]
pub async fn list(
    State(state): State<AppState>,
    Caller(user): Caller,
    QueryParams(params): QueryParams<ListParams>,
) -> Result<Json<ItemList>, ApiError> {
    let filter = ItemFilter { kind: params.kind, status: params.status, date_from: params.date_from, date_to: params.date_to, q: params.q, limit: params.limit };
    Ok(Json(list_items(&state, &user, filter).await?))
}

/// Create an item (`kind` and `title` required; no date means today).
#[utoipa::path(post, operation_id = "create_item", path = "/api/items", tag = "items", request_body = ItemInputDoc,
    responses(
        (status = 201, description = "The item", body = quickact_shared::planner::item::ItemView, links(
            ("GetItem" = (operation_id = "get_item", parameters(("id" = "$response.body#/id")))),
            ("UpdateItem" = (operation_id = "update_item", parameters(("id" = "$response.body#/id")))),
            ("DeleteItem" = (operation_id = "delete_item", parameters(("id" = "$response.body#/id")))),
        )),
        (status = 422, description = "A field breaks the planner's rules (`invalid_item`), or the item quota is reached", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    Caller(user): Caller,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    if !body.contains_key("kind") || !body.contains_key("title") {
        return Err(ApiError::bad_request("invalid_input", "kind and title are required"));
    }
    let time = user_time(&user.time_zone)?;
    let fields = patch_of(&body)?.create(time.today(), &time).map_err(invalid_item)?;
    let created = store::create_item(&state.pool, user.id, &fields, None, state.config.planner.max_items_per_user).await;
    let item = created.map_err(constraint_error)?.map_err(invalid_item)?;
    Ok((StatusCode::CREATED, Json(item.to_json())))
}

/// Read an item.
#[utoipa::path(get, operation_id = "get_item", path = "/api/items/{id}", tag = "items", params(("id" = Uuid, Path, description = "The item")),
    responses(
        (status = 200, description = "The item", body = quickact_shared::planner::item::ItemView),
        (status = 404, description = "No such item (or another user's, or deleted)", body = ErrorBody),
    ))]
pub async fn get(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let item = store::find_item(&state.pool, user.id, id).await?.ok_or(ApiError::NotFound("no such item"))?;
    Ok(Json(item.to_json()))
}

/// Change any subset of an item's fields; `null` clears an optional one.
#[utoipa::path(patch, operation_id = "update_item", path = "/api/items/{id}", tag = "items", params(("id" = Uuid, Path, description = "The item")), request_body = ItemInputDoc,
    responses(
        (status = 200, description = "The item as changed", body = quickact_shared::planner::item::ItemView),
        (status = 404, description = "No such item (or another user's, or deleted)", body = ErrorBody),
        (status = 422, description = "A field breaks the planner's rules (`invalid_item`)", body = ErrorBody),
    ))]
pub async fn update(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let patch = patch_of(&body)?;
    let mut tx = state.pool.begin().await?;
    // Read and write under the user's item lock, so a concurrent change is not lost.
    store::lock_user_items(&mut *tx, user.id).await?;
    let item = store::find_item(&mut *tx, user.id, id).await?.ok_or(ApiError::NotFound("no such item"))?;
    let mut fields = ItemFields::of(&item);
    patch.apply(&mut fields, &user_time(&user.time_zone)?).map_err(invalid_item)?;
    let updated = store::update_item(&mut *tx, user.id, id, &fields, None)
        .await
        .map_err(constraint_error)?
        .ok_or(ApiError::NotFound("no such item"))?;
    tx.commit().await?;
    Ok(Json(updated.to_json()))
}

/// Delete an item; it disappears from every listing.
#[utoipa::path(delete, operation_id = "delete_item", path = "/api/items/{id}", tag = "items", params(("id" = Uuid, Path, description = "The item")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such item (or another user's, or deleted)", body = ErrorBody),
    ))]
pub async fn delete(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    store::delete_item(&state.pool, user.id, id, None).await?.ok_or(ApiError::NotFound("no such item"))?;
    Ok(StatusCode::NO_CONTENT)
}

/// The patch a body in the contract's item shape asks for. Only the JSON shape is checked here
/// (400: unknown fields, wrong types); the values are the planner core's to judge (422).
fn patch_of(body: &Map<String, Value>) -> Result<ItemPatch, ApiError> {
    let mut patch = ItemPatch::default();
    for (key, value) in body {
        let text = || -> Result<Option<String>, ApiError> {
            match value {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
                _ => Err(ApiError::bad_request("invalid_input", format!("{key} must be a string"))),
            }
        };
        match key.as_str() {
            "kind" => patch.kind = Some(parse_kind(&text()?.unwrap_or_default()).map_err(invalid_item)?),
            "title" => patch.title = Some(text()?.unwrap_or_default()),
            "description" => patch.description = Some(text()?),
            "date" => {
                let date = text()?.ok_or_else(|| invalid("date is required".into()))?;
                patch.date = Some(NaiveDate::parse_from_str(&date, "%Y-%m-%d").map_err(|_| invalid(format!("date must be YYYY-MM-DD, got {date:?}")))?);
            }
            "start_time" | "end_time" => {
                let time = text()?
                    .map(|t| NaiveTime::parse_from_str(&t, "%H:%M").map_err(|_| invalid(format!("{key} must be HH:MM, got {t:?}"))))
                    .transpose()?;
                if key == "start_time" { patch.start_time = Some(time) } else { patch.end_time = Some(time) }
            }
            "segment" => patch.segment = Some(text()?.map(|s| parse_segment(&s)).transpose().map_err(invalid_item)?),
            "priority" => {
                patch.priority = Some(match value {
                    Value::Null => None,
                    Value::Number(n) => Some(n.as_i64().ok_or_else(|| invalid_item(ItemError::Priority))?),
                    _ => return Err(invalid_item(ItemError::Priority)),
                })
            }
            "group" => patch.group = Some(text()?),
            "status" => patch.status = Some(parse_status(&text()?.unwrap_or_default()).map_err(invalid_item)?),
            "recurrence" => patch.recurrence = Some(text()?),
            "id" | "created_at" | "updated_at" | "completed_at" => {}
            other => return Err(ApiError::bad_request("invalid_input", format!("unknown field {other:?}"))),
        }
    }
    Ok(patch)
}

/// The user's clock and zone, for "today" and recurrences in words.
fn user_time(time_zone: &str) -> Result<TimeContext, ApiError> {
    Ok(TimeContext::new(Utc::now(), parse_time_zone(time_zone)?))
}

fn invalid(message: String) -> ApiError {
    ApiError::unprocessable("invalid_item", message)
}

fn invalid_item(err: ItemError) -> ApiError {
    invalid(err.to_string())
}

/// A CHECK constraint the validation above did not foresee is still the client's error.
fn constraint_error(err: sqlx::Error) -> ApiError {
    match &err {
        sqlx::Error::Database(db) if db.code().as_deref() == Some("23514") => {
            ApiError::unprocessable("invalid_item", format!("the item is not valid: {}", db.message()))
        }
        _ => err.into(),
    }
}
