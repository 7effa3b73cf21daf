//! The sweeper: what no single run can be trusted to do, done by every API and worker process.
//!
//! Each round (every `QUICKACT_SWEEP_SECS`):
//! - ends every task past its deadline with a `timeout` verdict, even when no worker runs (a
//!   worker ends its own runs at the deadline; the sweeper, a moment later, ends the rest);
//! - removes what is no longer kept: workers silent for a day, finished tasks with their journals
//!   after `QUICKACT_KEEP_TASKS_DAYS`, soft-deleted items after `QUICKACT_KEEP_DELETED_ITEMS_DAYS`,
//!   in bounded batches; users' daily spend (cost budgets) of days older than both the current
//!   UTC month and `QUICKACT_KEEP_TASKS_DAYS`.
//!
//! Nothing here keeps the queue going: a task is its own job (see [`crate::queue`]), so no task can
//! lose its job, and a lapsed lease is taken again by the workers' own fetch.
//!
//! Many processes sweep: a round runs only where a session-level advisory lock is free, so one
//! process sweeps at a time; and every change is conditional anyway (a task is ended only while
//! unfinished), so two overlapping rounds do no harm.

use std::time::Duration;

use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::{
    config::SweeperConfig,
    db::is_unavailable,
    store::ending::{Ending, end_task},
};

/// How long past its deadline a task is left to the worker running it before the sweeper ends it.
const DEADLINE_GRACE_SECS: f64 = 2.0;
/// How long a worker may stay silent before its row is removed from the list of workers.
const FORGET_WORKERS_AFTER_SECS: f64 = 24.0 * 3600.0;
/// Rows one round handles per kind; the rest wait for the next round.
const BATCH: i64 = 500;
/// The advisory lock key of a sweep round ("quickact sweep").
const SWEEP_LOCK: i64 = 0x7175_6963_6b73_7770;

/// What one round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SweepReport {
    pub timed_out: usize,
    pub workers_removed: u64,
    pub tasks_removed: u64,
    pub items_removed: u64,
    pub spend_days_removed: u64,
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
            crate::metrics::task_finished(&ended.task);
            tracing::info!(task_id = %task.id, "task past its deadline ended by the sweeper");
            report.timed_out += 1;
        }
    }

    // What is kept no longer, in one statement: workers silent for long, old finished tasks (a task
    // finished before the cutoff was created before it: the history index finds them), items
    // deleted long ago, and days of spend no budget reads (the current month's days only) whose
    // tasks are gone.
    let secs = |d: Duration| d.as_secs_f64();
    let removed = sqlx::query!(
        r#"WITH workers AS (
             DELETE FROM quickact_workers WHERE last_seen < now() - make_interval(secs => $1) RETURNING 1
           ), tasks AS (
             DELETE FROM quick_action_tasks WHERE id = ANY (ARRAY(
               SELECT id FROM quick_action_tasks
               WHERE completed_at < now() - make_interval(secs => $2) AND created_at < now() - make_interval(secs => $2)
               LIMIT $4))
             RETURNING 1
           ), items AS (
             DELETE FROM items WHERE id = ANY (ARRAY(
               SELECT id FROM items WHERE deleted_at < now() - make_interval(secs => $3) LIMIT $4))
             RETURNING 1
           ), spend_days AS (
             DELETE FROM user_spend WHERE day < least(
               date_trunc('month', now() AT TIME ZONE 'UTC')::date, ((now() - make_interval(secs => $2)) AT TIME ZONE 'UTC')::date)
             RETURNING 1
           )
           SELECT (SELECT count(*) FROM workers) AS "workers!", (SELECT count(*) FROM tasks) AS "tasks!",
                  (SELECT count(*) FROM items) AS "items!", (SELECT count(*) FROM spend_days) AS "spend_days!""#,
        FORGET_WORKERS_AFTER_SECS,
        secs(config.keep_tasks),
        secs(config.keep_deleted_items),
        BATCH,
    )
    .fetch_one(pool)
    .await?;
    report.workers_removed = removed.workers as u64;
    report.tasks_removed = removed.tasks as u64;
    report.items_removed = removed.items as u64;
    report.spend_days_removed = removed.spend_days as u64;
    Ok(report)
}
