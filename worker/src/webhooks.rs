//! Webhook delivery: every worker process runs one loop that claims due deliveries from the outbox
//! (`webhook_deliveries`, written by the ending's own statement), signs each by the Standard
//! Webhooks convention, POSTs it, and records the attempt.
//!
//! - At least once: a delivery is claimed with a lease (`FOR UPDATE SKIP LOCKED`, so workers share
//!   them out); a worker that dies mid-attempt leaves a claim that runs out, and another worker
//!   makes the attempt again. Only a 2xx (or a 410, or the last attempt) ends a delivery, and the
//!   event id (`webhook-id`) is the same at every attempt, so receivers de-duplicate.
//! - Promptly: the outbox trigger notifies `quickact_webhooks`; the loop wakes on it, and otherwise
//!   sleeps until the next delivery is due (at most [`POLL_INTERVAL`], the rescue for a lost
//!   notification).
//! - Safely: unless the deployment allows private addresses, the destination is checked before
//!   each attempt and the HTTP client refuses to connect to a private address whatever DNS says at
//!   connect time; redirects are not followed (one could point anywhere).
//!
//! [`attempt_delivery`] is the one place an attempt happens (render, sign, POST, record).

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::Utc;
use quickact_shared::{
    metrics as shared_metrics,
    notify::Notifications,
    store::{
        steps::list_steps,
        tasks::find_task,
        webhooks::{self as store, Attempt, AttemptOutcome, ClaimedDelivery, event_id},
    },
    views::TaskWithSteps,
    webhooks::{MAX_ATTEMPTS, WebhookConfig, check_destination, is_public, retry_delay},
};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use quickact_shared::telemetry::traces::{continue_trace, span_if_exporting};
use sqlx::PgPool;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

/// Longest the loop sleeps without a notification: the rescue when one was lost.
pub const POLL_INTERVAL: Duration = Duration::from_secs(5);

/// Attempts one process makes at once (a slow receiver holds one for up to the timeout).
const MAX_IN_FLIGHT: usize = 64;

/// What every attempt of this process uses.
pub struct Deliverer {
    pool: PgPool,
    client: reqwest::Client,
    config: WebhookConfig,
    /// This process's name, which holds the leases of its deliveries.
    worker: String,
}

/// Starts the process's delivery loop (and, when `QUICKACT_WEBHOOKS` is set, makes the configured
/// deployment endpoints the stored ones first); it runs until `stop` is cancelled.
pub fn start(pool: PgPool, notifications: Notifications, config: WebhookConfig, worker: String, stop: CancellationToken) {
    let client = match http_client(&config) {
        Ok(client) => client,
        Err(err) => {
            tracing::error!(error = %err, "webhooks: cannot build the HTTP client; no webhooks are delivered by this process");
            return;
        }
    };
    let deliverer = Arc::new(Deliverer { pool, client, config, worker });
    tokio::spawn(async move {
        if let Some(endpoints) = &deliverer.config.deployment
            && let Err(err) = store::sync_deployment_endpoints(&deliverer.pool, endpoints).await
        {
            tracing::warn!(error = %err, "webhooks: could not store the configured endpoints");
        }
        deliver_until_stopped(deliverer, notifications, stop).await;
    });
}

/// The client for receivers: the attempt's time limit, no redirects, no proxy from the
/// environment, and (unless private addresses are allowed) a resolver that refuses them.
fn http_client(config: &WebhookConfig) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .timeout(config.timeout)
        .connect_timeout(config.timeout.min(Duration::from_secs(5)))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent("quickact-webhooks/1");
    if !config.allow_private {
        builder = builder.dns_resolver(PublicOnlyResolver);
    }
    builder.build()
}

/// Resolves names as the system does, keeping only public addresses (see [`is_public`]): a name
/// that passed the check at registration cannot be pointed at an internal service afterwards.
struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.filter(|a| is_public(a.ip())).collect();
            if addresses.is_empty() {
                return Err(format!("{host} resolves to no public address").into());
            }
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

