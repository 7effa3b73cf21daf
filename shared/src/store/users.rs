//! Queries on users and API keys.

use sqlx::PgExecutor;
use uuid::Uuid;

use crate::domain::user::{User, hash_api_key, key_display_prefix};

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

/// Stores the hash of `key` for `user_id`. Storing the same key twice is a no-op.
pub async fn insert_api_key(db: impl PgExecutor<'_>, user_id: Uuid, key: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO api_keys (id, user_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_hash) DO NOTHING",
        Uuid::now_v7(),
        user_id,
        hash_api_key(key),
        key_display_prefix(key),
    )
    .execute(db)
    .await?;
    Ok(())
}

/// The user holding `key`, if the key exists and is not revoked.
pub async fn find_user_by_api_key(db: impl PgExecutor<'_>, key: &str) -> Result<Option<User>, sqlx::Error> {
    sqlx::query_as!(
        User,
        r#"SELECT u.id, u.name, u.is_admin, u.time_zone, u.model, u.created_at
           FROM api_keys k JOIN users u ON u.id = k.user_id
           WHERE k.key_hash = $1 AND k.revoked_at IS NULL"#,
        hash_api_key(key),
    )
    .fetch_optional(db)
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
    let inserted = sqlx::query!(
        "INSERT INTO api_keys (id, user_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_hash) DO NOTHING",
        Uuid::now_v7(),
        user.id,
        hash_api_key(key),
        key_display_prefix(key),
    )
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if inserted == 0 {
        // Another process bootstrapped the same key between our lookup and insert.
        tx.rollback().await?;
        return find_user_by_api_key(pool, key).await?.ok_or(sqlx::Error::RowNotFound);
    }
    tx.commit().await?;
    Ok(user)
}
