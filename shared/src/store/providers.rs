//! The fleet's budgets and pauses of each model (`provider_budgets`), shared by every worker
//! process: what `QUICKACT_MODEL_LIMITS` allows a model each minute, and the pause a model asked
//! for with a `429`'s `Retry-After`. See `migrations/functions/provider_requests.sql`.
//!
//! - [`take_provider_request`]: before each request, one call takes it from the budget or says how
//!   long to wait (a pause, a token debt, the request rate).
//! - [`settle_provider_request`]: after an answer, its tokens are debited (a debt is allowed: the
//!   next requests wait) and, when it was a pause's probe, the pause ends, announced on
//!   [`PROVIDER_RESUMES_CHANNEL`] to the requests waiting for that answer.
//! - [`pause_provider`]: a `429` that named its wait stops every worker's requests until then.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use crate::config::models::ModelLimit;

/// Channel announcing a model's pause (payload: the model), so that workers ask the budget before
/// requests to a model without limits only while a pause may be on (see
/// [`crate::provider_pauses`]).
pub const PROVIDER_PAUSES_CHANNEL: &str = "quickact_provider_pauses";

/// Channel announcing that a pause's probe was answered and the pause is over (payload: the
/// model): the requests waiting for that answer go (see [`Admission::Wait::probing`]).
pub const PROVIDER_RESUMES_CHANNEL: &str = "quickact_provider_resumes";

/// What a request's budget says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    /// Send the request after `after` (its place in the queue of the request rate; zero mostly).
    /// `probe`: it is the first after a pause, and its answer ends the pause (or renews it).
    Admitted { after: Duration, probe: bool, taken_at: DateTime<Utc> },
    /// Not now: ask again after `wait`. `paused`: the model asked for the pause. `probing`: its
    /// pause is over and its probe is out: the wait ends with the probe's answer, announced on
    /// [`PROVIDER_RESUMES_CHANNEL`], or with the probe window (`wait`) at the latest.
    Wait { wait: Duration, paused: bool, probing: bool },
}

/// A request's ticket: what [`settle_provider_request`] needs to know about it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticket {
    pub probe: bool,
    pub taken_at: DateTime<Utc>,
}

/// Takes one request of `model`'s budget under `limit`. A request the rate alone holds back by at
/// most `longest_wait` is let through with its delay (a reservation); others wait without one.
/// `probe_window`: how long the others wait for a pause's probe to answer.
pub async fn take_provider_request(
    db: impl PgExecutor<'_>,
    model: &str,
    limit: ModelLimit,
    longest_wait: Duration,
    probe_window: Duration,
) -> Result<Admission, sqlx::Error> {
    // GCRA over a minute: bursts of up to a minute's budget (as the submit rate's budget).
    let (interval, tolerance) = match limit.requests_per_minute {
        Some(rate) if rate > 0 => (60.0 / f64::from(rate), 60.0 / f64::from(rate) * f64::from(rate - 1)),
        _ => (0.0, 0.0),
    };
    let token_tolerance = if limit.tokens_per_minute.is_some_and(|tokens| tokens > 0) { 60.0 } else { 0.0 };
    let row = sqlx::query!(
        r#"SELECT wait AS "wait!", admitted AS "admitted!", probe AS "probe!", paused AS "paused!", probing AS "probing!",
                  taken_at AS "taken_at!"
           FROM quickact_take_provider_request($1, $2, $3, $4, $5, $6)"#,
        model,
        interval,
        tolerance,
        token_tolerance,
        longest_wait.as_secs_f64(),
        probe_window.as_secs_f64(),
    )
    .fetch_one(db)
    .await?;
    let wait = Duration::from_secs_f64(row.wait.clamp(0.0, 3600.0));
    Ok(if row.admitted {
        Admission::Admitted { after: wait, probe: row.probe, taken_at: row.taken_at }
    } else {
        Admission::Wait { wait, paused: row.paused, probing: row.probing }
    })
}

