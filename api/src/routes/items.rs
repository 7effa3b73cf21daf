//! `/api/items`: the caller's items, so a client can show and edit what actions changed.
//! Deleted items are never shown; another user's item is 404.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use chrono::{NaiveDate, NaiveTime, Utc};
use quickact_shared::{
    planner::{
        item::{ItemKind, ItemRecord, ItemStatus},
        rules::{widen_from, widen_to},
        store::{self, ItemFields, ItemQuery, SortKey},
    },
};
use quickact_time::Segment;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    error::ApiError,
    extract::{Caller, JsonBody, QueryParams},
    routes::{parse_time_zone, parse_uuid_or_404},
    state::AppState,
};

const DEFAULT_LIST_LIMIT: i64 = 50;
const MAX_LIST_LIMIT: i64 = 200;

#[derive(Debug, Deserialize)]
pub struct ListParams {
    kind: Option<String>,
    status: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    q: Option<String>,
    limit: Option<i64>,
}

/// `GET /api/items`: open and completed items, by date and time.
pub async fn list(
    State(state): State<AppState>,
    Caller(user): Caller,
    QueryParams(params): QueryParams<ListParams>,
) -> Result<Json<Value>, ApiError> {
    let bad = |m: String| ApiError::bad_request("invalid_query", m);
    let present = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let kind = match present(&params.kind) {
        Some(k) => Some(k.parse::<ItemKind>().map_err(|_| bad(format!("unknown kind {k:?}")))?.as_str().to_owned()),
        None => None,
    };
    let status = match present(&params.status) {
        Some(s) if s == "all" => None,
        Some(s) => Some(s.parse::<ItemStatus>().map_err(|_| bad(format!("unknown status {s:?}")))?.as_str().to_owned()),
        None => None,
    };
    let date = |v: &Option<String>, name: &str| -> Result<Option<NaiveDate>, ApiError> {
        present(v).map(|d| NaiveDate::parse_from_str(&d, "%Y-%m-%d").map_err(|_| bad(format!("{name} must be YYYY-MM-DD")))).transpose()
    };
    let limit = params.limit.unwrap_or(DEFAULT_LIST_LIMIT);
    if limit < 1 {
        return Err(bad("limit must be at least 1".into()));
    }
    let query = ItemQuery {
        kind,
        status,
        from: date(&params.date_from, "date_from")?.map(widen_from),
        to: date(&params.date_to, "date_to")?.map(widen_to),
        terms: present(&params.q).map(|q| q.split_whitespace().map(str::to_owned).collect()).unwrap_or_default(),
        sort: SortKey::Deadline,
        descending: false,
        limit: limit.min(MAX_LIST_LIMIT),
        relaxed: false,
    };
    let mut connection = state.pool.acquire().await?;
    let (items, _) = store::search_items(&mut connection, user.id, &query).await?;
    Ok(Json(json!({ "items": items.iter().map(ItemRecord::to_json).collect::<Vec<_>>() })))
}

/// `POST /api/items`
pub async fn create(
    State(state): State<AppState>,
    Caller(user): Caller,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let today = Utc::now().with_timezone(&parse_time_zone(&user.time_zone)?).date_naive();
    let mut fields = ItemFields {
        kind: String::new(),
        title: String::new(),
        description: None,
        date: today,
        start_time: None,
        end_time: None,
        segment: None,
        priority: None,
        item_group: None,
        status: "open".into(),
        recurrence: None,
    };
    if !body.contains_key("kind") || !body.contains_key("title") {
        return Err(ApiError::bad_request("invalid_input", "kind and title are required"));
    }
    apply_fields(&mut fields, &body)?;
    let item = store::insert_item(&state.pool, user.id, &fields, None).await.map_err(constraint_error)?;
    Ok((StatusCode::CREATED, Json(item.to_json())))
}

/// `GET /api/items/{id}`
pub async fn get(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let item = store::find_item(&state.pool, user.id, id).await?.ok_or(ApiError::NotFound("no such item"))?;
    Ok(Json(item.to_json()))
}

