//! Queries on users and API keys.

use sqlx::PgExecutor;
use uuid::Uuid;

use crate::domain::user::{ApiKey, User, hash_api_key, key_display_prefix};

/// Creates a user.
pub async fn insert_user(
    db: impl PgExecutor<'_>,
    name: &str,
    is_admin: bool,
    time_zone: &str,
    model: Option<&str>,
) -> Result<User, sqlx::Error> {
    sqlx::query_as!(
        User,
        r#"INSERT INTO users (id, name, is_admin, time_zone, model) VALUES ($1, $2, $3, $4, $5)
           RETURNING id, name, is_admin, time_zone, model, created_at"#,
        Uuid::now_v7(),
        name,
        is_admin,
        time_zone,
        model,
    )
    .fetch_one(db)
    .await
}

/// Stores the hash of a generated `key` for `user_id`, with its first characters to tell keys
/// apart. Storing the same key twice is a no-op; `None` then.
pub async fn insert_api_key(db: impl PgExecutor<'_>, user_id: Uuid, key: &str) -> Result<Option<ApiKey>, sqlx::Error> {
    insert_key_row(db, user_id, &hash_api_key(key), &key_display_prefix(key)).await
}

async fn insert_key_row(db: impl PgExecutor<'_>, user_id: Uuid, hash: &[u8], label: &str) -> Result<Option<ApiKey>, sqlx::Error> {
    sqlx::query_as!(
        ApiKey,
        "INSERT INTO api_keys (id, user_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_hash) DO NOTHING
         RETURNING id, user_id, key_prefix AS prefix, created_at, revoked_at",
        Uuid::now_v7(),
        user_id,
        hash,
        label,
    )
    .fetch_optional(db)
    .await
}

/// A user's keys, newest first (revoked ones too, so a user sees when each was revoked).
pub async fn list_api_keys(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<Vec<ApiKey>, sqlx::Error> {
    sqlx::query_as!(
        ApiKey,
        "SELECT id, user_id, key_prefix AS prefix, created_at, revoked_at FROM api_keys
         WHERE user_id = $1 ORDER BY created_at DESC, id DESC",
        user_id,
    )
    .fetch_all(db)
    .await
}

/// The id of the key row behind `key`.
pub async fn find_api_key_id(db: impl PgExecutor<'_>, key: &str) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!("SELECT id FROM api_keys WHERE key_hash = $1", hash_api_key(key)).fetch_optional(db).await
}

/// Revokes key `id` (of `user_id`, or of anyone when `None`: admins). From the moment this commits
/// the key authenticates nothing, on every API process: each request looks its key up. Returns the
/// key, also when it was revoked before (revoking is idempotent); `None` for an unknown id.
pub async fn revoke_api_key(db: impl PgExecutor<'_>, id: Uuid, user_id: Option<Uuid>) -> Result<Option<ApiKey>, sqlx::Error> {
    sqlx::query_as!(
        ApiKey,
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1 AND ($2::uuid IS NULL OR user_id = $2)
         RETURNING id, user_id, key_prefix AS prefix, created_at, revoked_at",
        id,
        user_id,
    )
    .fetch_optional(db)
    .await
}

/// The user holding `key`, if the key exists and is not revoked.
pub async fn find_user_by_api_key(db: impl PgExecutor<'_>, key: &str) -> Result<Option<User>, sqlx::Error> {
    find_user_by_key_hash(db, &hash_api_key(key)).await
}

/// The user holding the key of this hash ([`hash_api_key`]), if it exists and is not revoked.
pub async fn find_user_by_key_hash(db: impl PgExecutor<'_>, hash: &[u8]) -> Result<Option<User>, sqlx::Error> {
    sqlx::query_as!(
        User,
        r#"SELECT u.id, u.name, u.is_admin, u.time_zone, u.model, u.created_at
           FROM api_keys k JOIN users u ON u.id = k.user_id
           WHERE k.key_hash = $1 AND k.revoked_at IS NULL"#,
        hash,
    )
    .fetch_optional(db)
    .await
}

/// Every user, oldest first.
pub async fn list_users(db: impl PgExecutor<'_>) -> Result<Vec<User>, sqlx::Error> {
    sqlx::query_as!(User, "SELECT id, name, is_admin, time_zone, model, created_at FROM users ORDER BY created_at, id")
        .fetch_all(db)
        .await
}

pub async fn find_user(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<User>, sqlx::Error> {
    sqlx::query_as!(
        User,
        "SELECT id, name, is_admin, time_zone, model, created_at FROM users WHERE id = $1",
        id
    )
    .fetch_optional(db)
    .await
}

/// What the key list shows for the `QUICKACT_ADMIN_KEY` key instead of its first characters.
pub const BOOTSTRAP_KEY_LABEL: &str = "QUICKACT_ADMIN_KEY";

/// Makes sure an admin holding `key` exists (the `QUICKACT_ADMIN_KEY` bootstrap). Idempotent, and
/// safe when several API processes start at once: the key's unique hash decides the race.
pub async fn ensure_admin_key(pool: &sqlx::PgPool, key: &str, time_zone: &str) -> Result<User, sqlx::Error> {
    if let Some(user) = find_user_by_api_key(pool, key).await? {
        if !user.is_admin {
            sqlx::query!("UPDATE users SET is_admin = true WHERE id = $1", user.id).execute(pool).await?;
        }
        return Ok(User { is_admin: true, ..user });
    }
    let mut tx = pool.begin().await?;
    let user = insert_user(&mut *tx, "admin", true, time_zone, None).await?;
    // The operator chose this key: no part of it is stored, only where it came from.
    let inserted = insert_key_row(&mut *tx, user.id, &hash_api_key(key), BOOTSTRAP_KEY_LABEL).await?;
    if inserted.is_none() {
        // Another process bootstrapped the same key between our lookup and insert.
        tx.rollback().await?;
        return find_user_by_api_key(pool, key).await?.ok_or(sqlx::Error::RowNotFound);
    }
    tx.commit().await?;
    Ok(user)
}
