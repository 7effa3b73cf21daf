//! Undo: putting back exactly the item changes one task made.
//!
//! Every change a task makes to an item is recorded with the row before and after it (the
//! `item_changes` table, written by a trigger in the transaction of the change). Undoing task T
//! reverts each item T changed to the state before T's first change of it: an item T created is
//! deleted, one it changed gets its previous values, one it completed is open again, one it deleted
//! is back. It is refused when any of those items was changed since by something else (its row no
//! longer matches T's last change of it), because putting back the old values would silently drop
//! that later change.
//!
//! Its message is in the language of the undone task's sentence.
//!
//! The undo is itself a task of the item's owner, with a journal step (`undo`) and a verdict, and
//! its changes are recorded like any other, so an undo can be undone in turn.

use chrono::Utc;
use serde_json::{Value, json};
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::store::{count_live_items, delete_item, lock_user_items, restore_item};
use crate::{
    phrases::{
        Language,
        replies::{Replies, Reverted},
    },
    domain::{
        task::{ResultType, TaskPriority, TaskRecord, TaskStatus, Verdict},
        user::User,
    },
    store::{
        ending::{Ending, end_task},
        steps::{Step, StepKind, insert_step},
        tasks::{TaskRead, query_tasks},
    },
};

/// The name of the undo task's journal step.
pub const UNDO_STEP: &str = "undo";

/// What an undo request found.
#[derive(Debug)]
pub enum UndoOutcome {
    /// The changes were reverted; the undo task, finished (with its journal: the undo's step).
    Undone(Box<TaskRead>),
    /// No such task, or one of another user (for a caller who is not an admin).
    NotFound,
    /// The task has not finished yet.
    NotFinished(TaskStatus),
    /// The task changed no item.
    NothingToUndo,
    /// The task was undone already, by this undo task.
    AlreadyUndone(Uuid),
    /// These items (titles) were changed after the task changed them.
    ChangedSince(Vec<String>),
    /// Bringing the deleted items back would pass the owner's item quota.
    OverQuota(u32),
}

impl UndoOutcome {
    /// A refused undo as the API answers it: the error code and its message, in `language` (the
    /// undone task's sentence's). `None` for an undo done or a task not found.
    pub fn refusal(&self, language: Language) -> Option<(&'static str, String)> {
        let say = Replies(language);
        Some(match self {
            UndoOutcome::Undone(_) | UndoOutcome::NotFound => return None,
            UndoOutcome::NotFinished(status) => ("task_not_finished", say.undo_not_finished(status.as_str())),
            UndoOutcome::NothingToUndo => ("nothing_to_undo", say.nothing_to_undo()),
            UndoOutcome::AlreadyUndone(undo) => ("already_undone", say.already_undone(&undo.to_string())),
            UndoOutcome::ChangedSince(titles) => ("changed_since", say.changed_since(titles)),
            UndoOutcome::OverQuota(max) => ("item_quota", say.undo_over_quota(*max)),
        })
    }
}

/// One item a task changed: its state before the task's first change, and whether it has been
/// changed since the task's last change.
struct Reversal {
    item_id: Uuid,
    before: Option<Value>,
    title: String,
    deleted_now: bool,
    changed_since: bool,
}

/// The task an undo reverts, as the undo reads it.
struct Undone {
    user_id: Uuid,
    status: TaskStatus,
    input_text: String,
    time_zone: String,
    currency: String,
}

/// Undoes task `target` for `caller` (its owner, or an admin). Runs in one transaction, under the
/// owner's item lock like every other writer of their items.
pub async fn undo_task(pool: &PgPool, target: Uuid, caller: &User, max_items: u32) -> Result<UndoOutcome, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let (task, reversals) = match undoable(&mut tx, target, caller, max_items).await? {
        Ok(found) => found,
        Err(refused) => return Ok(refused),
    };
    let undo_id = Uuid::now_v7();
    query_tasks!(
        "INSERT INTO quick_action_tasks
           (id, user_id, input_text, status, started_at, timeout_seconds, reference_time, time_zone, currency, undoes, attempts)
         VALUES ($1, $2, $3, 'processing', now(), 30, now(), $4, $5, $6, 1)
         RETURNING ",
        "",
        undo_id,
        task.user_id,
        format!("undo: {}", task.input_text),
        task.time_zone,
        task.currency,
        target,
    )
    .fetch_one(&mut *tx)
    .await?;

    let started_at = Utc::now();
    let replies = Replies(Language::of(&task.input_text));
    let (items, done) = revert(&mut tx, task.user_id, undo_id, &reversals, replies).await?;
    let message = replies.undid(&task.input_text, &done);
    insert_step(&mut *tx, &undo_step(undo_id, target, &items, started_at)).await?;
    let verdict = Verdict { result_type: ResultType::ActionCompleted, items: Some(items), ..Verdict::error(message, None) };
    let ended = end_task(&mut *tx, undo_id, None, Ending::Finished(verdict)).await?;
    tx.commit().await?;
    Ok(UndoOutcome::Undone(Box::new(ended.expect("the undo task was created unfinished in this transaction"))))
}

