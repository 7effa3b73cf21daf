//! Reading the time expressions of a text without running it: every expression with its span and
//! resolution (`POST /api/parse-time`, MCP's `parse_time`), and the moment and zone a text is read
//! at (also the preview's).

use chrono::{DateTime, FixedOffset, Utc};
use quickact_shared::domain::user::User;
use quickact_time::{TimeContext, TimeMatch, find_all};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::{actions::parse_time_zone, error::ApiError, limits::check_text_length};

/// A text to find time expressions in, read at `now` (default the server's clock) in zone `tz`
/// (default the caller's).
#[derive(Debug)]
pub struct TextToRead {
    pub text: String,
    pub now: Option<DateTime<FixedOffset>>,
    pub tz: Option<String>,
}

/// The expressions found, left to right, and the moment and zone they were read at. The fields
/// are in the order the answer has always listed them: by name, as a JSON object's keys.
#[derive(Debug, Serialize)]
pub struct ParsedTimes {
    /// Each match: span, text, then the resolution's fields, absent ones left out.
    pub matches: Vec<Value>,
    /// RFC 3339.
    pub now: String,
    /// The IANA zone.
    pub tz: String,
}

/// Every time expression in `request.text`, with its span and resolution: 413 for a text over
/// `limits::MAX_TEXT_CHARS`, 422 for an unknown zone.
pub fn parse_time(user: &User, request: TextToRead) -> Result<ParsedTimes, ApiError> {
    let context = reading_context(&request.text, request.now, request.tz.as_deref(), user)?;
    Ok(ParsedTimes {
        matches: find_all(&request.text, &context).iter().map(match_json).collect(),
        now: context.now().to_rfc3339(),
        tz: context.tz().name().to_owned(),
    })
}

/// The moment and zone a text is read at, for the actions and routes that read a text without
/// running it (`parse_time`, the preview): `now` (default the server's clock) in `tz` (default the
/// caller's zone). 413 for a text over `limits::MAX_TEXT_CHARS`, as a submission would get; 422
/// for an unknown zone.
pub fn reading_context(text: &str, now: Option<DateTime<FixedOffset>>, tz: Option<&str>, user: &User) -> Result<TimeContext, ApiError> {
    check_text_length(text)?;
    let tz = parse_time_zone(tz.unwrap_or(&user.time_zone))?;
    let now = now.map_or_else(Utc::now, |n| n.with_timezone(&Utc));
    Ok(TimeContext::new(now, tz))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsed_times_list_their_fields_as_the_json_object_did() {
        let parsed = ParsedTimes { matches: vec![json!({"span": [0, 2], "text": "明天"})], now: "2026-02-07T09:00:00+08:00".into(), tz: "Asia/Shanghai".into() };
        let as_object = json!({ "now": parsed.now, "tz": parsed.tz, "matches": parsed.matches });
        assert_eq!(serde_json::to_string(&parsed).unwrap(), as_object.to_string());
    }
}
