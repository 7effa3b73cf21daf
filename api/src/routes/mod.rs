//! The routes of the HTTP contract (docs/api.md), one module per resource.

pub mod admin;
pub mod budgets;
pub mod health;
pub mod items;
pub mod keys;
pub mod mcp_servers;
pub mod parse_time;
pub mod quick_action;
pub mod reply;
pub mod stats;
pub mod webhooks;

use chrono_tz::Tz;
use uuid::Uuid;

use crate::error::ApiError;

/// A path id that is not even a UUID names no task: 404, like any unknown id.
pub fn parse_uuid_or_404(text: &str) -> Result<Uuid, ApiError> {
    text.parse().map_err(|_| ApiError::NotFound("no such resource"))
}

/// An IANA zone name, or 422.
pub fn parse_time_zone(name: &str) -> Result<Tz, ApiError> {
    name.trim()
        .parse::<Tz>()
        .map_err(|_| ApiError::unprocessable("invalid_tz", format!("{name:?} is not an IANA time zone (e.g. Asia/Shanghai)")))
}
