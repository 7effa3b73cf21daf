//! The sweeper: what no single run can be trusted to do, done by every API and worker process.
//!
//! Each round (every `QUICKACT_SWEEP_SECS`):
//! - ends every task past its deadline with a `timeout` verdict, even when no worker runs (a
//!   worker ends its own runs at the deadline; the sweeper, a moment later, ends the rest);
//! - gives a fresh job to an unfinished task that is leased by nobody and has no live job (its job
//!   was acknowledged while the task stayed unfinished, e.g. a hand-back that failed), so no task
//!   waits forever for a job that will never come;
//! - removes what is no longer kept: finished jobs and dead apalis workers after
//!   `QUICKACT_KEEP_JOBS_HOURS`, finished tasks with their journals after `QUICKACT_KEEP_TASKS_DAYS`,
//!   soft-deleted items after `QUICKACT_KEEP_DELETED_ITEMS_DAYS`, in bounded batches.
//!
//! Many processes sweep: a round runs only where a session-level advisory lock is free, so one
//! process sweeps at a time; and every change is conditional anyway (a task is ended only while
//! unfinished, a job pushed only while none is live), so two overlapping rounds do no harm.

use std::time::Duration;

use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::{
    config::SweeperConfig,
    db::is_unavailable,
    queue::{QUICK_ACTION_QUEUE, push_quick_action_job},
    store::ending::{Ending, end_task},
};

/// How long past its deadline a task is left to the worker running it before the sweeper ends it.
const DEADLINE_GRACE_SECS: f64 = 2.0;
/// How long after submission a task may go without a live job before the sweeper gives it one
/// (a task and its job commit together, so this only spares work in flight).
const JOBLESS_AFTER_SECS: f64 = 10.0;
/// Rows one round handles per kind; the rest wait for the next round.
const BATCH: i64 = 500;
/// The advisory lock key of a sweep round ("quickact sweep").
const SWEEP_LOCK: i64 = 0x7175_6963_6b73_7770;

/// What one round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SweepReport {
    pub timed_out: usize,
    pub requeued: usize,
    pub jobs_removed: u64,
    pub workers_removed: u64,
    pub tasks_removed: u64,
    pub items_removed: u64,
}

/// Sweeps every `config.interval` until `stop` fires. Failures are logged and the next round tries
/// again (the database may be restarting).
pub async fn run_until_stopped(pool: PgPool, config: SweeperConfig, stop: CancellationToken) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(config.interval) => {}
        }
        match sweep_once(&pool, &config).await {
            Ok(Some(report)) if report != SweepReport::default() => tracing::info!(?report, "sweep"),
            Ok(_) => {}
            Err(err) if is_unavailable(&err) => tracing::warn!(error = %err, "sweep skipped: database unavailable"),
            Err(err) => tracing::error!(error = %err, "sweep failed"),
        }
    }
}

/// One round; `None` when another process is sweeping.
pub async fn sweep_once(pool: &PgPool, config: &SweeperConfig) -> Result<Option<SweepReport>, sqlx::Error> {
    // Held on this connection for the round: released when the round ends or the process dies.
    let mut lock = pool.acquire().await?;
    if !sqlx::query_scalar!(r#"SELECT pg_try_advisory_lock($1) AS "locked!""#, SWEEP_LOCK).fetch_one(&mut *lock).await? {
        return Ok(None);
    }
    let report = sweep(pool, config).await;
    sqlx::query_scalar!("SELECT pg_advisory_unlock($1)", SWEEP_LOCK).fetch_one(&mut *lock).await?;
    report.map(Some)
}

