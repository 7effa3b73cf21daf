//! Submissions written in batches: what `POST /api/quick-action` stores.
//!
//! A submission is a task row and room under its user's cap, in one transaction; the row is the
//! queue's job (see [`quickact_shared::queue`]). Every insert notifies the workers, and Postgres
//! commits notifying transactions one at a time, each with its own WAL flush: one
//! transaction per submission capped the API at about one submission per flush. So submissions
//! arriving together are written together, one batch at a time (see [`quickact_shared::batch`] and
//! [`MAX_BATCH`]): one call of the SQL function `quickact_submit`, sent as a statement of its own
//! and so one transaction and one round trip, takes each one's room (in user order), inserts all
//! their tasks in one statement, and commits once (on a connection
//! the loop keeps, [`KeptConnection`]); each request answers when that commit is done, so an
//! accepted task is a committed one. When a batch fails, each of its submissions is written again
//! alone, so the error a request reports is its own.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use quickact_shared::{
    batch::Batcher,
    db::KeptConnection,
    domain::task::{ResultType, TaskPriority, TaskRecord, TaskStatus},
    store::column,
};
use serde_json::Value;
use sqlx::{PgExecutor, PgPool};
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

/// Stores `submission` in the next batch (or alone, when that batch failed).
pub async fn submit(submissions: &Submissions, pool: &PgPool, submission: Submission) -> Result<Submitted, sqlx::Error> {
    submissions
        .call_or_alone(submission, async |submission| {
            let mut alone = write(pool, std::slice::from_ref(&submission)).await?;
            Ok(alone.pop().expect("one answer for one submission"))
        })
        .await
}

/// A submission's row from `quickact_submit`: the stored task's columns when it was stored.
struct SubmitRow {
    room: bool,
    id: Option<Uuid>,
    user_id: Option<Uuid>,
    input_text: Option<String>,
    status: Option<TaskStatus>,
    result_type: Option<ResultType>,
    result: Option<Value>,
    created_at: Option<DateTime<Utc>>,
    started_at: Option<DateTime<Utc>>,
    completed_at: Option<DateTime<Utc>>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cached_tokens: Option<i64>,
    cost_nanos: Option<i64>,
    currency: Option<String>,
    model_used: Option<String>,
    timeout_seconds: Option<i32>,
    idempotency_key: Option<String>,
    reference_time: Option<DateTime<Utc>>,
    time_zone: Option<String>,
    attempts: Option<i32>,
    undoes: Option<Uuid>,
    priority: Option<TaskPriority>,
    trace_parent: Option<String>,
    reply_to: Option<Uuid>,
}

impl SubmitRow {
    fn answer(self) -> Submitted {
        if !self.room {
            return Submitted::AtCap;
        }
        let stored = || {
            Some(TaskRecord {
                id: self.id?,
                user_id: self.user_id?,
                input_text: self.input_text?,
                status: self.status?,
                result_type: self.result_type,
                result: self.result,
                created_at: self.created_at?,
                started_at: self.started_at,
                completed_at: self.completed_at,
                input_tokens: self.input_tokens?,
                output_tokens: self.output_tokens?,
                cached_tokens: self.cached_tokens?,
                cost_nanos: self.cost_nanos?,
                currency: self.currency?,
                model_used: self.model_used,
                timeout_seconds: self.timeout_seconds?,
                idempotency_key: self.idempotency_key,
                reference_time: self.reference_time?,
                time_zone: self.time_zone?,
                attempts: self.attempts?,
                undoes: self.undoes,
                priority: self.priority?,
                trace_parent: self.trace_parent,
                reply_to: self.reply_to,
            })
        };
        match stored() {
            Some(task) => Submitted::Created(Box::new(task)),
            None => Submitted::KeyTaken,
        }
    }
}

/// Writes `batch` in one call of `quickact_submit` (migration `20261125000001_submit_in_one_call`,
/// last replaced by `20261129000010_task_replies`), one statement and so one transaction:
/// room under the cap and the tasks; one answer per submission, in order.
async fn write(db: impl PgExecutor<'_>, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    let rows = sqlx::query_as!(
        SubmitRow,
        r#"SELECT room AS "room!", id, user_id, input_text, status AS "status: TaskStatus", result_type AS "result_type: ResultType",
                  result, created_at, started_at, completed_at, input_tokens, output_tokens, cached_tokens, cost_nanos,
                  currency, model_used, timeout_seconds, idempotency_key, reference_time, time_zone, attempts, undoes,
                  priority AS "priority: TaskPriority", trace_parent, reply_to
           FROM quickact_submit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
           ORDER BY ord"#,
        &column(batch, |s| s.id) as &[Uuid],
        &column(batch, |s| s.user_id) as &[Uuid],
        &column(batch, |s| s.input_text.as_str()) as &[&str],
        &column(batch, |s| s.timeout_seconds) as &[i32],
        &column(batch, |s| s.idempotency_key.as_deref()) as &[Option<&str>],
        &column(batch, |s| s.reference_time) as &[DateTime<Utc>],
        &column(batch, |s| s.time_zone.as_str()) as &[&str],
        &column(batch, |s| s.currency.as_str()) as &[&str],
        &column(batch, |s| s.cap) as &[i64],
        &column(batch, |s| s.priority.as_str()) as &[&str],
        &column(batch, |s| s.trace_parent.as_deref()) as &[Option<&str>],
        &column(batch, |s| s.reply_to) as &[Option<Uuid>],
    )
    .fetch_all(db)
    .await?;
    assert_eq!(rows.len(), batch.len(), "quickact_submit answers each submission");
    Ok(rows.into_iter().map(SubmitRow::answer).collect())
}
