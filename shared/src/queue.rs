//! The job queue (apalis-postgres): what a job carries and how the API enqueues one.
//!
//! The task row is the source of truth; the job only carries the task id. The API inserts the row
//! and pushes the job in ONE transaction, so there is never a task without a job or a job without
//! its task. The user's idempotency key is enforced on our table, not passed to apalis (a duplicate
//! key there makes the whole push fail).

use apalis::prelude::{TaskBuilder, TaskId};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// The apalis queue (its `job_type`) quick actions travel on.
pub const QUICK_ACTION_QUEUE: &str = "quickact::quick_action";

/// apalis-postgres retries a failed job at once, with no backoff, up to `max_attempts` times. Our
/// handler retries inside the task's time budget and always ends with a verdict, so a job only
/// fails when the database itself is unreachable at the very end; a couple of queue-level
/// attempts cover that without ever looping.
pub const JOB_MAX_ATTEMPTS: usize = 3;

/// A job's payload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QuickActionJob {
    pub task_id: Uuid,
}

/// Pushes the job of `task_id` on `conn` (the caller's transaction). The job is found by its payload
/// (`{"task_id": ...}`); its own id is apalis's.
pub async fn push_quick_action_job(conn: &mut PgConnection, task_id: Uuid) -> Result<(), sqlx::Error> {
    let job = TaskBuilder::new(job_payload(task_id)).task_id(new_job_id()).max_attempts(JOB_MAX_ATTEMPTS).build();
    apalis_postgres::queries::push_tasks(conn, QUICK_ACTION_QUEUE, vec![job]).await.map_err(|err| match err {
        apalis_postgres::Error::Database(db) => db,
        other => sqlx::Error::Encode(Box::new(other)),
    })?;
    Ok(())
}

/// A new job's id, as apalis makes them.
pub fn new_job_id() -> TaskId {
    TaskId::from_ulid(ulid::Ulid::generate())
}

/// The payload of `task_id`'s job, as apalis stores it.
pub fn job_payload(task_id: Uuid) -> Vec<u8> {
    serde_json::to_vec(&QuickActionJob { task_id }).expect("job payload serialises")
}

/// The body of `apalis.get_jobs` (how a worker takes its next jobs) as quickact installs it, as a
/// literal for `concat!` (sqlx takes only `&'static str` statements).
///
/// apalis-postgres 1.0.0's own version marks the jobs it picks with `UPDATE ... FROM jobs WHERE
/// j.id = jobs.id`, a join with its `LIMIT v_job_count` CTE. A SQL function's statement is planned
/// without its arguments' values, so the planner guesses the CTE at 1,000 rows and joins by hashing
/// the WHOLE `apalis.jobs` table: every fetch read every job kept (finished ones too, for
/// `QUICKACT_KEEP_JOBS_HOURS`), 10 ms a fetch at 10,000 jobs and growing with the table. Here the
/// picked ids are an array the UPDATE finds by primary key, whatever the table holds. Same jobs,
/// same order, same locks (`FOR UPDATE SKIP LOCKED`), same result.
///
/// It is PL/pgSQL, not SQL: a SQL function's statement is planned again at every call, while
/// PL/pgSQL keeps its plan for the session (a plan by primary key and the fetch index, whatever
/// the values). Measured in the latency scenario, a fetch's execution went from 0.23 to 0.10 ms,
/// and it is on the way of every task to its run.
macro_rules! get_jobs_body {
    () => {
        "
BEGIN
    RETURN QUERY
    UPDATE apalis.jobs j
    SET status = 'Queued', lock_by = worker_id, lock_at = now()
    WHERE j.id = ANY (ARRAY(
        SELECT id
        FROM apalis.jobs
        WHERE (status = 'Pending' OR (status = 'Failed' AND attempts < max_attempts))
          AND run_at < now()
          AND job_type = v_job_type
        ORDER BY priority DESC, run_at ASC
        LIMIT v_job_count
        FOR UPDATE SKIP LOCKED))
    RETURNING j.*;
END;
"
    };
}

/// Whether `apalis.get_jobs` is missing or not quickact's ([`get_jobs_body`]).
const GET_JOBS_DIFFERS: &str = concat!(
    "SELECT (SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('apalis.get_jobs(text, text, integer)'))
     IS DISTINCT FROM $body$",
    get_jobs_body!(),
    "$body$"
);

/// Installs [`get_jobs_body`] as `apalis.get_jobs`.
const CREATE_GET_JOBS: &str = concat!(
    "CREATE OR REPLACE FUNCTION apalis.get_jobs(worker_id TEXT, v_job_type TEXT, v_job_count INTEGER DEFAULT 5)
     RETURNS SETOF apalis.jobs LANGUAGE plpgsql VOLATILE AS $$",
    get_jobs_body!(),
    "$$"
);

/// A finished job lets go of its worker: `lock_by` is cleared when a job ends (`Done`, `Failed`,
/// `Killed`).
///
/// apalis-postgres acknowledges a run with `handle_result.sql`, whose `locked` step finds the job
/// by `lock_by = <this worker>`. Finished jobs kept their `lock_by`, so the planner (whose
/// statistics lag a burst) walked the `lock_by` index over every job the worker had ever finished:
/// 4-7 ms an acknowledgement after a few thousand tasks, growing with the jobs kept. Nothing reads
/// the `lock_by` of a finished job: re-enqueueing (orphaned or abandoned) and heartbeats look only
/// at `Queued` and `Running` jobs, and a failed job that is fetched again is locked afresh by
/// [`get_jobs_body`].
const CREATE_RELEASE_LOCK: &str = "
    CREATE OR REPLACE FUNCTION quickact_release_job_lock() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.lock_by := NULL;
        RETURN NEW;
    END $$;
    CREATE OR REPLACE TRIGGER quickact_release_job_lock BEFORE UPDATE OF status ON apalis.jobs
        FOR EACH ROW WHEN (NEW.status IN ('Done', 'Failed', 'Killed') AND NEW.lock_by IS NOT NULL)
        EXECUTE FUNCTION quickact_release_job_lock();";

