//! What operators read about the service as a whole: outcomes, latency, tokens and cost over a
//! time window (grouped by day, model or user), the queue as it is now, and the workers alive with
//! the tasks they run. Behind `GET /api/admin/stats`, the admin page's stats and `/metrics`.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::domain::task::TaskPriority;

/// What `model_used` says of a task the local provider served (the zero-token fast path, or every
/// task when no model is configured). The worker's local provider records this name.
pub const LOCAL_MODEL: &str = "local";

/// How the outcomes of a window are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// Calendar day of submission in a time zone (`YYYY-MM-DD`).
    Day,
    /// `model_used` (`(none)` for tasks no model served yet).
    Model,
    /// The submitting user (key: the user's id, label: the name).
    User,
}

impl GroupBy {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Day => "day",
            GroupBy::Model => "model",
            GroupBy::User => "user",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "day" => Some(GroupBy::Day),
            "model" => Some(GroupBy::Model),
            "user" => Some(GroupBy::User),
            _ => None,
        }
    }
}

/// Outcomes of the tasks submitted in a window (all of them, or one group's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcomes {
    /// `None` for the totals row; the group's key otherwise.
    pub key: Option<String>,
    /// What to show for the key (a user's name; the key itself for days and models).
    pub label: Option<String>,
    pub tasks: i64,
    pub pending: i64,
    pub processing: i64,
    pub success: i64,
    /// Failed with a `need_clarification` verdict.
    pub clarification: i64,
    /// Failed with an `error` verdict.
    pub error: i64,
    pub timeout: i64,
    pub cancelled: i64,
    /// Finished tasks served by the local provider.
    pub fast_path: i64,
    /// Finished tasks that could have gone to a model: all but undos, which run no model at all.
    pub fast_path_eligible: i64,
    /// POST-to-verdict (created to completed) percentiles of finished tasks, in milliseconds.
    pub latency_ms: Option<Percentiles>,
    /// Start-to-verdict (the run itself) percentiles, in milliseconds.
    pub run_ms: Option<Percentiles>,
    pub input_tokens: i64,
    pub cached_tokens: i64,
    pub output_tokens: i64,
    pub cost_nanos: i64,
}

impl Outcomes {
    pub fn finished(&self) -> i64 {
        self.success + self.clarification + self.error + self.timeout + self.cancelled
    }
}

/// p50 / p95 / p99 of a distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

impl Percentiles {
    fn from_array(values: Option<Vec<f64>>) -> Option<Self> {
        match values.as_deref() {
            Some([p50, p95, p99]) => Some(Percentiles { p50: *p50, p95: *p95, p99: *p99 }),
            _ => None,
        }
    }
}

