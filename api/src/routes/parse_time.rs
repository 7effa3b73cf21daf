//! `POST /api/parse-time`: every time expression in a text, with its span and resolution, for
//! clients that highlight dates as the user types (and for testing the resolver).

use axum::{Json, extract::State};
use chrono::{DateTime, FixedOffset};
use serde::Deserialize;

use crate::{
    actions::{self, parse_time::{ParsedTimes, TextToRead}},
    error::ApiError,
    extract::{Caller, JsonBody},
    openapi::{ErrorBody, ParsedTimesDoc},
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
) -> Result<Json<ParsedTimes>, ApiError> {
    let text = TextToRead { text: request.text, now: request.now, tz: request.tz };
    Ok(Json(actions::parse_time::parse_time(&user, text)?))
}
