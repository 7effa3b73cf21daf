//! The admin web page at `/admin`: server-rendered HTML (askama templates in `api/templates/admin/`)
//! with htmx for live parts, every asset embedded in the binary (no CDN).
//!
//! - [`session`]: logging in with an admin's API key, the session cookie, CSRF defences.
//! - [`history`]: every user's tasks with filters and cursor paging; unfinished rows update live.
//! - [`trace`]: one task's sentence, timeline of model turns and tool calls, verdict and items;
//!   cancel and undo.
//! - [`stats_view`]: rates, latency, tokens and cost per model per day, queue and workers, with
//!   server-side SVG charts ([`charts`]).
//! - [`users_view`]: users and their keys (create users, revoke keys).
//! - [`webhooks_view`]: webhook endpoints with their deliveries and failures; send one again.
//! - [`assets`]: htmx and the stylesheet, from the binary.
//! - [`page`]: what every page shares (the header, errors, formatting).
//!
//! The page reads through the same store functions as the JSON admin routes.

mod assets;
mod charts;
mod history;
mod page;
mod session;
mod stats_view;
mod trace;
mod users_view;
mod webhooks_view;

use axum::{
    Router,
    response::Redirect,
    routing::{get, post},
};

use crate::state::AppState;

pub use session::SESSION_COOKIE;

/// The routes of the admin page.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/admin", get(|| async { Redirect::to("/admin/tasks") }))
        .route("/admin/login", get(session::login_form).post(session::login))
        .route("/admin/logout", post(session::logout))
        .route("/admin/assets/{name}", get(assets::asset))
        .route("/admin/tasks", get(history::history))
        .route("/admin/tasks/{id}", get(trace::trace))
        .route("/admin/tasks/{id}/row", get(history::row))
        .route("/admin/tasks/{id}/timeline", get(trace::timeline))
        .route("/admin/tasks/{id}/cancel", post(trace::cancel))
        .route("/admin/tasks/{id}/undo", post(trace::undo))
        .route("/admin/users/{user_id}/items/{id}", get(trace::item))
        .route("/admin/stats", get(stats_view::stats))
        .route("/admin/users", get(users_view::list).post(users_view::create))
        .route("/admin/users/{id}", get(users_view::detail))
        .route("/admin/users/{id}/budget", post(users_view::set_budget))
        .route("/admin/keys/{id}/revoke", post(users_view::revoke))
        .route("/admin/webhooks", get(webhooks_view::list))
        .route("/admin/webhook-deliveries/{id}/resend", post(webhooks_view::resend))
}
