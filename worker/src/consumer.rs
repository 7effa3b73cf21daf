//! Taking jobs off the apalis-postgres queue.
//!
//! apalis-postgres 1.0.0 has traps this module designs around:
//! - without a notification stream an idle worker looks for new jobs only on its heartbeat: we feed
//!   it the process's shared LISTEN connection ([`Notifications::job_wakeups`]), which also wakes it
//!   after a reconnect, so a job is picked up within milliseconds of its commit;
//! - a dead worker's jobs come back only after heartbeat x missed heartbeats (300 s by default): we
//!   beat every 5 s and call a worker dead after 3 missed beats, and tasks carry their own lease;
//! - a failed job is refetched at once with no backoff, up to 25 times: our handler retries inside
//!   the task's time budget and ends every task with a verdict, so it reports failure only when it
//!   could not even hand the task back;
//! - a job that keeps killing its worker would loop forever: the task counts its attempts
//!   (see [`crate::runner::MAX_TASK_ATTEMPTS`]);
//! - a backend error (the database went away) ends an apalis worker: we build a new one, under a new
//!   unique name, and running tasks are unaffected because runs do not belong to the apalis worker;
//! - `PollWith` takes the wake-up stream's item at every poll but ignores it: a notification that
//!   arrives while a fetch is in flight is used up, and if that fetch began before the job
//!   committed it comes back empty and the worker parks until its next heartbeat (5 s; the p99 of
//!   POST-to-verdict showed it). Every run of wake-ups is therefore followed by one more
//!   ([`FOLLOW_UP`] later, [`with_follow_up`]), which starts a fetch after the one in flight;
//! - its `StreamStrategy` takes one wake-up per poll of the consumer, and a stream that yields an
//!   item keeps no waker: until the consumer was polled again for another reason (a run ending,
//!   the heartbeat), the next wake-up woke nothing. An idle worker then left a new job waiting for
//!   its heartbeat (1 task in about 3,500 of the bench's POST-to-verdict runs took 3.5-4.9 s):
//!   [`Wakeups`] takes every wake-up waiting, so the stream always holds the consumer's waker;
//! - its fetch (`apalis.get_jobs`) hashes the whole jobs table whenever there is a backlog: quickact
//!   installs its own at every start ([`quickact_shared::queue::adapt_queue_schema`]);
//! - its acknowledgement finds the worker's jobs by `lock_by`, which finished jobs kept: the same
//!   start-up step clears it when a job finishes;
//! - its fetch and acknowledgement, one statement each, run in a transaction each (three round
//!   trips, two of them between a task's commit and its claim): we consume through
//!   [`QueueBackend`], its storage with those statements on their own.

