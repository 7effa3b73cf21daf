//! `POST /api/quick-action/preview`: how the local reader reads a sentence, without running it,
//! for clients that highlight a sentence while it is typed (each frame's parts: the action, the
//! item, the times) and say which words it could not read.
//!
//! Nothing is stored and no task is queued: the answer is the reader's alone (`quickact_reader`),
//! a pure function of the text, the moment and the zone.

use axum::{Json, extract::State};
use chrono::{DateTime, FixedOffset};
use quickact_reader::{Act, Frame, Reading, Unread};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    actions::parse_time::reading_context,
    error::ApiError,
    extract::{Caller, JsonBody},
    openapi::{ErrorBody, PreviewDoc},
    state::AppState,
};

/// A sentence to read, as written at `now` (RFC 3339, default the server's clock) in zone `tz`
/// (default the user's).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"text": "move my dentist appointment to Friday 10am", "tz": "Europe/Paris"}))]
pub struct PreviewRequest {
    /// The sentence, at most 2000 characters.
    text: String,
    now: Option<DateTime<FixedOffset>>,
    tz: Option<String>,
}

/// How the local reader reads a sentence: its frames, the parts of the sentence each came from,
/// and the words it could not read. Nothing is run or stored.
#[utoipa::path(post, operation_id = "preview_quick_action", path = "/api/quick-action/preview", tag = "quick actions", request_body = PreviewRequest,
    responses(
        (status = 200, description = "The reading: one frame per request in the sentence", body = PreviewDoc),
        (status = 422, description = "An unknown time zone", body = ErrorBody),
    ))]
pub async fn preview(
    State(_state): State<AppState>,
    Caller(user): Caller,
    JsonBody(request): JsonBody<PreviewRequest>,
) -> Result<Json<Value>, ApiError> {
    let context = reading_context(&request.text, request.now, request.tz.as_deref(), &user)?;
    let reading = quickact_reader::read(&request.text, &context);
    let certain = reading.is_certain();
    let frames: Vec<Value> = reading.frames.iter().map(|frame| frame_json(frame, &reading)).collect();
    Ok(Json(json!({
        "text": request.text,
        "now": context.now().to_rfc3339(),
        "tz": context.tz().name(),
        "verdict": reading.verdict,
        "certain": certain,
        "frames": frames,
        "unread": reading.unread,
    })))
}

/// A frame as the reader serialises it, with whether it may act as read.
fn frame_json(frame: &Frame, reading: &Reading) -> Value {
    let mut value = serde_json::to_value(frame).expect("a frame serialises");
    if let Value::Object(object) = &mut value {
        object.insert("certain".into(), Value::Bool(frame_is_certain(frame, reading)));
    }
    value
}

/// A frame is certain unless a word the reader could not read lies within its clause, or the
/// frame itself keeps the reading from being certain: something to put down without saying what
/// ("add a task"), which makes a sentence vague (or, beside other requests, uncertain).
fn frame_is_certain(frame: &Frame, reading: &Reading) -> bool {
    let says_what = frame.act != Act::Create || frame.item.is_some();
    says_what && !reading.unread.iter().any(|unread| overlaps(unread, frame.span))
}

/// Whether an unread word and a span (code points, end exclusive) share a code point.
fn overlaps(unread: &Unread, (start, end): (usize, usize)) -> bool {
    unread.span.0 < end && start < unread.span.1
}
