//! Queries on quick-action tasks: reading, history, and the worker's lease and journal writes (the
//! queue's fetch, which claims, is [`crate::queue`]'s).
//! How a task ends (finish, error, timeout, cancel, give-up) is [`super::ending`]'s. Every state
//! change also notifies waiters (see [`crate::notify`]) in the same transaction, so a long-polling
//! client hears of it the moment it commits.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor, PgPool, Row};
use uuid::Uuid;

use super::steps::{Step, steps_insert};
use crate::{
    db::like_pattern,
    domain::task::{ResultType, TaskPriority, TaskRecord, TaskStatus},
};

/// `query_as!` into [`TaskRecord`] with the record's one column list between `$before` (a literal,
/// or several joined by `+`) and `$after`. The query macros take a concatenation of literals
/// (`"a" + "b"`), not `concat!`, so the list lives here once, with its type overrides, instead of
/// being copied into every query. (The SQL functions answer the table's row type, read by name
/// through `TaskRecord`'s `FromRow`: `quickact_shared::schema`.)
macro_rules! query_tasks {
    ($before:literal $(+ $more:literal)*, $after:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            TaskRecord,
            $before $(+ $more)* + r#"id, user_id, input_text, status AS "status: TaskStatus", result_type AS "result_type: ResultType", result,
                  created_at, started_at, completed_at, input_tokens, output_tokens, cached_tokens, cost_nanos,
                  currency, model_used, timeout_seconds, idempotency_key, reference_time, time_zone, attempts, undoes,
                  priority AS "priority: TaskPriority", trace_parent, reply_to"# + $after
            $(, $arg)*
        )
    };
}
pub(crate) use query_tasks;

pub async fn find_by_idempotency_key(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    key: &str,
) -> Result<Option<TaskRecord>, sqlx::Error> {
    query_tasks!(
        "SELECT ",
        " FROM quick_action_tasks WHERE user_id = $1 AND idempotency_key = $2",
        user_id,
        key,
    )
    .fetch_optional(db)
    .await
}

/// Tasks of a user that are not finished yet, as the slots count them (for the 429 message).
pub async fn count_active(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT coalesce(sum(used), 0)::bigint AS "count!" FROM task_slots WHERE user_id = $1"#, user_id)
        .fetch_one(db)
        .await
}

pub async fn find_task(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<TaskRecord>, sqlx::Error> {
    query_tasks!("SELECT ", " FROM quick_action_tasks WHERE id = $1",
        id
    )
    .fetch_optional(db)
    .await
}

/// The replies to task `id`'s question, oldest first (see `quick_action_tasks.reply_to`).
pub async fn reply_ids(db: impl PgExecutor<'_>, id: Uuid) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!("SELECT id FROM quick_action_tasks WHERE reply_to = $1 ORDER BY created_at, id", id).fetch_all(db).await
}

/// [`find_task`] for several tasks in one statement: the ones that exist, in no particular order.
pub async fn find_tasks(db: impl PgExecutor<'_>, ids: &[Uuid]) -> Result<Vec<TaskRecord>, sqlx::Error> {
    query_tasks!("SELECT ", " FROM quick_action_tasks WHERE id = ANY($1)", ids).fetch_all(db).await
}

/// A task as read for a client: with its whole journal, in order, when it was final as read
/// (`None` while it runs: an unfinished task's steps are shown only once made durable, see
/// [`super::steps::steps_to_show`]).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TaskRead {
    #[sqlx(flatten)]
    pub task: TaskRecord,
    #[sqlx(json(nullable))]
    pub journal: Option<Vec<Step>>,
}

/// [`find_tasks`] with the journal of each that is final, in one statement (a verdict is read
/// with its journal, and a read at a verdict is the commonest).
pub async fn read_tasks(db: impl PgExecutor<'_>, ids: &[Uuid]) -> Result<Vec<TaskRead>, sqlx::Error> {
    sqlx::query_as(
        "SELECT t.*,
                CASE WHEN t.status NOT IN ('pending', 'processing') THEN
                    (SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY s.seq), '[]') FROM quick_action_journal s WHERE s.task_id = t.id)
                END AS journal
         FROM quick_action_tasks t WHERE t.id = ANY($1)",
    )
    .bind(ids)
    .fetch_all(db)
    .await
}

