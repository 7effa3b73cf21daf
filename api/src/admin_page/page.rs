//! What every admin page shares: the header's data, rendering with the security headers, errors
//! as pages inside the layout, and the formatting of times, money and durations.

use askama::Template;
use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Response},
};
use chrono::{DateTime, Utc};

use crate::error::ApiError;

/// The header of every page: who is logged in, the CSRF token its forms carry, the section shown.
#[derive(Debug, Clone)]
pub struct Chrome {
    pub admin: String,
    pub csrf: String,
    pub section: &'static str,
}

/// Renders a template as an HTML response with the page's security headers: scripts and styles
/// only from this origin (htmx is served from the binary), no framing, no sniffing.
pub fn html<T: Template>(template: &T) -> Response {
    html_with_status(StatusCode::OK, template)
}

pub fn html_with_status<T: Template>(status: StatusCode, template: &T) -> Response {
    match template.render() {
        Ok(body) => {
            let mut response = (status, Html(body)).into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
                ),
            );
            headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(err) => {
            tracing::error!(error = %err, "an admin template failed to render");
            (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
        }
    }
}

#[derive(Template)]
#[template(path = "admin/error.html")]
struct ErrorPage<'a> {
    chrome: &'a Chrome,
    status: u16,
    reason: &'a str,
    message: &'a str,
    back_url: &'a str,
    back_label: &'a str,
}

/// A request of the page that failed: shown inside the page's layout (with the header of the
/// admin who asked, when known) with the reason and a link back to where the admin came from.
#[derive(Debug)]
pub struct PageError {
    pub status: StatusCode,
    pub message: String,
    // Boxed: errors travel in every handler's `Result`, and most have neither.
    chrome: Option<Box<Chrome>>,
    back: Option<Box<(String, String)>>,
}

impl PageError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        PageError { status, message: message.into(), chrome: None, back: None }
    }

    /// Shows the error under the header of the admin `chrome` names.
    pub fn within(mut self, chrome: Chrome) -> Self {
        self.chrome = Some(Box::new(chrome));
        self
    }

    /// Where the error's link leads (the history by default).
    pub fn back_to(mut self, url: impl Into<String>, label: impl Into<String>) -> Self {
        self.back = Some(Box::new((url.into(), label.into())));
        self
    }
}

impl From<ApiError> for PageError {
    fn from(err: ApiError) -> Self {
        let status = err.status();
        if let ApiError::Internal(source) = &err {
            tracing::error!(error = %err, source = ?source, "admin page request failed");
        }
        PageError::new(status, err.to_string())
    }
}

impl From<sqlx::Error> for PageError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::from(err).into()
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        // Without a session (the request failed before it was read) the header shows the sections
        // only; their links lead to the login when needed.
        let chrome = self.chrome.map_or(Chrome { admin: String::new(), csrf: String::new(), section: "" }, |chrome| *chrome);
        let (back_url, back_label) = self.back.map_or_else(|| ("/admin/tasks".into(), "Back to the history".into()), |back| *back);
        html_with_status(
            self.status,
            &ErrorPage {
                chrome: &chrome,
                status: self.status.as_u16(),
                reason: self.status.canonical_reason().unwrap_or("Error"),
                message: &self.message,
                back_url: &back_url,
                back_label: &back_label,
            },
        )
    }
}

/// A moment as the page shows it: a `<time>` element whose text the page's script puts in the
/// zone the reader chose (the browser's by default; `admin.js`), with UTC on hover and as the text
/// until then. Renders as HTML (use `|safe`): its text is only digits and punctuation. An absent
/// moment renders as nothing.
#[derive(Debug, Clone, Copy)]
pub struct Moment(pub Option<DateTime<Utc>>);

impl Moment {
    pub fn of(at: &DateTime<Utc>) -> Self {
        Moment(Some(*at))
    }
}

impl std::fmt::Display for Moment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(at) => write!(
                f,
                r#"<time datetime="{}" title="{} UTC">{} UTC</time>"#,
                at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                time(&at),
                time(&at)
            ),
            None => Ok(()),
        }
    }
}

/// `2026-02-07 09:00:03` (UTC).
pub fn time(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// An amount of money with as many digits as it needs and no more: two decimals from 1 up,
/// three significant digits below (model costs are fractions of a cent), trailing zeros dropped;
/// zero is `0`.
pub fn money(amount: f64, currency: &str) -> String {
    format!("{} {currency}", amount_text(amount))
}

/// The number of [`money`], alone (for chart axes).
pub use quickact_shared::pricing::amount_text;

/// Milliseconds as `850 ms` or `2.41 s`.
pub fn duration_ms(ms: f64) -> String {
    if ms < 1000.0 { format!("{ms:.0} ms") } else { format!("{:.2} s", ms / 1000.0) }
}

/// A share as a percentage.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// At most `max` characters of `text`, with an ellipsis when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max { text.to_owned() } else { format!("{}…", text.chars().take(max).collect::<String>()) }
}

/// A JSON value as indented text for a `<pre>`, cut at `max` characters.
pub fn pretty_json(value: &serde_json::Value, max: usize) -> String {
    clip(&serde_json::to_string_pretty(value).unwrap_or_default(), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_shows_the_digits_it_needs() {
        assert_eq!(money(0.0, "CNY"), "0 CNY");
        assert_eq!(money(0.002326, "CNY"), "0.00233 CNY");
        assert_eq!(money(0.00000148, "CNY"), "0.00000148 CNY");
        assert_eq!(money(0.5, "CNY"), "0.5 CNY");
        assert_eq!(money(0.123456, "CNY"), "0.123 CNY");
        assert_eq!(money(12.3456, "CNY"), "12.35 CNY");
        assert_eq!(money(3.0, "CNY"), "3 CNY");
    }

    #[test]
    fn a_moment_is_a_time_element_with_utc_on_hover() {
        let at: DateTime<Utc> = "2026-02-07T01:00:03.25Z".parse().unwrap();
        assert_eq!(
            Moment::of(&at).to_string(),
            r#"<time datetime="2026-02-07T01:00:03.250Z" title="2026-02-07 01:00:03 UTC">2026-02-07 01:00:03 UTC</time>"#
        );
        assert_eq!(Moment(None).to_string(), "");
    }
}
