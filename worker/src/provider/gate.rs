//! The gate every model request passes: the fleet's limits of each model
//! (`QUICKACT_MODEL_LIMITS`), the pauses a model asks for (a `429` with `Retry-After`), both held in
//! Postgres so that every worker process obeys them together (see
//! [`quickact_shared::store::providers`]), and the chain of models a run falls back to
//! (`QUICKACT_MODEL_FALLBACK`).
//!
//! A model without limits is asked without a round trip to the budget, unless this process heard
//! of a pause that may still be on ([`quickact_shared::provider_pauses`]): announcements take
//! milliseconds, so what slips through is what was already on its way when the 429 came.
//!
//! A request waits for its turn in process only when that is short ([`SHORT_WAIT`]), or when it
//! waits for the answer of a pause's probe (at most [`PROBE_WINDOW`], mostly a model's latency:
//! the answer is announced, and the wait ends with it); a longer wait (a pause, a budget spent for
//! a while) is the run's to hand back: its task leaves the worker until the wait is over, holding
//! no run slot (see `crate::runner`).

use std::time::Duration;

use quickact_shared::{
    config::{ModelConfig, ModelLimit, ModelLimits},
    notify::Notifications,
    provider_pauses::ProviderPauses,
    store::providers::{Admission, Ticket, count_fallback, pause_provider, settle_provider_request, take_provider_request},
};
use sqlx::PgPool;
use tokio::time::Instant;

/// Longest a run waits for its model's budget in process, holding its run slot. Longer waits hand
/// the task back: a slot is worth more than the second or two a hand-back and the next fetch cost.
pub const SHORT_WAIT: Duration = Duration::from_secs(1);

/// How long the other requests keep waiting for the answer of the probe that goes first after a
/// pause: a probe that hangs, or whose worker dies, holds the model back no longer than this.
///
/// They wait in process, holding their run slots: the answer ends the wait, announced to every
/// worker, and comes within a model's latency. A hand-back could not end with it: it would have to
/// last the whole window (the chaos suite's 429 storm saw tasks back 5-7 s after a probe that had
/// answered in under a second).
pub const PROBE_WINDOW: Duration = Duration::from_secs(5);

/// What the gate says about a request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Passage {
    /// Send it now; settle it with its answer ([`ProviderGate::settle`]). `None`: the budget was
    /// not asked (no limits, no pause heard of).
    Go(Option<Ticket>),
    /// The model cannot be asked before `wait` is over: longer than [`SHORT_WAIT`].
    Wait { wait: Duration, paused: bool },
}

/// The fleet's limits, pauses and fallbacks, for a worker process.
pub struct ProviderGate {
    /// The bookkeeping pool: budgets are unlogged rows, their statements short.
    pool: PgPool,
    /// The process's listener: the pauses it heard of, and whether it is connected to hear them.
    notifications: Notifications,
    limits: ModelLimits,
    fallback: Vec<String>,
}

impl ProviderGate {
    pub fn new(pool: PgPool, notifications: Notifications, config: &ModelConfig) -> Self {
        ProviderGate { pool, notifications, limits: config.limits.clone(), fallback: config.fallback.clone() }
    }

    fn pauses(&self) -> &ProviderPauses {
        self.notifications.provider_pauses()
    }

    fn limit(&self, model: &str) -> ModelLimit {
        self.limits.of(model)
    }