/// `tasks` as read for a client ([`TaskRead`]): each final one with its journal, the journals in
/// one statement (a page of a listing).
pub async fn with_journals(db: impl PgExecutor<'_>, tasks: Vec<TaskRecord>) -> Result<Vec<TaskRead>, sqlx::Error> {
    let finished: Vec<Uuid> = tasks.iter().filter(|task| task.status.is_final()).map(|task| task.id).collect();
    let mut journals = if finished.is_empty() { HashMap::new() } else { super::steps::journals_of(db, &finished).await? };
    Ok(tasks
        .into_iter()
        .map(|task| TaskRead { journal: task.status.is_final().then(|| journals.remove(&task.id).unwrap_or_default()), task })
        .collect())
}

/// A position in a newest-first listing: the last row of the previous page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cursor {
    pub created_at: DateTime<Utc>,
    pub id: Uuid,
}

impl Cursor {
    pub fn of(task: &TaskRecord) -> Self {
        Cursor { created_at: task.created_at, id: task.id }
    }

    /// Opaque text for clients.
    pub fn encode(&self) -> String {
        use base64::Engine;
        let raw = format!("{}|{}", self.created_at.timestamp_micros(), self.id);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    }

    pub fn decode(text: &str) -> Option<Self> {
        use base64::Engine;
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text.trim()).ok()?;
        let raw = String::from_utf8(raw).ok()?;
        let (micros, id) = raw.split_once('|')?;
        Some(Cursor { created_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?, id: id.parse().ok()? })
    }
}

/// Filters of a task listing; `None` means "any".
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    pub user_id: Option<Uuid>,
    pub status: Option<TaskStatus>,
    pub result_type: Option<ResultType>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    /// Case-insensitive substring of the input text.
    pub text: Option<String>,
    /// The model that served the task (`model_used`).
    pub model: Option<String>,
}