/// Outcomes of the tasks submitted in `[since, until)`: the totals first, then one row per group
/// (busiest first). Days are calendar days in `time_zone` (an IANA name the caller checked).
pub async fn outcomes(
    db: impl PgExecutor<'_>,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    group_by: GroupBy,
    time_zone: &str,
) -> Result<(Outcomes, Vec<Outcomes>), sqlx::Error> {
    // One scan: GROUPING SETS gives each group's row and the totals row (`is_total`) together.
    let rows = sqlx::query!(
        r#"SELECT grouping(t.key) = 1 AS "is_total!", t.key, max(t.label) AS label,
                  count(*) AS "tasks!",
                  count(*) FILTER (WHERE t.status = 'pending') AS "pending!",
                  count(*) FILTER (WHERE t.status = 'processing') AS "processing!",
                  count(*) FILTER (WHERE t.status = 'success') AS "success!",
                  count(*) FILTER (WHERE t.status = 'failed' AND t.result_type = 'need_clarification') AS "clarification!",
                  count(*) FILTER (WHERE t.status = 'failed' AND t.result_type = 'error') AS "error!",
                  count(*) FILTER (WHERE t.status = 'timeout') AS "timeout!",
                  count(*) FILTER (WHERE t.status = 'cancelled') AS "cancelled!",
                  count(*) FILTER (WHERE t.completed_at IS NOT NULL AND t.model_used = $5) AS "fast_path!",
                  count(*) FILTER (WHERE t.completed_at IS NOT NULL AND t.undoes IS NULL) AS "fast_path_eligible!",
                  percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY t.latency_ms)
                      FILTER (WHERE t.latency_ms IS NOT NULL) AS latency_ms,
                  percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY t.run_ms)
                      FILTER (WHERE t.run_ms IS NOT NULL) AS run_ms,
                  coalesce(sum(t.input_tokens), 0)::bigint AS "input_tokens!",
                  coalesce(sum(t.cached_tokens), 0)::bigint AS "cached_tokens!",
                  coalesce(sum(t.output_tokens), 0)::bigint AS "output_tokens!",
                  coalesce(sum(t.cost_nanos), 0)::bigint AS "cost_nanos!"
           FROM (
             SELECT q.*,
                    CASE $3::text
                      WHEN 'day' THEN to_char(q.created_at AT TIME ZONE $4, 'YYYY-MM-DD')
                      WHEN 'model' THEN coalesce(q.model_used, '(none)')
                      ELSE q.user_id::text
                    END AS key,
                    CASE $3::text
                      WHEN 'day' THEN to_char(q.created_at AT TIME ZONE $4, 'YYYY-MM-DD')
                      WHEN 'model' THEN coalesce(q.model_used, '(none)')
                      ELSE u.name
                    END AS label,
                    extract(epoch FROM q.completed_at - q.created_at)::float8 * 1000 AS latency_ms,
                    extract(epoch FROM q.completed_at - q.started_at)::float8 * 1000 AS run_ms
             FROM quick_action_tasks q JOIN users u ON u.id = q.user_id
             WHERE q.created_at >= $1 AND q.created_at < $2
           ) t
           GROUP BY GROUPING SETS ((t.key), ())"#,
        since,
        until,
        group_by.as_str(),
        time_zone,
        LOCAL_MODEL,
    )
    .fetch_all(db)
    .await?;
    let rows = rows.into_iter().map(|row| {
        let outcome = Outcomes {
            key: row.key,
            label: row.label,
            tasks: row.tasks,
            pending: row.pending,
            processing: row.processing,
            success: row.success,
            clarification: row.clarification,
            error: row.error,
            timeout: row.timeout,
            cancelled: row.cancelled,
            fast_path: row.fast_path,
            fast_path_eligible: row.fast_path_eligible,
            latency_ms: Percentiles::from_array(row.latency_ms),
            run_ms: Percentiles::from_array(row.run_ms),
            input_tokens: row.input_tokens,
            cached_tokens: row.cached_tokens,
            output_tokens: row.output_tokens,
            cost_nanos: row.cost_nanos,
        };
        (row.is_total, outcome)
    });
    Ok(totals_and_groups(rows, group_by))
}

/// The totals row and the groups' rows (`true`: the totals), the groups in the order they read
/// best: days in order, models and users busiest first.
fn totals_and_groups(rows: impl Iterator<Item = (bool, Outcomes)>, group_by: GroupBy) -> (Outcomes, Vec<Outcomes>) {
    let mut totals = Outcomes::default();
    let mut groups = Vec::new();
    for (is_total, outcome) in rows {
        if is_total {
            totals = Outcomes { key: None, label: None, ..outcome };
        } else {
            groups.push(outcome);
        }
    }
    match group_by {
        GroupBy::Day => groups.sort_by(|a, b| a.key.cmp(&b.key)),
        GroupBy::Model | GroupBy::User => groups.sort_by(|a, b| b.tasks.cmp(&a.tasks).then(a.key.cmp(&b.key))),
    }
    (totals, groups)
}

/// Tokens and cost of one model on one day.
#[derive(Debug, Clone, PartialEq)]
pub struct DailyUsage {
    pub day: String,
    pub model: String,
    pub tasks: i64,
    pub input_tokens: i64,
    pub cached_tokens: i64,
    pub output_tokens: i64,
    pub cost_nanos: i64,
}

