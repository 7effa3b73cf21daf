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
//!
//! Every loop answers in one shape, [`Batched`]: its answer to the request, or that the batch
//! failed; [`Batcher::call_or_alone`] then makes the request again alone, so the error a caller
//! sees is its own (unless the database is away: a second try would only meet that again).

use std::{
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use tokio::sync::{mpsc, oneshot};

use crate::db::is_unavailable;

/// A batch's answer to one of its requests.
#[derive(Debug)]
pub enum Batched<T> {
    /// The batch served the request: its answer.
    Done(T),
    /// The batch failed as a whole (or the loop is gone); `unavailable`: because the database is
    /// away.
    BatchFailed { unavailable: bool },
}

/// The sending side of a batching loop (cheap to clone). The loop ends when every clone is gone.
pub struct Batcher<Req, Resp> {
    sender: mpsc::UnboundedSender<(Req, oneshot::Sender<Batched<Resp>>)>,
    waiting: Arc<AtomicUsize>,
}

impl<Req, Resp> Clone for Batcher<Req, Resp> {
    fn clone(&self) -> Self {
        Batcher { sender: self.sender.clone(), waiting: self.waiting.clone() }
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Batcher<Req, Resp> {
    /// Starts the loop: `serve` gets each batch (at most `max` requests, in arrival order) and must
    /// answer with one response per request, in the same order, or fail the batch as a whole.
    /// One batch is served at a time; `what` names the requests in the log.
    pub fn start<F, Fut>(max: usize, what: &'static str, mut serve: F) -> Self
    where
        F: FnMut(Vec<Req>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Vec<Resp>, sqlx::Error>> + Send,
    {
        assert!(max > 0, "a batch holds at least one request");
        let (sender, mut receiver) = mpsc::unbounded_channel::<(Req, oneshot::Sender<Batched<Resp>>)>();
        let waiting = Arc::new(AtomicUsize::new(0));
        let counted = waiting.clone();
        tokio::spawn(async move {
            while let Some(first) = receiver.recv().await {
                let mut batch = vec![first];
                while batch.len() < max {
                    match receiver.try_recv() {
                        Ok(next) => batch.push(next),
                        Err(_) => break,
                    }
                }
                counted.fetch_sub(batch.len(), Ordering::SeqCst);
                let (requests, replies): (Vec<Req>, Vec<oneshot::Sender<Batched<Resp>>>) = batch.into_iter().unzip();
                // A caller that stopped waiting no longer needs its answer.
                match serve(requests).await {
                    Ok(responses) => {
                        assert_eq!(responses.len(), replies.len(), "a batch answers every request");
                        for (reply, response) in replies.into_iter().zip(responses) {
                            let _ = reply.send(Batched::Done(response));
                        }
                    }
                    Err(err) => {
                        crate::metrics::database_error(&err);
                        tracing::warn!(error = %err, requests = replies.len(), "a batch of {what} failed");
                        let unavailable = is_unavailable(&err);
                        for reply in replies {
                            let _ = reply.send(Batched::BatchFailed { unavailable });
                        }
                    }
                }
            }
        });
        Batcher { sender, waiting }
    }

    /// Hands `request` to the loop and waits for its answer.
    pub async fn call(&self, request: Req) -> Batched<Resp> {
        let gone = Batched::BatchFailed { unavailable: false };
        match self.hand_over(request) {
            Some(answer) => answer.await.unwrap_or(gone),
            None => gone,
        }
    }

    /// Serves `request` in the next batch or, when that batch failed, with `alone`, so the error
    /// reported is the request's own; a batch that failed because the database is away fails
    /// the request alike, without a second try.
    pub async fn call_or_alone<Fut>(&self, request: Req, alone: impl FnOnce(Req) -> Fut) -> Result<Resp, sqlx::Error>
    where
        Req: Clone,
        Fut: Future<Output = Result<Resp, sqlx::Error>>,
    {
        match self.call(request.clone()).await {
            Batched::Done(response) => Ok(response),
            Batched::BatchFailed { unavailable: true } => Err(sqlx::Error::PoolTimedOut),
            Batched::BatchFailed { unavailable: false } => alone(request).await,
        }
    }

    /// Hands `request` to the loop without waiting for its answer (which is dropped).
    pub fn send(&self, request: Req) {
        self.hand_over(request);
    }

    fn hand_over(&self, request: Req) -> Option<oneshot::Receiver<Batched<Resp>>> {
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// What each call answered, in order.
    async fn answers(calls: Vec<tokio::task::JoinHandle<Batched<u32>>>) -> Vec<Option<u32>> {
        let mut answers = Vec::new();
        for call in calls {
            answers.push(done(call.await.unwrap()));
        }
        answers
    }

    fn done(answer: Batched<u32>) -> Option<u32> {
        match answer {
            Batched::Done(n) => Some(n),
            Batched::BatchFailed { .. } => None,
        }
    }

    #[tokio::test]
    async fn requests_waiting_together_are_served_in_one_batch_each_with_its_own_answer() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
        let batcher = Batcher::start(3, "numbers", move |requests: Vec<u32>| {
            seen.lock().unwrap().push(requests.len());
            let mut gate = gate_rx.clone();
            async move {
                // The first batch waits until the others are queued behind it.
                let _ = gate.wait_for(|open| *open).await;
                Ok(requests.into_iter().map(|n| n * 10).collect())
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
        assert_eq!(done(first.await.unwrap()), Some(10));
        assert_eq!(answers(rest).await, vec![Some(20), Some(30), Some(40), Some(50)]);
        // One alone, then the four that waited: three (the maximum) and the last one.
        assert_eq!(*sizes.lock().unwrap(), vec![1, 3, 1]);
    }

    #[tokio::test]
    async fn a_failed_batch_is_tried_alone_unless_the_database_is_away() {
        let batcher = Batcher::start(8, "numbers", |requests: Vec<u32>| async move {
            if requests.contains(&0) {
                Err(sqlx::Error::PoolTimedOut)
            } else if requests.contains(&1) {
                Err(sqlx::Error::RowNotFound)
            } else {
                Ok(requests)
            }
        });
        let alone = |n: u32| async move { Ok::<_, sqlx::Error>(n + 100) };
        assert_eq!(batcher.call_or_alone(5, alone).await.unwrap(), 5, "served by the batch");
        assert_eq!(batcher.call_or_alone(1, alone).await.unwrap(), 101, "the batch failed: tried alone");
        let away = batcher.call_or_alone(0, alone).await.unwrap_err();
        assert!(is_unavailable(&away), "the database is away: not tried again, {away}");
    }
}
