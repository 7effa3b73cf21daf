//! Sessions of the admin web page: a browser that logged in with an admin's API key holds a random
//! token; the table keeps the token's SHA-256 and the key it was opened with (`admin_sessions`).

use sqlx::PgExecutor;
use uuid::Uuid;

use crate::domain::user::User;

/// Opens a session for the holder of key `api_key_id`, valid for `ttl_secs`. Expired sessions are
/// removed on the way, so the table never holds more than the live ones and a day's leftovers.
pub async fn open_session(db: &sqlx::PgPool, token_hash: &[u8], api_key_id: Uuid, ttl_secs: f64) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM admin_sessions WHERE expires_at < now()").execute(db).await?;
    sqlx::query!(
        "INSERT INTO admin_sessions (token_hash, api_key_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))",
        token_hash,
        api_key_id,
        ttl_secs,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// The admin behind a session token's hash: only while the session has not expired, its key is
/// not revoked and its user is still an admin.
pub async fn find_session_admin(db: impl PgExecutor<'_>, token_hash: &[u8]) -> Result<Option<User>, sqlx::Error> {
    sqlx::query_as!(
        User,
        r#"SELECT u.id, u.name, u.is_admin, u.time_zone, u.model, u.created_at
           FROM admin_sessions s JOIN api_keys k ON k.id = s.api_key_id JOIN users u ON u.id = k.user_id
           WHERE s.token_hash = $1 AND s.expires_at > now() AND k.revoked_at IS NULL AND u.is_admin"#,
        token_hash,
    )
    .fetch_optional(db)
    .await
}

/// Ends a session (logging out). Ending one that does not exist is not an error.
pub async fn close_session(db: impl PgExecutor<'_>, token_hash: &[u8]) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM admin_sessions WHERE token_hash = $1", token_hash).execute(db).await?;
    Ok(())
}