/// One page of a task listing, as the API and the admin page show it.
#[derive(Debug)]
pub struct TaskListing {
    /// The page's tasks, newest first.
    pub tasks: Vec<TaskRecord>,
    /// How many tasks match across all pages.
    pub total: i64,
    /// Where the next page starts; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// The page of `limit` tasks matching `filter` after `cursor`, with the total and the next cursor.
pub async fn page_of_tasks(pool: &PgPool, filter: &TaskFilter, cursor: Option<Cursor>, limit: i64) -> Result<TaskListing, sqlx::Error> {
    let mut tasks = list_tasks(pool, filter, cursor, limit).await?;
    let total = count_tasks(pool, filter).await?;
    let more = tasks.len() > limit as usize;
    tasks.truncate(limit as usize);
    let next_cursor = if more { tasks.last().map(|last| Cursor::of(last).encode()) } else { None };
    Ok(TaskListing { tasks, total, next_cursor })
}

/// One page of tasks, newest first, after `cursor`. Fetches `limit + 1` rows so the caller knows
/// whether another page exists.
pub async fn list_tasks(
    db: impl PgExecutor<'_>,
    filter: &TaskFilter,
    cursor: Option<Cursor>,
    limit: i64,
) -> Result<Vec<TaskRecord>, sqlx::Error> {
    let pattern = filter.text.as_deref().map(like_pattern);
    query_tasks!(
        "SELECT ",
        " FROM quick_action_tasks
           WHERE ($1::uuid IS NULL OR user_id = $1)
             AND ($2::text IS NULL OR status = $2)
             AND ($3::text IS NULL OR result_type = $3)
             AND ($4::timestamptz IS NULL OR created_at >= $4)
             AND ($5::timestamptz IS NULL OR created_at < $5)
             AND ($6::text IS NULL OR input_text ILIKE $6)
             AND ($7::timestamptz IS NULL OR (created_at, id) < ($7, $8::uuid))
             AND ($10::text IS NULL OR model_used = $10)
           ORDER BY created_at DESC, id DESC
           LIMIT $9",
        filter.user_id,
        filter.status as Option<TaskStatus>,
        filter.result_type as Option<ResultType>,
        filter.since,
        filter.until,
        pattern,
        cursor.map(|c| c.created_at),
        cursor.map(|c| c.id),
        limit + 1,
        filter.model,
    )
    .fetch_all(db)
    .await
}

/// Number of tasks matching `filter` (all pages).
pub async fn count_tasks(db: impl PgExecutor<'_>, filter: &TaskFilter) -> Result<i64, sqlx::Error> {
    let pattern = filter.text.as_deref().map(like_pattern);
    let row = sqlx::query!(
        r#"SELECT count(*) AS "count!" FROM quick_action_tasks
           WHERE ($1::uuid IS NULL OR user_id = $1)
             AND ($2::text IS NULL OR status = $2)
             AND ($3::text IS NULL OR result_type = $3)
             AND ($4::timestamptz IS NULL OR created_at >= $4)
             AND ($5::timestamptz IS NULL OR created_at < $5)
             AND ($6::text IS NULL OR input_text ILIKE $6)
             AND ($7::text IS NULL OR model_used = $7)"#,
        filter.user_id,
        filter.status as Option<TaskStatus>,
        filter.result_type as Option<ResultType>,
        filter.since,
        filter.until,
        pattern,
        filter.model,
    )
    .fetch_one(db)
    .await?;
    Ok(row.count)
}


/// Extends `holder`'s lease; false when the task is no longer ours to run (finished, cancelled, or
/// taken over after our lease lapsed).
pub async fn renew_lease(db: impl PgExecutor<'_>, id: Uuid, holder: &str, lease_secs: f64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE quick_action_tasks SET lease_expires_at = now() + make_interval(secs => $3)
         WHERE id = $1 AND lease_owner = $2 AND status = 'processing'",
        id,
        holder,
        lease_secs,
    )
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Locks the task row for a change made on its behalf and says whether `holder` may still act for
/// it. Called first in every transaction that writes a journal step or a tool's change, so a cancel
/// or a takeover that commits first wins and nothing is written after it.
pub async fn lock_for_holder(db: impl PgExecutor<'_>, id: Uuid, holder: &str) -> Result<HolderCheck, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT status AS "status: TaskStatus", lease_owner FROM quick_action_tasks WHERE id = $1 FOR UPDATE"#,
        id
    )
    .fetch_optional(db)
    .await?;
    Ok(HolderCheck::of(row.map(|row| (row.status, row.lease_owner)), holder))
}

/// Opens `savepoint` and, in the same round trip, [`lock_for_holder`] without waiting: `None` when
/// another transaction holds the task's row (an ending, a cancel, a lease renewal), and then the
/// savepoint has failed and must be rolled back to. For a transaction that already holds locks
/// others may wait on while holding this row (see `worker/src/groups.rs`), so it never waits in a
/// cycle; one round trip, as each of a group's runs makes both while it holds its users' locks.
/// `savepoint` is a name the caller made (letters, digits, `_`): it is sent as written.
pub async fn try_lock_in_savepoint(conn: &mut PgConnection, savepoint: &str, id: Uuid, holder: &str) -> Result<Option<HolderCheck>, sqlx::Error> {
    assert!(savepoint.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "a savepoint name is an identifier");
    // A simple query (no parameters: `id` is a UUID, written as one), so both statements go in
    // one message.
    let sql = format!("SAVEPOINT {savepoint}; SELECT status, lease_owner FROM quick_action_tasks WHERE id = '{id}' FOR UPDATE NOWAIT");
    let rows = match sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).fetch_all(conn).await {
        Ok(rows) => rows,
        // lock_not_available
        Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some("55P03") => return Ok(None),
        Err(err) => return Err(err),
    };
    let row = match rows.first() {
        Some(row) => Some((row.try_get::<TaskStatus, _>("status")?, row.try_get::<Option<String>, _>("lease_owner")?)),
        None => None,
    };
    Ok(Some(HolderCheck::of(row, holder)))
}

