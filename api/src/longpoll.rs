//! Waiting for a task to reach a final state without polling the database.
//!
//! The waiter registers interest in the task *before* reading it, then sleeps on the process's
//! notification fan-out (see `quickact_shared::notify`): it holds no connection while it waits and
//! wakes within milliseconds of the worker's commit. It reads the task when it begins (unless this
//! process stored it and knows it unfinished) and when the verdict is heard, not at each change on
//! the way, and reads in batches with every other waiter reading at that moment (see
//! [`crate::reads`]). After the listener reconnects (e.g. the
//! database restarted) every waiter wakes and re-reads, since notifications may have been lost.

use std::time::Duration;

use quickact_shared::{
    domain::{task::TaskRecord, user::User},
    notify::TaskSubscription,
    store::tasks::TaskRead,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::{error::ApiError, limits::WaitKind, state::AppState};

/// Whether `caller` may read `task`: their own, or anyone's for an admin.
pub fn visible_to(task: &TaskRecord, caller: &User) -> bool {
    task.user_id == caller.id || caller.is_admin
}

/// Returns task `id` once it is final or `timeout` has passed (then in whatever state it is), or at
/// once when the server is shutting down, with its journal when it is final; 404 when it is not
/// the caller's. A wait counts against the caller's long-poll bound (429 past it).
pub async fn wait_until_final(state: &AppState, caller: &User, id: Uuid, timeout: Duration) -> Result<TaskRead, ApiError> {
    wait_from(state, caller, state.notifications.subscribe_task(id), timeout, None).await
}

/// [`wait_until_final`] with the subscription taken earlier: `known` is the task as read or written
/// after `subscription` was taken (so no change since is missed), `None` to read it first.
pub fn wait_from<'a>(
    state: &'a AppState,
    caller: &'a User,
    subscription: TaskSubscription,
    timeout: Duration,
    known: Option<TaskRecord>,
) -> impl Future<Output = Result<TaskRead, ApiError>> + Send + 'a {
    // An `async move` block rather than an `async fn`, whose arguments the future would hold twice
    // (as arguments and as locals); a held long-poll keeps this future for its whole wait.
    let (mut subscription, mut known) = (subscription, known.map(Box::new));
    async move {
        let deadline = Instant::now() + timeout;
        let mut slot = None;
        // A task this process stored and has not heard end is unfinished: its first read is saved
        // (see `quickact_shared::notify`; the subscription was taken before this is asked).
        let mut unfinished = match known.is_none().then(|| state.notifications.unfinished_owner(subscription.id())).flatten() {
            Some(owner) if owner != caller.id && !caller.is_admin => return Err(ApiError::NotFound("no such task")),
            owner => owner.is_some(),
        };
        loop {
            let timed_out = Instant::now() >= deadline || state.stopping.is_cancelled();
            if std::mem::take(&mut unfinished) && !timed_out {
                slot = Some(state.long_polls.take(caller.id, state.config.http.max_long_polls_per_user, WaitKind::LongPoll)?);
                woken(&mut subscription, deadline, &state.stopping).await;
                continue;
            }
            let read = match known.take() {
                Some(task) => Ok(Some(TaskRead { task: *task, journal: None })),
                // Boxed: only while it reads; inline it would size the future for the whole wait.
                None => Box::pin(state.reads.task(subscription.id())).await,
            };
            match read {
                Ok(Some(read)) if !visible_to(&read.task, caller) => return Err(ApiError::NotFound("no such task")),
                Ok(Some(read)) if read.task.status.is_final() || timed_out => return Ok(read),
                Ok(Some(_)) => {}
                Ok(None) => return Err(ApiError::NotFound("no such task")),
                // The database is away: keep waiting for the listener to come back (it wakes us), and
                // only give up at the deadline.
                Err(ApiError::Unavailable) if !timed_out => {
                    tracing::warn!(task_id = %subscription.id(), "long-poll read failed, waiting for the database");
                }
                Err(err) => return Err(err),
            }
            if slot.is_none() {
                slot = Some(state.long_polls.take(caller.id, state.config.http.max_long_polls_per_user, WaitKind::LongPoll)?);
            }
            woken(&mut subscription, deadline, &state.stopping).await;
        }
    }
}

/// Returns once the task is final (or the listener reconnected), at `deadline`, or when the server
/// begins to stop.
async fn woken(subscription: &mut TaskSubscription, deadline: Instant, stopping: &CancellationToken) {
    tokio::select! {
        _ = subscription.finished() => {}
        _ = tokio::time::sleep_until(deadline) => {}
        _ = stopping.cancelled() => {}
    }
}
