//! The queue: `quick_action_tasks` itself. A task row is its own job.
//!
//! - **Enqueue**: the API inserts the row (`quickact_submit_tasks`); a statement-level trigger notifies
//!   [`TASKS_WAITING_CHANNEL`] once per inserting statement, and every worker listening fetches.
//! - **Fetch and claim** are one statement ([`fetch_tasks`]): unfinished tasks nobody holds, users
//!   served in turn (priority first, then round robin, each user under a cap on held tasks),
//!   `FOR UPDATE SKIP LOCKED`, moved to `processing` with this worker's lease and the attempt
//!   counted.
//! - **Rescue** is lease expiry: a task whose holder stopped renewing its lease (a crash, a pause,
//!   a lost network) is taken by the next fetch of any worker, which resumes it from its journal.
//!   Workers fetch on every notification and, idle or not, every [`RESCUE_POLL`] so a lapsed lease
//!   is noticed without one.
//! - **Acknowledgement** is the task's ending: the statement that writes the verdict ends the
//!   job; there is nothing else to acknowledge.
//! - **Hand-back** (shutdown, a failed attempt): [`hand_back`] ends the lease and notifies, so
//!   another worker takes the task at once, or after a pause when the attempt failed. A run that
//!   must wait for its model ([`hand_back_to_wait`]) gives its task back until the wait is over,
//!   without counting a failed attempt.
//!
//! One state machine (`status`, `completed_at`), one attempt counter (`attempts`), one lease.
//!
//! Time is the database's: leases, deadlines and the sweeper compare with its `now()`, and the
//! fetch answers with it ([`ClaimedTask::database_now`]), so a worker runs its tasks by the
//! database's clock, not by its own machine's, which may be minutes off.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::domain::task::TaskRecord;

/// Channel that announces waiting tasks (no payload): new submissions and tasks handed back.
pub const TASKS_WAITING_CHANNEL: &str = "quickact_tasks_waiting";

/// How often a worker fetches without having heard of a waiting task, so tasks whose lease lapsed
/// (their worker died) are taken again, and a notification lost while the listener reconnected
/// costs at most this long.
pub const RESCUE_POLL: Duration = Duration::from_secs(2);

/// A task as the fetch claimed it.
#[derive(Debug, Clone)]
pub struct ClaimedTask {
    pub task: TaskRecord,
    /// The database's clock at the claim (its `now()`, which stamped the task's creation and its
    /// lease, and will stamp its verdict): what the run's deadline and step times go by.
    pub database_now: DateTime<Utc>,
    /// The task is its user's last waiting one: the worker runs it by itself rather than in a
    /// group of local runs, for its latency (a group commits after all of its runs).
    pub alone: bool,
}

/// A row of the fetch: the claimed task, the database's clock and whether it is alone.
#[derive(sqlx::FromRow)]
struct ClaimRow {
    #[sqlx(flatten)]
    task: TaskRecord,
    database_now: DateTime<Utc>,
    alone: bool,
}

/// How a fetch chooses between users and priorities (the worker's settings).
#[derive(Debug, Clone, Copy)]
pub struct Turns {
    /// Most tasks of one user held at once, across every worker (`QUICKACT_MAX_RUNNING_PER_USER`).
    pub max_running_per_user: u32,
    /// How long a batch task waits before it is served as interactive (`QUICKACT_BATCH_AGING_SECS`).
    pub batch_aging: Duration,
}

/// Takes up to `limit` waiting tasks for `worker`, each leased for `lease_secs` to
/// [`lease_holder`]`(worker, claim)`: unfinished tasks nobody holds (new, handed back, or whose
/// holder's lease lapsed), skipping rows another transaction has locked, served in turn (the SQL
/// function `quickact_claim_tasks`, `migrations/functions/claim.sql`):
/// 1. interactive tasks, and batch tasks older than [`Turns::batch_aging`], before batch ones;
/// 2. every user's first task in this fetch before anyone's second (round robin);
/// 3. a user's last waiting task before tasks with more of their user's behind them (a user with
///    one sentence waiting goes ahead of users working through a backlog);
/// 4. the user served longest ago first;
/// 5. within a user, arrival order;
///
/// and never more than [`Turns::max_running_per_user`] of one user's tasks held at once. Fetches
/// take turns across the fleet (an advisory lock) so that cap holds between worker processes. In
/// the same statement each task is moved to `processing`, leased, its attempt counted, and its
/// waiters told (its SSE stream shows the claim). Returns the claimed tasks, oldest first, each
/// with the database's clock at the claim.
///
/// A task a worker runs keeps its lease renewed, so no fetch takes it; one whose lease lapsed (a
/// stalled process) is taken again like any other, by this worker's fetch too (the runner then
/// stops the earlier run first).
///
/// `claim` makes this fetch's leases its own: a task claimed again (its lease lapsed, or a database
/// crash lost the claim) gets another holder, even by the same worker, so a run of an earlier claim
/// is fenced out of every write (they all check the holder), and cannot act twice beside the new one.
pub async fn fetch_tasks(
    db: impl PgExecutor<'_>,
    worker: &str,
    claim: u32,
    limit: usize,
    lease_secs: f64,
    turns: Turns,
) -> Result<Vec<ClaimedTask>, sqlx::Error> {
    // The function answers rows of the table's own type; the columns are read by name (see
    // `quickact_shared::schema`), so a column added later leaves this query as it is.
    let rows: Vec<ClaimRow> = sqlx::query_as(
        "SELECT (c.task).*, c.alone, now() AS database_now FROM quickact_claim_tasks($1, $2, $3, $4, $5) AS c
         ORDER BY (c.task).created_at",
    )
    .bind(lease_holder(worker, claim))
    .bind(limit.min(i32::MAX as usize) as i32)
    .bind(lease_secs)
    .bind(turns.max_running_per_user.min(i32::MAX as u32) as i32)
    .bind(turns.batch_aging.as_secs_f64())
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|row| ClaimedTask { task: row.task, database_now: row.database_now, alone: row.alone }).collect())
}

