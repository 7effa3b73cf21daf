//! The schema's two parts (`quickact_shared::schema`): a database the squashed migrations built is
//! taken as having the squash; one that stopped before their end is refused; one a newer build
//! migrated is no error; the SQL functions are applied by a build with a newer revision only, and
//! the ones no build calls any more are dropped.

use quickact_shared::schema::{self, FUNCTIONS_REVISION, MIGRATOR, MigrateError};
use quickact_testkit::postgres::{server_url, with_database};
use sqlx::{AssertSqlSafe, Connection, PgConnection, PgPool};

const SQUASH: i64 = 20261130000001;

/// An empty database of its own (not the migrated template).
async fn empty_database() -> PgPool {
    let server = server_url().await;
    let name = format!("quickact_schema_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&with_database(&server, "postgres")).await.unwrap();
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut admin).await.unwrap();
    PgPool::connect(&with_database(&server, &name)).await.unwrap()
}

/// What a build from before the squash leaves: the squashed schema (built then by the migrations it
/// replaces) and sqlx's records of those migrations, the last of them `last`.
async fn database_before_the_squash(last: i64) -> PgPool {
    let pool = empty_database().await;
    let squash = MIGRATOR.iter().find(|migration| migration.version == SQUASH).unwrap();
    sqlx::raw_sql(AssertSqlSafe(squash.sql.as_ref().to_owned())).execute(&pool).await.unwrap();
    sqlx::raw_sql(
        "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL,
             installed_on TIMESTAMPTZ NOT NULL DEFAULT now(), success BOOLEAN NOT NULL, checksum BYTEA NOT NULL,
             execution_time BIGINT NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();
    for version in [20261121000001, 20261127000001, last] {
        sqlx::query("INSERT INTO _sqlx_migrations VALUES ($1, 'before the squash', now(), true, '\\x00', 1) ON CONFLICT DO NOTHING")
            .bind(version)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool
}

async fn applied(pool: &PgPool) -> Vec<i64> {
    sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version").fetch_all(pool).await.unwrap()
}

async fn function_exists(pool: &PgPool, name: &str) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT FROM pg_proc WHERE proname = $1)").bind(name).fetch_one(pool).await.unwrap()
}

#[tokio::test]
async fn a_database_the_squashed_migrations_built_is_taken_as_squashed_and_gets_the_functions() {
    let pool = database_before_the_squash(20261129000010).await;
    // The functions of that build, which no build in service calls any more (their bodies do not
    // matter here).
    sqlx::raw_sql(
        "CREATE FUNCTION quickact_submit(p_user_id uuid, p_text text) RETURNS int LANGUAGE sql AS 'SELECT 1';
         CREATE FUNCTION quickact_fetch_tasks(p_holder text, p_limit int) RETURNS int LANGUAGE sql AS 'SELECT 1';
         CREATE FUNCTION quickact_claim_tasks(p_holder text, p_limit int, p_lease_secs float8, p_running uuid[],
             p_max_running int, p_aging_secs float8) RETURNS int LANGUAGE sql AS 'SELECT 1';",
    )
    .execute(&pool)
    .await
    .unwrap();
    schema::migrate(&pool).await.expect("a database at the squashed head migrates");
    assert!(!function_exists(&pool, "quickact_submit").await && !function_exists(&pool, "quickact_fetch_tasks").await, "retired");
    let claims: Vec<String> = sqlx::query_scalar("SELECT oid::regprocedure::text FROM pg_proc WHERE proname = 'quickact_claim_tasks'").fetch_all(&pool).await.unwrap();
    assert_eq!(claims, ["quickact_claim_tasks(text,integer,double precision,integer,double precision)"], "the overload with running tasks is retired");
    let versions = applied(&pool).await;
    let expected: Vec<i64> = MIGRATOR.iter().map(|migration| migration.version).collect();
    assert_eq!(versions, expected, "the squashed migrations' records make way for the squash's");
    assert!(function_exists(&pool, "quickact_claim_tasks").await && function_exists(&pool, "quickact_submit_tasks").await);
    let revision: i64 = sqlx::query_scalar("SELECT revision FROM quickact_functions").fetch_one(&pool).await.unwrap();
    assert_eq!(revision, FUNCTIONS_REVISION);

    // Again, as every later start does: nothing to do, nothing changes.
    schema::migrate(&pool).await.unwrap();
    assert_eq!(applied(&pool).await, expected);
}

#[tokio::test]
async fn a_database_that_stopped_before_the_squashed_head_is_refused_untouched() {
    let pool = database_before_the_squash(20261128000030).await;
    let refused = schema::migrate(&pool).await.expect_err("a database short of the squashed head is refused");
    assert!(matches!(refused, MigrateError::BeforeSquash(20261128000030)), "{refused}");
    assert!(refused.to_string().contains("start a build of commit"), "the refusal says what to do: {refused}");
    assert_eq!(applied(&pool).await, vec![20261121000001, 20261127000001, 20261128000030], "nothing was changed");
}

