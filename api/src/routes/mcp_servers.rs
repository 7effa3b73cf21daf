//! `/api/mcp-servers`: the MCP servers whose tools the caller's tasks may call beside the
//! planner's (see docs/mcp-tools.md), and the caller's own token for each server that takes one.
//! The token is sent on, verbatim, as the server's header when the caller's tasks call its tools;
//! it is stored encrypted with the deployment's key (`QUICKACT_SECRETS_KEY`; without one, setting a
//! token is refused) and never shown again (as an API key is not).
//!
//! `/api/admin/mcp-servers`: admins register servers for every user or for one, beside those of
//! the configuration (`QUICKACT_MCP_SERVERS`, which the API lists but cannot change). Workers see
//! a change within `quickact_worker::mcp::REGISTERED_TTL`.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use quickact_shared::{
    config::McpServerConfig,
    store::{
        mcp_servers::{RegisteredMcpServer, delete_server, insert_server, list_servers},
        mcp_tokens,
        users::find_user,
    },
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    error::ApiError,
    extract::{Admin, Caller, JsonBody},
    openapi::ErrorBody,
    state::AppState,
};

/// Longest token accepted, in bytes (`SetTokenRequest`'s schema states it again: its attribute
/// takes a literal).
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
    #[schema(min_length = 1, max_length = 4096, pattern = "^[\\t\\x20-\\x7e]+$")]
    pub token: String,
}

/// The deployment's MCP servers, and which of them the caller set a token for.
#[utoipa::path(get, operation_id = "list_mcp_servers", path = "/api/mcp-servers", tag = "mcp",
    responses((status = 200, description = "The MCP servers", body = McpServerList)))]
pub async fn list(State(state): State<AppState>, Caller(user): Caller) -> Result<Json<McpServerList>, ApiError> {
    let with_token = mcp_tokens::servers_with_token(&state.pool, user.id).await?;
    let servers = servers_for(&state, user.id)
        .await?
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
        (status = 204, description = "Set", links(
            ("DeleteMcpToken" = (operation_id = "delete_mcp_token", parameters(("name" = "$request.path.name")))),
        )),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "The deployment has no key to encrypt tokens with (`secrets_key_missing`: its operator sets QUICKACT_SECRETS_KEY)", body = ErrorBody),
        (status = 422, description = "The server takes no token, or the token cannot be sent as a header", body = ErrorBody),
    ))]
pub async fn set_token(
    State(state): State<AppState>,
    Caller(user): Caller,
    Path(name): Path<String>,
    JsonBody(request): JsonBody<SetTokenRequest>,
) -> Result<StatusCode, ApiError> {
    let server = server(&state, user.id, &name).await?;
    if server.header.is_none() {
        return Err(ApiError::unprocessable("no_token_needed", format!("the MCP server {name:?} takes no token")));
    }
    let token = request.token.trim();
    let sendable = token.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    if token.is_empty() || token.len() > MAX_TOKEN_BYTES || !sendable {
        return Err(ApiError::unprocessable("invalid_token", format!("the token must be 1 to {MAX_TOKEN_BYTES} bytes of visible ASCII")));
    }
    let Some(keys) = &state.config.secrets else {
        return Err(ApiError::Conflict {
            code: "secrets_key_missing",
            message: "this deployment stores no MCP tokens: it has no key to encrypt them with (its operator sets QUICKACT_SECRETS_KEY, see docs/configuration.md)".into(),
        });
    };
    mcp_tokens::set_token(&state.pool, keys, user.id, &server.name, token).await?;
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
    let server = server(&state, user.id, &name).await?;
    if !mcp_tokens::delete_token(&state.pool, user.id, &server.name).await? {
        return Err(ApiError::NotFound("no token is set for this server"));
    }
    tracing::info!(user_id = %user.id, server = %server.name, "MCP token removed");
    Ok(StatusCode::NO_CONTENT)
}

/// The servers `user_id`'s tasks may call: the configured ones, then those registered for everyone
/// or for the user.
async fn servers_for(state: &AppState, user_id: Uuid) -> Result<Vec<McpServerConfig>, ApiError> {
    let mut servers = state.config.mcp_servers.clone();
    servers.extend(list_servers(&state.pool).await?.iter().filter(|server| server.serves(user_id)).map(RegisteredMcpServer::config));
    Ok(servers)
}

/// The server `name` among those `user_id`'s tasks may call, or 404.
async fn server(state: &AppState, user_id: Uuid, name: &str) -> Result<McpServerConfig, ApiError> {
    servers_for(state, user_id).await?.into_iter().find(|server| server.name == name).ok_or(ApiError::NotFound("no such MCP server"))
}

