//! The worker's side of the queue: an apalis backend over the task table.
//!
//! apalis runs the worker ([`WorkerBuilder`], its concurrency limit, graceful shutdown); what it
//! takes tasks from is [`TaskQueue`], a stream of tasks this process has already claimed (see
//! [`quickact_shared::queue`]: the fetch is the claim). Each claimed task comes with a permit of
//! this process's room ([`Claimed`]), so the fetch only ever takes as many tasks as the process
//! can start at once, and a claimed task never waits on a lease nobody renews.
//!
//! When the fetch runs:
//! - on a waiting-task announcement (a submission, a hand-back; every announcement heard while a
//!   fetch was in flight makes one more fetch, so none is missed);
//! - after a fetch that came back short, whenever a run of this process ends: a user at their cap
//!   of running tasks (`QUICKACT_MAX_RUNNING_PER_USER`) may have waiting tasks no announcement
//!   will bring, and the process whose run ended has the room to take the next one;
//! - right away again after a fetch that filled all the room it had (more may be waiting);
//! - when a task this process handed back with a delay becomes due ([`DueTasks`]: a wait for a
//!   model, the pause after a failed attempt), which nothing announces;
//! - every [`RESCUE_POLL`], to take tasks whose holder's lease lapsed;
//! - with a backlog, once a few runs ended ([`min_room`]): one statement claims several tasks;
//!   or at once, with whatever room there is, when a task is announced meanwhile.
//!
//! A failed fetch (the database is away) is logged and tried again with backoff; the stream never
//! ends by itself.

