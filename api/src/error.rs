//! The one error type of the HTTP layer and its JSON envelope `{"error": {"code", "message"}}`.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use quickact_shared::db::is_unavailable;
use serde_json::{Value, json};

/// Every way a request can fail. Each variant's doc names its status.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed (bad JSON, wrong types, missing fields, bad query parameters).
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    /// 401: no API key, or one we do not know.
    #[error("a valid API key is required (Authorization: Bearer <key>)")]
    Unauthorized,
    /// 403: the caller is known but not an admin.
    #[error("this route is for admins only")]
    Forbidden,
    /// 404: no such resource, or one that belongs to someone else (never reveal it exists).
    #[error("{0}")]
    NotFound(&'static str),
    /// 405: the route exists but not with this method.
    #[error("method not allowed on this route")]
    MethodNotAllowed,
    /// 409: the resource is in a state that does not allow this (e.g. cancelling a finished task).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 413: the text or the body is too long.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 422: well-formed but invalid (a timeout out of range, an unknown time zone, ...).
    #[error("{message}")]
    Unprocessable { code: &'static str, message: String },
    /// 429: over a limit; `Retry-After` says when to come back.
    #[error("{message}")]
    TooManyRequests { message: String, retry_after_secs: u64 },
    /// 503: this API process is overloaded (too many requests in flight, or a request ran past
    /// its time limit); `Retry-After` says when to come back.
    #[error("the service is overloaded ({0}), try again shortly")]
    Overloaded(&'static str),
    /// 503: the database cannot be reached right now.
    #[error("the service is temporarily unavailable, try again shortly")]
    Unavailable,
    /// 500: a bug or an unexpected failure; logged with its chain, shown generically.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::BadRequest { code, message: message.into() }
    }

    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::Unprocessable { code, message: message.into() }
    }

    /// The HTTP status this error answers with.
    pub fn status(&self) -> StatusCode {
        self.status_and_code().0
    }

    /// The envelope `{"error": {"code", "message"}}` clients read: the body of this error's HTTP
    /// answer, and the structured content of an MCP tool's error. An internal error is logged here
    /// with its chain (and an unavailable database noted), since this is where it is answered.
    pub fn to_envelope(&self) -> Value {
        let (_, code) = self.status_and_code();
        match self {
            ApiError::Internal(source) => tracing::error!(error = %self, source = ?source, "request failed"),
            ApiError::Unavailable => tracing::warn!("request failed: database unavailable"),
            _ => {}
        }
        json!({ "error": { "code": code, "message": self.to_string() } })
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::Conflict { code, .. } => (StatusCode::CONFLICT, code),
            ApiError::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ApiError::Unprocessable { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
            ApiError::TooManyRequests { .. } => (StatusCode::TOO_MANY_REQUESTS, "too_many_requests"),
            ApiError::Overloaded(_) => (StatusCode::SERVICE_UNAVAILABLE, "overloaded"),
            ApiError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        quickact_shared::metrics::database_error(&err);
        if is_unavailable(&err) { ApiError::Unavailable } else { ApiError::Internal(Box::new(err)) }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), Json(self.to_envelope())).into_response();
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::TooManyRequests { retry_after_secs, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            ApiError::Unavailable => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            }
            ApiError::Overloaded(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            _ => {}
        }
        response
    }
}