use std::{
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use futures::Stream;

use apalis::prelude::{BoxDynError, Data, PollWith, WorkerBuilder, WorkerBuilderExt, WorkerContext};
use apalis_core::backend::ext::poll_strategy::{PollSnapshot, PollStrategy};
use apalis_postgres::Config as QueueConfig;
use futures::StreamExt;
use quickact_shared::queue::{QUICK_ACTION_QUEUE, QuickActionJob};
use tokio_util::sync::CancellationToken;

use crate::{queue_backend::QueueBackend, runner::Runner};

/// The apalis handler: run the task of a job to its end (or hand it back on shutdown).
async fn handle_job(job: QuickActionJob, runner: Data<Arc<Runner>>) -> Result<(), BoxDynError> {
    runner.run_task(job.task_id).await;
    Ok(())
}

/// How long after the last of a run of job wake-ups the consumer is woken once more.
const FOLLOW_UP: Duration = Duration::from_millis(50);

/// Every wake-up of `wakeups`, and one more [`FOLLOW_UP`] after the last of each run of them.
fn with_follow_up(wakeups: impl Stream<Item = ()> + Send + Unpin + 'static) -> impl Stream<Item = ()> + Send + Unpin + 'static {
    Box::pin(futures::stream::unfold((wakeups, false), |(mut wakeups, armed)| async move {
        if armed {
            tokio::select! {
                next = wakeups.next() => next.map(|()| ((), (wakeups, true))),
                _ = tokio::time::sleep(FOLLOW_UP) => Some(((), (wakeups, false))),
            }
        } else {
            wakeups.next().await.map(|()| ((), (wakeups, true)))
        }
    }))
}

/// The wake-up stream as the consumer's poll strategy: each poll takes every wake-up waiting, until
/// the stream has none left and so holds the consumer's waker for the next one (apalis's
/// `StreamStrategy` takes one, and then holds no waker).
struct Wakeups<S>(S);

impl<S: Stream<Item = ()> + Unpin> PollStrategy for Wakeups<S> {
    fn poll_drive(&mut self, cx: &mut Context<'_>, _: &PollSnapshot) -> Poll<Option<()>> {
        let mut woken = false;
        loop {
            match self.0.poll_next_unpin(cx) {
                Poll::Ready(Some(())) => woken = true,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending if woken => return Poll::Ready(Some(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// Jobs one fetch takes: a quarter of the runs this process may hold (at most 32). A fetch is a
/// statement and a commit however many jobs it takes, so a busy worker pays it once for many jobs,
/// while taking only a quarter of its room at once leaves the rest of a backlog to other workers.
fn fetch_batch(concurrency: usize) -> usize {
    (concurrency / 4).clamp(1, 32)
}

/// Consumes the quick-action queue until `draining` fires, then stops taking jobs and returns once
/// the in-flight ones are done or handed back (the caller bounds that with the grace period).
pub async fn consume_until_drained(runner: Arc<Runner>, draining: CancellationToken) {
    let mut generation = 0u32;
    let mut backoff = Duration::from_millis(200);
    while !draining.is_cancelled() {
        generation += 1;
        let name = format!("{}-g{generation}", runner.owner);
        let config = QueueConfig::default()
            .queue(QUICK_ACTION_QUEUE)
            .batch_size(fetch_batch(runner.worker.concurrency))
            // The job is not marked `Running` in a write of its own: the task's lease says who runs
            // it, and a job stays `Queued` under this worker until it is acknowledged, which the
            // queue's orphan recovery covers as well.
            .lock_tasks(false)
            .heartbeat_interval(runner.worker.heartbeat)
            .missed_heartbeats(runner.worker.missed_heartbeats);
        let storage = QueueBackend::<QuickActionJob>::new(&runner.bookkeeping, config);
        let wakeups = with_follow_up(runner.notifications.job_wakeups(QUICK_ACTION_QUEUE.to_owned()));
        let backend = PollWith::new(storage, Wakeups(wakeups));
        let context = WorkerContext::new(&name);
        let worker = WorkerBuilder::new(&context)
            .backend(backend)
            .concurrency(runner.worker.concurrency)
            .data(runner.clone())
            .build(handle_job);
        tracing::info!(worker = %name, "queue consumer started");

        let started = tokio::time::Instant::now();
        let mut events = worker.stream();
        let mut stopping = false;
        loop {
            tokio::select! {
                event = events.next() => match event {
                    None => break,
                    Some(Ok(_)) => {}
                    Some(Err(err)) => {
                        tracing::warn!(worker = %name, error = %err, "queue consumer failed; building a new one");
                        break;
                    }
                },
                _ = draining.cancelled(), if !stopping => {
                    stopping = true;
                    tracing::info!(worker = %name, "no longer taking jobs");
                    let _ = context.stop();
                }
            }
        }
        if draining.is_cancelled() {
            return;
        }
        // A consumer that failed quickly (the database is down) waits a little longer each time.
        if started.elapsed() > Duration::from_secs(30) {
            backoff = Duration::from_millis(200);
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = draining.cancelled() => return,
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::{StreamExt, channel::mpsc, task::ArcWake};

    use super::*;

    /// The stream's next item, if it comes within `within_ms`.
    async fn next(wakeups: &mut (impl Stream<Item = ()> + Unpin), within_ms: u64) -> Result<Option<()>, tokio::time::error::Elapsed> {
        tokio::time::timeout(Duration::from_millis(within_ms), wakeups.next()).await
    }

    /// Counts the wakes of the waker it makes.
    struct Wakes(AtomicUsize);

    impl ArcWake for Wakes {
        fn wake_by_ref(wakes: &Arc<Self>) {
            wakes.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A wake-up that comes after the consumer took one still wakes it: apalis's `StreamStrategy`
    /// took one wake-up per poll and left the stream without the consumer's waker, so an idle
    /// worker heard the next job only at its heartbeat.
    #[test]
    fn every_wake_up_wakes_the_consumer_even_after_it_took_one() {
        let (sender, receiver) = mpsc::unbounded();
        let mut strategy = Wakeups(receiver);
        let wakes = Arc::new(Wakes(AtomicUsize::new(0)));
        let waker = futures::task::waker(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let woken = || wakes.0.load(Ordering::SeqCst);
        assert_eq!(strategy.poll_drive(&mut cx, &PollSnapshot::default()), Poll::Pending);
        sender.unbounded_send(()).unwrap();
        sender.unbounded_send(()).unwrap();
        assert_eq!(woken(), 1, "the first wake-up wakes the consumer");
        assert_eq!(strategy.poll_drive(&mut cx, &PollSnapshot::default()), Poll::Ready(Some(())), "both are taken at once");
        sender.unbounded_send(()).unwrap();
        assert_eq!(woken(), 2, "the next wake-up wakes the consumer too");
        assert_eq!(strategy.poll_drive(&mut cx, &PollSnapshot::default()), Poll::Ready(Some(())));
        assert_eq!(strategy.poll_drive(&mut cx, &PollSnapshot::default()), Poll::Pending, "nothing is left");
        drop(sender);
        assert_eq!(strategy.poll_drive(&mut cx, &PollSnapshot::default()), Poll::Ready(None), "the stream ended");
    }

    #[tokio::test]
    async fn each_run_of_wake_ups_is_followed_by_one_more_then_nothing() {
        let (sender, receiver) = mpsc::unbounded();
        let mut wakeups = with_follow_up(receiver);
        sender.unbounded_send(()).unwrap();
        assert_eq!(next(&mut wakeups, 1000).await, Ok(Some(())), "the wake-up itself");
        assert_eq!(next(&mut wakeups, 1000).await, Ok(Some(())), "one more after it");
        assert!(next(&mut wakeups, 300).await.is_err(), "and then nothing until the next wake-up");
        sender.unbounded_send(()).unwrap();
        sender.unbounded_send(()).unwrap();
        assert_eq!(next(&mut wakeups, 1000).await, Ok(Some(())));
        assert_eq!(next(&mut wakeups, 1000).await, Ok(Some(())));
        assert_eq!(next(&mut wakeups, 1000).await, Ok(Some(())), "the run's follow-up");
        assert!(next(&mut wakeups, 300).await.is_err());
        drop(sender);
        assert_eq!(next(&mut wakeups, 1000).await, Ok(None), "the stream ends with its source");
    }
}
