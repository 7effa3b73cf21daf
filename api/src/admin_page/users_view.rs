//! Users and their keys: the list of users, a form to create one (its first key shown once), and
//! each user's keys with a button to revoke one. Through the same code as `POST /api/admin/users`
//! and `DELETE /api/admin/keys/{id}`.

use askama::Template;
use axum::{
    Form,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
};
use quickact_shared::{domain::user::User, store::users};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    page::{Chrome, Moment, PageError, html, html_with_status},
    session::{AdminSession, ButtonPress},
};
use crate::{
    routes::{
        admin::{create_user_with_key, revoke_any_key},
        parse_uuid_or_404,
    },
    state::AppState,
};

pub struct UserRow {
    pub id: Uuid,
    pub name: String,
    pub is_admin: bool,
    pub tz: String,
    pub model: String,
    pub created_at: Moment,
}

impl From<User> for UserRow {
    fn from(u: User) -> Self {
        UserRow { id: u.id, name: u.name, is_admin: u.is_admin, tz: u.time_zone, model: u.model.unwrap_or_default(), created_at: Moment::of(&u.created_at) }
    }
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct UsersPage {
    chrome: Chrome,
    users: Vec<UserRow>,
    /// A user just created and their key, shown this once.
    created: Option<(UserRow, String)>,
    error: Option<String>,
}

async fn users_page(state: &AppState, session: AdminSession, created: Option<(UserRow, String)>, error: Option<String>) -> Result<UsersPage, PageError> {
    Ok(UsersPage {
        chrome: Chrome { admin: session.user.name, csrf: session.csrf, section: "users" },
        users: users::list_users(&state.pool).await?.into_iter().map(UserRow::from).collect(),
        created,
        error,
    })
}

/// `GET /admin/users`
pub async fn list(State(state): State<AppState>, session: AdminSession) -> Result<Response, PageError> {
    Ok(html(&users_page(&state, session, None, None).await?))
}

#[derive(Deserialize)]
pub struct CreateForm {
    csrf: Option<String>,
    name: String,
    #[serde(default)]
    is_admin: Option<String>,
    #[serde(default)]
    tz: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// `POST /admin/users`: creates a user and shows their key once (the page is not cached).
pub async fn create(State(state): State<AppState>, session: AdminSession, headers: HeaderMap, Form(form): Form<CreateForm>) -> Result<Response, PageError> {
    session.check_form(&headers, form.csrf.as_deref())?;
    let is_admin = form.is_admin.is_some();
    match create_user_with_key(&state, &session.user, &form.name, is_admin, form.tz.as_deref(), form.model.as_deref()).await {
        Ok((user, key)) => Ok(html_with_status(StatusCode::CREATED, &users_page(&state, session, Some((UserRow::from(user), key)), None).await?)),
        Err(err) => {
            let status = err.status();
            if status.is_server_error() {
                return Err(err.into());
            }
            Ok(html_with_status(status, &users_page(&state, session, None, Some(err.to_string())).await?))
        }
    }
}

pub struct KeyRow {
    pub id: Uuid,
    pub prefix: String,
    pub created_at: Moment,
    pub revoked_at: Moment,
}

#[derive(Template)]
#[template(path = "admin/user.html")]
struct UserPage {
    chrome: Chrome,
    user: UserRow,
    keys: Vec<KeyRow>,
}

/// `GET /admin/users/{id}`: a user and their keys.
pub async fn detail(State(state): State<AppState>, session: AdminSession, Path(id): Path<String>) -> Result<Response, PageError> {
    let id = parse_uuid_or_404(&id)?;
    let user = users::find_user(&state.pool, id).await?.ok_or_else(|| PageError::new(StatusCode::NOT_FOUND, "no such user"))?;
    let keys = users::list_api_keys(&state.pool, id)
        .await?
        .into_iter()
        .map(|k| KeyRow { id: k.id, prefix: k.prefix, created_at: Moment::of(&k.created_at), revoked_at: Moment(k.revoked_at) })
        .collect();
    Ok(html(&UserPage { chrome: Chrome { admin: session.user.name, csrf: session.csrf, section: "users" }, user: UserRow::from(user), keys }))
}

/// `POST /admin/keys/{id}/revoke`: revokes a key (at once on every API process) and shows its user.
pub async fn revoke(State(state): State<AppState>, Path(id): Path<String>, ButtonPress(session): ButtonPress) -> Result<Response, PageError> {
    let owner = revoke_any_key(&state, &session.user, parse_uuid_or_404(&id)?).await?;
    Ok(Redirect::to(&format!("/admin/users/{owner}")).into_response())
}
