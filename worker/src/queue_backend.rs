//! The apalis-postgres backend with one round trip where apalis-postgres 1.0.0 takes three.
//!
//! apalis-postgres wraps every statement of its consumer in a transaction of its own, the fetch
//! (`apalis.get_jobs`) and the acknowledgement included: `BEGIN`, the statement, `COMMIT`, each a
//! round trip. A single statement is atomic by itself, so the transaction adds nothing but two
//! round trips, and the fetch's two lie between a task's commit and the worker claiming it (the
//! POST-to-verdict latency a client sees). [`QueueBackend`] is `PostgresStorage` with its own
//! [`Persistence`]: the same queries (apalis-postgres's own, through its public `queries` module)
//! and the same state machine (apalis-core's [`Persisted`]); only the statements that stand alone
//! run outside a transaction. Registering and the heartbeat, two statements each, keep theirs.

use std::{
    marker::PhantomData,
    task::{Context, Poll},
};

use apalis_codec::json::JsonCodec;
use apalis_core::{
    backend::{
        Backend, BackendConfig, WireFormatBackend,
        finalize::Durable,
        persistence::{Persisted, Persistence, TaskEvent, TaskPersistLayer},
    },
    worker::context::WorkerContext,
};
use apalis_postgres::{Config, Error, PgTask, PostgresStorage, queries};
use serde_json::Value;
use sqlx::PgPool;

/// How apalis-postgres names its storage in `apalis.workers`.
const STORAGE_NAME: &str = "PgStorage";

/// apalis-postgres's persistence, with the fetch and the acknowledgement in one round trip each.
#[derive(Debug, Clone)]
struct OneTrip {
    pool: PgPool,
    config: Config,
}

impl Persistence for OneTrip {
    type Compact = Vec<u8>;
    type Error = Error;
    type Response = Value;

    async fn register(&mut self, worker: &WorkerContext) -> Result<(), Error> {
        let queue = self.config.queue.as_ref();
        let mut tx = self.pool.begin().await?;
        queries::reenqueue_orphaned(&mut *tx, queue, self.config.orphaned_duration().as_secs()).await?;
        queries::register_worker(&mut *tx, queue, worker, &chrono::Utc::now().timestamp().into(), STORAGE_NAME).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn heartbeat(&mut self, worker: &WorkerContext) -> Result<(), Error> {
        let queue = self.config.queue.as_ref();
        let mut tx = self.pool.begin().await?;
        queries::keep_alive(&mut *tx, queue, worker).await?;
        queries::reenqueue_orphaned(&mut *tx, queue, self.config.orphaned_duration().as_secs()).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn fetch_next(&mut self, worker: &WorkerContext) -> Result<Vec<PgTask>, Error> {
        let mut conn = self.pool.acquire().await?;
        queries::fetch_next(&mut *conn, &self.config, worker).await
    }

    async fn reenqueue_abandoned(&mut self, tasks: Vec<PgTask>, worker: &WorkerContext) -> Result<u64, Error> {
        let task_ids = tasks.iter().filter_map(|task| task.task_id().map(|id| id.to_string())).collect::<Vec<_>>();
        let mut tx = self.pool.begin().await?;
        let count = queries::reenqueue_abandoned(&mut *tx, self.config.queue.as_ref(), worker.name(), &task_ids).await?;
        if count as usize != tasks.len() {
            return Err(Error::ReenqueueMismatch { queued: tasks.len(), abandoned: count as usize });
        }
        tx.commit().await?;
        Ok(count)
    }

    async fn handle_events(&mut self, events: Vec<TaskEvent<Value>>, worker: &WorkerContext) -> Result<(), Error> {
        let acks = events
            .iter()
            .filter_map(|event| match event {
                TaskEvent::Complete(payload) => Some(payload),
                _ => None,
            })
            .collect::<Vec<_>>();
        let locks = events
            .iter()
            .filter_map(|event| match event {
                TaskEvent::Lock { task_id, .. } => Some(task_id.to_string()),
                _ => None,
            })
            .filter(|id| !acks.iter().any(|ack| ack.task_id().to_string() == *id))
            .collect::<Vec<_>>();
        match (acks.is_empty(), locks.is_empty()) {
            (true, true) => Ok(()),
            (false, true) => {
                let mut conn = self.pool.acquire().await?;
                queries::handle_results(&mut *conn, &acks, worker.name()).await.map(drop)
            }
            (true, false) => {
                let mut conn = self.pool.acquire().await?;
                queries::lock_tasks(&mut *conn, &locks, worker.name()).await?;
                Ok(())
            }
            (false, false) => {
                let mut tx = self.pool.begin().await?;
                queries::handle_results(&mut *tx, &acks, worker.name()).await?;
                queries::lock_tasks(&mut *tx, &locks, worker.name()).await?;
                tx.commit().await?;
                Ok(())
            }
        }
    }

    async fn push_tasks(&mut self, tasks: Vec<PgTask>) -> Result<(), Error> {
        let mut tx = self.pool.begin().await?;
        queries::push_tasks(&mut *tx, self.config.queue.as_ref(), tasks).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// `PostgresStorage<Args>` with [`OneTrip`] persistence: a consumer of the same queue, rows and
/// worker records.
pub struct QueueBackend<Args> {
    persistence: Persisted<OneTrip>,
    codec: JsonCodec,
    _marker: PhantomData<Args>,
}

impl<Args> QueueBackend<Args> {
    pub fn new(pool: &PgPool, config: Config) -> Self {
        Self {
            persistence: Persisted::new(OneTrip { pool: pool.clone(), config }),
            codec: JsonCodec::default(),
            _marker: PhantomData,
        }
    }
}

impl<Args> Backend for QueueBackend<Args> {
    type Task = PgTask;
    type Error = Error;

    fn poll_ready(&mut self, cx: &mut Context<'_>, worker: &WorkerContext) -> Poll<Result<(), Error>> {
        let heartbeat = self.persistence.config.heartbeat_interval;
        self.persistence.poll_ready(cx, worker, heartbeat)
    }

    fn poll_next(&mut self, cx: &mut Context<'_>, worker: &WorkerContext) -> Poll<Option<Result<PgTask, Error>>> {
        self.persistence.poll_next(cx, worker)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>, worker: &WorkerContext) -> Poll<Result<(), Error>> {
        self.persistence.poll_close(cx, worker)
    }
}

impl<Args> BackendConfig for QueueBackend<Args> {
    type Args = Args;
    type Kind = Durable;
    type Id = <PostgresStorage<Args> as BackendConfig>::Id;
    type Config = Config;
    type Layer = TaskPersistLayer<JsonCodec<Value>, Value>;

    fn config(&self) -> &Config {
        &self.persistence.config
    }

    fn middleware(&mut self, _: &mut WorkerContext) -> Self::Layer {
        let config = self.persistence.config.clone();
        self.persistence
            .layer(JsonCodec::<Value>::default(), config.batch_size)
            .persist_results(config.persist_results)
            .lock_tasks(config.lock_tasks)
    }
}

impl<Args> WireFormatBackend for QueueBackend<Args> {
    type Codec = JsonCodec;
    type Compact = Vec<u8>;

    fn codec(&self) -> &JsonCodec {
        &self.codec
    }
}
