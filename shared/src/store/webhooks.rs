//! Webhook endpoints, their deliveries (the outbox the ending's trigger writes) and each attempt.
//! See [`crate::webhooks`] for the rules and `worker/src/webhooks.rs` for the delivery loop.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::webhooks::DeploymentEndpoint;

/// Channel the outbox trigger notifies when it wrote deliveries (and a resend): workers wake and
/// claim them at once instead of at their next poll.
pub const WEBHOOKS_CHANNEL: &str = "quickact_webhooks";

/// An endpoint as its owner sees it (never with its secret, which is shown once).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Endpoint {
    pub id: Uuid,
    /// `null` for the deployment's endpoints (configuration).
    pub user_id: Option<Uuid>,
    pub url: String,
    /// The verdict types it hears.
    pub verdicts: Vec<String>,
    pub enabled: bool,
    /// Why the service disabled it (its receiver answered 410 Gone), if it did.
    pub disabled_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Where a delivery stands. Stored as text under a CHECK constraint, by the same names as in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, sqlx::Type, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// An attempt is due at `next_attempt_at`.
    Pending,
    Delivered,
    /// Given up.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }
}

/// One task ending to deliver to one endpoint, with its attempts.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Delivery {
    pub id: Uuid,
    /// The `webhook-id` the receiver sees, the same at every attempt: de-duplicate on it.
    pub event_id: String,
    pub endpoint_id: Uuid,
    pub task_id: Uuid,
    pub result_type: String,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    /// Each attempt, in order: `{attempt, started_at, status_code, latency_ms, error}`.
    #[schema(value_type = Vec<Object>)]
    pub attempt_log: Value,
}

/// The `webhook-id` of delivery `id`.
pub fn event_id(id: Uuid) -> String {
    format!("msg_{}", id.simple())
}

macro_rules! select_endpoints {
    ($where:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Endpoint,
            r#"SELECT id, user_id, url, verdicts, enabled, disabled_reason, created_at, updated_at
               FROM webhook_endpoints "# + $where
            $(, $arg)*
        )
    };
}

/// Registers an endpoint of `user_id` with `secret`.
pub async fn create_endpoint(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    url: &str,
    secret: &str,
    verdicts: &[String],
    enabled: bool,
) -> Result<Endpoint, sqlx::Error> {
    sqlx::query_as!(
        Endpoint,
        r#"INSERT INTO webhook_endpoints (id, user_id, url, secret, verdicts, enabled) VALUES ($1, $2, $3, $4, $5, $6)
           RETURNING id, user_id, url, verdicts, enabled, disabled_reason, created_at, updated_at"#,
        Uuid::now_v7(),
        user_id,
        url,
        secret,
        verdicts,
        enabled,
    )
    .fetch_one(db)
    .await
}

