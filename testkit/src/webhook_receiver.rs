//! A real webhook receiver on loopback: it verifies each request's Standard Webhooks signature with
//! the `standardwebhooks` crate (what a host application would use), records what it got, and
//! answers as the test tells it: 2xx, an error status, or not at all until released (to catch a
//! worker mid-attempt).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    routing::post,
};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use crate::wait_for;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// `webhook-id`.
    pub event_id: String,
    /// The body, parsed.
    pub body: Value,
    /// Whether the signature verified against the secret the receiver was given.
    pub verified: bool,
    /// Why it did not, if it did not.
    pub verify_error: Option<String>,
    /// The status it answered (`None` while held).
    pub answered: Option<u16>,
    /// When it arrived (wall clock, to compare with a task's `completed_at`).
    pub received_at: SystemTime,
}

/// How the receiver answers the next requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    Status(u16),
    /// Holds each request open until [`WebhookReceiver::release`] (it then answers 200).
    Hold,
}

struct Shared {
    secret: Mutex<Option<String>>,
    answer: Mutex<Answer>,
    got: Mutex<Vec<Delivered>>,
    /// Bumped at every request and answer, for waiters.
    changes: watch::Sender<u64>,
    released: Notify,
}

/// The receiver: a URL to register, what it received, and how it answers.
#[derive(Clone)]
pub struct WebhookReceiver {
    shared: Arc<Shared>,
    pub url: String,
}

impl WebhookReceiver {
    /// Starts on 127.0.0.1, port 0, answering 200.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared {
            secret: Mutex::new(None),
            answer: Mutex::new(Answer::Status(200)),
            got: Mutex::new(Vec::new()),
            changes: watch::Sender::new(0),
            released: Notify::new(),
        });
        let app = Router::new().route("/hook", post(receive)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the receiver");
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve the receiver") });
        WebhookReceiver { shared, url }
    }

    /// The endpoint's secret, to verify signatures with (set it once the endpoint is registered).
    pub fn set_secret(&self, secret: &str) {
        *self.shared.secret.lock().unwrap() = Some(secret.to_owned());
    }

    /// How to answer from now on.
    pub fn answer(&self, answer: Answer) {
        *self.shared.answer.lock().unwrap() = answer;
    }

    /// Lets every held request answer 200.
    pub fn release(&self) {
        self.answer(Answer::Status(200));
        self.shared.released.notify_waiters();
    }

    /// Everything received so far, in order.
    pub fn received(&self) -> Vec<Delivered> {
        self.shared.got.lock().unwrap().clone()
    }

    /// The requests it answered with a 2xx.
    pub fn accepted(&self) -> Vec<Delivered> {
        self.received().into_iter().filter(|d| d.answered.is_some_and(|s| (200..300).contains(&s))).collect()
    }

    /// Waits until at least `n` requests were accepted (2xx); returns them all.
    pub async fn wait_for_accepted(&self, n: usize, timeout: Duration) -> Vec<Delivered> {
        self.wait_for("accepted deliveries", timeout, |got| got.iter().filter(|d| d.answered.is_some_and(|s| (200..300).contains(&s))).count() >= n)
            .await
    }

    /// Waits until at least `n` requests arrived (answered or not); returns them all.
    pub async fn wait_for_received(&self, n: usize, timeout: Duration) -> Vec<Delivered> {
        self.wait_for("received requests", timeout, |got| got.len() >= n).await
    }

    async fn wait_for(&self, what: &str, timeout: Duration, done: impl Fn(&[Delivered]) -> bool) -> Vec<Delivered> {
        let mut changes = self.shared.changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            if tokio::time::timeout_at(deadline, changes.changed()).await.is_err() {
                // Report through the testkit's waiting helper, which names what was seen.
                return wait_for(what, Duration::ZERO, || {
                    let got = self.received();
                    let ok = done(&got);
                    async move { if ok { Ok(got) } else { Err(got) } }
                })
                .await;
            }
        }
    }
}

async fn receive(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let secret = shared.secret.lock().unwrap().clone();
    let verification = match &secret {
        Some(secret) => standardwebhooks::Webhook::new(secret).and_then(|hook| hook.verify(&body, &headers)).map_err(|e| e.to_string()),
        None => Err("the receiver was given no secret".to_owned()),
    };
    let event_id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let index = {
        let mut got = shared.got.lock().unwrap();
        got.push(Delivered {
            event_id,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            verified: verification.is_ok(),
            verify_error: verification.err(),
            answered: None,
            received_at: SystemTime::now(),
        });
        got.len() - 1
    };
    shared.changes.send_modify(|n| *n += 1);
    let status = loop {
        // Interest in a release is registered before the answer is read, so none is missed.
        let released = shared.released.notified();
        tokio::pin!(released);
        released.as_mut().enable();
        let answer = *shared.answer.lock().unwrap();
        match answer {
            Answer::Status(status) => break status,
            Answer::Hold => released.await,
        }
    };
    shared.got.lock().unwrap()[index].answered = Some(status);
    shared.changes.send_modify(|n| *n += 1);
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