    /// Waits (briefly) for `model`'s turn: takes from the fleet's budget when the model has limits
    /// or may be paused (a pause another worker met must stop this one too). Waits for a pause's
    /// probe to answer, unless that may outlast `deadline` (the run's).
    pub async fn pass(&self, model: &str, deadline: Instant) -> Result<Passage, sqlx::Error> {
        let limit = self.limit(model);
        let limited = limit.requests_per_minute.is_some() || limit.tokens_per_minute.is_some();
        loop {
            if !limited && !self.pauses().may_be_paused(model) && self.notifications.is_connected() {
                return Ok(Passage::Go(None));
            }
            // Before asking: the end of the pause may be announced before the answer is read.
            let mut changes = self.pauses().changes();
            match take_provider_request(&self.pool, model, limit, SHORT_WAIT, PROBE_WINDOW).await? {
                Admission::Admitted { after, probe, taken_at } => {
                    quickact_shared::metrics::provider_request(model, probe);
                    if !after.is_zero() {
                        tokio::time::sleep(after).await;
                    }
                    if !probe && !limited {
                        // The budget knows no pause of the model: requests may skip it again.
                        self.pauses().found_over(model);
                    }
                    return Ok(Passage::Go(Some(Ticket { probe, taken_at })));
                }
                Admission::Wait { wait, paused, probing } => {
                    quickact_shared::metrics::provider_wait(model, paused);
                    if probing && wait <= PROBE_WINDOW && Instant::now() + wait < deadline {
                        // The probe's answer (announced), a new pause (announced too), or the
                        // window's end; then the budget says what now.
                        let _ = tokio::time::timeout(wait, changes.changed()).await;
                        continue;
                    }
                    if wait > SHORT_WAIT {
                        return Ok(Passage::Wait { wait, paused });
                    }
                    // A short wait: the budget (or the pause) frees up in a moment.
                    tokio::time::sleep(wait.max(Duration::from_millis(20))).await;
                }
            }
        }
    }

    /// `model` answered the request of `ticket`, using `tokens`.
    pub async fn settle(&self, model: &str, ticket: Option<Ticket>, tokens: u64) -> Result<(), sqlx::Error> {
        // `None`: the request did not take from the budget (a local model, no limit nor pause).
        let Some(ticket) = ticket else { return Ok(()) };
        if ticket.probe {
            self.pauses().found_over(model);
        }
        settle_provider_request(&self.pool, model, self.limit(model), ticket, tokens).await
    }

    /// `model` asked to be left alone for `wait`: every worker pauses it.
    pub async fn pause(&self, model: &str, wait: Duration) -> Result<(), sqlx::Error> {
        quickact_shared::metrics::provider_pause(model);
        // At once here; the announcement reaches the other processes (and this one again).
        self.pauses().heard(model);
        pause_provider(&self.pool, model, wait).await
    }

    /// The model a run on `model` goes on with when `model` failed it, if the chain has one: the
    /// next after `model` in the chain, or its first when `model` is not in it. `tried` are the
    /// models the run used already, which it does not go back to.
    pub fn next_model(&self, model: &str, tried: &[String]) -> Option<&str> {
        let start = self.fallback.iter().position(|m| m == model).map_or(0, |i| i + 1);
        self.fallback[start..].iter().map(String::as_str).find(|next| *next != model && !tried.iter().any(|t| t == next))
    }

    /// The chain's own copy of the model named `name`, if the chain has it (what a run resumed from
    /// its journal goes on with).
    pub fn model_in_chain(&self, name: &str) -> Option<&str> {
        self.fallback.iter().map(String::as_str).find(|model| *model == name)
    }

    /// Counts a run that fell back from `from` to `to`.
    pub async fn fell_back(&self, from: &str, to: &str) -> Result<(), sqlx::Error> {
        quickact_shared::metrics::model_fallback(from, to);
        count_fallback(&self.pool, from).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate_with_chain(chain: &[&str]) -> ProviderGate {
        let pool = sqlx::PgPool::connect_lazy("postgres://localhost/none").unwrap();
        let notifications = Notifications::start(pool.clone(), tokio_util::sync::CancellationToken::new());
        ProviderGate { pool, notifications, limits: ModelLimits::default(), fallback: chain.iter().map(|m| m.to_string()).collect() }
    }

    #[tokio::test]
    async fn the_chain_goes_on_after_the_failed_model_and_never_back() {
        let gate = gate_with_chain(&["a", "b", "c"]);
        assert_eq!(gate.next_model("a", &[]), Some("b"));
        assert_eq!(gate.next_model("c", &[]), None);
        assert_eq!(gate.next_model("elsewhere", &[]), Some("a"), "a model outside the chain falls back to its first");
        assert_eq!(gate.next_model("elsewhere", &["a".into()]), Some("b"));
        assert_eq!(gate_with_chain(&[]).next_model("a", &[]), None);
    }
}