/// The endpoints of `user_id`, oldest first.
pub async fn list_endpoints(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<Vec<Endpoint>, sqlx::Error> {
    select_endpoints!("WHERE user_id = $1 ORDER BY created_at, id", user_id).fetch_all(db).await
}

/// Endpoint `id` if it is `user_id`'s.
pub async fn find_endpoint(db: impl PgExecutor<'_>, id: Uuid, user_id: Uuid) -> Result<Option<Endpoint>, sqlx::Error> {
    select_endpoints!("WHERE id = $1 AND user_id = $2", id, user_id).fetch_optional(db).await
}

/// Every endpoint, the deployment's first, then by user (the admin page).
pub async fn list_all_endpoints(db: impl PgExecutor<'_>) -> Result<Vec<Endpoint>, sqlx::Error> {
    select_endpoints!("ORDER BY user_id NULLS FIRST, created_at, id").fetch_all(db).await
}

/// Changes what is given of endpoint `id` of `user_id`. Enabling it again forgets why it was disabled.
pub async fn update_endpoint(
    db: impl PgExecutor<'_>,
    id: Uuid,
    user_id: Uuid,
    url: Option<&str>,
    verdicts: Option<&[String]>,
    enabled: Option<bool>,
) -> Result<Option<Endpoint>, sqlx::Error> {
    sqlx::query_as!(
        Endpoint,
        r#"UPDATE webhook_endpoints
           SET url = coalesce($3, url), verdicts = coalesce($4, verdicts), enabled = coalesce($5, enabled),
               disabled_reason = CASE WHEN $5 THEN NULL ELSE disabled_reason END, updated_at = now()
           WHERE id = $1 AND user_id = $2
           RETURNING id, user_id, url, verdicts, enabled, disabled_reason, created_at, updated_at"#,
        id,
        user_id,
        url,
        verdicts,
        enabled,
    )
    .fetch_optional(db)
    .await
}

/// Removes endpoint `id` of `user_id` and its deliveries; false when there was none.
pub async fn delete_endpoint(db: impl PgExecutor<'_>, id: Uuid, user_id: Uuid) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query!("DELETE FROM webhook_endpoints WHERE id = $1 AND user_id = $2", id, user_id).execute(db).await?;
    Ok(deleted.rows_affected() > 0)
}

/// The latest `limit` deliveries of endpoint `endpoint_id`, newest first, each with its attempts.
pub async fn list_deliveries(db: impl PgExecutor<'_>, endpoint_id: Uuid, limit: i64) -> Result<Vec<Delivery>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT d.id, d.endpoint_id, d.task_id, d.result_type, d.status AS "status: DeliveryStatus", d.attempts, d.next_attempt_at, d.last_error,
                  d.created_at, d.delivered_at,
                  coalesce((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', a.started_at,
                                                                'status_code', a.status_code, 'latency_ms', a.latency_ms,
                                                                'error', a.error) ORDER BY a.id)
                            FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS "attempt_log!"
           FROM webhook_deliveries d WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2"#,
        endpoint_id,
        limit,
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Delivery {
            id: row.id,
            event_id: event_id(row.id),
            endpoint_id: row.endpoint_id,
            task_id: row.task_id,
            result_type: row.result_type,
            next_attempt_at: (row.status == DeliveryStatus::Pending).then_some(row.next_attempt_at),
            status: row.status,
            attempts: row.attempts,
            last_error: row.last_error,
            created_at: row.created_at,
            delivered_at: row.delivered_at,
            attempt_log: row.attempt_log,
        })
        .collect())
}

/// Makes the configured deployment endpoints the stored ones (user `NULL`, keyed by URL): new ones
/// are added, changed ones updated, ones no longer configured disabled (their history stays).
/// Every process runs it at start-up; running it twice changes nothing.
pub async fn sync_deployment_endpoints(db: impl PgExecutor<'_>, endpoints: &[DeploymentEndpoint]) -> Result<(), sqlx::Error> {
    let urls: Vec<&str> = endpoints.iter().map(|e| e.url.trim()).collect();
    let secrets: Vec<&str> = endpoints.iter().map(|e| e.secret.as_str()).collect();
    // Arrays of arrays must be rectangular: each endpoint's verdicts travel as one text.
    let verdicts: Vec<String> = endpoints.iter().map(|e| e.verdicts.join(",")).collect();
    sqlx::query!(
        "WITH configured AS (
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS c(url, secret, verdicts)
         ), upserted AS (
           INSERT INTO webhook_endpoints (id, user_id, url, secret, verdicts, deployment_key)
           SELECT gen_random_uuid(), NULL, c.url, c.secret, string_to_array(c.verdicts, ','), c.url FROM configured c
           ON CONFLICT (deployment_key) DO UPDATE
             SET secret = excluded.secret, verdicts = excluded.verdicts, enabled = true, disabled_reason = NULL, updated_at = now()
             WHERE (webhook_endpoints.secret, webhook_endpoints.verdicts, webhook_endpoints.enabled)
                   IS DISTINCT FROM (excluded.secret, excluded.verdicts, true)
         )
         UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'no longer configured', updated_at = now()
         WHERE deployment_key IS NOT NULL AND enabled AND deployment_key <> ALL ($1)",
        &urls as &[&str],
        &secrets as &[&str],
        &verdicts,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// A delivery a worker claimed for one attempt.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    pub task_id: Uuid,
    /// This attempt's number, from 1.
    pub attempt: i32,
    pub url: String,
    pub secret: String,
    /// The body sent at an earlier attempt, to send unchanged.
    pub body: Option<String>,
    /// The verdict's moment.
    pub ended_at: DateTime<Utc>,
    /// The task's W3C `traceparent`, when its trace crossed the queue: the attempt's span joins
    /// that trace.
    pub trace_parent: Option<String>,
}

