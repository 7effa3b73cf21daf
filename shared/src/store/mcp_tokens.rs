//! Users' own tokens for the deployment's MCP servers (see docs/mcp-tools.md): set and removed
//! through the API, read by the worker when a user's task lists or calls a server's tools.

use uuid::Uuid;
use sqlx::PgExecutor;

/// Sets (or replaces) `user_id`'s token for `server`.
pub async fn set_token(db: impl PgExecutor<'_>, user_id: Uuid, server: &str, token: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO user_mcp_tokens (user_id, server, token) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, server) DO UPDATE SET token = excluded.token, updated_at = now()",
        user_id,
        server,
        token,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// Removes `user_id`'s token for `server`; says whether there was one.
pub async fn delete_token(db: impl PgExecutor<'_>, user_id: Uuid, server: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!("DELETE FROM user_mcp_tokens WHERE user_id = $1 AND server = $2", user_id, server).execute(db).await?;
    Ok(done.rows_affected() > 0)
}

/// `user_id`'s token for `server`, if set.
pub async fn token(db: impl PgExecutor<'_>, user_id: Uuid, server: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT token FROM user_mcp_tokens WHERE user_id = $1 AND server = $2", user_id, server).fetch_optional(db).await
}

/// The servers `user_id` set a token for.
pub async fn servers_with_token(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT server FROM user_mcp_tokens WHERE user_id = $1 ORDER BY server", user_id).fetch_all(db).await
}
