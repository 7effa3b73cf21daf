//! The actions a caller can take, as plain async functions over typed inputs and outputs: the REST
//! routes, the MCP tools and the admin page all call these, so the three cannot part. An action
//! takes what it reaches (usually the [`AppState`](crate::state::AppState)), the authenticated
//! caller and its input, does every check and limit of the operation, and answers its result or
//! an [`ApiError`]. How that is put on the wire (status, headers, JSON, a tool result, a redirect)
//! is the caller's business.
//!
//! # Layout
//! - [`submit`]: submit a sentence (the checks, the submit rate, the cap of unfinished tasks,
//!   idempotency, the optional wait for the verdict).
//! - [`tasks`]: read a task, optionally waiting for its verdict (the long-poll); undo a task.
//! - [`items`]: list the caller's items.
//! - [`parse_time`]: every time expression in a text, and the reading context of a text.
//!
//! Actions import nothing from `routes`, `mcp` or `admin_page`: those import actions.

pub mod items;
pub mod parse_time;
pub mod submit;
pub mod tasks;

use chrono_tz::Tz;
use uuid::Uuid;

use crate::error::ApiError;

/// An id a client named as text (a path segment, a tool argument): one that is not even a UUID
/// names nothing, so it is a 404 like any unknown id.
pub fn parse_uuid_or_404(text: &str) -> Result<Uuid, ApiError> {
    text.parse().map_err(|_| ApiError::NotFound("no such resource"))
}

/// An IANA zone name, or 422.
pub fn parse_time_zone(name: &str) -> Result<Tz, ApiError> {
    name.trim()
        .parse::<Tz>()
        .map_err(|_| ApiError::unprocessable("invalid_tz", format!("{name:?} is not an IANA time zone (e.g. Asia/Shanghai)")))
}
