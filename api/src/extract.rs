//! Extractors that turn every rejection into our error envelope: JSON bodies, query strings and
//! the caller's identity.

use axum::{
    extract::{FromRequest, FromRequestParts, OptionalFromRequest, Query, Request, rejection::JsonRejection, rejection::QueryRejection},
    http::{HeaderMap, StatusCode, request::Parts},
};
use quickact_shared::{
    domain::user::{User, hash_api_key},
    store::users,
};
use serde::de::DeserializeOwned;

use crate::{error::ApiError, state::AppState};

/// `Json<T>` whose rejections (malformed JSON, wrong content type, body too large) use our envelope.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match <axum::Json<T> as FromRequest<S>>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// An optional JSON body: `None` when the request has no `Content-Type` (an empty POST).
impl<T: DeserializeOwned, S: Send + Sync> OptionalFromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        match <axum::Json<T> as OptionalFromRequest<S>>::from_request(req, state).await {
            Ok(value) => Ok(value.map(|axum::Json(value)| JsonBody(value))),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    let status = rejection.status();
    let detail = rejection.body_text();
    match rejection {
        _ if status == StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge("the request body is too large".into()),
        JsonRejection::MissingJsonContentType(_) => {
            ApiError::bad_request("invalid_content_type", "expected a JSON body with Content-Type: application/json")
        }
        JsonRejection::JsonSyntaxError(_) => ApiError::bad_request("invalid_json", detail),
        _ => ApiError::bad_request("invalid_input", detail),
    }
}

/// `Query<T>` whose rejections use our envelope.
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| QueryParams(value))
            .map_err(|rejection: QueryRejection| ApiError::bad_request("invalid_query", rejection.body_text()))
    }
}

/// The caller, authenticated by `Authorization: Bearer <api key>`.
pub struct Caller(pub User);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = bearer_key(&parts.headers).ok_or(ApiError::Unauthorized)?;
        let hash = hash_api_key(key);
        if let Some(user) = state.notifications.cached_user(&hash) {
            return Ok(Caller(user));
        }
        let seen = state.notifications.credentials().generation();
        let user = users::find_user_by_key_hash(&state.pool, &hash).await?.ok_or(ApiError::Unauthorized)?;
        state.notifications.credentials().insert(seen, hash, user.clone());
        Ok(Caller(user))
    }
}

/// The API key of `Authorization: Bearer <key>`, if the header is well-formed.
pub fn bearer_key(headers: &HeaderMap) -> Option<&str> {
    let header = headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = header.trim().split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty() && key.len() <= 200).then_some(key)
}

/// A caller who must be an admin (403 otherwise).
pub struct Admin(pub User);

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let Caller(user) = Caller::from_request_parts(parts, state).await?;
        if !user.is_admin {
            return Err(ApiError::Forbidden);
        }
        Ok(Admin(user))
    }
}