/// Who holds the leases of worker `worker`'s fetch `claim`: the worker's name and the claim's number.
pub fn lease_holder(worker: &str, claim: u32) -> String {
    format!("{worker}.{claim:08x}")
}

/// The worker a lease holder ([`lease_holder`]) belongs to.
pub fn holder_worker(holder: &str) -> &str {
    holder.rsplit_once('.').map_or(holder, |(worker, _)| worker)
}

/// Gives an unfinished task back to the queue: `holder`'s lease ends and the workers are told, so
/// one of them takes the task and resumes it from its journal: at once, or, after a failed
/// attempt, once `retry_after` has passed (the row keeps the time in its lease, held by nobody).
/// `failure` says why the attempt failed, for the attempt that gives the task up. False when
/// `holder` no longer held it.
pub async fn hand_back(
    db: impl PgExecutor<'_>,
    id: Uuid,
    holder: &str,
    retry_after: Option<Duration>,
    failure: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let released = sqlx::query_scalar!(
        r#"WITH released AS (
             UPDATE quick_action_tasks
             SET lease_owner = NULL, lease_expires_at = now() + make_interval(secs => $3),
                 last_error = coalesce($4, last_error)
             WHERE id = $1 AND lease_owner = $2 AND completed_at IS NULL
             RETURNING id
           )
           SELECT count(pg_notify($5, '')) AS "n!" FROM released"#,
        id,
        holder,
        retry_after.unwrap_or_default().as_secs_f64(),
        failure,
        TASKS_WAITING_CHANNEL,
    )
    .fetch_one(db)
    .await?;
    Ok(released > 0)
}

/// Gives an unfinished task back to the queue because its model cannot be asked for `wait` (a
/// pause it asked for, the fleet's budget of it spent): `holder`'s lease ends with the task held by
/// nobody until then, so it holds no worker's run slot meanwhile, and the next fetch after it
/// resumes it from its journal. The wait is not a failed attempt: it records no failure, and it is
/// counted in `provider_waits`, which the cap on attempts leaves out (see
/// [`failed_attempts`]). No notification: nobody may take the task before the wait is over; the
/// worker that hands it back fetches when it is (and every worker every [`RESCUE_POLL`]). False
/// when `holder` no longer held it.
pub async fn hand_back_to_wait(db: impl PgExecutor<'_>, id: Uuid, holder: &str, wait: Duration) -> Result<bool, sqlx::Error> {
    let released = sqlx::query!(
        "UPDATE quick_action_tasks
         SET lease_owner = NULL, lease_expires_at = now() + make_interval(secs => $3), provider_waits = provider_waits + 1
         WHERE id = $1 AND lease_owner = $2 AND completed_at IS NULL",
        id,
        holder,
        wait.as_secs_f64(),
    )
    .execute(db)
    .await?;
    Ok(released.rows_affected() > 0)
}

/// How many of task `id`'s claims were failed attempts: its claims (`attempts`) but the ones that
/// ended waiting for a model ([`hand_back_to_wait`]).
pub async fn failed_attempts(db: impl PgExecutor<'_>, id: Uuid) -> Result<i32, sqlx::Error> {
    let row = sqlx::query_scalar!(r#"SELECT attempts - provider_waits AS "failed!" FROM quick_action_tasks WHERE id = $1"#, id)
        .fetch_optional(db)
        .await?;
    Ok(row.unwrap_or(0))
}

/// Why the last attempt at task `id` failed, if one recorded it.
pub async fn last_failure(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<String>, sqlx::Error> {
    Ok(sqlx::query_scalar!("SELECT last_error FROM quick_action_tasks WHERE id = $1", id).fetch_optional(db).await?.flatten())
}

/// Records that worker `name` (running at most `concurrency` tasks) is alive, for the admin
/// page's list of workers.
pub async fn worker_alive(db: impl PgExecutor<'_>, name: &str, concurrency: usize) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO quickact_workers (name, concurrency) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET last_seen = now(), concurrency = EXCLUDED.concurrency",
        name,
        concurrency.min(i32::MAX as usize) as i32,
    )
    .execute(db)
    .await?;
    Ok(())
}
