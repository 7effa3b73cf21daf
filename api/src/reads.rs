//! Task reads batched: what task pages and long-polls read.
//!
//! A burst of long-polls reads its tasks all at once, and the verdicts of a worker's group commit
//! wake their waiters all at once. Read one by one, each such read takes a pool connection of its
//! own (a burst of waiters arriving together queued on the pool until acquires timed out) and
//! commits on its own. Reads waiting at the same moment are served together instead (see
//! [`quickact_shared::batch`]): one `WHERE id = ANY` statement for every task, with the journal of
//! each that is final (a verdict is read with its journal), and one for the journals of unfinished
//! tasks. With one read waiting a batch is that read alone, so nothing waits for company.
//!
//! The steps of an unfinished task were committed without waiting for the disk (a run's verdict is
//! the commit that waits): before they are shown, they are made durable ([`db::flush_commits`]) on
//! the connection that read them, so a database crash cannot take back a step a client saw. On the
//! same connection, or the proof is void: a flush on a connection opened after a crash and a restart
//! succeeds while the steps read before the crash are gone.

use std::{collections::HashMap, sync::Arc};

use futures::future::BoxFuture;
use quickact_shared::{
    batch::Batcher,
    db::{self, KeptConnection},
    domain::task::TaskRecord,
    store::{
        steps::{self, Step},
        tasks::{self, TaskRead},
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
    tasks: Batcher<Uuid, Option<TaskRead>>,
    journals: Batcher<JournalRead, Vec<Step>>,
}

/// A journal to read, and whether its task was unfinished when read (its steps then need a flush).
#[derive(Clone, Copy)]
struct JournalRead {
    id: Uuid,
    unfinished: bool,
}

impl Reads {
    pub fn start(pool: PgPool) -> Self {
        // An id may come twice in a batch (two waiters on one task): each gets its own copy.
        let tasks = batched(pool.clone(), |conn, ids| {
            Box::pin(async move {
                let found: HashMap<Uuid, TaskRead> = tasks::read_tasks(conn, &ids).await?.into_iter().map(|t| (t.task.id, t)).collect();
                Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
            })
        });
        let journals = batched(pool.clone(), |conn, reads: Vec<JournalRead>| {
            Box::pin(async move {
                let ids: Vec<Uuid> = reads.iter().map(|r| r.id).collect();
                let found = steps::journals_of(&mut *conn, &ids).await?;
                if reads.iter().any(|r| r.unfinished && found.contains_key(&r.id)) {
                    db::flush_commits(&mut *conn).await?;
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

    /// The task, if it exists (anyone's: the caller checks whose it is), with its journal when it
    /// is final.
    pub async fn task(&self, id: Uuid) -> Result<Option<TaskRead>, ApiError> {
        // Boxed: the fallback is rare, and inline it would size every waiting long-poll's future.
        let alone = |id| Box::pin(async move { Ok(tasks::read_tasks(&self.pool, &[id]).await?.pop()) });
        Ok(self.tasks.call_or_alone(id, alone).await?)
    }

    /// The task's whole journal, in order: as read with it, or read now. When the task was
    /// unfinished as read, the steps are durable before they are returned.
    pub async fn journal(&self, read: TaskRead) -> Result<(TaskRecord, Vec<Step>), ApiError> {
        let TaskRead { task, journal } = read;
        if let Some(journal) = journal {
            return Ok((task, journal));
        }
        let read = JournalRead { id: task.id, unfinished: !task.status.is_final() };
        Ok(self
            .journals
            .call_or_alone(read, |read| {
                Box::pin(async move { steps::steps_to_show(&mut *self.pool.acquire().await?, read.id, -1, read.unfinished).await })
            })
            .await
            .map(|journal| (task, journal))?)
    }
}

/// A loop answering each batch of requests with `read`'s answers, one per request in order, on a
/// connection it keeps ([`KeptConnection`]).
fn batched<K, T, F>(pool: PgPool, read: F) -> Batcher<K, T>
where
    K: Send + 'static,
    T: Send + 'static,
    F: for<'c> Fn(&'c mut PgConnection, Vec<K>) -> BoxFuture<'c, Result<Vec<T>, sqlx::Error>> + Send + Sync + 'static,
{
    let kept = Arc::new(Mutex::new(KeptConnection::new(pool)));
    let read = Arc::new(read);
    Batcher::start(MAX_BATCH, "reads", move |requests: Vec<K>| {
        let (kept, read) = (kept.clone(), read.clone());
        async move { kept.lock().await.run(async |conn| read(conn, requests).await).await }
    })
}