/// `PATCH /api/items/{id}`: any subset of the fields; `null` clears an optional one.
pub async fn update(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    let mut tx = state.pool.begin().await?;
    let item = store::find_item(&mut *tx, user.id, id).await?.ok_or(ApiError::NotFound("no such item"))?;
    let mut fields = ItemFields::of(&item);
    apply_fields(&mut fields, &body)?;
    let updated = store::update_item(&mut *tx, user.id, id, &fields, None)
        .await
        .map_err(constraint_error)?
        .ok_or(ApiError::NotFound("no such item"))?;
    tx.commit().await?;
    Ok(Json(updated.to_json()))
}

/// `DELETE /api/items/{id}`: 204; the item disappears from every listing.
pub async fn delete(State(state): State<AppState>, Caller(user): Caller, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    store::delete_item(&state.pool, user.id, id, None).await?.ok_or(ApiError::NotFound("no such item"))?;
    Ok(StatusCode::NO_CONTENT)
}

/// Applies the fields present in `body` (the contract's item shape) to `fields`.
fn apply_fields(fields: &mut ItemFields, body: &Map<String, Value>) -> Result<(), ApiError> {
    let invalid = |m: String| ApiError::unprocessable("invalid_item", m);
    let text = |key: &str, value: &Value| -> Result<Option<String>, ApiError> {
        match value {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
            _ => Err(ApiError::bad_request("invalid_input", format!("{key} must be a string"))),
        }
    };
    for (key, value) in body {
        match key.as_str() {
            "kind" => {
                let kind = text(key, value)?.ok_or_else(|| invalid("kind is required".into()))?;
                fields.kind = kind.parse::<ItemKind>().map_err(|_| invalid(format!("kind must be event, todo or reminder, got {kind:?}")))?.as_str().to_owned();
            }
            "title" => {
                let title = text(key, value)?.ok_or_else(|| invalid("title must not be empty".into()))?;
                if title.chars().count() > 500 {
                    return Err(invalid("title is longer than 500 characters".into()));
                }
                fields.title = title;
            }
            "description" => fields.description = text(key, value)?,
            "date" => {
                let date = text(key, value)?.ok_or_else(|| invalid("date is required".into()))?;
                fields.date = NaiveDate::parse_from_str(&date, "%Y-%m-%d").map_err(|_| invalid(format!("date must be YYYY-MM-DD, got {date:?}")))?;
            }
            "start_time" | "end_time" => {
                let time = text(key, value)?
                    .map(|t| NaiveTime::parse_from_str(&t, "%H:%M").map_err(|_| invalid(format!("{key} must be HH:MM, got {t:?}"))))
                    .transpose()?;
                if key == "start_time" { fields.start_time = time } else { fields.end_time = time }
            }
            "segment" => {
                fields.segment = text(key, value)?
                    .map(|s| s.parse::<Segment>().map(|s| s.as_str().to_owned()).map_err(|_| invalid(format!("unknown segment {s:?}"))))
                    .transpose()?;
            }
            "priority" => {
                fields.priority = match value {
                    Value::Null => None,
                    Value::Number(n) if n.as_i64().is_some_and(|p| (1..=4).contains(&p)) => n.as_i64().map(|p| p as i16),
                    _ => return Err(invalid("priority must be an integer from 1 to 4".into())),
                }
            }
            "group" => fields.item_group = text(key, value)?,
            "status" => {
                let status = text(key, value)?.ok_or_else(|| invalid("status must be open or completed".into()))?;
                fields.status = status.parse::<ItemStatus>().map_err(|_| invalid(format!("status must be open or completed, got {status:?}")))?.as_str().to_owned();
            }
            "recurrence" => fields.recurrence = text(key, value)?.map(|r| r.trim_start_matches("RRULE:").to_owned()),
            "id" | "created_at" | "updated_at" | "completed_at" => {}
            other => return Err(ApiError::bad_request("invalid_input", format!("unknown field {other:?}"))),
        }
    }
    if fields.end_time.is_some() && fields.start_time.is_none() {
        return Err(invalid("end_time needs a start_time".into()));
    }
    if fields.segment.is_some() && fields.start_time.is_some() {
        return Err(invalid("an item has either clock times or a segment, not both".into()));
    }
    Ok(())
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