/// apalis-postgres's migrations leave two indexes on `apalis.jobs` that repeat others exactly:
/// `unique_job_id` (the primary key's column) and `lidx` (`idx_apalis_jobs_lock_by`'s). Every
/// change of a job's status writes an entry into each index, so they cost two index insertions and
/// their WAL on each of a job's three writes, and no query gains from them. No constraint uses
/// either.
const DROP_DUPLICATE_INDEXES: &str = "DROP INDEX IF EXISTS apalis.unique_job_id, apalis.lidx";

/// apalis's idempotency keys stay unique per queue, but only jobs that have one are indexed.
/// quickact enforces its own idempotency keys on its tasks and never gives a job one, so the
/// full index held a `NULL` entry for every job, written on each of the job's three writes (a
/// quarter of a job's index WAL). `NULL` keys never conflicted, so uniqueness is unchanged, and
/// apalis's insert names no conflict target that the partial index could fail to match.
const PARTIAL_IDEMPOTENCY_INDEX: &str = "
    DROP INDEX apalis.idx_jobs_idempotency_key;
    CREATE UNIQUE INDEX idx_jobs_idempotency_key ON apalis.jobs (job_type, idempotency_key)
        WHERE idempotency_key IS NOT NULL;";

/// Only jobs that a worker holds are in the `lock_by` index. Every job was in it: a `NULL` entry
/// when it is inserted (nobody holds it yet) and again when it finishes (`quickact_release_job_lock`
/// clears `lock_by`), so two of a job's three index entries there were never looked up: every
/// query that reads the index names a worker (`lock_by = $1`, or a join to `apalis.workers`), which
/// implies `lock_by IS NOT NULL`, so the partial index serves them all.
const PARTIAL_LOCK_BY_INDEX: &str = "
    DROP INDEX apalis.idx_apalis_jobs_lock_by;
    CREATE INDEX idx_apalis_jobs_lock_by ON apalis.jobs (lock_by) WHERE lock_by IS NOT NULL;";

/// New jobs are announced once per inserting statement and kind of job, not once per job.
///
/// apalis-postgres's `notify_workers` trigger runs for each inserted row and sends a notification
/// with the job's id and kind: a batch of submissions (one insert of many jobs) sent one per job,
/// each a PL/pgSQL call, a JSON object and an entry in the notification queue, delivered to and
/// parsed by every listener. A worker only needs to know that jobs of its kind may be waiting
/// (`Notifications::job_wakeups` reads nothing but `job_type`), so the statement-level trigger
/// sends one notification per kind with jobs due now; identical notifications of one transaction
/// are delivered once.
const NOTIFY_PER_STATEMENT: &str = "
    CREATE OR REPLACE FUNCTION quickact_notify_new_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('apalis::job::insert', json_build_object('job_type', kinds.job_type)::text)
        FROM (SELECT DISTINCT job_type FROM inserted WHERE run_at <= now()) AS kinds;
        RETURN NULL;
    END $$;
    DROP TRIGGER IF EXISTS notify_workers ON apalis.jobs;
    CREATE OR REPLACE TRIGGER quickact_notify_new_jobs AFTER INSERT ON apalis.jobs
        REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION quickact_notify_new_jobs();";

/// The changes [`adapt_queue_schema`] makes: each a query saying whether it is still needed, and
/// the statements that make it.
const SCHEMA_CHANGES: [(&str, &str); 6] = [
    (GET_JOBS_DIFFERS, CREATE_GET_JOBS),
    (
        "SELECT NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'apalis.jobs'::regclass AND tgname = 'quickact_release_job_lock')",
        CREATE_RELEASE_LOCK,
    ),
    ("SELECT to_regclass('apalis.unique_job_id') IS NOT NULL OR to_regclass('apalis.lidx') IS NOT NULL", DROP_DUPLICATE_INDEXES),
    (
        "SELECT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('apalis.idx_jobs_idempotency_key') AND indpred IS NULL)",
        PARTIAL_IDEMPOTENCY_INDEX,
    ),
    (
        "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'apalis.jobs'::regclass AND tgname = 'notify_workers')
             OR NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'apalis.jobs'::regclass AND tgname = 'quickact_notify_new_jobs')",
        NOTIFY_PER_STATEMENT,
    ),
    (
        "SELECT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('apalis.idx_apalis_jobs_lock_by') AND indpred IS NULL)",
        PARTIAL_LOCK_BY_INDEX,
    ),
];

/// Adapts apalis-postgres's schema after its own migrations (which would restore the originals if
/// a new one redefined them), so it is run at every start: makes the changes of `SCHEMA_CHANGES`.
/// Each change is first checked, so a start with everything in place changes nothing and locks no
/// table; an advisory lock keeps processes starting together from doing it at once (its key is
/// still the one from when `get_jobs` was the only change, so older processes share it).
pub async fn adapt_queue_schema(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('quickact.get_jobs', 0))").execute(&mut *tx).await?;
    for (needed, change) in SCHEMA_CHANGES {
        if sqlx::query_scalar::<_, bool>(needed).fetch_one(&mut *tx).await? {
            sqlx::raw_sql(change).execute(&mut *tx).await?;
        }
    }
    tx.commit().await
}