/// Appends `steps` to task `id`'s journal and adds `usage` to its totals if `holder` still runs the
/// task, in one statement: on a connection of its own, one round trip and one commit where a
/// transaction that locks the row first ([`lock_for_holder`]), then writes, takes five. Says who
/// runs the task; when that is not `holder`, nothing is written.
pub async fn record_if_holder(
    db: impl PgExecutor<'_>,
    id: Uuid,
    holder: &str,
    steps: &[Step],
    usage: Option<&Usage>,
) -> Result<HolderCheck, sqlx::Error> {
    let added = Added::of(usage);
    // The main query reads `task`, which locks the row (as `lock_for_holder` does); the writes,
    // which nothing reads, run after it, each only when `owned` holds a row. A paid turn's cost
    // goes to its user's spend of the day too (see `super::cost_budgets`).
    let row = steps_insert!(
        r#"WITH task AS (
             SELECT status, lease_owner, user_id FROM quick_action_tasks WHERE id = $2 FOR UPDATE
           ), owned AS (
             SELECT user_id FROM task WHERE status = 'processing' AND lease_owner = $3
           ), usage AS (
             UPDATE quick_action_tasks
             SET input_tokens = input_tokens + $4, output_tokens = output_tokens + $5,
                 cached_tokens = cached_tokens + $6, cost_nanos = cost_nanos + $7, model_used = $8
             WHERE id = $2 AND $8::text IS NOT NULL AND EXISTS (SELECT FROM owned)
           ), spend AS (
             INSERT INTO user_spend AS s (user_id, day, cost_nanos)
             SELECT user_id, (now() AT TIME ZONE 'UTC')::date, $7 FROM owned WHERE $7 > 0
             ON CONFLICT (user_id, day) DO UPDATE SET cost_nanos = s.cost_nanos + excluded.cost_nanos
           ), journal AS ("#,
        r#" WHERE EXISTS (SELECT FROM owned)
           )
           SELECT status AS "status: TaskStatus", lease_owner FROM task"#,
        steps,
        id,
        holder,
        added.input,
        added.output,
        added.cached,
        added.cost_nanos,
        added.model,
    )
    .fetch_optional(db)
    .await?;
    Ok(HolderCheck::of(row.map(|row| (row.status, row.lease_owner)), holder))
}

/// Records the outcome of a journal step written earlier without one (an external tool's call,
/// whose step is written before the call is made, see `worker/src/mcp`), in place, if `holder`
/// still runs the task, in one statement; says who runs it. A run that was paused or replaced
/// meanwhile records nothing: the new holder makes the call again, with the same key.
pub async fn complete_step_if_holder(db: impl PgExecutor<'_>, holder: &str, step: &Step) -> Result<HolderCheck, sqlx::Error> {
    let row = sqlx::query!(
        r#"WITH task AS (
             SELECT status, lease_owner FROM quick_action_tasks WHERE id = $1 FOR UPDATE
           ), done AS (
             UPDATE quick_action_steps
             SET result = $3, ok = $4, error = $5, latency_ms = $6, finished_at = $7, attempt = $8
             WHERE task_id = $1 AND seq = $2
               AND EXISTS (SELECT FROM task WHERE status = 'processing' AND lease_owner = $9)
           )
           SELECT status AS "status: TaskStatus", lease_owner FROM task"#,
        step.task_id,
        step.seq,
        step.result,
        step.ok,
        step.error,
        step.latency_ms,
        step.finished_at,
        step.attempt,
        holder,
    )
    .fetch_optional(db)
    .await?;
    Ok(HolderCheck::of(row.map(|row| (row.status, row.lease_owner)), holder))
}

