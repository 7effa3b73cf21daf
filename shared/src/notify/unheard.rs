//! The tasks this process stored and has not yet heard end: a long-poll on one of them knows,
//! without reading it, that it is unfinished and whose it is.
//!
//! Clients submit a sentence and then long-poll for its verdict, and the long-poll's first read
//! (is it final already?) was a statement per task on the API's side, most often answered
//! "unfinished". A task enters here before its row is written (so its verdict cannot be heard
//! first) and leaves when its verdict is heard, when it was not stored after all, or when its time
//! is long over. The listener clears it when it reconnects (verdicts may have gone unheard while it
//! was away), and the answer counts only while it is connected: whatever is here was heard true.
//! A waiter that trusts it has subscribed to the task first, and a verdict leaves this set before
//! it wakes the task's subscribers, so no verdict falls between the two.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use uuid::Uuid;

/// How long after its task's own time limit an entry is kept: a task waits in the queue before its
/// time counts. Past it, a waiter reads the task, as for any other.
const QUEUE_ALLOWANCE: Duration = Duration::from_secs(600);

/// Fewest entries at which expired ones are pruned.
const PRUNE_FROM: usize = 1024;

#[derive(Default)]
pub struct Unheard {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    tasks: HashMap<Uuid, Entry>,
    /// Prune expired entries once there are this many (doubled after each prune: amortised).
    prune_at: usize,
}

struct Entry {
    user_id: Uuid,
    until: Instant,
}

impl Unheard {
    /// Task `id` of `user_id` is about to be stored, with a time limit of `limit`.
    pub fn storing(&self, id: Uuid, user_id: Uuid, limit: Duration) {
        let now = Instant::now();
        let mut state = self.state.lock().expect("unheard tasks lock");
        if state.tasks.len() >= state.prune_at.max(PRUNE_FROM) {
            state.tasks.retain(|_, entry| entry.until > now);
            state.prune_at = 2 * state.tasks.len();
        }
        state.tasks.insert(id, Entry { user_id, until: now + limit + QUEUE_ALLOWANCE });
    }

    /// Task `id` was not stored after all, or its verdict was heard.
    pub fn forget(&self, id: Uuid) {
        self.state.lock().expect("unheard tasks lock").tasks.remove(&id);
    }

    /// Every entry goes: verdicts may have gone unheard.
    pub fn clear(&self) {
        self.state.lock().expect("unheard tasks lock").tasks.clear();
    }

    /// Whose task `id` is, when it is known to be unfinished.
    pub fn owner(&self, id: Uuid) -> Option<Uuid> {
        let state = self.state.lock().expect("unheard tasks lock");
        state.tasks.get(&id).filter(|entry| entry.until > Instant::now()).map(|entry| entry.user_id)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state.lock().unwrap().tasks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_known_unfinished_from_before_its_store_until_its_verdict_or_its_time_is_over() {
        let unheard = Unheard::default();
        let (id, user) = (Uuid::now_v7(), Uuid::now_v7());
        assert_eq!(unheard.owner(id), None);
        unheard.storing(id, user, Duration::from_secs(30));
        assert_eq!(unheard.owner(id), Some(user));
        unheard.forget(id);
        assert_eq!(unheard.owner(id), None);

        // An entry whose time is over answers nothing, and goes at the next prune.
        let late = Uuid::now_v7();
        unheard.storing(late, user, Duration::ZERO);
        unheard.state.lock().unwrap().tasks.get_mut(&late).unwrap().until = Instant::now();
        assert_eq!(unheard.owner(late), None);
        for _ in 0..PRUNE_FROM {
            unheard.storing(Uuid::now_v7(), user, Duration::from_secs(30));
        }
        assert_eq!(unheard.len(), PRUNE_FROM, "the expired entry was pruned");
        unheard.clear();
        assert_eq!(unheard.len(), 0);
    }
}