use std::{
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use apalis::prelude::{BoxDynError, Data, WorkerBuilder, WorkerBuilderExt, WorkerContext};
use apalis_core::{
    backend::{Backend, BackendConfig, finalize::Ephemeral},
    task::{Task, task_id::RandomId},
};
use futures::{FutureExt, Stream, StreamExt};
use quickact_shared::queue::{RESCUE_POLL, fetch_tasks, lease_holder, worker_alive};
use tokio::{
    sync::Semaphore,
    time::Instant,
};
use tokio_util::sync::CancellationToken;
use apalis_core::layers::Identity;

use crate::{agent::RunClock, claim::Claimed, runner::Runner};

/// Most tasks one fetch claims.
const MAX_FETCH: usize = 64;

/// With a backlog, how much room a fetch waits for: a fraction of the process's room, so one
/// statement claims several tasks, while most of the room stays in use.
fn min_room(concurrency: usize) -> usize {
    (concurrency / 8).clamp(1, 16)
}

/// The apalis backend: the stream of claimed tasks.
pub struct TaskQueue {
    claimed: Pin<Box<dyn Stream<Item = Claimed> + Send>>,
}

impl TaskQueue {
    /// Claims tasks for `runner` as room frees up (`room`: this process's permits).
    pub fn new(runner: Arc<Runner>, room: Arc<Semaphore>) -> Self {
        let wakeups = Box::pin(runner.notifications.task_wakeups());
        let fetcher = Fetcher { wakeups, runner, room, backlog: true, backlogs: Vec::new(), claims: rand::random() };
        let claimed = futures::stream::unfold(fetcher, |mut fetcher| async move {
            let batch = fetcher.next_batch().await;
            Some((futures::stream::iter(batch), fetcher))
        })
        .flatten();
        TaskQueue { claimed: Box::pin(claimed) }
    }
}

impl Backend for TaskQueue {
    type Task = Task<Claimed>;
    type Error = std::convert::Infallible;

    fn poll_ready(&mut self, _: &mut Context<'_>, _: &WorkerContext) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_next(&mut self, cx: &mut Context<'_>, _: &WorkerContext) -> Poll<Option<Result<Task<Claimed>, Self::Error>>> {
        self.claimed.poll_next_unpin(cx).map(|claimed| claimed.map(|claimed| Ok(Task::new(claimed))))
    }

    fn poll_close(&mut self, _: &mut Context<'_>, _: &WorkerContext) -> Poll<Result<(), Self::Error>> {
        // Nothing to flush: a task's ending is its acknowledgement, written by its run.
        Poll::Ready(Ok(()))
    }
}

impl BackendConfig for TaskQueue {
    type Args = Claimed;
    type Id = RandomId;
    type Kind = Ephemeral;
    type Config = ();
    type Layer = Identity;

    fn config(&self) -> &() {
        &()
    }

    fn middleware(&mut self, _: &mut WorkerContext) -> Identity {
        Identity::new()
    }
}

struct Fetcher {
    runner: Arc<Runner>,
    wakeups: Pin<Box<dyn Stream<Item = ()> + Send>>,
    room: Arc<Semaphore>,
    /// More tasks may be waiting now: fetch without waiting for an announcement.
    backlog: bool,
    /// Users the last fetch took a task of with more of theirs waiting behind it: users working
    /// through backlogs. Another user's single sentence then runs by itself rather than wait for
    /// a group of theirs (see [`Claimed::alone`]). Without other users' backlogs (one user's tasks
    /// arriving together are each their user's last when fetched one by one) runs are grouped as
    /// ever.
    backlogs: Vec<uuid::Uuid>,
    /// Numbers this process's fetches (see [`lease_holder`]).
    claims: u32,
}

impl Fetcher {
    /// The next tasks claimed, each with its permit; waits for room and for a reason to fetch.
    async fn next_batch(&mut self) -> Vec<Claimed> {
        let concurrency = self.runner.worker.concurrency;
        let mut backoff = Duration::from_millis(100);
        loop {
            // With a backlog, wait for a few runs to end so one statement claims several tasks;
            // otherwise any room will do (a new task starts at once).
            let mut permits = if self.backlog {
                // ... unless a task is announced meanwhile (a user's new sentence, a hand-back):
                // then whatever room there is, at once, so a sentence submitted during a drain
                // does not wait for the batching (the fetch serves it first, see `fetch_tasks`).
                tokio::select! {
                    permits = self.room.clone().acquire_many_owned(min_room(concurrency) as u32) => permits.expect("the room is never closed"),
                    Some(()) = self.wakeups.next() => self.room.clone().acquire_owned().await.expect("the room is never closed"),
                }
            } else {
                self.room.clone().acquire_owned().await.expect("the room is never closed")
            };
            if !self.backlog {
                tokio::select! {
                    _ = self.wakeups.next() => {}
                    _ = self.runner.run_ended.notified() => {}
                    _ = self.runner.due_tasks.reached() => {}
                    _ = tokio::time::sleep(RESCUE_POLL) => {}
                }
            }
            // Every announcement heard so far is answered by this fetch.
            while let Some(Some(())) = self.wakeups.next().now_or_never() {}
            while permits.num_permits() < MAX_FETCH {
                match self.room.clone().try_acquire_owned() {
                    Ok(more) => permits.merge(more),
                    Err(_) => break,
                }
            }
            let room = permits.num_permits();
            let runner = &self.runner;
            self.claims = self.claims.wrapping_add(1);
            let holder = lease_holder(&runner.name, self.claims);
            let lease = runner.worker.lease().as_secs_f64();
            match fetch_tasks(&runner.bookkeeping, &runner.name, self.claims, room, lease, runner.worker.turns).await {
                Ok(tasks) => {
                    let arrived = Instant::now();
                    backoff = Duration::from_millis(100);
                    self.backlog = tasks.len() == room;
                    if tasks.is_empty() {
                        continue;
                    }
                    let mut backlogs: Vec<uuid::Uuid> = tasks.iter().filter(|claimed| !claimed.alone).map(|claimed| claimed.task.user_id).collect();
                    backlogs.sort_unstable();
                    backlogs.dedup();
                    let earlier = std::mem::replace(&mut self.backlogs, backlogs);
                    let others_behind = |user: uuid::Uuid| self.backlogs.iter().chain(&earlier).any(|other| *other != user);
                    return tasks
                        .into_iter()
                        .map(|claimed| Claimed {
                            alone: claimed.alone && others_behind(claimed.task.user_id),
                            task: claimed.task,
                            clock: RunClock::new(claimed.database_now, arrived),
                            holder: holder.clone(),
                            permit: permits.split(1).expect("a permit per task claimed"),
                        })
                        .collect();
                }
                Err(err) => {
                    quickact_shared::metrics::database_error(&err);
                    tracing::warn!(error = %err, retry_in_ms = backoff.as_millis() as u64, "fetching tasks failed");
                    drop(permits);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    self.backlog = true;
                }
            }
        }
    }
}

/// The apalis handler: run the claimed task to its end (or hand it back on shutdown).
async fn run_claimed(claimed: Claimed, runner: Data<Arc<Runner>>) -> Result<(), BoxDynError> {
    runner.run_task(claimed).await;
    Ok(())
}

/// Consumes the queue until `draining` fires, then stops taking tasks and returns once the
/// running ones are done or handed back (the caller bounds that with the grace period).
pub async fn consume_until_drained(runner: Arc<Runner>, draining: CancellationToken) {
    let concurrency = runner.worker.concurrency;
    let room = Arc::new(Semaphore::new(concurrency));
    let heartbeat = tokio::spawn(beat_until(runner.clone(), draining.clone()));
    let context = WorkerContext::new(&runner.name);
    let worker = WorkerBuilder::new(&context)
        .backend(TaskQueue::new(runner.clone(), room))
        .concurrency(concurrency)
        .data(runner.clone())
        .build(run_claimed);
    tracing::info!(worker = %runner.name, concurrency, "queue consumer started");
    let mut events = worker.stream();
    let mut stopping = false;
    loop {
        tokio::select! {
            event = events.next() => match event {
                None => break,
                Some(Ok(_)) => {}
                // The backend never fails; a handler's error is logged by the run itself.
                Some(Err(err)) => tracing::warn!(error = %err, "queue consumer event"),
            },
            _ = draining.cancelled(), if !stopping => {
                stopping = true;
                tracing::info!(worker = %runner.name, "no longer taking tasks");
                let _ = context.stop();
            }
        }
    }
    heartbeat.abort();
}

/// Says this worker is alive every heartbeat until `stop` fires (the admin page's list).
async fn beat_until(runner: Arc<Runner>, stop: CancellationToken) {
    loop {
        if let Err(err) = worker_alive(&runner.bookkeeping, &runner.name, runner.worker.concurrency).await {
            tracing::debug!(error = %err, "heartbeat failed");
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(runner.worker.heartbeat) => {}
        }
    }
}
