//! The routes of the HTTP contract (docs/api.md), one module per resource.

pub mod admin;
pub mod budgets;
pub mod health;
pub mod items;
pub mod keys;
pub mod mcp_servers;
pub mod parse_time;
pub mod preview;
pub mod quick_action;
pub mod reply;
pub mod stats;
pub mod webhooks;

use chrono::{DateTime, FixedOffset, Utc};
use chrono_tz::Tz;
use quickact_shared::domain::user::User;
use quickact_time::TimeContext;
use uuid::Uuid;

use crate::{error::ApiError, limits::check_text_length};

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

/// The moment and zone a text is read at, for the routes that read a text without running it
/// (`parse_time`, `preview`): `now` (default the server's clock) in `tz` (default the caller's
/// zone). 413 for a text over `limits::MAX_TEXT_CHARS`, as a submission would get; 422 for an unknown zone.
pub fn reading_context(text: &str, now: Option<DateTime<FixedOffset>>, tz: Option<&str>, user: &User) -> Result<TimeContext, ApiError> {
    check_text_length(text)?;
    let tz = parse_time_zone(tz.unwrap_or(&user.time_zone))?;
    let now = now.map_or_else(Utc::now, |n| n.with_timezone(&Utc));
    Ok(TimeContext::new(now, tz))
}
