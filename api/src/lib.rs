//! The quickact HTTP API.
//!
//! It stores each submitted sentence as a task, enqueues it for the workers in the same
//! transaction, and lets clients read, long-poll, list and cancel their tasks; admins see everyone's
//! history and create users.
//!
//! # Layout
//! - [`actions`]: the operations themselves (submit a sentence, read and wait for a task, undo it,
//!   list items, parse times) over typed inputs and outputs, which the routes, the MCP tools and
//!   the admin page call.
//! - [`routes`]: one module per resource of the contract (`quick_action`, `preview`, `items`,
//!   `parse_time`, `admin`, `health`): each extracts a request, calls the action, answers.
//! - [`extract`]: JSON, query and authentication extractors that answer in the error envelope.
//! - [`admin_page`]: the admin web page at `/admin` (askama + htmx, assets in the binary).
//! - [`error`]: [`ApiError`](error::ApiError), the single error type and its status codes.
//! - [`longpoll`]: waiting for a final state on LISTEN/NOTIFY, without a database connection.
//! - [`submit`]: submissions written in batches, one commit for many.
//! - [`submit_span`]: the span where a task's trace starts (when traces are exported).
//! - [`reads`]: task and journal reads in batches, one statement for many.
//! - [`events`]: a task's live step stream (Server-Sent Events) on the same fan-out.
//! - [`limits`]: request time limits, the bound on requests in flight and on long-polls per user.
//! - [`state`]: what handlers share.
//! - [`views`]: tasks and journal steps as the JSON clients read.
//! - [`openapi`]: the OpenAPI 3.1 description, generated from the handlers (`GET /api/openapi.json`).
//! - [`api_docs`]: the reference for people at `/api/docs` (Swagger UI, from the binary).
//! - [`mcp`]: `/mcp`, the same actions for assistants that speak MCP (Model Context Protocol).
//!
//! [`run`] takes a bound listener and a shutdown future, so tests serve on port 0 and stop cleanly.

pub mod actions;
pub mod admin_page;
pub mod api_docs;
pub mod error;
pub mod events;
pub mod extract;
pub mod limits;
pub mod longpoll;
pub mod mcp;
pub mod openapi;
pub mod reads;
pub mod routes;
mod serve;
pub mod state;
pub mod submit;
pub mod submit_span;
pub mod views;

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{HeaderName, HeaderValue, Method, header},
    middleware,
    routing::get,
};
use quickact_shared::{
    config::Config,
    db,
    notify::Notifications,
    schema,
    secrets::SecretKeys,
    store::{mcp_tokens, users},
    sweeper,
};
use secrecy::ExposeSecret;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::{Layer, util::option_layer};
use tower_http::{
    cors::{AllowOrigin, CorsLayer},
    normalize_path::NormalizePathLayer,
    trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer},
};
use tracing::Level;
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    error::ApiError,
    limits::{LongPollSlots, MAX_BODY_BYTES, RequestLimits, SubmitRate},
    routes::*,
    state::AppState,
};

/// The routes of the contract with their OpenAPI description: a handler is registered here only
/// with its `#[utoipa::path]`, so what is served and what is described cannot part.
fn documented_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(quick_action::create, quick_action::list))
        .routes(routes!(quick_action::get))
        .routes(routes!(quick_action::cancel))
        .routes(routes!(quick_action::undo))
        .routes(routes!(reply::reply))
        .routes(routes!(quick_action::events))
        .routes(routes!(preview::preview))
        .routes(routes!(admin::list_quick_actions))
        .routes(routes!(stats::stats))
        .routes(routes!(admin::create_user))
        .routes(routes!(admin::list_user_keys))
        .routes(routes!(admin::revoke_key))
        .routes(routes!(budgets::get_user_budget, budgets::set_user_budget))
        .routes(routes!(budgets::own))
        .routes(routes!(keys::list, keys::create))
        .routes(routes!(keys::revoke))
        .routes(routes!(mcp_servers::list))
        .routes(routes!(mcp_servers::set_token, mcp_servers::delete_token))
        .routes(routes!(mcp_servers::admin_list, mcp_servers::admin_register))
        .routes(routes!(mcp_servers::admin_delete))
        .routes(routes!(webhooks::create, webhooks::list))
        .routes(routes!(webhooks::get, webhooks::update, webhooks::delete))
        .routes(routes!(webhooks::deliveries))
        .routes(routes!(webhooks::resend))
        .routes(routes!(items::list, items::create))
        .routes(routes!(items::get, items::update, items::delete))
        .routes(routes!(parse_time::parse_time))
        .routes(routes!(health::health))
        .routes(routes!(health::ready))
        .routes(routes!(health::metrics))
}

/// The OpenAPI description of the contract, as `GET /api/openapi.json` serves it.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = documented_routes().into_openapi();
    openapi::finish(&mut doc);
    doc
}