/// Claims up to `limit` due deliveries of enabled endpoints for `worker` until `lease_secs` from
/// now: pending ones whose time has come and that nobody holds (or whose holder's claim ran out:
/// a worker that died mid-attempt). `SKIP LOCKED`, so workers claiming at once share them out.
pub async fn claim_due_deliveries(db: impl PgExecutor<'_>, worker: &str, lease_secs: f64, limit: i64) -> Result<Vec<ClaimedDelivery>, sqlx::Error> {
    sqlx::query_as!(
        ClaimedDelivery,
        r#"WITH due AS (
             SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
             WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
             ORDER BY d.next_attempt_at LIMIT $3
             FOR UPDATE OF d SKIP LOCKED
           )
           UPDATE webhook_deliveries d
           SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2), attempts = d.attempts + 1
           FROM due, webhook_endpoints e
           WHERE d.id = due.id AND e.id = d.endpoint_id
           RETURNING d.id, d.endpoint_id, d.task_id, d.attempts AS attempt, e.url, e.secret, d.body, d.ended_at,
             (SELECT t.trace_parent FROM quick_action_tasks t WHERE t.id = d.task_id) AS trace_parent"#,
        worker,
        lease_secs,
        limit,
    )
    .fetch_all(db)
    .await
}

/// How long until the next delivery is due (`None`: none is pending), so the loop sleeps just that
/// long; 0 for one due already. (Not `greatest(.., 0)` in SQL: it skips a NULL, and "none pending"
/// would read as "due now", a loop that never sleeps.)
pub async fn next_due_in_secs(db: impl PgExecutor<'_>) -> Result<Option<f64>, sqlx::Error> {
    let secs = sqlx::query_scalar!(
        r#"SELECT extract(epoch FROM min(greatest(d.next_attempt_at, coalesce(d.lease_expires_at, d.next_attempt_at))) - now())::float8
           FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
           WHERE d.status = 'pending'"#
    )
    .fetch_one(db)
    .await?;
    Ok(secs.map(|secs| secs.max(0.0)))
}

/// What came of one attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptOutcome {
    /// A 2xx: the delivery is done.
    Delivered,
    /// Failed; try again after `retry_in_secs`.
    Retry { retry_in_secs: f64 },
    /// Failed for the last time (attempts spent).
    GaveUp,
    /// The receiver answered 410 Gone: the endpoint is disabled and this delivery ends.
    Gone,
}

/// One attempt as it happened.
#[derive(Debug, Clone)]
pub struct Attempt<'a> {
    pub started_at: DateTime<Utc>,
    pub status_code: Option<u16>,
    pub latency_ms: i32,
    pub error: Option<String>,
    pub worker: &'a str,
}