/// A server to register.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "rooms", "url": "https://rooms.example.com/mcp", "timeout_secs": 10, "header": "Authorization", "tools": ["book_room"], "user_id": null}))]
pub struct RegisterServerRequest {
    /// Prefixes its tools as the model sees them (`<name>__<tool>`): up to 32 of letters,
    /// digits, `-`, `_`, without `__`; unique among every server.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    pub name: String,
    /// Its streamable HTTP endpoint.
    #[schema(pattern = "^https?://")]
    pub url: String,
    /// Longest wait for one call (1 to 600 s, default 10); never past a task's deadline.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 600)]
    pub timeout_secs: Option<u64>,
    /// The header that carries each user's own token; the server is then offered only to users
    /// who set one.
    #[serde(default)]
    #[schema(pattern = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")]
    pub header: Option<String>,
    /// The only tools of the server offered (all when absent).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// The only user it serves; absent or `null`: every user.
    #[serde(default)]
    pub user_id: Option<Uuid>,
}

/// A server of the configuration, as admins see it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ConfiguredServerView {
    pub name: String,
    pub url: String,
    pub timeout_secs: u64,
    pub header: Option<String>,
    pub tools: Option<Vec<String>>,
}

/// Every MCP server: the configuration's (for every user) and the registered ones.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AdminServerList {
    pub configured: Vec<ConfiguredServerView>,
    pub registered: Vec<RegisteredMcpServer>,
}

/// Every MCP server of the deployment.
#[utoipa::path(get, operation_id = "admin_list_mcp_servers", path = "/api/admin/mcp-servers", tag = "admin",
    responses((status = 200, description = "The MCP servers", body = AdminServerList)))]
pub async fn admin_list(State(state): State<AppState>, Admin(_): Admin) -> Result<Json<AdminServerList>, ApiError> {
    let configured = state
        .config
        .mcp_servers
        .iter()
        .map(|server| ConfiguredServerView {
            name: server.name.clone(),
            url: server.url.clone(),
            timeout_secs: server.timeout_secs,
            header: server.header.clone(),
            tools: server.tools.clone(),
        })
        .collect();
    Ok(Json(AdminServerList { configured, registered: list_servers(&state.pool).await? }))
}

/// Register an MCP server for every user, or for one.
#[utoipa::path(post, operation_id = "admin_register_mcp_server", path = "/api/admin/mcp-servers", tag = "admin", request_body = RegisterServerRequest,
    responses(
        (status = 201, description = "Registered", body = RegisteredMcpServer, links(
            ("SetMcpToken" = (operation_id = "set_mcp_token", parameters(("name" = "$response.body#/name")))),
            ("DeleteMcpToken" = (operation_id = "delete_mcp_token", parameters(("name" = "$response.body#/name")))),
            ("DeleteMcpServer" = (operation_id = "admin_delete_mcp_server", parameters(("name" = "$response.body#/name")))),
        )),
        (status = 404, description = "No such user", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
        (status = 422, description = "Not a usable server", body = ErrorBody),
    ))]
pub async fn admin_register(
    State(state): State<AppState>,
    Admin(admin): Admin,
    JsonBody(request): JsonBody<RegisterServerRequest>,
) -> Result<(StatusCode, Json<RegisteredMcpServer>), ApiError> {
    let server = McpServerConfig {
        name: request.name,
        url: request.url,
        timeout_secs: request.timeout_secs.unwrap_or(McpServerConfig::DEFAULT_TIMEOUT_SECS),
        header: request.header,
        tools: request.tools,
    };
    server.check().map_err(|reason| ApiError::unprocessable("invalid_mcp_server", reason))?;
    let taken = || ApiError::Conflict { code: "name_taken", message: format!("an MCP server is named {:?} already", server.name) };
    if state.config.mcp_servers.iter().any(|configured| configured.name == server.name) {
        return Err(taken());
    }
    if let Some(user_id) = request.user_id
        && find_user(&state.pool, user_id).await?.is_none()
    {
        return Err(ApiError::NotFound("no such user"));
    }
    let registered = insert_server(&state.pool, &server, request.user_id).await?.ok_or_else(taken)?;
    tracing::info!(admin_id = %admin.id, server = %registered.name, user_id = ?registered.user_id, "MCP server registered");
    Ok((StatusCode::CREATED, Json(registered)))
}

/// Remove a registered MCP server (and users' tokens for it); tasks stop being offered its tools.
#[utoipa::path(delete, operation_id = "admin_delete_mcp_server", path = "/api/admin/mcp-servers/{name}", tag = "admin",
    params(("name" = String, Path, description = "The server")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such registered server", body = ErrorBody),
        (status = 409, description = "A server of the configuration", body = ErrorBody),
    ))]
pub async fn admin_delete(State(state): State<AppState>, Admin(admin): Admin, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    if state.config.mcp_servers.iter().any(|configured| configured.name == name) {
        return Err(ApiError::Conflict { code: "configured", message: format!("{name:?} is registered in QUICKACT_MCP_SERVERS") });
    }
    if !delete_server(&state.pool, &name).await? {
        return Err(ApiError::NotFound("no such MCP server"));
    }
    tracing::info!(admin_id = %admin.id, server = %name, "MCP server removed");
    Ok(StatusCode::NO_CONTENT)
}
