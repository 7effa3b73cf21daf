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
    push_quick_action_jobs(conn, &[task_id]).await
}

/// [`push_quick_action_job`] for several tasks, in one statement.
pub async fn push_quick_action_jobs(conn: &mut PgConnection, task_ids: &[Uuid]) -> Result<(), sqlx::Error> {
    if task_ids.is_empty() {
        return Ok(());
    }
    let jobs = task_ids
        .iter()
        .map(|&task_id| {
            let job_id = TaskId::from_ulid(ulid::Ulid::generate());
            let args = serde_json::to_vec(&QuickActionJob { task_id }).expect("job payload serialises");
            TaskBuilder::new(args).task_id(job_id).max_attempts(JOB_MAX_ATTEMPTS).build()
        })
        .collect();
    apalis_postgres::queries::push_tasks(conn, QUICK_ACTION_QUEUE, jobs).await.map_err(|err| match err {
        apalis_postgres::Error::Database(db) => db,
        other => sqlx::Error::Encode(Box::new(other)),
    })?;
    Ok(())
}

/// [`GET_JOBS_BODY`], as a literal for `concat!`.
macro_rules! get_jobs_body {
    () => {
        "
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
"
    };
}
/// The body of `apalis.get_jobs` (how a worker takes its next jobs) as quickact installs it.
///
/// apalis-postgres 1.0.0's own version marks the jobs it picks with `UPDATE ... FROM jobs WHERE
/// j.id = jobs.id`, a join with its `LIMIT v_job_count` CTE. A SQL function's statement is planned
/// without its arguments' values, so the planner guesses the CTE at 1,000 rows and joins by hashing
/// the WHOLE `apalis.jobs` table: every fetch read every job kept (finished ones too, for
/// `QUICKACT_KEEP_JOBS_HOURS`), 10 ms a fetch at 10,000 jobs and growing with the table. Here the
/// picked ids are an array the UPDATE finds by primary key, whatever the table holds. Same jobs,
/// same order, same locks (`FOR UPDATE SKIP LOCKED`), same result.
pub const GET_JOBS_BODY: &str = get_jobs_body!();

/// The statement that installs [`GET_JOBS_BODY`].
const CREATE_GET_JOBS: &str = concat!(
    "CREATE OR REPLACE FUNCTION apalis.get_jobs(worker_id TEXT, v_job_type TEXT, v_job_count INTEGER DEFAULT 5)
     RETURNS SETOF apalis.jobs LANGUAGE sql VOLATILE AS $$",
    get_jobs_body!(),
    "$$"
);

/// Installs [`GET_JOBS_BODY`] as `apalis.get_jobs`, after the queue's own migrations (which define
/// it, and would define it again if a new apalis-postgres migration did). Run at every start; it
/// changes nothing when the function is already ours, and takes an advisory lock so processes
/// starting together do not replace it at once.
pub async fn install_get_jobs(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('quickact.get_jobs', 0))").execute(&mut *tx).await?;
    let current: Option<String> =
        sqlx::query_scalar("SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('apalis.get_jobs(text, text, integer)')")
            .fetch_optional(&mut *tx)
            .await?;
    if current.as_deref() != Some(GET_JOBS_BODY) {
        sqlx::raw_sql(CREATE_GET_JOBS).execute(&mut *tx).await?;
    }
    tx.commit().await
}
