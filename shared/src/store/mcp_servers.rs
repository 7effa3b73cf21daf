//! MCP servers an admin registered through the API, for every user or for one (see
//! docs/mcp-tools.md); those of the configuration (`QUICKACT_MCP_SERVERS`) are not stored.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::config::McpServerConfig;

/// A registered server and whom it serves.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RegisteredMcpServer {
    pub name: String,
    pub url: String,
    pub timeout_secs: i32,
    pub header: Option<String>,
    pub tools: Option<Vec<String>>,
    /// The only user it serves; `null`: every user.
    pub user_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

impl RegisteredMcpServer {
    /// The server as the worker calls it.
    pub fn config(&self) -> McpServerConfig {
        McpServerConfig {
            name: self.name.clone(),
            url: self.url.clone(),
            timeout_secs: self.timeout_secs.max(1) as u64,
            header: self.header.clone(),
            tools: self.tools.clone(),
        }
    }

    /// Whether `user_id`'s tasks may call it.
    pub fn serves(&self, user_id: Uuid) -> bool {
        self.user_id.is_none_or(|only| only == user_id)
    }
}

/// Registers `server` for `user_id` (`None`: every user); `None` when the name is taken.
pub async fn insert_server(db: impl PgExecutor<'_>, server: &McpServerConfig, user_id: Option<Uuid>) -> Result<Option<RegisteredMcpServer>, sqlx::Error> {
    sqlx::query_as!(
        RegisteredMcpServer,
        "INSERT INTO mcp_servers (name, url, timeout_secs, header, tools, user_id) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (name) DO NOTHING
         RETURNING name, url, timeout_secs, header, tools, user_id, created_at",
        server.name,
        server.url,
        server.timeout_secs.min(600) as i32,
        server.header,
        server.tools.as_deref(),
        user_id,
    )
    .fetch_optional(db)
    .await
}

/// Every registered server, by name.
pub async fn list_servers(db: impl PgExecutor<'_>) -> Result<Vec<RegisteredMcpServer>, sqlx::Error> {
    sqlx::query_as!(RegisteredMcpServer, "SELECT name, url, timeout_secs, header, tools, user_id, created_at FROM mcp_servers ORDER BY name")
        .fetch_all(db)
        .await
}

/// Removes the server `name`; says whether there was one. Users' tokens for it go with it.
pub async fn delete_server(db: impl PgExecutor<'_>, name: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "WITH tokens AS (DELETE FROM user_mcp_tokens WHERE server = $1) DELETE FROM mcp_servers WHERE name = $1",
        name
    )
    .execute(db)
    .await?;
    Ok(done.rows_affected() > 0)
}
