//! A submitted task: reading it, optionally waiting for its verdict (`GET /api/quick-action/{id}`,
//! MCP's `get_quick_action` and the wait of its `quick_action`), and undoing the item changes it
//! made (`POST /api/quick-action/{id}/undo`, the admin page's undo button), or cancelling it while
//! it runs (`POST /api/quick-action/{id}/cancel`, the admin page's cancel button).

use std::time::Duration;

use quickact_shared::{
    domain::{task::ResultType, user::User},
    phrases::Language,
    planner::undo::{self, UndoOutcome},
    store::{
        ending::{self, CancelOutcome},
        tasks::{self, TaskRead},
    },
};
use uuid::Uuid;

use crate::{
    error::ApiError,
    longpoll::{visible_to, wait_until_final},
    state::AppState,
    views::{TaskView, TaskWithSteps},
};

/// Longest a read waits for a verdict; a longer wait is cut to it.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// Which task to read, and how long to wait for its verdict.
#[derive(Debug)]
pub struct ReadTask {
    pub id: Uuid,
    /// `None` reads the task at once; else the read waits until the task is final, at most this
    /// long (and at most [`MAX_WAIT`]), and answers with the task as it is then.
    pub wait: Option<Duration>,
}

/// The task with its journal (and, for a question, the replies to it). 404 when it is not the
/// caller's (an admin reads anyone's); 429 past the caller's bound on open waits.
pub async fn read_task(state: &AppState, user: &User, read: ReadTask) -> Result<TaskWithSteps, ApiError> {
    let read = match read.wait {
        Some(wait) => wait_until_final(state, user, read.id, wait.min(MAX_WAIT)).await?,
        None => visible_task(state, user, read.id).await?,
    };
    let (task, journal) = state.reads.journal(read).await?;
    // Only a question can have replies: other tasks pay no read for them.
    let replies = match task.result_type {
        Some(ResultType::NeedClarification) => tasks::reply_ids(&state.pool, task.id).await?,
        _ => Vec::new(),
    };
    Ok(TaskWithSteps::new(task, journal, replies))
}

/// Task `id` as it is now (its journal not read), when the caller may see it; 404 otherwise.
pub async fn visible_task(state: &AppState, user: &User, id: Uuid) -> Result<TaskRead, ApiError> {
    state.reads.task(id).await?.filter(|read| visible_to(&read.task, user)).ok_or(ApiError::NotFound("no such task"))
}

/// Cancels task `id` while it is pending or running: a worker running it stops before its next
/// model turn or tool commit (see `ending::cancel_task`). 404 when it is not the caller's (an admin
/// may cancel anyone's); 409 `task_finished` when it has ended already.
pub async fn cancel_task(state: &AppState, user: &User, id: Uuid) -> Result<TaskView, ApiError> {
    let owner = (!user.is_admin).then_some(user.id);
    match ending::cancel_task(&state.pool, id, owner).await? {
        CancelOutcome::Cancelled(ended) => {
            quickact_shared::metrics::task_finished(&ended.task);
            tracing::info!(task_id = %id, cancelled_by = %user.id, "quick action cancelled");
            Ok(TaskView::from(ended))
        }
        CancelOutcome::AlreadyFinal(task) => Err(ApiError::Conflict {
            code: "task_finished",
            message: format!("the task already finished with status {}", task.status),
        }),
        CancelOutcome::NotFound => Err(ApiError::NotFound("no such task")),
    }
}

/// Undoes the item changes task `id` made: created items are deleted, changed ones get their
/// previous values, completed ones are open again, deleted ones come back. The undo is itself a
/// task, answered finished. 404 when it is not the caller's (an admin may undo anyone's); 409 when
/// there is nothing (left) to undo or an item changed again since, said in the sentence's language.
pub async fn undo_task(state: &AppState, user: &User, id: Uuid) -> Result<TaskView, ApiError> {
    match undo::undo_task(&state.pool, id, user, state.config.planner.max_items_per_user).await? {
        UndoOutcome::Undone(task) => {
            quickact_shared::metrics::task_submitted();
            quickact_shared::metrics::task_finished(&task.task);
            tracing::info!(task_id = %task.task.id, undoes = %id, "quick action undone");
            Ok(TaskView::from(*task))
        }
        UndoOutcome::NotFound => Err(ApiError::NotFound("no such task")),
        refused => {
            // The refusal is read by the person who wrote the sentence: in its language.
            let sentence = tasks::find_task(&state.pool, id).await?.map(|task| task.input_text).unwrap_or_default();
            let (code, message) = refused.refusal(Language::of(&sentence)).expect("a refused undo");
            Err(ApiError::Conflict { code, message })
        }
    }
}