/// Tokens and cost per model per day (days in `time_zone`) of the tasks submitted in the window,
/// in order of day then model. Tasks no model served are left out.
pub async fn daily_usage(
    db: impl PgExecutor<'_>,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    time_zone: &str,
) -> Result<Vec<DailyUsage>, sqlx::Error> {
    sqlx::query_as!(
        DailyUsage,
        r#"SELECT to_char(created_at AT TIME ZONE $3, 'YYYY-MM-DD') AS "day!", model_used AS "model!",
                  count(*) AS "tasks!",
                  sum(input_tokens)::bigint AS "input_tokens!", sum(cached_tokens)::bigint AS "cached_tokens!",
                  sum(output_tokens)::bigint AS "output_tokens!", sum(cost_nanos)::bigint AS "cost_nanos!"
           FROM quick_action_tasks
           WHERE created_at >= $1 AND created_at < $2 AND model_used IS NOT NULL
           GROUP BY 1, 2 ORDER BY 1, 2"#,
        since,
        until,
        time_zone,
    )
    .fetch_all(db)
    .await
}

/// The queue as it is now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueNow {
    /// Tasks waiting for a worker.
    pub pending: i64,
    /// Tasks a worker is running.
    pub processing: i64,
    /// How long the oldest pending task has waited, in seconds (0 when none waits).
    pub oldest_pending_secs: f64,
}

/// Pending and processing tasks and the age of the oldest pending one (the partial index on
/// unfinished tasks keeps this cheap whatever the history's size).
pub async fn queue_now(db: impl PgExecutor<'_>) -> Result<QueueNow, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT count(*) FILTER (WHERE status = 'pending') AS "pending!",
                  count(*) FILTER (WHERE status = 'processing') AS "processing!",
                  coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'pending')), 0)::float8 AS "oldest_pending_secs!"
           FROM quick_action_tasks WHERE completed_at IS NULL"#
    )
    .fetch_one(db)
    .await?;
    Ok(QueueNow { pending: row.pending, processing: row.processing, oldest_pending_secs: row.oldest_pending_secs })
}

/// One priority's share of the queue now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorityQueueNow {
    pub priority: TaskPriority,
    pub pending: i64,
    pub processing: i64,
    /// How long its oldest pending task has waited, in seconds (0 when none waits).
    pub oldest_pending_secs: f64,
}

/// The queue by priority (a priority with no unfinished task is left out).
pub async fn queue_by_priority(db: impl PgExecutor<'_>) -> Result<Vec<PriorityQueueNow>, sqlx::Error> {
    sqlx::query_as!(
        PriorityQueueNow,
        r#"SELECT priority AS "priority!: TaskPriority",
                  count(*) FILTER (WHERE status = 'pending') AS "pending!",
                  count(*) FILTER (WHERE status = 'processing') AS "processing!",
                  coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'pending')), 0)::float8 AS "oldest_pending_secs!"
           FROM quick_action_tasks WHERE completed_at IS NULL
           GROUP BY priority ORDER BY priority"#
    )
    .fetch_all(db)
    .await
}

/// One user's share of the queue now.
#[derive(Debug, Clone, PartialEq)]
pub struct UserQueueNow {
    pub user_id: Uuid,
    pub name: String,
    pub pending: i64,
    /// Tasks of the user a worker holds now (what `QUICKACT_MAX_RUNNING_PER_USER` caps).
    pub running: i64,
    pub oldest_pending_secs: f64,
}

