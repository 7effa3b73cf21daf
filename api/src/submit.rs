//! Submissions written in batches: what `POST /api/quick-action` stores.
//!
//! A submission is a task row and room under its user's cap, in one transaction; the row is the
//! queue's job (see [`quickact_shared::queue`]). Every insert notifies the workers, and Postgres
//! commits notifying transactions one at a time, each with its own WAL flush: one
//! transaction per submission capped the API at about one submission per flush. So submissions
//! arriving together are written together, one batch at a time (see [`quickact_shared::batch`] and
//! [`MAX_BATCH`]): one call of the SQL function `quickact_submit_tasks`, sent as a statement of its own
//! and so one transaction and one round trip, takes each one's room (in user order), inserts all
//! their tasks in one statement, and commits once (on a connection
//! the loop keeps, [`KeptConnection`]); each request answers when that commit is done, so an
//! accepted task is a committed one. When a batch fails, each of its submissions is written again
//! alone, so the error a request reports is its own.

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use quickact_shared::{
    batch::Batcher,
    db::KeptConnection,
    domain::task::{TaskPriority, TaskRecord},
    notify::Notifications,
    store::column,
};
use sqlx::{FromRow, PgExecutor, PgPool, Row, postgres::PgRow};
use tokio::sync::Mutex;
use uuid::Uuid;

/// Most submissions one batch writes.
///
/// One batch is written at a time: requests arriving meanwhile wait for it and go together in the
/// next. Two batches at once (the second once it held at least 8, while one call was five round
/// trips) had paid when a batch was mostly round trips; with one call per batch, two at once made
/// smaller batches, each with its own WAL flush, whose backends competed for the cores (the A/B
/// is in docs/performance.md).
const MAX_BATCH: usize = 64;

/// A sentence to store as a task, checked and ready.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The task's id, chosen before it is stored (so a waiter can subscribe to it first).
    pub id: Uuid,
    pub user_id: Uuid,
    pub input_text: String,
    pub timeout_seconds: i32,
    pub idempotency_key: Option<String>,
    pub reference_time: DateTime<Utc>,
    pub time_zone: String,
    pub currency: String,
    /// The user's cap on unfinished tasks.
    pub cap: i64,
    pub priority: TaskPriority,
    /// The W3C `traceparent` of the submit span, when this process exports traces: stored with
    /// the task, for its run to continue the trace.
    pub trace_parent: Option<String>,
    /// For a reply, the task whose question it answers (see `crate::routes::reply`).
    pub reply_to: Option<Uuid>,
}

/// What became of a submission.
#[derive(Debug)]
pub enum Submitted {
    /// Stored: the task is queued.
    Created(Box<TaskRecord>),
    /// The user is at the cap: nothing stored.
    AtCap,
    /// The user's idempotency key was taken by a submission that committed first: nothing stored.
    KeyTaken,
}

/// This process's batching loop.
pub type Submissions = Batcher<Submission, Submitted>;

pub fn start(pool: PgPool) -> Submissions {
    let kept = Arc::new(Mutex::new(KeptConnection::new(pool)));
    Batcher::start(MAX_BATCH, "submissions", move |batch: Vec<Submission>| {
        let kept = kept.clone();
        async move { kept.lock().await.run(async |conn| write(conn, &batch).await).await }
    })
}

/// Stores `submission` in the next batch (or alone, when that batch failed). Until its verdict is
/// heard, `notifications` knows the task unfinished (a long-poll on it need not read it first).
pub async fn submit(submissions: &Submissions, pool: &PgPool, notifications: &Notifications, submission: Submission) -> Result<Submitted, sqlx::Error> {
    let id = submission.id;
    notifications.storing_task(id, submission.user_id, Duration::from_secs(submission.timeout_seconds.max(0) as u64));
    let submitted = submissions
        .call_or_alone(submission, async |submission| {
            let mut alone = write(pool, std::slice::from_ref(&submission)).await?;
            Ok(alone.pop().expect("one answer for one submission"))
        })
        .await;
    if !matches!(submitted, Ok(Submitted::Created(_))) {
        notifications.task_not_stored(id);
    }
    submitted
}

/// Writes `batch` in one call of `quickact_submit_tasks` (`migrations/functions/submit.sql`), one
/// statement and so one transaction: room under the cap and the tasks; one answer per submission,
/// in order. The function answers each stored task as a row of the table's own type, read here by
/// name (see `quickact_shared::schema`).
async fn write(db: impl PgExecutor<'_>, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT s.room, (s.task).* FROM quickact_submit_tasks($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS s
         ORDER BY s.ord",
    )
    .bind(column(batch, |s| s.id))
    .bind(column(batch, |s| s.user_id))
    .bind(column(batch, |s| s.input_text.as_str()))
    .bind(column(batch, |s| s.timeout_seconds))
    .bind(column(batch, |s| s.idempotency_key.as_deref()))
    .bind(column(batch, |s| s.reference_time))
    .bind(column(batch, |s| s.time_zone.as_str()))
    .bind(column(batch, |s| s.currency.as_str()))
    .bind(column(batch, |s| s.cap))
    .bind(column(batch, |s| s.priority.as_str()))
    .bind(column(batch, |s| s.trace_parent.as_deref()))
    .bind(column(batch, |s| s.reply_to))
    .fetch_all(db)
    .await?;
    assert_eq!(rows.len(), batch.len(), "quickact_submit_tasks answers each submission");
    rows.iter().map(answer).collect()
}

/// What one row of `quickact_submit_tasks` says of its submission.
fn answer(row: &PgRow) -> Result<Submitted, sqlx::Error> {
    if !row.try_get::<bool, _>("room")? {
        return Ok(Submitted::AtCap);
    }
    // No task: its idempotency key was taken by a submission that committed first.
    if row.try_get::<Option<Uuid>, _>("id")?.is_none() {
        return Ok(Submitted::KeyTaken);
    }
    Ok(Submitted::Created(Box::new(TaskRecord::from_row(row)?)))
}
