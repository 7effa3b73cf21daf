//! Looking back at what tasks did to items, for the people who read a task or an item (the admin
//! page): which tasks created and changed an item, whether an item a verdict named is deleted now,
//! and whether a task has changes left to undo.
//!
//! It reads `item_changes`, the record of every change a task made (with the row before it and the
//! version after it), which undo also reads ([`super::undo`]). Changes made without a task (the
//! item routes) are not recorded there; an item whose version moved past the last recorded change
//! was changed that way.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

/// What one task did to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Changed,
    Deleted,
    /// Brought back after a deletion (an undo).
    Restored,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Changed => "changed",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Restored => "restored",
        }
    }
}

/// One recorded change of an item, with the task that made it.
#[derive(Debug, Clone)]
pub struct ItemChange {
    pub kind: ChangeKind,
    /// When the change was made (the item's version after it).
    pub at: Option<DateTime<Utc>>,
    pub task_id: Uuid,
    pub task_text: String,
    /// The change was an undo of this task.
    pub undoes: Option<Uuid>,
}

/// The changes of item `item_id` (of `user_id`) that tasks made, oldest first.
pub async fn changes_of_item(db: impl PgExecutor<'_>, user_id: Uuid, item_id: Uuid) -> Result<Vec<ItemChange>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT c.task_id, t.input_text, t.undoes,
                  c.before IS NULL AS "created!",
                  c.before IS NOT NULL AND c.before->>'deleted_at' IS NOT NULL AS "was_deleted!",
                  c.after->>'deleted_at' IS NOT NULL AS "is_deleted!",
                  (c.after->>'updated_at')::timestamptz AS at
           FROM item_changes c
           JOIN items i ON i.id = c.item_id
           JOIN quick_action_tasks t ON t.id = c.task_id
           WHERE c.item_id = $1 AND i.user_id = $2
           ORDER BY c.id"#,
        item_id,
        user_id
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| ItemChange {
            kind: match (row.created, row.was_deleted, row.is_deleted) {
                (true, _, _) => ChangeKind::Created,
                (false, false, true) => ChangeKind::Deleted,
                (false, true, false) => ChangeKind::Restored,
                _ => ChangeKind::Changed,
            },
            at: row.at,
            task_id: row.task_id,
            task_text: row.input_text,
            undoes: row.undoes,
        })
        .collect())
}

/// Where an item stands now, beside its recorded changes.
#[derive(Debug, Clone)]
pub struct Provenance {
    pub deleted_at: Option<DateTime<Utc>>,
    /// The item's version moved after the last change a task made (or no task ever changed it):
    /// it was last written through the item routes.
    pub changed_without_a_task: bool,
}

/// Where item `item_id` of `user_id` stands; `None` for an unknown item or another user's.
pub async fn provenance(db: impl PgExecutor<'_>, user_id: Uuid, item_id: Uuid) -> Result<Option<Provenance>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT i.deleted_at,
                  (i.updated_at, i.deleted_at) IS DISTINCT FROM (
                      SELECT ((c.after->>'updated_at')::timestamptz, (c.after->>'deleted_at')::timestamptz)
                      FROM item_changes c WHERE c.item_id = i.id ORDER BY c.id DESC LIMIT 1
                  ) AS "changed_without_a_task!"
           FROM items i WHERE i.id = $1 AND i.user_id = $2"#,
        item_id,
        user_id
    )
    .fetch_optional(db)
    .await?;
    Ok(row.map(|row| Provenance { deleted_at: row.deleted_at, changed_without_a_task: row.changed_without_a_task }))
}

/// Which of `ids` (items of `user_id`) are deleted now.
pub async fn deleted_items(db: impl PgExecutor<'_>, user_id: Uuid, ids: &[Uuid]) -> Result<Vec<Uuid>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_scalar!("SELECT id FROM items WHERE id = ANY($1) AND user_id = $2 AND deleted_at IS NOT NULL", ids, user_id)
        .fetch_all(db)
        .await
}

/// What a finished task leaves to undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoState {
    /// How many items the task changed.
    pub changed_items: i64,
    /// The undo that reverted the task already.
    pub undone_by: Option<Uuid>,
}

impl UndoState {
    /// Whether `POST /api/quick-action/{id}/undo` has something to do (it may still refuse when an
    /// item was changed again since).
    pub fn can_undo(&self) -> bool {
        self.changed_items > 0 && self.undone_by.is_none()
    }
}

pub async fn undo_state(db: impl PgExecutor<'_>, task_id: Uuid) -> Result<UndoState, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT (SELECT count(DISTINCT item_id) FROM item_changes WHERE task_id = $1) AS "changed_items!",
                  (SELECT id FROM quick_action_tasks WHERE undoes = $1) AS undone_by"#,
        task_id
    )
    .fetch_one(db)
    .await?;
    Ok(UndoState { changed_items: row.changed_items, undone_by: row.undone_by })
}
