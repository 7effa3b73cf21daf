//! Submissions written in batches: what `POST /api/quick-action` stores.
//!
//! A submission is a task row, its job and room under its user's cap, in one transaction, so a
//! task is never stored without its job nor the reverse. Every job insert notifies the workers,
//! and Postgres commits notifying transactions one at a time, each with its own WAL flush: one
//! transaction per submission capped the API at about one submission per flush. So submissions
//! arriving together are written together (see [`quickact_shared::batch`]), two batches at most at
//! once when both are large (one's round trips overlap the other's): one transaction takes
//! each one's room (in user order), inserts all their tasks in one statement and all their jobs in
//! another, and commits once; each request answers when that commit is done, so an accepted task
//! is a committed one. When a batch fails, each of its submissions is written again alone, so the
//! error a request reports is its own.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use quickact_shared::{
    batch::Batcher,
    domain::task::TaskRecord,
    queue::push_quick_action_jobs,
    store::tasks::{NewTask, give_back_task_slot, insert_tasks, take_task_slot, take_task_slots},
};
use sqlx::PgPool;
use uuid::Uuid;

/// Most submissions one batch writes.
const MAX_BATCH: usize = 64;

/// Batches written at once, and the fewest submissions a batch written beside another holds (see
/// [`Batcher::start_overlapping`]): a batch costs five round trips and a commit however large, and
/// at 8 submissions Postgres spends about 95 us on each, against 134 when overlapping batches of
/// every size halved them (16 clients posting: 6,400 -> 6,200 req/s, where batches of 8 beside
/// each other made 8,000).
const BATCHES_IN_FLIGHT: usize = 2;
const MIN_OVERLAPPING_BATCH: usize = 8;

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
}

/// What became of a submission.
#[derive(Debug)]
pub enum Submitted {
    /// Stored, with its job.
    Created(Box<TaskRecord>),
    /// The user is at the cap: nothing stored.
    AtCap,
    /// The user's idempotency key was taken by a submission that committed first: nothing stored.
    KeyTaken,
}

/// This process's batching loop. `None` in an answer: that batch failed (write it alone).
pub type Submissions = Batcher<Submission, Option<Submitted>>;

pub fn start(pool: PgPool) -> Submissions {
    Batcher::start_overlapping(MAX_BATCH, BATCHES_IN_FLIGHT, MIN_OVERLAPPING_BATCH, move |batch: Vec<Submission>| {
        let pool = pool.clone();
        async move {
            match write(&pool, &batch).await {
                Ok(written) => written.into_iter().map(Some).collect(),
                Err(err) => {
                    tracing::warn!(error = %err, submissions = batch.len(), "a batch of submissions failed; each is written alone");
                    batch.iter().map(|_| None).collect()
                }
            }
        }
    })
}

/// Stores `submission` in the next batch (or alone, when that batch failed).
pub async fn submit(submissions: &Submissions, pool: &PgPool, submission: Submission) -> Result<Submitted, sqlx::Error> {
    if let Some(Some(submitted)) = submissions.call(submission.clone()).await {
        return Ok(submitted);
    }
    let mut alone = write(pool, std::slice::from_ref(&submission)).await?;
    Ok(alone.pop().expect("one answer for one submission"))
}

/// Writes `batch` in one transaction; one answer per submission, in order.
async fn write(pool: &PgPool, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Room is taken in user order, so batches (of several API processes) lock slots in one order:
    // for each user, as much as one statement can take without waiting, then one by one.
    let mut by_user: BTreeMap<Uuid, Vec<usize>> = BTreeMap::new();
    for (i, submission) in batch.iter().enumerate() {
        by_user.entry(submission.user_id).or_default().push(i);
    }
    let mut slots = vec![None; batch.len()];
    for (user_id, submissions) in by_user {
        let cap = batch[submissions[0]].cap;
        let mut taken = take_task_slots(&mut tx, user_id, cap, submissions.len() as i64).await?.into_iter();
        for i in submissions {
            slots[i] = match taken.next() {
                Some(slot) => Some(slot),
                None => take_task_slot(&mut tx, user_id, cap).await?,
            };
        }
    }
    let mut tasks: Vec<NewTask<'_>> = batch
        .iter()
        .zip(&slots)
        .filter_map(|(s, slot)| {
            Some(NewTask {
                id: s.id,
                user_id: s.user_id,
                input_text: &s.input_text,
                timeout_seconds: s.timeout_seconds,
                idempotency_key: s.idempotency_key.as_deref(),
                reference_time: s.reference_time,
                time_zone: &s.time_zone,
                currency: &s.currency,
                slot: (*slot)?,
            })
        })
        .collect();
    // Inserted in one order (user, then key) in every batch: two batches written side by side (by
    // two API processes) that share keys wait on each other's inserts in one order, never in a cycle.
    tasks.sort_by(|a, b| (a.user_id, a.idempotency_key).cmp(&(b.user_id, b.idempotency_key)));
    let mut stored: HashMap<Uuid, TaskRecord> = insert_tasks(&mut *tx, &tasks).await?.into_iter().map(|t| (t.id, t)).collect();
    // A task missing from what was stored lost its idempotency key to another submission: its
    // room goes back (the same transaction, so nobody saw it taken).
    let (kept, lost): (Vec<&NewTask<'_>>, Vec<&NewTask<'_>>) = tasks.iter().partition(|task| stored.contains_key(&task.id));
    for task in lost {
        give_back_task_slot(&mut tx, task.user_id, task.slot).await?;
    }
    push_quick_action_jobs(&mut tx, &kept.iter().map(|task| task.id).collect::<Vec<_>>()).await?;
    tx.commit().await?;

    let answers = batch
        .iter()
        .zip(&slots)
        .map(|(s, slot)| match stored.remove(&s.id) {
            Some(task) => Submitted::Created(Box::new(task)),
            None if slot.is_some() => Submitted::KeyTaken,
            None => Submitted::AtCap,
        })
        .collect();
    Ok(answers)
}