async fn sweep(pool: &PgPool, config: &SweeperConfig) -> Result<SweepReport, sqlx::Error> {
    let mut report = SweepReport::default();

    let overdue = sqlx::query!(
        "SELECT id, timeout_seconds FROM quick_action_tasks
         WHERE completed_at IS NULL
           AND created_at + make_interval(secs => timeout_seconds + $1::float8) < now()
         ORDER BY created_at LIMIT $2",
        DEADLINE_GRACE_SECS,
        BATCH,
    )
    .fetch_all(pool)
    .await?;
    for task in overdue {
        if let Some(ended) = end_task(pool, task.id, None, Ending::Timeout { timeout_seconds: task.timeout_seconds }).await? {
            crate::metrics::task_finished(&ended);
            tracing::info!(task_id = %task.id, "task past its deadline ended by the sweeper");
            report.timed_out += 1;
        }
    }

    for id in jobless_tasks(pool).await? {
        let mut tx = pool.begin().await?;
        push_quick_action_job(&mut tx, id).await?;
        tx.commit().await?;
        tracing::warn!(task_id = %id, "unfinished task without a live job: pushed a fresh job");
        report.requeued += 1;
    }

    let secs = |d: Duration| d.as_secs_f64();
    report.jobs_removed = sqlx::query!(
        "DELETE FROM apalis.jobs WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM apalis.jobs
           WHERE job_type = $1 AND status IN ('Done', 'Failed', 'Killed')
             AND coalesce(done_at, run_at) < now() - make_interval(secs => $2)
           LIMIT $3))",
        QUICK_ACTION_QUEUE,
        secs(config.keep_jobs),
        BATCH,
    )
    .execute(pool)
    .await?
    .rows_affected();
    report.workers_removed = sqlx::query!(
        "DELETE FROM apalis.workers w
         WHERE last_seen < now() - make_interval(secs => $1)
           AND NOT EXISTS (SELECT 1 FROM apalis.jobs j WHERE j.lock_by = w.id)",
        secs(config.keep_jobs),
    )
    .execute(pool)
    .await?
    .rows_affected();
    // A task finished before the cutoff was created before it: the history index finds them.
    report.tasks_removed = sqlx::query!(
        "DELETE FROM quick_action_tasks WHERE id = ANY (ARRAY(
           SELECT id FROM quick_action_tasks
           WHERE completed_at < now() - make_interval(secs => $1) AND created_at < now() - make_interval(secs => $1)
           LIMIT $2))",
        secs(config.keep_tasks),
        BATCH,
    )
    .execute(pool)
    .await?
    .rows_affected();
    report.items_removed = sqlx::query!(
        "DELETE FROM items WHERE id = ANY (ARRAY(
           SELECT id FROM items WHERE deleted_at < now() - make_interval(secs => $1) LIMIT $2))",
        secs(config.keep_deleted_items),
        BATCH,
    )
    .execute(pool)
    .await?
    .rows_affected();
    Ok(report)
}

/// Unfinished tasks that nobody holds and no live job will bring to a worker. A job carries its
/// task only in its payload (`{"task_id": ...}`), so the check reads the live jobs' payloads: at
/// most as many as tasks in the queue, each read once per round.
///
/// Written as `EXCEPT`, which Postgres computes by hashing or sorting both sides whatever it
/// expects of them. As `NOT EXISTS`, statistics taken while the tables were nearly empty (a quiet
/// hour, then a burst) made it a nested loop that read every live job's payload again for every
/// waiting task: 57 s of a core for 10,000 waiting tasks, during which the burst drained at less
/// than half its speed; this way it takes 44 ms.
async fn jobless_tasks(pool: &PgPool) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM quick_action_tasks WHERE id = ANY (ARRAY(
           SELECT t.id::text FROM quick_action_tasks t
           WHERE t.completed_at IS NULL
             AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
             AND t.created_at < now() - make_interval(secs => $2)
           EXCEPT
           SELECT convert_from(j.job, 'UTF8')::jsonb ->> 'task_id' FROM apalis.jobs j
           WHERE j.job_type = $1 AND j.status IN ('Pending', 'Queued', 'Running'))::uuid[])
         ORDER BY created_at LIMIT $3",
        QUICK_ACTION_QUEUE,
        JOBLESS_AFTER_SECS,
        BATCH,
    )
    .fetch_all(pool)
    .await
}
