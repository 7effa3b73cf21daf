//! Task reads batched: what task pages and long-polls read.
//!
//! A burst of long-polls reads its tasks all at once, and the verdicts of a worker's group commit
//! wake their waiters all at once. Read one by one, each such read takes a pool connection of its
//! own (a burst of waiters arriving together queued on the pool until acquires timed out) and
//! commits on its own. Reads waiting at the same moment are served together instead (see
//! [`quickact_shared::batch`]): one `WHERE id = ANY` statement for every task, one for every
//! journal. With one read waiting a batch is that read alone, so nothing waits for company.

use std::{collections::HashMap, sync::Arc};

use futures::future::BoxFuture;
use quickact_shared::{
    batch::Batcher,
    db::KeptConnection,
    domain::task::TaskRecord,
    store::{
        steps::{self, Step},
        tasks,
    },
};
use sqlx::{PgConnection, PgPool};
use tokio::sync::Mutex;
use uuid::Uuid;

use crate::error::ApiError;

/// Most reads one statement serves.
const MAX_BATCH: usize = 256;

/// This process's read loops (cheap to clone).
#[derive(Clone)]
pub struct Reads {
    pool: PgPool,
    tasks: Batcher<Uuid, Option<TaskRecord>>,
    journals: Batcher<Uuid, Vec<Step>>,
}

impl Reads {
    pub fn start(pool: PgPool) -> Self {
        // An id may come twice in a batch (two waiters on one task): each gets its own copy.
        let tasks = batched(pool.clone(), |conn, ids| {
            Box::pin(async move {
                let found: HashMap<Uuid, TaskRecord> = tasks::find_tasks(conn, &ids).await?.into_iter().map(|t| (t.id, t)).collect();
                Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
            })
        });
        let journals = batched(pool.clone(), |conn, ids| {
            Box::pin(async move {
                let mut found: HashMap<Uuid, Vec<Step>> = HashMap::new();
                for step in steps::list_steps_of(conn, &ids).await? {
                    found.entry(step.task_id).or_default().push(step);
                }
                Ok(ids.iter().map(|id| found.get(id).cloned().unwrap_or_default()).collect())
            })
        });
        Reads { pool, tasks, journals }
    }

    /// Reads handed over and not yet taken into a batch.
    pub fn waiting(&self) -> usize {
        self.tasks.waiting() + self.journals.waiting()
    }

    /// The task, if it exists (anyone's: the caller checks whose it is).
    pub async fn task(&self, id: Uuid) -> Result<Option<TaskRecord>, ApiError> {
        // Boxed: the fallback is rare, and inline it would size every waiting long-poll's future.
        Ok(self.tasks.call_or_alone(id, |id| Box::pin(tasks::find_task(&self.pool, id))).await?)
    }

    /// The task's whole journal, in order.
    pub async fn journal(&self, id: Uuid) -> Result<Vec<Step>, ApiError> {
        Ok(self.journals.call_or_alone(id, |id| Box::pin(steps::list_steps(&self.pool, id))).await?)
    }
}

/// A loop answering each batch of ids with `read`'s answers, one per id in order, on a connection
/// it keeps ([`KeptConnection`]).
fn batched<T, F>(pool: PgPool, read: F) -> Batcher<Uuid, T>
where
    T: Send + 'static,
    F: for<'c> Fn(&'c mut PgConnection, Vec<Uuid>) -> BoxFuture<'c, Result<Vec<T>, sqlx::Error>> + Send + Sync + 'static,
{
    let kept = Arc::new(Mutex::new(KeptConnection::new(pool)));
    let read = Arc::new(read);
    Batcher::start(MAX_BATCH, "reads", move |ids: Vec<Uuid>| {
        let (kept, read) = (kept.clone(), read.clone());
        async move { kept.lock().await.run(async |conn| read(conn, ids).await).await }
    })
}