/// Records attempt `claimed.attempt` and its outcome, if `worker` still holds the delivery (a claim
/// that ran out and was taken by another worker records nothing: the other's attempt counts).
/// Keeps the body sent, so later attempts send the same bytes. Returns whether it recorded.
pub async fn record_attempt(
    db: impl PgExecutor<'_>,
    claimed: &ClaimedDelivery,
    body: &str,
    attempt: &Attempt<'_>,
    outcome: &AttemptOutcome,
) -> Result<bool, sqlx::Error> {
    let (status, retry_in_secs, disables) = match outcome {
        AttemptOutcome::Delivered => (DeliveryStatus::Delivered, 0.0, false),
        AttemptOutcome::Retry { retry_in_secs } => (DeliveryStatus::Pending, *retry_in_secs, false),
        AttemptOutcome::GaveUp => (DeliveryStatus::Failed, 0.0, false),
        AttemptOutcome::Gone => (DeliveryStatus::Failed, 0.0, true),
    };
    let recorded = sqlx::query_scalar!(
        r#"WITH updated AS (
             UPDATE webhook_deliveries
             SET status = $3, body = coalesce(body, $4), lease_owner = NULL, lease_expires_at = NULL,
                 next_attempt_at = now() + make_interval(secs => $5), last_error = $6,
                 delivered_at = CASE WHEN $3 = 'delivered' THEN now() END
             WHERE id = $1 AND lease_owner = $2 AND status = 'pending' AND attempts = $7
             RETURNING id, endpoint_id
           ), attempt AS (
             INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error, worker)
             SELECT id, $7, $8, $9, $10, $6, $2 FROM updated
           ), gone AS (
             UPDATE webhook_endpoints e SET enabled = false, disabled_reason = 'the receiver answered 410 Gone', updated_at = now()
             FROM updated WHERE $11 AND e.id = updated.endpoint_id
           )
           SELECT count(*) AS "n!" FROM updated"#,
        claimed.id,
        attempt.worker,
        status.as_str(),
        body,
        retry_in_secs,
        attempt.error,
        claimed.attempt,
        attempt.started_at,
        attempt.status_code.map(i32::from),
        attempt.latency_ms,
        disables,
    )
    .fetch_one(db)
    .await?;
    Ok(recorded > 0)
}

/// Makes delivery `id` due again now (an admin's "send again"), with the same event id, and wakes
/// the workers. Its attempts so far stay recorded; it gets a fresh set. False when there is none.
pub async fn resend_delivery(db: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let resent = sqlx::query_scalar!(
        r#"WITH resent AS (
             UPDATE webhook_deliveries
             SET status = 'pending', next_attempt_at = now(), lease_owner = NULL, lease_expires_at = NULL, attempts = 0,
                 delivered_at = NULL
             WHERE id = $1 RETURNING id
           )
           SELECT count(pg_notify('quickact_webhooks', '')) AS "n!" FROM resent"#,
        id,
    )
    .fetch_one(db)
    .await?;
    Ok(resent > 0)
}

/// Deliveries still to be made (the metrics' gauge).
pub async fn count_pending(db: impl PgExecutor<'_>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM webhook_deliveries WHERE status = 'pending'"#).fetch_one(db).await
}

/// An endpoint with its counts, for the admin page.
#[derive(Debug, Clone)]
pub struct EndpointSummary {
    pub endpoint: Endpoint,
    pub user_name: Option<String>,
    pub delivered: i64,
    pub pending: i64,
    pub failed: i64,
}

/// Every endpoint with how many of its deliveries were delivered, are pending, failed.
pub async fn endpoint_summaries(db: impl PgExecutor<'_>) -> Result<Vec<EndpointSummary>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT e.id, e.user_id, e.url, e.verdicts, e.enabled, e.disabled_reason, e.created_at, e.updated_at, u.name AS "user_name?",
                  count(d.id) FILTER (WHERE d.status = 'delivered') AS "delivered!",
                  count(d.id) FILTER (WHERE d.status = 'pending') AS "pending!",
                  count(d.id) FILTER (WHERE d.status = 'failed') AS "failed!"
           FROM webhook_endpoints e
           LEFT JOIN users u ON u.id = e.user_id
           LEFT JOIN webhook_deliveries d ON d.endpoint_id = e.id
           GROUP BY e.id, u.name
           ORDER BY e.user_id NULLS FIRST, e.created_at, e.id"#
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| EndpointSummary {
            endpoint: Endpoint {
                id: row.id,
                user_id: row.user_id,
                url: row.url,
                verdicts: row.verdicts,
                enabled: row.enabled,
                disabled_reason: row.disabled_reason,
                created_at: row.created_at,
                updated_at: row.updated_at,
            },
            user_name: row.user_name,
            delivered: row.delivered,
            pending: row.pending,
            failed: row.failed,
        })
        .collect())
}
