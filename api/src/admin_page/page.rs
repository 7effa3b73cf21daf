//! What every admin page shares: the header's data, rendering with the security headers, errors
//! as pages, and the formatting of times, money and durations.

use askama::Template;
use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Response},
};
use chrono::{DateTime, Utc};

use crate::error::ApiError;

/// The header of every page: who is logged in, the CSRF token its forms carry, the section shown.
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
    status: u16,
    message: &'a str,
}

/// A request of the page that failed: shown as a small page with the reason.
#[derive(Debug)]
pub struct PageError {
    pub status: StatusCode,
    pub message: String,
}

impl PageError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        PageError { status, message: message.into() }
    }
}

impl From<ApiError> for PageError {
    fn from(err: ApiError) -> Self {
        let status = err.status();
        if let ApiError::Internal(source) = &err {
            tracing::error!(error = %err, source = ?source, "admin page request failed");
        }
        PageError { status, message: err.to_string() }
    }
}

impl From<sqlx::Error> for PageError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::from(err).into()
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        html_with_status(self.status, &ErrorPage { status: self.status.as_u16(), message: &self.message })
    }
}

/// `2026-02-07 09:00:03` (UTC, which the page says).
pub fn time(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S").to_string()
}

pub fn maybe_time(at: &Option<DateTime<Utc>>) -> String {
    at.as_ref().map(time).unwrap_or_default()
}

/// An amount of money with the precision model prices need.
pub fn money(amount: f64, currency: &str) -> String {
    format!("{amount:.6} {currency}")
}

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
