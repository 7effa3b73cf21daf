//! Extractors that turn every rejection into our error envelope: JSON bodies, query strings and
//! the caller's identity.

use axum::{
    extract::{FromRequest, FromRequestParts, Query, Request, rejection::JsonRejection, rejection::QueryRejection},
    http::{StatusCode, request::Parts},
};
use quickact_shared::{domain::user::User, store::users};
use serde::de::DeserializeOwned;

use crate::{error::ApiError, state::AppState};

/// `Json<T>` whose rejections (malformed JSON, wrong content type, body too large) use our envelope.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(JsonBody(value)),
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
        let header = parts.headers.get(axum::http::header::AUTHORIZATION).ok_or(ApiError::Unauthorized)?;
        let header = header.to_str().map_err(|_| ApiError::Unauthorized)?;
        let (scheme, key) = header.trim().split_once(' ').ok_or(ApiError::Unauthorized)?;
        let key = key.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || key.is_empty() || key.len() > 200 {
            return Err(ApiError::Unauthorized);
        }
        let user = users::find_user_by_api_key(&state.pool, key).await?.ok_or(ApiError::Unauthorized)?;
        Ok(Caller(user))
    }
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
