//! What a worker process knows of the pauses models asked for, heard on
//! [`PROVIDER_PAUSES_CHANNEL`]: so that a request to a model with no limit configured needs no
//! round trip to the fleet's budget (`provider_budgets`) unless a pause may be on. Requests to a
//! model with a limit always take from the budget, which knows the pauses too.
//!
//! A model stays "may be paused" from the announcement of its pause until a request let through by
//! the budget finds no pause there (or this process's probe got an answer): the budget decides
//! while it may be on, including who probes. Announcements go unheard while the listener is away:
//! when it connects, it reads the pauses on (`crate::notify`), and if it cannot, every model is
//! "may be paused" for a while.
//!
//! The end of a pause is announced too ([`PROVIDER_RESUMES_CHANNEL`], when a probe's answer ended
//! it): requests waiting in process for that answer ([`ProviderPauses::changes`]) go at once
//! instead of waiting out the probe window.

use std::{
    collections::HashSet,
    sync::Mutex,
    time::{Duration, Instant},
};

pub use crate::store::providers::{PROVIDER_PAUSES_CHANNEL, PROVIDER_RESUMES_CHANNEL};
use tokio::sync::watch;

/// How long every request asks the budget after the listener connected without reading the pauses
/// on: longer than the pauses a model names, mostly.
const UNSURE_AFTER_RECONNECT: Duration = Duration::from_secs(120);

#[derive(Debug)]
pub struct ProviderPauses {
    /// Models whose pause was announced and not yet found over.
    paused: Mutex<HashSet<String>>,
    /// Until when every model counts as maybe paused (announcements may have been missed).
    unsure_until: Mutex<Option<Instant>>,
    /// Counts the announcements heard, pauses and their ends, of any model: what a request waiting
    /// for a probe's answer wakes on.
    changes: watch::Sender<u64>,
}

impl Default for ProviderPauses {
    fn default() -> Self {
        ProviderPauses { paused: Mutex::default(), unsure_until: Mutex::default(), changes: watch::Sender::new(0) }
    }
}

impl ProviderPauses {
    /// A pause of `model` was announced (by any process, this one too).
    pub fn heard(&self, model: &str) {
        self.paused.lock().expect("provider pauses lock").insert(model.to_owned());
        self.changes.send_modify(|n| *n += 1);
    }

    /// A probe's answer ended `model`'s pause (announced by the process that got it, this one too).
    pub fn resumed(&self, model: &str) {
        self.found_over(model);
        self.changes.send_modify(|n| *n += 1);
    }

    /// Changes with every pause and every end of a pause heard from now on (of any model).
    /// Subscribe before asking the budget, so that an end announced meanwhile is not missed.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Whether a request to `model` must ask the fleet's budget, since a pause may be on.
    pub fn may_be_paused(&self, model: &str) -> bool {
        if self.unsure_until.lock().expect("provider pauses lock").is_some_and(|until| Instant::now() < until) {
            return true;
        }
        self.paused.lock().expect("provider pauses lock").contains(model)
    }

    /// The budget let a request of `model` through with no pause on (or the probe was answered).
    pub fn found_over(&self, model: &str) {
        self.paused.lock().expect("provider pauses lock").remove(model);
    }

    /// The listener (re)connected and could not read the pauses on: announcements made meanwhile
    /// went unheard.
    pub fn unheard(&self) {
        *self.unsure_until.lock().expect("provider pauses lock") = Some(Instant::now() + UNSURE_AFTER_RECONNECT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_may_be_paused_from_its_announcement_until_found_over() {
        let pauses = ProviderPauses::default();
        assert!(!pauses.may_be_paused("m"));
        pauses.heard("m");
        assert!(pauses.may_be_paused("m") && !pauses.may_be_paused("other"));
        pauses.found_over("m");
        assert!(!pauses.may_be_paused("m"));
        pauses.unheard();
        assert!(pauses.may_be_paused("other"), "after a reconnect, every model until it is sure");
    }

    #[test]
    fn the_end_of_a_pause_wakes_whoever_waits_for_it() {
        let pauses = ProviderPauses::default();
        pauses.heard("m");
        let changes = pauses.changes();
        assert!(!changes.has_changed().unwrap(), "a pause heard before subscribing is not a change");
        pauses.resumed("m");
        assert!(changes.has_changed().unwrap());
        assert!(!pauses.may_be_paused("m"), "the budget need not be asked once the pause is over");
    }
}
