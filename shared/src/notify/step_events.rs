//! Step notifications, sent after their steps commit, in batches.

use sqlx::PgPool;
use uuid::Uuid;

use super::TASK_EVENTS_CHANNEL;
use crate::batch::Batcher;

/// Where a worker tells listeners that steps of a task's journal committed (`"<id> step"` on
/// [`TASK_EVENTS_CHANNEL`]): after the commit, not in it.
///
/// Postgres commits a transaction that notifies while holding one lock for the whole database,
/// through its WAL flush, so notifying transactions commit one at a time. A step notified by the
/// transaction that writes it (a trigger did that) made every journal write such a transaction:
/// under many runs at once they queued on that lock (`Lock:object`), one flush each. Sent here,
/// the notifications of steps committed meanwhile go out together, in one statement on a
/// connection that commits without waiting for its flush (nothing is lost if it is lost: see
/// below), and the journal's writes commit side by side.
///
/// A step notification only wakes a live step stream to read the journal, and the stream reads
/// all steps after the last it sent whenever it wakes: at the latest the task's final state
/// (notified in the ending's own transaction) brings whatever a lost step notification (a worker
/// crash right after a commit, a database away) would have. So nothing waits on this.
#[derive(Clone)]
pub struct StepEvents {
    batches: Batcher<Uuid, ()>,
}

impl StepEvents {
    /// Starts the loop that sends the notifications on `pool`.
    pub fn start(pool: PgPool) -> Self {
        let batches = Batcher::start(MAX_STEP_EVENTS, "step notifications", move |tasks: Vec<Uuid>| {
            let pool = pool.clone();
            async move {
                let answers = vec![(); tasks.len()];
                let mut ids = tasks;
                ids.sort_unstable();
                ids.dedup();
                let sent = sqlx::query_scalar!(
                    r#"SELECT count(pg_notify($1, id::text || ' step')) AS "n!" FROM unnest($2::uuid[]) AS id"#,
                    TASK_EVENTS_CHANNEL,
                    &ids,
                )
                .fetch_one(&pool)
                .await;
                if let Err(err) = sent {
                    tracing::warn!(error = %err, tasks = ids.len(), "step notifications not sent; live streams catch up at their next event");
                }
                Ok(answers)
            }
        });
        StepEvents { batches }
    }

    /// Steps of task `id` committed: notify listeners (soon, without waiting here).
    pub fn stepped(&self, id: Uuid) {
        self.batches.send(id);
    }
}

/// Most step notifications one statement sends.
const MAX_STEP_EVENTS: usize = 256;
