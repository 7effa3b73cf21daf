//! The wait a rate-limited or unavailable endpoint asks for, read from its answer's headers.
//!
//! - `retry-after-ms` (OpenAI and Azure OpenAI send it next to `Retry-After`): milliseconds, maybe
//!   fractional. Preferred when present: it is the finer of the two.
//! - `Retry-After` (RFC 9110): seconds, or an HTTP-date (a date already past means "now").
//!
//! A value that does not parse is no hint, and the agent falls back to its own backoff.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;

/// The longest wait a hint reports: an hour, far beyond any task's time (the API accepts timeouts
/// up to two minutes), so a longer ask reads the same ("not within this task": the agent gives up
/// at once) and adding the wait to an instant cannot overflow, whatever a header says.
pub const LONGEST_HINT: Duration = Duration::from_secs(3600);

/// The wait `headers` ask for, as of `now` (for the date form), or `None` when they ask nothing.
pub fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    let asked_secs = header("retry-after-ms")
        .and_then(number)
        .map(|ms| ms / 1000.0)
        .or_else(|| header("retry-after").and_then(|value| number(value).or_else(|| until(value, now))))?;
    Some(Duration::from_secs_f64(asked_secs.min(LONGEST_HINT.as_secs_f64())))
}

/// A plain decimal number: digits, maybe a fraction (RFC 9110 allows whole seconds only; a fraction
/// is read rather than ignored). Not a sign, an exponent, `inf` or `NaN`, which `f64` would accept.
fn number(text: &str) -> Option<f64> {
    let plain = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    plain.then(|| text.parse().ok()).flatten()
}

/// Seconds from `now` to an HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`, the form RFC 9110 asks
/// senders to use; the obsolete RFC 850 and asctime forms are not read), zero if it is past.
fn until(date: &str, now: DateTime<Utc>) -> Option<f64> {
    let date = DateTime::parse_from_rfc2822(date).ok()?;
    let millis = (date.with_timezone(&Utc) - now).num_milliseconds().max(0);
    Some(millis as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderName, HeaderValue};

    use super::*;

    fn hint(headers: &[(&'static str, &str)]) -> Option<Duration> {
        let now = DateTime::parse_from_rfc3339("2026-02-07T09:00:00Z").unwrap().with_timezone(&Utc);
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(HeaderName::from_static(name), HeaderValue::from_str(value).unwrap());
        }
        retry_after(&map, now)
    }

    #[test]
    fn seconds_are_read() {
        assert_eq!(hint(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(hint(&[("retry-after", " 0 ")]), Some(Duration::ZERO));
        assert_eq!(hint(&[("retry-after", "1.5")]), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn milliseconds_are_preferred_to_seconds() {
        assert_eq!(hint(&[("retry-after", "1"), ("retry-after-ms", "350")]), Some(Duration::from_millis(350)));
        assert_eq!(hint(&[("retry-after-ms", "20.5")]), Some(Duration::from_micros(20_500)));
    }

    #[test]
    fn an_http_date_is_read_as_the_time_until_it() {
        assert_eq!(hint(&[("retry-after", "Sat, 07 Feb 2026 09:00:30 GMT")]), Some(Duration::from_secs(30)));
        assert_eq!(hint(&[("retry-after", "Sat, 07 Feb 2026 08:59:00 GMT")]), Some(Duration::ZERO), "a date past means now");
    }

    #[test]
    fn what_does_not_parse_is_no_hint() {
        assert_eq!(hint(&[]), None);
        for nonsense in ["soon", "-3", "+3", "NaN", "inf", "1e3", "", ".", "1.2.3", "Sat, 07 Feb 2026"] {
            assert_eq!(hint(&[("retry-after", nonsense)]), None, "{nonsense:?}");
        }
        assert_eq!(hint(&[("retry-after-ms", "later"), ("retry-after", "4")]), Some(Duration::from_secs(4)), "the other header still counts");
    }

    #[test]
    fn a_very_long_ask_is_capped() {
        assert_eq!(hint(&[("retry-after", "600")]), Some(Duration::from_secs(600)));
        assert_eq!(hint(&[("retry-after", "99999999999999999999")]), Some(LONGEST_HINT));
        assert_eq!(hint(&[("retry-after-ms", "99999999999999999999999")]), Some(LONGEST_HINT));
        assert_eq!(hint(&[("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT")]), Some(LONGEST_HINT));
    }
}