/// Whether task `target` can be undone for `caller` now, and if so the task and its reversals, in
/// the order it first changed each item. Takes the task's row lock and its owner's item lock.
async fn undoable(
    tx: &mut Transaction<'_, Postgres>,
    target: Uuid,
    caller: &User,
    max_items: u32,
) -> Result<Result<(Undone, Vec<Reversal>), UndoOutcome>, sqlx::Error> {
    let task = sqlx::query_as!(
        Undone,
        r#"SELECT user_id, status AS "status: TaskStatus", input_text, time_zone, currency
           FROM quick_action_tasks WHERE id = $1 FOR UPDATE"#,
        target
    )
    .fetch_optional(&mut **tx)
    .await?;
    let Some(task) = task.filter(|t| t.user_id == caller.id || caller.is_admin) else { return Ok(Err(UndoOutcome::NotFound)) };
    if !task.status.is_final() {
        return Ok(Err(UndoOutcome::NotFinished(task.status)));
    }
    let owner = task.user_id;
    lock_user_items(&mut **tx, owner).await?;
    if let Some(undo) = sqlx::query_scalar!("SELECT id FROM quick_action_tasks WHERE undoes = $1", target).fetch_optional(&mut **tx).await? {
        return Ok(Err(UndoOutcome::AlreadyUndone(undo)));
    }
    let reversals = sqlx::query_as!(
        Reversal,
        r#"WITH mine AS (
             SELECT item_id, (array_agg(before ORDER BY id))[1] AS before, (array_agg(after ORDER BY id DESC))[1] AS after,
                    min(id) AS first
             FROM item_changes WHERE task_id = $1 GROUP BY item_id
           )
           SELECT m.item_id AS "item_id!", m.before, i.title, i.deleted_at IS NOT NULL AS "deleted_now!",
                  (i.updated_at, i.deleted_at) IS DISTINCT FROM
                      ((m.after->>'updated_at')::timestamptz, (m.after->>'deleted_at')::timestamptz) AS "changed_since!"
           FROM mine m JOIN items i ON i.id = m.item_id
           ORDER BY m.first"#,
        target
    )
    .fetch_all(&mut **tx)
    .await?;
    if reversals.is_empty() {
        return Ok(Err(UndoOutcome::NothingToUndo));
    }
    let changed: Vec<String> = reversals.iter().filter(|r| r.changed_since).map(|r| r.title.clone()).collect();
    if !changed.is_empty() {
        return Ok(Err(UndoOutcome::ChangedSince(changed)));
    }
    let revived = reversals.iter().filter(|r| r.deleted_now && r.before.as_ref().is_some_and(|b| b["deleted_at"].is_null())).count();
    if revived > 0 && count_live_items(&mut **tx, owner).await? + revived as i64 > i64::from(max_items) {
        return Ok(Err(UndoOutcome::OverQuota(max_items)));
    }
    Ok(Ok((task, reversals)))
}

/// Puts each item back as it was before the task (as undo task `undo_id` of `owner`): the items as
/// they are now (a removed one shown as deleted) and a line saying what happened to each.
async fn revert(
    tx: &mut Transaction<'_, Postgres>,
    owner: Uuid,
    undo_id: Uuid,
    reversals: &[Reversal],
    replies: Replies,
) -> Result<(Vec<Value>, Vec<String>), sqlx::Error> {
    let mut items = Vec::new();
    let mut done = Vec::new();
    for reversal in reversals {
        let (record, what) = match &reversal.before {
            // Created by the task: delete it (unless the task deleted it again itself).
            None if reversal.deleted_now => (None, Reverted::Removed),
            None => (delete_item(&mut **tx, owner, reversal.item_id, Some(undo_id)).await?, Reverted::Removed),
            Some(before) => {
                let what = match (reversal.deleted_now, before["deleted_at"].is_null()) {
                    (true, true) => Reverted::BroughtBack,
                    (false, false) => Reverted::Removed,
                    _ => Reverted::Restored,
                };
                (restore_item(&mut **tx, owner, reversal.item_id, before, undo_id).await?, what)
            }
        };
        if let Some(record) = record {
            done.push(replies.reverted(what, &record.title));
            // An item the undo took away is shown as deleted, as a delete's verdict shows it.
            items.push(if what == Reverted::Removed { record.to_json_deleted() } else { record.to_json() });
        }
    }
    Ok((items, done))
}

/// The undo task's one journal step: which task it undid and the items as it left them.
fn undo_step(undo_id: Uuid, target: Uuid, items: &[Value], started_at: chrono::DateTime<Utc>) -> Step {
    let finished_at = Utc::now();
    Step {
        task_id: undo_id,
        seq: 0,
        kind: StepKind::ToolCall,
        name: UNDO_STEP.into(),
        tool_call_id: None,
        arguments: Some(json!({ "task_id": target })),
        result: Some(json!({ "items": items })),
        ok: true,
        error: None,
        input_tokens: 0,
        output_tokens: 0,
        cached_tokens: 0,
        cost_nanos: 0,
        latency_ms: (finished_at - started_at).num_milliseconds().clamp(0, i64::from(i32::MAX)) as i32,
        started_at,
        finished_at,
        attempt: 1,
    }
}
