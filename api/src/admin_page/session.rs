//! Logging in to the admin page, and the defences of its session.
//!
//! - An admin logs in with their API key once; the browser then holds a random 256-bit session
//!   token in the cookie [`SESSION_COOKIE`] (HttpOnly, SameSite=Strict, Path=/admin, Secure when
//!   the request came over https through a proxy saying `X-Forwarded-Proto: https`). The key itself
//!   is never stored in the browser; the database keeps only the token's SHA-256, tied to the key
//!   (`shared::store::admin_sessions`), so revoking the key or the admin flag ends the session.
//! - Keys of users who are not admins are refused.
//! - Forms that change something carry a CSRF token derived from the session token (a keyed hash,
//!   so the page can check it without storing it), and their `Origin` (or `Referer`) must be this
//!   host: SameSite=Strict alone would leave old browsers and same-site subdomains open.
//! - Logging out deletes the session row and clears the cookie.

use askama::Template;
use axum::{
    Form,
    extract::{FromRequest, FromRequestParts, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts},
    response::{IntoResponse, Redirect, Response},
};
use base64::Engine;
use cookie::{Cookie, SameSite};
use quickact_shared::{
    domain::user::User,
    store::{admin_sessions, users},
};
use rand::RngCore;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::page::{PageError, html_with_status};
use crate::state::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "quickact_admin";
/// How long a session lasts after login.
const SESSION_HOURS: i64 = 12;

/// A logged-in admin: the user and the CSRF token of their session's forms.
pub struct AdminSession {
    pub user: User,
    pub csrf: String,
}

impl FromRequestParts<AppState> for AdminSession {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = session_token(&parts.headers);
        let user = match &token {
            Some(token) => admin_sessions::find_session_admin(&state.pool, &token_hash(token))
                .await
                .map_err(|err| PageError::from(err).into_response())?,
            None => None,
        };
        match (user, token) {
            (Some(user), Some(token)) => Ok(AdminSession { user, csrf: csrf_token(&token) }),
            _ => Err(to_login(&parts.headers)),
        }
    }
}

/// A form with nothing but the session's CSRF token (the buttons that cancel, undo, revoke or log out).
#[derive(Deserialize)]
pub struct CsrfForm {
    pub csrf: Option<String>,
}

/// A button pressed on the admin page (a [`CsrfForm`] posted by a logged-in admin), accepted only
/// once [`AdminSession::check_form`] found it came from this page: the session that pressed it.
pub struct ButtonPress(pub AdminSession);

impl FromRequest<AppState> for ButtonPress {
    type Rejection = Response;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let session = AdminSession::from_request_parts(&mut parts, state).await?;
        let headers = parts.headers.clone();
        let Form(form) = Form::<CsrfForm>::from_request(Request::from_parts(parts, body), state).await.map_err(IntoResponse::into_response)?;
        session.check_form(&headers, form.csrf.as_deref()).map_err(IntoResponse::into_response)?;
        Ok(ButtonPress(session))
    }
}

impl AdminSession {
    /// Refuses a form that did not come from this page: its `csrf` field (or `X-CSRF-Token`
    /// header) must be this session's token, and its origin this host.
    pub fn check_form(&self, headers: &HeaderMap, csrf: Option<&str>) -> Result<(), PageError> {
        check_origin(headers)?;
        let sent = csrf.or_else(|| headers.get("x-csrf-token").and_then(|v| v.to_str().ok()));
        if sent.is_some_and(|sent| constant_time_eq(sent.as_bytes(), self.csrf.as_bytes())) {
            Ok(())
        } else {
            Err(PageError::new(StatusCode::FORBIDDEN, "this form has expired or did not come from this page; reload the page and try again"))
        }
    }
}

/// Where an unauthenticated request goes: the login page (htmx follows `HX-Redirect`).
fn to_login(headers: &HeaderMap) -> Response {
    if headers.contains_key("hx-request") {
        let mut response = StatusCode::UNAUTHORIZED.into_response();
        response.headers_mut().insert("hx-redirect", HeaderValue::from_static("/admin/login"));
        response
    } else {
        Redirect::to("/admin/login").into_response()
    }
}

/// The value of the request's cookie `name`, if it sent one.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == name)
        .map(|cookie| cookie.value().to_owned())
}

fn session_token(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, SESSION_COOKIE)
        .filter(|token| !token.is_empty() && token.len() <= 100)
}

fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The CSRF token of a session: derived from its secret token, so only a holder of the cookie can
/// know it, and it needs no storage.
fn csrf_token(session_token: &str) -> String {
    let digest = Sha256::digest(format!("quickact-admin-csrf:{session_token}").as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A state-changing request must come from a page of this host: its `Origin` (or, without one, its
/// `Referer`) names the `Host` it was sent to. Browsers send one of them on every form POST.
fn check_origin(headers: &HeaderMap) -> Result<(), PageError> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let source = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok())
        .filter(|v| *v != "null");
    let Some(source) = source else {
        return Err(PageError::new(StatusCode::FORBIDDEN, "this form came without an Origin; reload the page and try again"));
    };
    let authority = source.split_once("://").map_or("", |(_, rest)| rest.split('/').next().unwrap_or_default());
    if !host.is_empty() && authority.eq_ignore_ascii_case(host) {
        Ok(())
    } else {
        Err(PageError::new(StatusCode::FORBIDDEN, "this form was sent from another site"))
    }
}

#[derive(Template)]
#[template(path = "admin/login.html")]
struct LoginPage<'a> {
    error: Option<&'a str>,
}

/// `GET /admin/login`
pub async fn login_form() -> Response {
    html_with_status(StatusCode::OK, &LoginPage { error: None })
}

#[derive(Deserialize)]
pub struct LoginForm {
    key: String,
}

/// `POST /admin/login`: checks the key, opens a session and sets its cookie.
pub async fn login(State(state): State<AppState>, headers: HeaderMap, Form(form): Form<LoginForm>) -> Result<Response, PageError> {
    // Without a session there is no CSRF token yet; the origin check keeps other sites from
    // logging a browser in to an account of theirs.
    check_origin(&headers)?;
    let key = form.key.trim();
    let refuse = |status, error| Ok(html_with_status(status, &LoginPage { error: Some(error) }));
    if key.is_empty() || key.len() > 200 {
        return refuse(StatusCode::UNAUTHORIZED, "Enter an admin API key.");
    }
    let Some(user) = users::find_user_by_api_key(&state.pool, key).await? else {
        return refuse(StatusCode::UNAUTHORIZED, "That key is not valid (unknown or revoked).");
    };
    if !user.is_admin {
        return refuse(StatusCode::FORBIDDEN, "That key belongs to a user who is not an admin.");
    }
    let key_id = users::find_api_key_id(&state.pool, key).await?.ok_or_else(|| PageError::new(StatusCode::UNAUTHORIZED, "That key is not valid."))?;
    let mut secret = [0u8; 32];
    rand::rng().fill_bytes(&mut secret);
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret);
    admin_sessions::open_session(&state.pool, &token_hash(&token), key_id, (SESSION_HOURS * 3600) as f64).await?;
    tracing::info!(user_id = %user.id, "admin page login");

    let secure = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).is_some_and(|p| p.eq_ignore_ascii_case("https"));
    let cookie = Cookie::build((SESSION_COOKIE, token))
        .path("/admin")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .max_age(cookie::time::Duration::hours(SESSION_HOURS))
        .build();
    Ok(with_cookie(Redirect::to("/admin/tasks").into_response(), &cookie))
}

/// `POST /admin/logout`: ends the session and clears the cookie.
pub async fn logout(State(state): State<AppState>, headers: HeaderMap, _: ButtonPress) -> Result<Response, PageError> {
    if let Some(token) = session_token(&headers) {
        admin_sessions::close_session(&state.pool, &token_hash(&token)).await?;
    }
    let cleared = Cookie::build((SESSION_COOKIE, ""))
        .path("/admin")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(cookie::time::Duration::ZERO)
        .build();
    Ok(with_cookie(Redirect::to("/admin/login").into_response(), &cleared))
}

fn with_cookie(mut response: Response, cookie: &Cookie<'_>) -> Response {
    if let Ok(value) = HeaderValue::from_str(&cookie.to_string()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_form_must_come_from_this_host() {
        assert!(check_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080")])).is_ok());
        assert!(check_origin(&headers(&[("host", "127.0.0.1:8080"), ("referer", "http://127.0.0.1:8080/admin/tasks?x=1")])).is_ok());
        assert!(check_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "http://evil.example")])).is_err());
        assert!(check_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080.evil.example")])).is_err());
        assert!(check_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "null")])).is_err());
        assert!(check_origin(&headers(&[("host", "127.0.0.1:8080")])).is_err(), "no origin at all");
    }

    #[test]
    fn the_session_cookie_is_found_among_others_and_the_csrf_token_depends_on_it() {
        let found = session_token(&headers(&[("cookie", "a=1; quickact_admin=tok123; b=2")]));
        assert_eq!(found.as_deref(), Some("tok123"));
        assert_eq!(session_token(&headers(&[("cookie", "quickact_admin=")])), None);
        assert_ne!(csrf_token("one"), csrf_token("two"));
        assert_eq!(csrf_token("one"), csrf_token("one"));
        assert!(constant_time_eq(b"abc", b"abc") && !constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"ab"));
    }
}