/// The routes of the contract, behind the request limits, CORS and the access log.
pub fn router(state: AppState) -> Router {
    let limits = RequestLimits::new(&state.config.http);
    let cors = cors_layer(&state.config.http.cors_origins);
    let (routes, mut doc) = documented_routes().split_for_parts();
    openapi::finish(&mut doc);
    let spec: Arc<str> = doc.to_pretty_json().expect("the OpenAPI description serialises").into();
    routes
        .route("/api/openapi.json", get(move || async move { ([(header::CONTENT_TYPE, "application/json")], spec.to_string()) }))
        .merge(api_docs::routes())
        .merge(admin_page::routes())
        .merge(mcp::routes(&state))
        .fallback(|| async { ApiError::NotFound("no such route") })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(limits, limits::limit_requests))
        .layer(option_layer(cors))
        // One access line per request at INFO: method, URI, status, latency.
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_request(())
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .with_state(state)
}

/// CORS for the configured browser origins (`*` for any); `None` sends no CORS headers.
fn cors_layer(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allowed = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allowed)
            .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_static("idempotency-key"),
                // What MCP clients send to `/mcp` besides (see `mcp`).
                HeaderName::from_static("mcp-protocol-version"),
                HeaderName::from_static("mcp-method"),
                HeaderName::from_static("mcp-name"),
            ])
            .expose_headers([header::RETRY_AFTER, header::LOCATION, HeaderName::from_static("idempotent-replayed")])
            .max_age(Duration::from_secs(600)),
    )
}

/// Prepares what the API needs: the pool, migrations (unless skipped), the admin bootstrap and the
/// notification listener (stopped by `stop`).
pub async fn prepare(config: Config, stop: CancellationToken) -> Result<AppState, StartupError> {
    let url = config.database_url.clone().ok_or("DATABASE_URL is not set")?;
    let pools = db::ApiPools::within(config.http.database_connections);
    let pool = db::connect(&url, pools.main, Duration::from_secs(60)).await?;
    if !config.skip_migrations {
        schema::migrate(&pool).await?;
    }
    if let Some(key) = &config.admin_key {
        let admin = users::ensure_admin_key(&pool, key.expose_secret(), config.default_tz.name()).await?;
        tracing::debug!(user_id = %admin.id, "the admin key (QUICKACT_ADMIN_KEY) is stored");
    }
    seal_stored_mcp_tokens(&pool, config.secrets.as_ref()).await?;
    tokio::spawn(sweeper::run_until_stopped(pool.clone(), config.sweeper, stop.clone()));
    let notifications = Notifications::start_for_api(pool.clone(), stop);
    let submit_rate = SubmitRate::new(&config.http);
    // Submissions and the batched reads of long-polls are on every task's way: their statements
    // are planned once per connection (see `db::planning_once`), unlike listings and reports.
    // The hot path's pool: one batch of each kind at a time per loop (the submissions, the tasks,
    // the journals), with room for a fallback.
    let planned_once = db::planning_once(&pool, pools.hot_path);
    let submissions = submit::start(planned_once.clone());
    let reads = reads::Reads::start(planned_once);
    Ok(AppState {
        submissions,
        reads,
        pool,
        notifications,
        config: Arc::new(config),
        stopping: CancellationToken::new(),
        long_polls: Arc::new(LongPollSlots::default()),
        metrics: quickact_shared::metrics::install(),
        submit_rate,
    })
}

/// Encrypts the MCP tokens an older build stored in plain text, and those of previous keys again
/// with the current key (docs/mcp-tools.md, "Tokens at rest"); without a key, warns of plain ones.
async fn seal_stored_mcp_tokens(pool: &sqlx::PgPool, keys: Option<&SecretKeys>) -> Result<(), sqlx::Error> {
    let Some(keys) = keys else {
        let plain = mcp_tokens::count_plain_tokens(pool).await?;
        if plain > 0 {
            tracing::warn!(plain, "MCP tokens are stored in plain text: set QUICKACT_SECRETS_KEY and the API encrypts them when it starts");
        }
        return Ok(());
    };
    let report = mcp_tokens::seal_stored_tokens(pool, keys).await?;
    if report != mcp_tokens::SealReport::default() {
        tracing::info!(
            key = keys.current_id(),
            encrypted = report.encrypted,
            reencrypted = report.reencrypted,
            unreadable = report.unreadable,
            "MCP tokens encrypted with the current key"
        );
    }
    Ok(())
}

/// Serves the API on `listener` until `shutdown` completes, then finishes in-flight requests.
pub async fn run(listener: TcpListener, state: AppState, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
    let stopping = state.stopping.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.cancel();
    };
    // Trailing slashes are trimmed before routing, so `/api/quick-action/` works like the bare path.
    let app = NormalizePathLayer::trim_trailing_slash().layer(router(state));
    serve::serve(listener, app, shutdown).await
}

/// A boxed error for startup paths, where the only thing to do with an error is report it.
pub type StartupError = Box<dyn std::error::Error + Send + Sync>;
