//! `/api/mcp-servers`: the deployment's MCP servers (`QUICKACT_MCP_SERVERS`, see
//! docs/mcp-tools.md), whose tools the model may call beside the planner's, and the caller's own
//! token for each server that takes one. The token is sent on, verbatim, as the server's header
//! when the caller's tasks call its tools; it is never shown again (as an API key is not).

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use quickact_shared::{config::McpServerConfig, store::mcp_tokens};
use serde::{Deserialize, Serialize};

use crate::{
    error::ApiError,
    extract::{Caller, JsonBody},
    openapi::ErrorBody,
    state::AppState,
};

/// Longest token accepted, in bytes.
const MAX_TOKEN_BYTES: usize = 4096;

/// One MCP server as a user sees it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct McpServerView {
    /// Its tools are offered to the model as `<name>__<tool>`.
    pub name: String,
    /// The header that carries the caller's token; `null`: the server takes none.
    pub header: Option<String>,
    /// Whether the caller set a token (a server with a header offers its tools only then).
    pub token_set: bool,
    /// The only tools of the server offered; `null`: all of them.
    pub tools: Option<Vec<String>>,
}

/// The deployment's MCP servers.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct McpServerList {
    pub servers: Vec<McpServerView>,
}

/// The caller's token for a server.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"token": "Bearer 3f9c..."}))]
pub struct SetTokenRequest {
    /// Sent as the server's header, verbatim (include a scheme such as `Bearer ` if the server
    /// wants one).
    pub token: String,
}

/// The deployment's MCP servers, and which of them the caller set a token for.
#[utoipa::path(get, operation_id = "list_mcp_servers", path = "/api/mcp-servers", tag = "mcp",
    responses((status = 200, description = "The MCP servers", body = McpServerList)))]
pub async fn list(State(state): State<AppState>, Caller(user): Caller) -> Result<Json<McpServerList>, ApiError> {
    let with_token = mcp_tokens::servers_with_token(&state.pool, user.id).await?;
    let servers = state
        .config
        .mcp_servers
        .iter()
        .map(|server| McpServerView {
            name: server.name.clone(),
            header: server.header.clone(),
            token_set: with_token.contains(&server.name),
            tools: server.tools.clone(),
        })
        .collect();
    Ok(Json(McpServerList { servers }))
}

/// Set (or replace) the caller's token for a server; their next tasks send it.
#[utoipa::path(put, operation_id = "set_mcp_token", path = "/api/mcp-servers/{name}/token", tag = "mcp",
    params(("name" = String, Path, description = "The server")), request_body = SetTokenRequest,
    responses(
        (status = 204, description = "Set"),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 422, description = "The server takes no token, or the token cannot be sent as a header", body = ErrorBody),
    ))]
pub async fn set_token(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(name): Path<String>,
    JsonBody(request): JsonBody<SetTokenRequest>,
) -> Result<StatusCode, ApiError> {
    let server = server(&state, &name)?;
    if server.header.is_none() {
        return Err(ApiError::unprocessable("no_token_needed", format!("the MCP server {name:?} takes no token")));
    }
    let token = request.token.trim();
    let sendable = token.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    if token.is_empty() || token.len() > MAX_TOKEN_BYTES || !sendable {
        return Err(ApiError::unprocessable("invalid_token", format!("the token must be 1 to {MAX_TOKEN_BYTES} bytes of visible ASCII")));
    }
    mcp_tokens::set_token(&state.pool, user.id, &server.name, token).await?;
    tracing::info!(user_id = %user.id, server = %server.name, "MCP token set");
    Ok(StatusCode::NO_CONTENT)
}

/// Remove the caller's token for a server; its tools are no longer offered to their tasks.
#[utoipa::path(delete, operation_id = "delete_mcp_token", path = "/api/mcp-servers/{name}/token", tag = "mcp",
    params(("name" = String, Path, description = "The server")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such server, or no token set", body = ErrorBody),
    ))]
pub async fn delete_token(State(state): State<AppState>, Caller(user): Caller, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    let server = server(&state, &name)?;
    if !mcp_tokens::delete_token(&state.pool, user.id, &server.name).await? {
        return Err(ApiError::NotFound("no token is set for this server"));
    }
    tracing::info!(user_id = %user.id, server = %server.name, "MCP token removed");
    Ok(StatusCode::NO_CONTENT)
}

fn server<'a>(state: &'a AppState, name: &str) -> Result<&'a McpServerConfig, ApiError> {
    state.config.mcp_servers.iter().find(|server| server.name == name).ok_or(ApiError::NotFound("no such MCP server"))
}
