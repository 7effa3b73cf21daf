//! `/mcp`: quickact as an MCP server (Model Context Protocol, streamable HTTP), so assistants that
//! speak MCP can act on a user's schedule with the user's API key (docs/mcp-server.md).
//!
//! # Layout
//! - this module: the route, its authentication and the transport's settings.
//! - [`tools`]: the tools (`quick_action`, `get_quick_action`, `list_items`, `parse_time`), each
//!   calling the action its REST route calls ([`crate::actions`]), so the two surfaces cannot part.
//! - [`render`]: the short text each tool answers with beside its JSON.
//!
//! # Stateless
//! The transport runs without sessions (rmcp's stateless mode, one JSON answer per POST): no
//! state is kept between requests, so any API process behind a load balancer answers any request,
//! and a restarted process loses nothing. The price is that the server cannot push messages to a
//! client between its requests, which none of these tools needs. `GET` and `DELETE` (the session
//! stream and its end) answer 405.

pub mod render;
pub mod tools;

use axum::{
    Router,
    extract::{FromRequestParts, Request, State},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::any_service,
};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};
use tokio_util::sync::CancellationToken;

use crate::{
    extract::Caller,
    limits::{MAX_BODY_BYTES, MCP_PATH},
    state::AppState,
};

use self::tools::QuickactTools;

/// The path the MCP endpoint is served at.
pub const PATH: &str = MCP_PATH;

/// The `/mcp` route: the caller is authenticated before the MCP transport sees the request.
pub fn routes(state: &AppState) -> Router<AppState> {
    let tools = QuickactTools::new(state.clone());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        // Every request carries a bearer key, so a page a browser was lured to cannot act with
        // the user's rights (no cookie is ever honoured here): the DNS-rebinding guard (loopback
        // `Host` names only) protects key-less local servers, and would refuse this API under its
        // real host name. Browser origins are the CORS settings' business, as for `/api`.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        // Never cancelled: at shutdown the tools answer at once by themselves (a wait returns the
        // task as it is, as long-polls do), while a cancelled transport would answer an error.
        .with_cancellation_token(CancellationToken::new());
    let service = StreamableHttpService::new(move || Ok(tools.clone()), NeverSessionManager::default().into(), config);
    Router::new().route(PATH, any_service(service).layer(middleware::from_fn_with_state(state.clone(), authenticate)))
}

/// Lets through only requests with a valid, unrevoked API key (401 in the error envelope
/// otherwise, as on `/api`), with the caller's user in the request's extensions for the tools.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    match Caller::from_request_parts(&mut parts, &state).await {
        Ok(Caller(user)) => {
            parts.extensions.insert(user);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(refusal) => refusal.into_response(),
    }
}