/// The users with unfinished tasks, those with the most waiting first, at most `limit`.
pub async fn queue_by_user(db: impl PgExecutor<'_>, limit: i64) -> Result<Vec<UserQueueNow>, sqlx::Error> {
    sqlx::query_as!(
        UserQueueNow,
        r#"SELECT t.user_id, u.name,
                  count(*) FILTER (WHERE t.status = 'pending') AS "pending!",
                  count(*) FILTER (WHERE t.lease_owner IS NOT NULL AND t.lease_expires_at >= now()) AS "running!",
                  coalesce(extract(epoch FROM now() - min(t.created_at) FILTER (WHERE t.status = 'pending')), 0)::float8 AS "oldest_pending_secs!"
           FROM quick_action_tasks t JOIN users u ON u.id = t.user_id
           WHERE t.completed_at IS NULL
           GROUP BY t.user_id, u.name
           ORDER BY 3 DESC, 4 DESC, t.user_id
           LIMIT $1"#,
        limit,
    )
    .fetch_all(db)
    .await
}

/// The users in the queue now, counted (for `/metrics`, whose labels stay bounded: no user ids).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueueUsers {
    /// Users with a pending task.
    pub waiting: i64,
    /// Users with a task a worker holds.
    pub running: i64,
    /// The most pending tasks one user has.
    pub most_pending: i64,
    /// The most tasks a worker holds for one user.
    pub most_running: i64,
}

pub async fn queue_users(db: impl PgExecutor<'_>) -> Result<QueueUsers, sqlx::Error> {
    sqlx::query_as!(
        QueueUsers,
        r#"SELECT count(*) FILTER (WHERE pending > 0) AS "waiting!", count(*) FILTER (WHERE running > 0) AS "running!",
                  coalesce(max(pending), 0)::bigint AS "most_pending!", coalesce(max(running), 0)::bigint AS "most_running!"
           FROM (SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
                        count(*) FILTER (WHERE lease_owner IS NOT NULL AND lease_expires_at >= now()) AS running
                 FROM quick_action_tasks WHERE completed_at IS NULL GROUP BY user_id) per_user"#
    )
    .fetch_one(db)
    .await
}

/// Queue wait (created to started) percentiles of the tasks submitted in the window, in ms.
pub async fn queue_wait(db: impl PgExecutor<'_>, since: DateTime<Utc>, until: DateTime<Utc>) -> Result<Option<Percentiles>, sqlx::Error> {
    let row = sqlx::query_scalar!(
        r#"SELECT percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at)::float8 * 1000)
           FROM quick_action_tasks WHERE created_at >= $1 AND created_at < $2 AND started_at IS NOT NULL"#,
        since,
        until,
    )
    .fetch_one(db)
    .await?;
    Ok(Percentiles::from_array(row))
}

/// A worker process that reported in recently, and the tasks it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerNow {
    /// The process's name (the lease owner of its tasks).
    pub name: String,
    pub last_seen: DateTime<Utc>,
    pub running: Vec<RunningTask>,
}

/// A task a worker holds.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningTask {
    pub task_id: Uuid,
    pub user_id: Uuid,
    pub input_text: String,
    pub started_at: Option<DateTime<Utc>>,
    pub lease_owner: String,
}

/// Workers whose heartbeat is younger than `alive_within_secs`, by name, with the processing tasks
/// each holds a lease on.
pub async fn workers_now(db: &sqlx::PgPool, alive_within_secs: f64) -> Result<Vec<WorkerNow>, sqlx::Error> {
    let beats = sqlx::query!(
        "SELECT name, last_seen FROM quickact_workers WHERE last_seen > now() - make_interval(secs => $1) ORDER BY name",
        alive_within_secs,
    )
    .fetch_all(db)
    .await?;
    let running = sqlx::query_as!(
        RunningTask,
        r#"SELECT id AS task_id, user_id, input_text, started_at, lease_owner AS "lease_owner!"
           FROM quick_action_tasks WHERE completed_at IS NULL AND status = 'processing' AND lease_owner IS NOT NULL
           ORDER BY started_at"#
    )
    .fetch_all(db)
    .await?;
    Ok(beats
        .into_iter()
        .map(|beat| WorkerNow {
            running: running.iter().filter(|t| crate::queue::holder_worker(&t.lease_owner) == beat.name).cloned().collect(),
            name: beat.name,
            last_seen: beat.last_seen,
        })
        .collect())
}
