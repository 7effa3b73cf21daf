//! Users' own tokens for the deployment's MCP servers (see docs/mcp-tools.md): set and removed
//! through the API, read by the worker when a user's task lists or calls a server's tools.
//!
//! A token is stored encrypted (`sealed_token`, see [`crate::secrets`]) and bound to its user and
//! server, so no token is readable in the database and no row's value opens in another row. Rows
//! from a build before that hold the token in plain text (`token`): they are still used, and
//! [`seal_stored_tokens`] (run by the API at startup) encrypts them, and encrypts again with the
//! current key the tokens of previous keys.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::secrets::{OpenError, SecretKeys};

/// Rows read at a time by [`seal_stored_tokens`].
const SEAL_BATCH: i64 = 500;

/// A token as stored. `Debug` shows neither form.
pub enum StoredToken {
    /// Written by a build before encryption at rest (or by one still running during an upgrade).
    Plain(String),
    /// Encrypted with one of the deployment's keys, bound to its user and server.
    Sealed(Vec<u8>),
}

impl fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoredToken::Plain(_) => f.write_str("StoredToken::Plain(..)"),
            StoredToken::Sealed(_) => f.write_str("StoredToken::Sealed(..)"),
        }
    }
}

impl StoredToken {
    /// A row's columns: the plain token wins where both are set (the previous build wrote it over
    /// an encrypted one, so it is the newer).
    fn from_columns(token: Option<String>, sealed: Option<Vec<u8>>) -> Option<Self> {
        match (token, sealed) {
            (Some(token), _) => Some(StoredToken::Plain(token)),
            (None, Some(sealed)) => Some(StoredToken::Sealed(sealed)),
            (None, None) => None,
        }
    }

    /// The token `user_id`'s calls to `server` carry. An encrypted one needs the key it was
    /// encrypted with among `keys`, and opens only in its own row.
    pub fn open(self, keys: Option<&SecretKeys>, user_id: Uuid, server: &str) -> Result<SecretString, OpenError> {
        match self {
            StoredToken::Plain(token) => Ok(SecretString::from(token)),
            StoredToken::Sealed(sealed) => {
                let plaintext = keys.ok_or(OpenError::NoKey)?.open(&sealed, &context(user_id, server))?;
                String::from_utf8(plaintext.to_vec()).map(SecretString::from).map_err(|_| OpenError::Malformed)
            }
        }
    }
}

/// What a token is bound to (its encryption's associated data): its user and server.
fn context(user_id: Uuid, server: &str) -> Vec<u8> {
    [b"user_mcp_tokens\0".as_slice(), user_id.as_bytes(), server.as_bytes()].concat()
}

/// Sets (or replaces) `user_id`'s token for `server`, encrypted with the current key (the plain
/// column is cleared).
pub async fn set_token(db: impl PgExecutor<'_>, keys: &SecretKeys, user_id: Uuid, server: &str, token: &str) -> Result<(), sqlx::Error> {
    let sealed = keys.seal(token.as_bytes(), &context(user_id, server));
    sqlx::query!(
        "INSERT INTO user_mcp_tokens (user_id, server, sealed_token) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, server) DO UPDATE SET token = NULL, sealed_token = excluded.sealed_token, updated_at = now()",
        user_id,
        server,
        sealed,
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

/// `user_id`'s token for `server` as stored, if set ([`StoredToken::open`] reads it).
pub async fn stored_token(db: impl PgExecutor<'_>, user_id: Uuid, server: &str) -> Result<Option<StoredToken>, sqlx::Error> {
    let row = sqlx::query!("SELECT token, sealed_token FROM user_mcp_tokens WHERE user_id = $1 AND server = $2", user_id, server)
        .fetch_optional(db)
        .await?;
    Ok(row.and_then(|row| StoredToken::from_columns(row.token, row.sealed_token)))
}

/// The servers `user_id` set a token for.
pub async fn servers_with_token(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT server FROM user_mcp_tokens WHERE user_id = $1 ORDER BY server", user_id).fetch_all(db).await
}

/// How many tokens are stored in plain text (by a build before encryption at rest).
pub async fn count_plain_tokens(db: impl PgExecutor<'_>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM user_mcp_tokens WHERE token IS NOT NULL"#).fetch_one(db).await
}

/// What [`seal_stored_tokens`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SealReport {
    /// Plain tokens encrypted (and their plain text cleared).
    pub encrypted: u64,
    /// Tokens of a previous key encrypted again with the current one.
    pub reencrypted: u64,
    /// Tokens no configured key decrypts, left as they are: their users' calls to the server fail,
    /// saying so, until the key is configured again or they set their token again.
    pub unreadable: u64,
}

/// Encrypts with the current key every token stored in plain text (clearing it) or under a previous
/// key: the API runs it at startup, so that an upgrade leaves no plain token and a rotation no token
/// of the old key (docs/mcp-tools.md, "Rotating the key"). Safe beside other processes: a row is
/// written only if it still holds what was read, so a token set meanwhile is never overwritten.
pub async fn seal_stored_tokens(pool: &PgPool, keys: &SecretKeys) -> Result<SealReport, sqlx::Error> {
    let header = keys.current_header();
    let mut report = SealReport::default();
    let mut after = (Uuid::nil(), String::new());
    loop {
        // In key order from where the last batch ended: a row left as it is (unreadable) is not
        // read again. The envelope starts with its key's id (`SecretKeys::current_header`).
        let rows = sqlx::query!(
            "SELECT user_id, server, token, sealed_token FROM user_mcp_tokens
             WHERE (user_id, server) > ($1::uuid, $2::text)
               AND (token IS NOT NULL OR substring(sealed_token FROM 1 FOR $3) IS DISTINCT FROM $4)
             ORDER BY user_id, server LIMIT $5",
            after.0,
            after.1,
            header.len() as i32,
            header.as_slice(),
            SEAL_BATCH,
        )
        .fetch_all(pool)
        .await?;
        let Some(last) = rows.last() else { return Ok(report) };
        after = (last.user_id, last.server.clone());
        for row in rows {
            let Some(stored) = StoredToken::from_columns(row.token.clone(), row.sealed_token.clone()) else { continue };
            let was_plain = matches!(stored, StoredToken::Plain(_));
            let token = match stored.open(Some(keys), row.user_id, &row.server) {
                Ok(token) => token,
                Err(err) => {
                    tracing::warn!(user_id = %row.user_id, server = %row.server, error = %err, "an MCP token cannot be decrypted; left as it is");
                    report.unreadable += 1;
                    continue;
                }
            };
            let sealed = keys.seal(token.expose_secret().as_bytes(), &context(row.user_id, &row.server));
            let done = sqlx::query!(
                "UPDATE user_mcp_tokens SET token = NULL, sealed_token = $3
                 WHERE user_id = $1 AND server = $2 AND token IS NOT DISTINCT FROM $4 AND sealed_token IS NOT DISTINCT FROM $5",
                row.user_id,
                row.server,
                sealed,
                row.token.as_deref(),
                row.sealed_token.as_deref(),
            )
            .execute(pool)
            .await?;
            match (done.rows_affected(), was_plain) {
                (0, _) => {}
                (_, true) => report.encrypted += 1,
                (_, false) => report.reencrypted += 1,
            }
        }
    }
}