#[tokio::test]
async fn functions_are_applied_by_a_newer_build_only() {
    let pool = empty_database().await;
    schema::migrate(&pool).await.unwrap();
    // A newer build applied its functions: a start of this (older) build leaves them be.
    let newer = "CREATE OR REPLACE FUNCTION quickact_announce_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN PERFORM pg_notify('quickact_tasks_waiting', 'newer'); RETURN NULL; END $$";
    sqlx::raw_sql(newer).execute(&pool).await.unwrap();
    sqlx::query("UPDATE quickact_functions SET revision = $1").bind(FUNCTIONS_REVISION + 1).execute(&pool).await.unwrap();
    schema::migrate(&pool).await.unwrap();
    let body: String = sqlx::query_scalar("SELECT prosrc FROM pg_proc WHERE proname = 'quickact_announce_tasks'").fetch_one(&pool).await.unwrap();
    assert!(body.contains("'newer'"), "a newer revision's functions are kept: {body}");

    // An older revision is brought up to this build's.
    sqlx::query("UPDATE quickact_functions SET revision = $1").bind(FUNCTIONS_REVISION - 1).execute(&pool).await.unwrap();
    schema::migrate(&pool).await.unwrap();
    let body: String = sqlx::query_scalar("SELECT prosrc FROM pg_proc WHERE proname = 'quickact_announce_tasks'").fetch_one(&pool).await.unwrap();
    assert!(!body.contains("'newer'"), "this build's functions replace an older revision's: {body}");
    let revision: i64 = sqlx::query_scalar("SELECT revision FROM quickact_functions").fetch_one(&pool).await.unwrap();
    assert_eq!(revision, FUNCTIONS_REVISION);
}

/// During an upgrade a process of the previous build may restart after the new build migrated: a
/// migration it does not know is no error for it (sqlx refuses by default), and it changes nothing.
#[tokio::test]
async fn a_build_starts_on_a_database_a_newer_build_migrated() {
    let pool = empty_database().await;
    schema::migrate(&pool).await.expect("an empty database migrates");
    let newer: i64 = 29991231000001;
    sqlx::query("INSERT INTO _sqlx_migrations VALUES ($1, 'a newer build''s', now(), true, '\\x00', 1)").bind(newer).execute(&pool).await.unwrap();
    let before = applied(&pool).await;
    schema::migrate(&pool).await.expect("a newer build's migration is no error");
    assert_eq!(applied(&pool).await, before);
    assert!(before.contains(&newer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_build_from_before_turn_rows_is_never_handed_a_journal_that_has_them() {
    let app = quickact_testkit::TestApp::start_with(quickact_testkit::TestAppOptions::default().workers(0)).await;
    let (_, key) = app.create_user("alice").await;
    let id: uuid::Uuid = app.submit_id(&key, "明天下午3点开会").await.parse().unwrap();
    let mut conn = app.pool.acquire().await.unwrap();
    let journal: String = sqlx::query_scalar("SHOW quickact.journal").fetch_one(&mut *conn).await.unwrap();
    assert_eq!(journal, "turn_rows", "this build's connections say what they read");
    // A run of this build wrote a turn with its call, then its lease lapsed.
    sqlx::query(
        "INSERT INTO quick_action_steps (task_id, seq, kind, name, ok, latency_ms, started_at, finished_at, attempt, calls)
         VALUES ($1, 0, 'model_turn', 'm', true, 1, now(), now(), 1,
                 jsonb_build_array(jsonb_build_object('name', 'create_item', 'ok', true, 'latency_ms', 1,
                                                      'started_at', now(), 'finished_at', now(), 'attempt', 1)))",
    )
    .bind(id)
    .execute(&mut *conn)
    .await
    .unwrap();
    let claim = "SELECT (c.task).id FROM quickact_claim_tasks('old-build', 10, 30, 10, 60) AS c";
    // An older build's connection does not say it reads such rows: the task is not its.
    sqlx::query("SET quickact.journal = ''").execute(&mut *conn).await.unwrap();
    let claimed: Vec<uuid::Uuid> = sqlx::query_scalar(claim).fetch_all(&mut *conn).await.unwrap();
    assert!(claimed.is_empty(), "{claimed:?}");
    let steps: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_journal WHERE task_id = $1").bind(id).fetch_one(&mut *conn).await.unwrap();
    assert_eq!(steps, 2, "the view reads the turn and its call");
    sqlx::query("SET quickact.journal = 'turn_rows'").execute(&mut *conn).await.unwrap();
    let claimed: Vec<uuid::Uuid> = sqlx::query_scalar(claim).fetch_all(&mut *conn).await.unwrap();
    assert_eq!(claimed, [id], "this build's is");
    drop(conn);
    app.shutdown().await;
}
