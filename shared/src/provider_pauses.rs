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

use std::{
    collections::HashSet,
    sync::Mutex,
    time::{Duration, Instant},
};

pub use crate::store::providers::PROVIDER_PAUSES_CHANNEL;

/// How long every request asks the budget after the listener connected without reading the pauses
/// on: longer than the pauses a model names, mostly.
const UNSURE_AFTER_RECONNECT: Duration = Duration::from_secs(120);

#[derive(Debug, Default)]
pub struct ProviderPauses {
    /// Models whose pause was announced and not yet found over.
    paused: Mutex<HashSet<String>>,
    /// Until when every model counts as maybe paused (announcements may have been missed).
    unsure_until: Mutex<Option<Instant>>,
}

impl ProviderPauses {
    /// A pause of `model` was announced (by any process, this one too).
    pub fn heard(&self, model: &str) {
        self.paused.lock().expect("provider pauses lock").insert(model.to_owned());
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
}
