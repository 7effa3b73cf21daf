//! Waiting for a task to reach a final state without polling the database.
//!
//! The waiter registers interest in the task *before* reading it, then sleeps on the process's
//! notification fan-out (see `quickact_shared::notify`): it holds no connection while it waits and
//! wakes within milliseconds of the worker's commit. After the listener reconnects (e.g. the
//! database restarted) every waiter wakes and re-reads, since notifications may have been lost.

use std::time::Duration;

use quickact_shared::{db::is_unavailable, domain::task::TaskRecord, store::tasks};
use tokio::time::Instant;
use uuid::Uuid;

use crate::{error::ApiError, limits::WaitKind, state::AppState};

/// Returns the task once it is final or `timeout` has passed (then in whatever state it is), or at
/// once when the server is shutting down. The wait counts against `caller`'s long-poll bound (429
/// past it).
pub async fn wait_until_final(state: &AppState, caller: Uuid, id: Uuid, timeout: Duration) -> Result<TaskRecord, ApiError> {
    let _slot = state.long_polls.take(caller, state.config.http.max_long_polls_per_user, WaitKind::LongPoll)?;
    let deadline = Instant::now() + timeout;
    let mut subscription = state.notifications.subscribe_task(id);
    loop {
        let timed_out = Instant::now() >= deadline || state.stopping.is_cancelled();
        match tasks::find_task(&state.pool, id).await {
            Ok(Some(task)) if task.status.is_final() || timed_out => return Ok(task),
            Ok(Some(_)) => {}
            Ok(None) => return Err(ApiError::NotFound("no such task")),
            // The database is away: keep waiting for the listener to come back (it wakes us), and
            // only give up at the deadline.
            Err(err) if is_unavailable(&err) && !timed_out => {
                tracing::warn!(task_id = %id, error = %err, "long-poll read failed, waiting for the database");
            }
            Err(err) => return Err(err.into()),
        }
        tokio::select! {
            _ = subscription.changed() => {}
            _ = tokio::time::sleep_until(deadline) => {}
            _ = state.stopping.cancelled() => {}
        }
    }
}
