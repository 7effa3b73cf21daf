//! The job queue (apalis-postgres): what a job carries and how the API enqueues one.
//!
//! The task row is the source of truth; the job only carries the task id. The API inserts the row
//! and pushes the job in ONE transaction, so there is never a task without a job or a job without
//! its task. The user's idempotency key is enforced on our table, not passed to apalis (a duplicate
//! key there makes the whole push fail).

use apalis::prelude::{TaskBuilder, TaskId};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
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
