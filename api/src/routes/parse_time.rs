//! `POST /api/parse-time`: every time expression in a text, with its span and resolution, for
//! clients that highlight dates as the user types (and for testing the resolver).

use axum::{Json, extract::State};
use chrono::{DateTime, FixedOffset};
use quickact_time::{TimeMatch, find_all};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    error::ApiError,
    extract::{Caller, JsonBody},
    openapi::{ErrorBody, ParsedTimesDoc},
    routes::reading_context,
    state::AppState,
};

/// A text to find time expressions in, read at `now` (RFC 3339, default the server's clock) in
/// zone `tz` (default the user's).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"text": "明天下午3点到4点开会", "tz": "Asia/Shanghai"}))]
pub struct ParseTimeRequest {
    text: String,
    now: Option<DateTime<FixedOffset>>,
    tz: Option<String>,
}

/// Every time expression in a text, with its span and resolution.
#[utoipa::path(post, operation_id = "parse_time", path = "/api/parse-time", tag = "time", request_body = ParseTimeRequest,
    responses(
        (status = 200, description = "The expressions found, left to right", body = ParsedTimesDoc),
        (status = 422, description = "An unknown time zone", body = ErrorBody),
    ))]
pub async fn parse_time(
    State(_state): State<AppState>,
    Caller(user): Caller,
    JsonBody(request): JsonBody<ParseTimeRequest>,
) -> Result<Json<Value>, ApiError> {
    let context = reading_context(&request.text, request.now, request.tz.as_deref(), &user)?;
    let matches: Vec<Value> = find_all(&request.text, &context).iter().map(match_json).collect();
    Ok(Json(json!({
        "now": context.now().to_rfc3339(),
        "tz": context.tz().name(),
        "matches": matches,
    })))
}

/// A match as the contract shows it: span, text, then the resolution's fields, absent ones left out.
fn match_json(m: &TimeMatch) -> Value {
    let mut object = Map::new();
    object.insert("span".into(), json!([m.span.0, m.span.1]));
    object.insert("text".into(), json!(m.text));
    if let Value::Object(resolution) = serde_json::to_value(&m.resolution).expect("a resolution serialises") {
        object.extend(resolution.into_iter().filter(|(_, v)| !v.is_null()));
    }
    Value::Object(object)
}