/// After `model` answered the request of `ticket`: debits the `tokens` it used from the token
/// budget of `limit` (the debt may run past the budget: the next requests wait), and ends the
/// pause the request probed, unless a later 429 paused the model again meanwhile. The end of a
/// pause is announced on [`PROVIDER_RESUMES_CHANNEL`] when it commits: the requests waiting for
/// the probe's answer, in every worker, go at once.
pub async fn settle_provider_request(
    db: impl PgExecutor<'_>,
    model: &str,
    limit: ModelLimit,
    ticket: Ticket,
    tokens: u64,
) -> Result<(), sqlx::Error> {
    let seconds = match limit.tokens_per_minute {
        Some(per_minute) if per_minute > 0 => tokens as f64 * 60.0 / per_minute as f64,
        _ => 0.0,
    };
    if seconds == 0.0 && !ticket.probe {
        return Ok(());
    }
    // `resumed`: the pause is over with this answer. (A probe answering after another probe's
    // answer ended the pause says so again: the waiters, if any, ask the budget once more.)
    sqlx::query!(
        r#"WITH settled AS (
             UPDATE provider_budgets
             SET token_tat = CASE WHEN $2::float8 > 0 THEN greatest(token_tat, clock_timestamp()) + make_interval(secs => $2) ELSE token_tat END,
                 paused_until = CASE WHEN $3 AND paused_at <= $4 THEN NULL ELSE paused_until END,
                 paused_at = CASE WHEN $3 AND paused_at <= $4 THEN NULL ELSE paused_at END,
                 probe_sent_at = CASE WHEN $3 AND paused_at <= $4 THEN NULL ELSE probe_sent_at END
             WHERE model = $1
             RETURNING $3 AND paused_until IS NULL AS resumed
           )
           SELECT count(pg_notify($5, $1)) AS "n!" FROM settled WHERE resumed"#,
        model,
        seconds,
        ticket.probe,
        ticket.taken_at,
        PROVIDER_RESUMES_CHANNEL,
    )
    .fetch_one(db)
    .await?;
    Ok(())
}

/// `model` asked every client to wait `wait` (a `429` with `Retry-After`): no worker sends it a
/// request until then, and then one probe goes first. The latest ask wins, shorter or longer.
/// Announced on [`PROVIDER_PAUSES_CHANNEL`] when it commits.
pub async fn pause_provider(db: impl PgExecutor<'_>, model: &str, wait: Duration) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "WITH paused AS (
             INSERT INTO provider_budgets AS b (model, paused_at, paused_until, pauses_total)
             VALUES ($1, clock_timestamp(), clock_timestamp() + make_interval(secs => $2), 1)
             ON CONFLICT (model) DO UPDATE
             SET paused_at = EXCLUDED.paused_at, paused_until = EXCLUDED.paused_until, probe_sent_at = NULL,
                 pauses_total = b.pauses_total + 1
             RETURNING model
         )
         SELECT pg_notify($3, model) FROM paused",
        model,
        wait.as_secs_f64(),
        PROVIDER_PAUSES_CHANNEL,
    )
    .fetch_all(db)
    .await?;
    Ok(())
}

/// The models with a pause on, or one whose probe has not answered yet.
pub async fn paused_models(db: impl PgExecutor<'_>) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT model FROM provider_budgets WHERE paused_until IS NOT NULL").fetch_all(db).await
}

/// Counts a run that fell back from `model` to the next model of the chain.
pub async fn count_fallback(db: impl PgExecutor<'_>, model: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO provider_budgets AS b (model, fallbacks_total) VALUES ($1, 1)
         ON CONFLICT (model) DO UPDATE SET fallbacks_total = b.fallbacks_total + 1",
        model,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// One model's budget now, for the admin page.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderState {
    pub model: String,
    /// Requests and tokens spent of the current minute's budget: how far the GCRA's arrival times
    /// run ahead of now, in seconds (times the limit / 60 gives the amount).
    pub requests_ahead_secs: f64,
    pub tokens_ahead_secs: f64,
    /// Until when the model asked for a pause, if it is paused now, and how long that is from now.
    pub paused_until: Option<DateTime<Utc>>,
    pub paused_secs: f64,
    pub requests_total: i64,
    pub waits_total: i64,
    pub pauses_total: i64,
    pub fallbacks_total: i64,
}

/// Every model's budget row, by name.
pub async fn provider_states(db: impl PgExecutor<'_>) -> Result<Vec<ProviderState>, sqlx::Error> {
    sqlx::query_as!(
        ProviderState,
        r#"SELECT model,
                  greatest(extract(epoch FROM request_tat - now()), 0)::float8 AS "requests_ahead_secs!",
                  greatest(extract(epoch FROM token_tat - now()), 0)::float8 AS "tokens_ahead_secs!",
                  CASE WHEN paused_until > now() THEN paused_until END AS paused_until,
                  greatest(extract(epoch FROM paused_until - now()), 0)::float8 AS "paused_secs!",
                  requests_total, waits_total, pauses_total, fallbacks_total
           FROM provider_budgets ORDER BY model"#
    )
    .fetch_all(db)
    .await
}
