//! The database's schema, in two parts that change differently:
//! - **Tables, indexes and data** (`migrations/*.sql`): each migration applied once, in order,
//!   and never edited after it is on main.
//! - **Functions and triggers** (`migrations/functions/*.sql`): each written once, as it is now
//!   (`CREATE OR REPLACE`), so a change to the submit, the claim or a trigger is a change in one
//!   place. They are applied after the migrations, whole, when this build's
//!   [`FUNCTIONS_REVISION`] is newer than the one the database has: a process of an older build
//!   that starts during an upgrade leaves the newer functions be.
//!
//! A function's name and arguments are its contract with the processes that call it, old ones
//! included while an upgrade replaces them one by one: a change that breaks the contract takes a
//! new name, and the old function stays until no build in service calls it (docs/architecture.md,
//! "Upgrades"). Functions that answer rows answer the table's own row type, so a new column changes
//! no function; the callers select the columns they read.

use sqlx::{Connection, PgPool};

/// `migrations/*.sql` at the workspace root. Migrations a newer build applied are no error here:
/// during an upgrade a process of the previous build that restarts (a crash, a new machine) must
/// start on the newer schema, which keeps what it reads (docs/architecture.md, "The schema and
/// upgrades"); sqlx refuses by default.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate::Migrator { ignore_missing: true, ..sqlx::migrate!("../migrations") };

/// The functions and triggers, in the order they are applied (a function's body may name one that
/// comes later: PL/pgSQL resolves names when it runs).
pub const FUNCTIONS: &[(&str, &str)] = &[
    ("journal", include_str!("../../migrations/functions/journal.sql")),
    ("task_slots", include_str!("../../migrations/functions/task_slots.sql")),
    ("submit", include_str!("../../migrations/functions/submit.sql")),
    ("claim", include_str!("../../migrations/functions/claim.sql")),
    ("ending", include_str!("../../migrations/functions/ending.sql")),
    ("items", include_str!("../../migrations/functions/items.sql")),
    ("credentials", include_str!("../../migrations/functions/credentials.sql")),
    ("provider_requests", include_str!("../../migrations/functions/provider_requests.sql")),
    ("webhooks", include_str!("../../migrations/functions/webhooks.sql")),
];

/// Raised by one with every change to [`FUNCTIONS`] (a test compares [`FUNCTIONS_FINGERPRINT`]
/// with the files and says so when it is not).
pub const FUNCTIONS_REVISION: i64 = 6;

/// [`fingerprint`] of [`FUNCTIONS`] at [`FUNCTIONS_REVISION`].
#[cfg(test)]
const FUNCTIONS_FINGERPRINT: &str = "71af0002fed4e792";

/// The migrations before 2026-11-30 are squashed into `20261130000001_schema.sql`. A database that
/// had them all (their last one is this) is taken as having the squash.
const SQUASHED_HEAD: i64 = 20261129000010;
const SQUASH: i64 = 20261130000001;

/// Takes turns between processes migrating at once: "quickact schema".
const SCHEMA_LOCK: i64 = 0x7175_6963_6b73_6368;

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("applying quickact migrations: {0}")]
    Schema(#[from] sqlx::migrate::MigrateError),
    #[error("applying quickact's SQL functions ({0}): {1}")]
    Functions(&'static str, sqlx::Error),
    #[error("reading the database's migrations: {0}")]
    Database(#[from] sqlx::Error),
    #[error(
        "this database stopped at migration {0}, before the squash of 2026-11-30: start a build of commit cc8440f (or \
         any before the squash) on it once, then this one"
    )]
    BeforeSquash(i64),
}

/// Applies the migrations, then the functions. Safe to run from several processes at once.
pub async fn migrate(pool: &PgPool) -> Result<(), MigrateError> {
    adopt_squash(pool).await?;
    MIGRATOR.run(pool).await?;
    apply_functions(pool).await
}

/// A database the squashed migrations built is marked as having the squash, whose schema is
/// theirs: the rows of the squashed migrations make way for the squash's.
async fn adopt_squash(pool: &PgPool) -> Result<(), MigrateError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(SCHEMA_LOCK).execute(&mut *tx).await?;
    let known: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL").fetch_one(&mut *tx).await?;
    if !known {
        return Ok(());
    }
    let latest: Option<i64> =
        sqlx::query_scalar("SELECT max(version) FROM _sqlx_migrations WHERE version < $1 AND success").bind(SQUASH).fetch_one(&mut *tx).await?;
    match latest {
        None => return Ok(()),
        Some(version) if version != SQUASHED_HEAD => return Err(MigrateError::BeforeSquash(version)),
        Some(_) => {}
    }
    let squash = MIGRATOR.iter().find(|migration| migration.version == SQUASH).expect("the squash is a migration");
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version < $1").bind(SQUASH).execute(&mut *tx).await?;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES ($1, $2, true, $3, 0)
         ON CONFLICT (version) DO NOTHING",
    )
    .bind(SQUASH)
    .bind(squash.description.as_ref())
    .bind(squash.checksum.as_ref())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(squashed_head = SQUASHED_HEAD, squash = SQUASH, "the database's migrations are taken as squashed");
    Ok(())
}

/// Applies [`FUNCTIONS`] in one transaction when the database's revision is older than this build's.
async fn apply_functions(pool: &PgPool) -> Result<(), MigrateError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(SCHEMA_LOCK).execute(&mut *tx).await?;
    let applied: Option<i64> = sqlx::query_scalar("SELECT revision FROM quickact_functions").fetch_optional(&mut *tx).await?;
    if applied.is_some_and(|applied| applied >= FUNCTIONS_REVISION) {
        if applied != Some(FUNCTIONS_REVISION) {
            tracing::info!(database = applied, build = FUNCTIONS_REVISION, "the database has newer SQL functions than this build; keeping them");
        }
        return Ok(());
    }
    for (name, sql) in FUNCTIONS {
        sqlx::raw_sql(sqlx::AssertSqlSafe(*sql)).execute(&mut *tx).await.map_err(|err| MigrateError::Functions(name, err))?;
    }
    sqlx::query(
        "INSERT INTO quickact_functions (only_row, revision, fingerprint) VALUES (true, $1, $2)
         ON CONFLICT (only_row) DO UPDATE SET revision = EXCLUDED.revision, fingerprint = EXCLUDED.fingerprint, applied_at = now()",
    )
    .bind(FUNCTIONS_REVISION)
    .bind(fingerprint())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(revision = FUNCTIONS_REVISION, "applied the SQL functions");
    Ok(())
}

/// A hash of [`FUNCTIONS`] (FNV-1a: it tells versions apart, it guards nothing).
pub fn fingerprint() -> String {
    let hash = FUNCTIONS
        .iter()
        .flat_map(|(name, sql)| name.bytes().chain([0]).chain(sql.bytes()).chain([0]))
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_the_functions_raises_their_revision() {
        assert_eq!(
            fingerprint(),
            FUNCTIONS_FINGERPRINT,
            "migrations/functions changed: raise FUNCTIONS_REVISION to {} and set FUNCTIONS_FINGERPRINT to \"{}\" \
             (a database applies functions only from a build with a newer revision)",
            FUNCTIONS_REVISION + 1,
            fingerprint()
        );
    }

    #[test]
    fn every_function_file_is_applied() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/functions");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().trim_end_matches(".sql").to_owned())
            .collect();
        files.sort();
        let mut listed: Vec<String> = FUNCTIONS.iter().map(|(name, _)| (*name).to_owned()).collect();
        listed.sort();
        assert_eq!(files, listed, "each file in migrations/functions is listed in FUNCTIONS");
    }
}
