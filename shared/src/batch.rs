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
    /// answer with one response per request, in the same order. One batch is served at a time.
    pub fn start<F, Fut>(max: usize, mut serve: F) -> Self
    where
        F: FnMut(Vec<Req>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<Resp>> + Send,
    {
        assert!(max > 0, "a batch holds at least one request");
        let (sender, mut receiver) = mpsc::unbounded_channel::<(Req, oneshot::Sender<Resp>)>();
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
                let (requests, replies): (Vec<Req>, Vec<oneshot::Sender<Resp>>) = batch.into_iter().unzip();
                let responses = serve(requests).await;
                assert_eq!(responses.len(), replies.len(), "a batch answers every request");
                for (reply, response) in replies.into_iter().zip(responses) {
                    // A caller that stopped waiting no longer needs its answer.
                    let _ = reply.send(response);
                }
            }
        });
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

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
}
