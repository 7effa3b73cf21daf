//! What the queue hands the runner: a task this process claimed, with the permit it runs under,
//! and the times tasks handed back with a delay come due. A leaf of both the queue and the runner.

use std::{
    cmp::Reverse,
    collections::BinaryHeap,
    sync::Mutex,
    time::Duration,
};

use quickact_shared::domain::task::TaskRecord;
use tokio::{
    sync::{Notify, OwnedSemaphorePermit},
    time::Instant,
};

use crate::agent::RunClock;

/// A task this process claimed, with the permit it runs under.
pub struct Claimed {
    pub task: TaskRecord,
    /// The database's clock as the claim read it, which the run goes by (this machine's own may be
    /// off).
    pub clock: RunClock,
    /// Who holds the task's lease: this worker and the fetch that claimed it (see
    /// [`quickact_shared::queue::fetch_tasks`]); every write of the run checks it.
    pub holder: String,
    /// Run by itself, not in a group of local runs: its user's last waiting task (see
    /// [`quickact_shared::queue::ClaimedTask::alone`]) while other users work through backlogs.
    pub alone: bool,
    pub permit: OwnedSemaphorePermit,
}

/// How long after the first of several due times the fetcher waits for the others: the tasks one
/// pause held come due within milliseconds of each other, and one fetch takes them all.
const DUE_TOGETHER: Duration = Duration::from_millis(25);

/// When the tasks this process handed back with a delay come due. A task handed back until then
/// (its lease held by nobody until the delay is over) is announced to nobody when it may be taken
/// again, so without these the next fetch would come by chance or at the next [`RESCUE_POLL`],
/// up to two seconds late: the fetcher wakes itself at each of these times instead. Another worker
/// may take the task (any fetch will); this one only makes sure some fetch comes in time.
#[derive(Default)]
pub struct DueTasks {
    times: Mutex<BinaryHeap<Reverse<Instant>>>,
    /// Told when a time is added: the fetcher may be sleeping until a later one.
    added: Notify,
}

impl DueTasks {
    /// A task this process handed back may be taken again from `due` on (on this machine's clock,
    /// read after the hand-back committed: no earlier than the database's own time for it).
    pub fn add(&self, due: Instant) {
        self.times.lock().expect("due times lock").push(Reverse(due));
        self.added.notify_one();
    }

    /// Completes once the earliest time added has come (and the others due with it), forgetting
    /// them.
    pub(crate) async fn reached(&self) {
        loop {
            let earliest = self.times.lock().expect("due times lock").peek().map(|Reverse(at)| *at);
            match earliest {
                Some(at) if at + DUE_TOGETHER <= Instant::now() => {
                    let mut times = self.times.lock().expect("due times lock");
                    let now = Instant::now();
                    while times.peek().is_some_and(|Reverse(at)| *at <= now) {
                        times.pop();
                    }
                    return;
                }
                Some(at) => tokio::select! {
                    _ = tokio::time::sleep_until(at + DUE_TOGETHER) => {}
                    _ = self.added.notified() => {}
                },
                None => self.added.notified().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_fetcher_wakes_when_a_task_handed_back_comes_due_and_once_for_those_due_together() {
        let due = DueTasks::default();
        let start = Instant::now();
        let (first, second) = (start + Duration::from_millis(100), start + Duration::from_millis(300));
        due.add(second);
        due.add(second + Duration::from_millis(5));
        due.add(first);
        due.reached().await;
        assert!(Instant::now() >= first && Instant::now() < second, "woken at the first time due");
        due.reached().await;
        assert!(Instant::now() >= second + Duration::from_millis(5), "the two due 5 ms apart wake it once");
        assert!(tokio::time::timeout(Duration::from_millis(300), due.reached()).await.is_err(), "nothing left to wake it");
    }
}