/// Whether a worker may still act for a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HolderCheck {
    Owned,
    /// Cancelled by the user or finished; carries the status.
    Finished(TaskStatus),
    /// Our lease lapsed and another worker claimed the task.
    TakenOver,
    Gone,
}

impl HolderCheck {
    /// What a locked task row (its status and lease holder; `None`: no such task) says `holder` may do.
    fn of(row: Option<(TaskStatus, Option<String>)>, holder: &str) -> HolderCheck {
        match row {
            None => HolderCheck::Gone,
            Some((status, _)) if status != TaskStatus::Processing => HolderCheck::Finished(status),
            Some((_, lease_owner)) if lease_owner.as_deref() != Some(holder) => HolderCheck::TakenOver,
            Some(_) => HolderCheck::Owned,
        }
    }
}

/// Model usage to add to a task's totals: one turn's, or several turns' summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    /// The model the task asked for (the last one, when turns are summed).
    pub model: String,
    pub input: i64,
    pub output: i64,
    pub cached: i64,
    pub cost_nanos: i64,
}

/// What a statement adds to a task's totals for an optional [`Usage`]: zeros, and no model, for
/// none.
pub(crate) struct Added<'u> {
    pub input: i64,
    pub output: i64,
    pub cached: i64,
    pub cost_nanos: i64,
    pub model: Option<&'u str>,
}

impl<'u> Added<'u> {
    pub fn of(usage: Option<&'u Usage>) -> Self {
        match usage {
            Some(u) => Added { input: u.input, output: u.output, cached: u.cached, cost_nanos: u.cost_nanos, model: Some(&u.model) },
            None => Added { input: 0, output: 0, cached: 0, cost_nanos: 0, model: None },
        }
    }
}

impl Usage {
    /// A turn that used no tokens and cost nothing (the local provider's).
    pub fn is_nothing(&self) -> bool {
        self.input == 0 && self.output == 0 && self.cached == 0 && self.cost_nanos == 0
    }

    /// This usage and a later turn's: the sums, and the later turn's model.
    pub fn then(self, later: Usage) -> Usage {
        Usage {
            model: later.model,
            input: self.input + later.input,
            output: self.output + later.output,
            cached: self.cached + later.cached,
            cost_nanos: self.cost_nanos + later.cost_nanos,
        }
    }
}

/// Adds `usage` to the task's totals and records its model as the one used; a cost is added to the
/// user's spend of the day too (see `super::cost_budgets`).
pub async fn add_usage(db: impl PgExecutor<'_>, id: Uuid, usage: &Usage) -> Result<(), sqlx::Error> {
    if usage.cost_nanos == 0 {
        // A local run's first turn (it records the model): nothing to add to the spend, and the
        // statement is planned at each execution.
        sqlx::query!(
            "UPDATE quick_action_tasks
             SET input_tokens = input_tokens + $2, output_tokens = output_tokens + $3,
                 cached_tokens = cached_tokens + $4, cost_nanos = cost_nanos + $5, model_used = $6
             WHERE id = $1",
            id,
            usage.input,
            usage.output,
            usage.cached,
            usage.cost_nanos,
            usage.model,
        )
        .execute(db)
        .await?;
        return Ok(());
    }
    sqlx::query!(
        "WITH task AS (
           UPDATE quick_action_tasks
           SET input_tokens = input_tokens + $2, output_tokens = output_tokens + $3,
               cached_tokens = cached_tokens + $4, cost_nanos = cost_nanos + $5, model_used = $6
           WHERE id = $1
           RETURNING user_id
         )
         INSERT INTO user_spend AS s (user_id, day, cost_nanos)
         SELECT user_id, (now() AT TIME ZONE 'UTC')::date, $5 FROM task WHERE $5 > 0
         ON CONFLICT (user_id, day) DO UPDATE SET cost_nanos = s.cost_nanos + excluded.cost_nanos",
        id,
        usage.input,
        usage.output,
        usage.cached,
        usage.cost_nanos,
        usage.model,
    )
    .execute(db)
    .await?;
    Ok(())
}