async fn deliver_until_stopped(deliverer: Arc<Deliverer>, notifications: Notifications, stop: CancellationToken) {
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let lease_secs = deliverer.config.lease().as_secs_f64();
    loop {
        if stop.is_cancelled() {
            return;
        }
        let room = in_flight.available_permits();
        if room == 0 {
            // Wait for an attempt to end before claiming more.
            tokio::select! {
                _ = stop.cancelled() => return,
                permit = in_flight.clone().acquire_owned() => drop(permit),
            }
            continue;
        }
        let claimed = match store::claim_due_deliveries(&deliverer.pool, &deliverer.worker, lease_secs, room as i64).await {
            Ok(claimed) => claimed,
            Err(err) => {
                tracing::warn!(error = %err, "webhooks: could not claim deliveries");
                shared_metrics::database_error(&err);
                Vec::new()
            }
        };
        if !claimed.is_empty() {
            for delivery in claimed {
                let permit = in_flight.clone().acquire_owned().await.expect("the semaphore is never closed");
                let deliverer = deliverer.clone();
                tokio::spawn(async move {
                    let id = delivery.id;
                    if let Err(err) = attempt_delivery(&deliverer, delivery).await {
                        // Unrecorded: the claim runs out and the attempt is made again.
                        tracing::warn!(error = %err, delivery_id = %id, "webhooks: could not record an attempt");
                    }
                    drop(permit);
                });
            }
            continue;
        }
        let wait = match store::next_due_in_secs(&deliverer.pool).await {
            Ok(Some(secs)) => Duration::from_secs_f64(secs.max(0.01)).min(POLL_INTERVAL),
            _ => POLL_INTERVAL,
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = notifications.webhooks_written() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// One attempt at one delivery: the body (the task as `GET /api/quick-action/{id}` returns it,
/// rendered at the first attempt and kept), signed, POSTed, and the attempt recorded with what
/// comes next. The single place a delivery happens; when the process exports traces, each attempt
/// is a span in its task's trace (docs/tracing.md).
pub async fn attempt_delivery(deliverer: &Deliverer, claimed: ClaimedDelivery) -> Result<AttemptOutcome, sqlx::Error> {
    let span = delivery_span(&claimed);
    let outcome = attempt_delivery_in(deliverer, claimed).instrument(span.clone()).await;
    if let Ok(outcome) = &outcome {
        span.record("quickact.webhook.outcome", tracing::field::debug(outcome));
    }
    outcome
}

/// The span of one attempt: a child of the span that submitted the task when its trace crossed
/// the queue, else a root. Disabled (free) when the process exports no traces.
fn delivery_span(claimed: &ClaimedDelivery) -> Span {
    let span = span_if_exporting(|| {
        tracing::info_span!(
            "webhook_delivery",
            otel.name = "webhook.deliver",
            otel.kind = "producer",
            quickact.task_id = %claimed.task_id,
            quickact.webhook.endpoint_id = %claimed.endpoint_id,
            quickact.webhook.delivery_id = %claimed.id,
            quickact.webhook.attempt = claimed.attempt,
            http.response.status_code = tracing::field::Empty,
            quickact.webhook.outcome = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    });
    continue_trace(&span, claimed.trace_parent.as_deref());
    span
}

async fn attempt_delivery_in(deliverer: &Deliverer, claimed: ClaimedDelivery) -> Result<AttemptOutcome, sqlx::Error> {
    let body = match &claimed.body {
        Some(body) => body.clone(),
        None => {
            let Some(task) = find_task(&deliverer.pool, claimed.task_id).await? else {
                // The task was removed (retention): so was the delivery, by cascade.
                return Ok(AttemptOutcome::GaveUp);
            };
            let steps = list_steps(&deliverer.pool, task.id).await?;
            let document = TaskWithSteps::new(task, steps, Vec::new());
            serde_json::to_string(&document).expect("a task serialises")
        }
    };
    let started_at = Utc::now();
    let started = Instant::now();
    let answer = post(deliverer, &claimed, &body).await;
    let latency_ms = started.elapsed().as_millis().min(i32::MAX as u128) as i32;
    let (status_code, error) = match &answer {
        Ok(status) if status.is_success() => (Some(status.as_u16()), None),
        Ok(status) => (Some(status.as_u16()), Some(format!("the receiver answered {status}"))),
        Err(error) => (None, Some(error.clone())),
    };
    let span = Span::current();
    if let Some(code) = status_code {
        span.record("http.response.status_code", code);
    }
    if error.is_some() {
        // A low-cardinality type, as the conventions ask: the status, or that none came.
        let kind = status_code.map_or_else(|| "no_answer".to_owned(), |code| code.to_string());
        span.record("error.type", kind.as_str());
        span.record("otel.status_code", "error");
    }
    let outcome = match answer {
        Ok(status) if status.is_success() => AttemptOutcome::Delivered,
        Ok(reqwest::StatusCode::GONE) => AttemptOutcome::Gone,
        _ if claimed.attempt >= MAX_ATTEMPTS => AttemptOutcome::GaveUp,
        _ => AttemptOutcome::Retry { retry_in_secs: retry_delay(deliverer.config.retry_base, claimed.attempt).as_secs_f64() },
    };
    let attempt = Attempt { started_at, status_code, latency_ms, error, worker: &deliverer.worker };
    let recorded = store::record_attempt(&deliverer.pool, &claimed, &body, &attempt, &outcome).await?;
    if recorded {
        shared_metrics::webhook_attempt(&outcome);
        if outcome == AttemptOutcome::Delivered {
            let since_verdict = (Utc::now() - claimed.ended_at).to_std().unwrap_or_default();
            shared_metrics::webhook_delivered(since_verdict);
        }
        if outcome == AttemptOutcome::Gone {
            tracing::warn!(endpoint_id = %claimed.endpoint_id, "webhooks: the receiver answered 410 Gone; its endpoint is disabled");
        }
    }
    tracing::debug!(delivery_id = %claimed.id, attempt = claimed.attempt, ?status_code, latency_ms, ?outcome, recorded, "webhook attempt");
    Ok(outcome)
}

/// Checks the destination, signs and POSTs `body`: the receiver's status, or why none came.
async fn post(deliverer: &Deliverer, claimed: &ClaimedDelivery, body: &str) -> Result<reqwest::StatusCode, String> {
    let url = check_destination(&claimed.url, deliverer.config.allow_private).await.map_err(|refused| refused.to_string())?;
    let signer = standardwebhooks::Webhook::new(&claimed.secret).map_err(|e| format!("the endpoint's secret is unusable: {e}"))?;
    let message_id = event_id(claimed.id);
    let timestamp = Utc::now().timestamp();
    let signature = signer.sign(&message_id, timestamp, body.as_bytes()).map_err(|e| format!("could not sign: {e}"))?;
    let response = deliverer
        .client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(standardwebhooks::HEADER_WEBHOOK_ID, &message_id)
        .header(standardwebhooks::HEADER_WEBHOOK_TIMESTAMP, timestamp.to_string())
        .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signature)
        .body(body.to_owned())
        .send()
        .await
        .map_err(|err| error_chain(&err))?;
    Ok(response.status())
}

/// An error with its causes ("error sending request: connection refused").
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
