//! Many callers, one database round: a loop that serves whatever requests are waiting at once.
//!
//! Postgres serialises the commits of transactions that send notifications (`NOTIFY` takes one
//! lock on the notification queue until the commit is flushed), and quickact's state changes
//! notify: every submission (its job), every claim, every verdict. Written one by one, they queue
//! on that lock and each pays its own WAL flush. A [`Batcher`] makes them share: callers hand their
//! request to one loop and wait; the loop takes every request waiting at that moment (up to a
//! maximum), serves them together (one statement, one commit) and answers each. With one request
//! waiting a batch is that request alone, so nothing waits for company; under load batches grow
//! by themselves.

use std::{
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use tokio::sync::{mpsc, oneshot};

/// The sending side of a batching loop (cheap to clone). The loop ends when every clone is gone.
pub struct Batcher<Req, Resp> {
    sender: mpsc::UnboundedSender<(Req, oneshot::Sender<Resp>)>,
    waiting: Arc<AtomicUsize>,
}

impl<Req, Resp> Clone for Batcher<Req, Resp> {
    fn clone(&self) -> Self {
        Batcher { sender: self.sender.clone(), waiting: self.waiting.clone() }
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Batcher<Req, Resp> {
    /// Starts the loop: `serve` gets each batch (at most `max` requests, in arrival order) and must
    /// answer with one response per request, in the same order.
    pub fn start<F, Fut>(max: usize, serve: F) -> Self
    where
        F: Fn(Vec<Req>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Resp>> + Send,
    {
        // With one loop no batch is ever in flight while the next is gathered.
        Self::start_overlapping(max, 1, 1, serve)
    }

    /// [`Batcher::start`] with up to `loops` batches in flight. The next batch is taken while
    /// others are being served only once it holds at least as many requests as they do together,
    /// and at least `min_overlap`: a batch's round trips and commit are paid once however many
    /// requests it holds, so overlapping pays only for batches that stay large (below that, one
    /// loop at a time, as [`Batcher::start`]).
    pub fn start_overlapping<F, Fut>(max: usize, loops: usize, min_overlap: usize, serve: F) -> Self
    where
        F: Fn(Vec<Req>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Resp>> + Send,
    {
        assert!(max > 0 && loops > 0, "a batch holds at least one request, and one loop serves them");
        let (sender, receiver) = mpsc::unbounded_channel::<(Req, oneshot::Sender<Resp>)>();
        let waiting = Arc::new(AtomicUsize::new(0));
        let shared = Arc::new(Overlapping {
            receiver: tokio::sync::Mutex::new(receiver),
            in_flight: AtomicUsize::new(0),
            served: tokio::sync::Notify::new(),
        });
        let serve = Arc::new(serve);
        for _ in 0..loops {
            let (shared, counted, serve) = (shared.clone(), waiting.clone(), serve.clone());
            tokio::spawn(async move {
                while let Some(batch) = shared.next_batch(max, min_overlap).await {
                    counted.fetch_sub(batch.len(), Ordering::SeqCst);
                    let size = batch.len();
                    serve_batch(batch, &*serve).await;
                    shared.in_flight.fetch_sub(size, Ordering::SeqCst);
                    shared.served.notify_one();
                }
            });
        }
        Batcher { sender, waiting }
    }

    /// Hands `request` to the loop and waits for its answer. `None`: the loop is gone.
    pub async fn call(&self, request: Req) -> Option<Resp> {
        self.hand_over(request)?.await.ok()
    }

    /// Hands `request` to the loop without waiting for its answer (which is dropped).
    pub fn send(&self, request: Req) {
        self.hand_over(request);
    }

    fn hand_over(&self, request: Req) -> Option<oneshot::Receiver<Resp>> {
        let (reply, response) = oneshot::channel();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        if self.sender.send((request, reply)).is_err() {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(response)
    }

    /// Requests handed over and not yet taken into a batch.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

/// Serves one batch and answers each of its requests.
async fn serve_batch<Req, Resp, Fut>(batch: Vec<(Req, oneshot::Sender<Resp>)>, serve: &impl Fn(Vec<Req>) -> Fut)
where
    Fut: Future<Output = Vec<Resp>>,
{
    let (requests, replies): (Vec<Req>, Vec<oneshot::Sender<Resp>>) = batch.into_iter().unzip();
    let responses = serve(requests).await;
    assert_eq!(responses.len(), replies.len(), "a batch answers every request");
    for (reply, response) in replies.into_iter().zip(responses) {
        // A caller that stopped waiting no longer needs its answer.
        let _ = reply.send(response);
    }
}

/// What the loops of [`Batcher::start_overlapping`] share.
struct Overlapping<Req, Resp> {
    receiver: tokio::sync::Mutex<mpsc::UnboundedReceiver<(Req, oneshot::Sender<Resp>)>>,
    /// Requests in the batches being served.
    in_flight: AtomicUsize,
    /// Signalled when a batch has been served.
    served: tokio::sync::Notify,
}

impl<Req, Resp> Overlapping<Req, Resp> {
    /// The next batch, once it may go (see [`Batcher::start_overlapping`]); `None` when every
    /// sender is gone. One loop at a time gathers it.
    async fn next_batch(&self, max: usize, min_overlap: usize) -> Option<Vec<(Req, oneshot::Sender<Resp>)>> {
        let mut receiver = self.receiver.lock().await;
        let mut batch = vec![receiver.recv().await?];
        loop {
            while batch.len() < max {
                match receiver.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            let in_flight = self.in_flight.load(Ordering::SeqCst);
            if in_flight == 0 || batch.len() >= in_flight.max(min_overlap).min(max) {
                break;
            }
            tokio::select! {
                _ = self.served.notified() => {}
                next = receiver.recv() => match next {
                    Some(next) => batch.push(next),
                    None => break,
                },
            }
        }
        self.in_flight.fetch_add(batch.len(), Ordering::SeqCst);
        Some(batch)
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::Mutex, time::Duration};

    use super::*;

    /// What each call answered, in order.
    async fn answers(calls: Vec<tokio::task::JoinHandle<Option<u32>>>) -> Vec<Option<u32>> {
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.unwrap());
        }
        answers
    }

    #[tokio::test]
    async fn requests_waiting_together_are_served_in_one_batch_each_with_its_own_answer() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
        let batcher = Batcher::start(3, move |requests: Vec<u32>| {
            seen.lock().unwrap().push(requests.len());
            let mut gate = gate_rx.clone();
            async move {
                // The first batch waits until the others are queued behind it.
                let _ = gate.wait_for(|open| *open).await;
                requests.into_iter().map(|n| n * 10).collect()
            }
        });
        let first = tokio::spawn({
            let batcher = batcher.clone();
            async move { batcher.call(1).await }
        });
        while sizes.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        let rest: Vec<_> = (2..=5)
            .map(|n| {
                let batcher = batcher.clone();
                tokio::spawn(async move { batcher.call(n).await })
            })
            .collect();
        while batcher.waiting() < 4 {
            tokio::task::yield_now().await;
        }
        gate_tx.send(true).unwrap();
        assert_eq!(first.await.unwrap(), Some(10));
        assert_eq!(answers(rest).await, vec![Some(20), Some(30), Some(40), Some(50)]);
        // One alone, then the four that waited: three (the maximum) and the last one.
        assert_eq!(*sizes.lock().unwrap(), vec![1, 3, 1]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_batch_goes_beside_the_first_only_once_it_is_large_enough() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
        let batcher = Batcher::start_overlapping(64, 2, 3, move |requests: Vec<u32>| {
            seen.lock().unwrap().push(requests.len());
            let mut gate = gate_rx.clone();
            async move {
                let _ = gate.wait_for(|open| *open).await;
                requests.into_iter().map(|n| n * 10).collect()
            }
        });
        let call = |n: u32| {
            let batcher = batcher.clone();
            tokio::spawn(async move { batcher.call(n).await })
        };
        let until = |want: Vec<usize>| {
            let sizes = sizes.clone();
            async move {
                let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
                while *sizes.lock().unwrap() != want {
                    assert!(tokio::time::Instant::now() < deadline, "batches {:?}, expected {want:?}", sizes.lock().unwrap());
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        };
        let first = call(1);
        until(vec![1]).await;
        // Two wait behind the first batch: fewer than the minimum, so they do not go beside it.
        let mut rest = vec![call(2), call(3)];
        while batcher.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(*sizes.lock().unwrap(), vec![1], "a small batch waits for the one in flight");
        // A third makes the minimum: the three go while the first is still being served.
        rest.push(call(4));
        until(vec![1, 3]).await;
        // Below the minimum again: the next one waits until a batch is done.
        rest.push(call(5));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(*sizes.lock().unwrap(), vec![1, 3]);
        gate_tx.send(true).unwrap();
        assert_eq!(first.await.unwrap(), Some(10));
        assert_eq!(answers(rest).await, vec![Some(20), Some(30), Some(40), Some(50)]);
        until(vec![1, 3, 1]).await;
    }
}
