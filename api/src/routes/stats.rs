//! `GET /api/admin/stats`: how the service did over a time window (outcome rates, POST-to-verdict
//! latency, tokens and cost per model per day, the fast path's share), the queue and the workers as
//! they are now. Admins only; the admin page's stats view reads the same [`StatsReport`].

use axum::{Json, extract::State};
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use quickact_shared::{
    domain::task::TaskPriority,
    pricing::nanos_to_amount,
    store::stats::{self, DailyUsage, GroupBy, Outcomes, Percentiles, PriorityQueueNow, QueueNow, UserQueueNow, WorkerNow},
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    actions::parse_time_zone,
    error::ApiError,
    extract::{Admin, QueryParams},
    openapi::ErrorBody,
    routes::admin::parse_instant,
    state::AppState,
};

/// The window shown when none is given: the last 7 days.
const DEFAULT_WINDOW_DAYS: i64 = 7;
/// Longest window: a day-by-day report stays a few hundred rows.
const MAX_WINDOW_DAYS: i64 = 400;
/// Most groups listed (the busiest, for `model` and `user`).
pub const MAX_GROUPS: usize = 200;
/// Users listed in the queue's view.
const QUEUE_USERS: i64 = 20;

#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatsParams {
    /// Start of the window (RFC 3339 or `YYYY-MM-DD`), default 7 days before `until`.
    pub since: Option<String>,
    /// End of the window, exclusive (RFC 3339 or `YYYY-MM-DD`), default now.
    pub until: Option<String>,
    /// `day` (default), `model` or `user`.
    pub group_by: Option<String>,
    /// Zone of the calendar days (`group_by=day` and `usage`), default UTC.
    pub tz: Option<String>,
}

/// The answer of `GET /api/admin/stats`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StatsReport {
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub group_by: String,
    pub tz: String,
    pub currency: String,
    pub totals: OutcomeView,
    pub groups: Vec<OutcomeView>,
    /// Tokens and cost per model per day.
    pub usage: Vec<UsageView>,
    pub queue: QueueView,
    pub workers: Vec<WorkerView>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OutcomeView {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub tasks: i64,
    pub finished: i64,
    pub by_status: ByStatus,
    /// Shares of the finished tasks (0 when none finished).
    pub rates: Rates,
    /// POST-to-verdict of finished tasks.
    pub latency_ms: Option<PercentileView>,
    /// The run alone (start to verdict).
    pub run_ms: Option<PercentileView>,
    pub tokens: TokenView,
    pub cost: f64,
    /// Finished tasks served by the local provider, and their share of those that could have gone
    /// to a model (undos run none).
    pub fast_path: FastPath,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ByStatus {
    pub pending: i64,
    pub processing: i64,
    pub success: i64,
    pub need_clarification: i64,
    pub error: i64,
    pub timeout: i64,
    pub cancelled: i64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Rates {
    pub success: f64,
    pub clarification: f64,
    pub error: f64,
    pub timeout: f64,
    pub cancelled: f64,
}

#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct PercentileView {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TokenView {
    pub input: i64,
    pub cached: i64,
    pub output: i64,
    pub total: i64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct FastPath {
    /// Finished tasks the local provider served.
    pub tasks: i64,
    /// Finished tasks that could have gone to a model: every finished task but undos.
    pub eligible: i64,
    /// `tasks` / `eligible` (0 when none).
    pub share: f64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UsageView {
    pub day: String,
    pub model: String,
    pub tasks: i64,
    pub tokens: TokenView,
    pub cost: f64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct QueueView {
    pub pending: i64,
    pub processing: i64,
    pub oldest_pending_age_secs: f64,
    /// Submission to start, of the window's started tasks.
    pub wait_ms: Option<PercentileView>,
    /// The same by priority (those with unfinished tasks).
    pub by_priority: Vec<PriorityQueueView>,
    /// The users with unfinished tasks, those with the most waiting first (at most 20).
    pub users: Vec<UserQueueView>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PriorityQueueView {
    pub priority: TaskPriority,
    pub pending: i64,
    pub processing: i64,
    pub oldest_pending_age_secs: f64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UserQueueView {
    pub user_id: Uuid,
    pub name: String,
    pub pending: i64,
    /// Tasks a worker holds for the user now (`QUICKACT_MAX_RUNNING_PER_USER` caps it).
    pub running: i64,
    pub oldest_pending_age_secs: f64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WorkerView {
    pub name: String,
    pub last_seen: DateTime<Utc>,
    pub running: Vec<RunningView>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RunningView {
    pub task_id: Uuid,
    pub user_id: Uuid,
    pub input_text: String,
    pub started_at: Option<DateTime<Utc>>,
}

/// How the service did over a window: outcome rates, latency percentiles, tokens and cost per
/// model per day, the fast path's share; the queue and the live workers now.
#[utoipa::path(get, operation_id = "admin_stats", path = "/api/admin/stats", tag = "admin", params(StatsParams),
    responses(
        (status = 200, description = "The report of the window", body = StatsReport),
        (status = 422, description = "`tz` is not an IANA time zone", body = ErrorBody),
    ))]
pub async fn stats(State(state): State<AppState>, Admin(_): Admin, QueryParams(params): QueryParams<StatsParams>) -> Result<Json<StatsReport>, ApiError> {
    build_report(&state, &params).await.map(Json)
}

/// Reads the report for `params` (also the admin page's).
pub async fn build_report(state: &AppState, params: &StatsParams) -> Result<StatsReport, ApiError> {
    let non_empty = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let until = non_empty(&params.until).map(|s| parse_instant(&s, "until")).transpose()?.unwrap_or_else(Utc::now);
    let since = non_empty(&params.since)
        .map(|s| parse_instant(&s, "since"))
        .transpose()?
        .unwrap_or(until - Duration::days(DEFAULT_WINDOW_DAYS));
    if since >= until {
        return Err(ApiError::bad_request("invalid_query", "since must be before until"));
    }
    if until - since > Duration::days(MAX_WINDOW_DAYS) {
        return Err(ApiError::bad_request("invalid_query", format!("the window may span at most {MAX_WINDOW_DAYS} days")));
    }
    let group_by = match non_empty(&params.group_by) {
        None => GroupBy::Day,
        Some(g) => GroupBy::parse(&g)
            .ok_or_else(|| ApiError::bad_request("invalid_query", format!("group_by must be day, model or user, not {g:?}")))?,
    };
    let tz: Tz = match non_empty(&params.tz) {
        None => chrono_tz::UTC,
        Some(name) => parse_time_zone(&name)?,
    };

    let pool = &state.pool;
    let (totals, mut groups) = stats::outcomes(pool, since, until, group_by, tz.name()).await?;
    groups.truncate(MAX_GROUPS);
    let usage = stats::daily_usage(pool, since, until, tz.name()).await?;
    let queue = stats::queue_now(pool).await?;
    let by_priority = stats::queue_by_priority(pool).await?;
    let queue_users = stats::queue_by_user(pool, QUEUE_USERS).await?;
    let wait = stats::queue_wait(pool, since, until).await?;
    let workers = stats::workers_now(pool, state.config.worker.lease().as_secs_f64()).await?;
    Ok(StatsReport {
        since,
        until,
        group_by: group_by.as_str().to_owned(),
        tz: tz.name().to_owned(),
        currency: state.config.model.currency.clone(),
        totals: OutcomeView::from(totals),
        groups: groups.into_iter().map(OutcomeView::from).collect(),
        usage: usage.into_iter().map(UsageView::from).collect(),
        queue: QueueView::new(queue, wait, by_priority, queue_users),
        workers: workers.into_iter().map(WorkerView::from).collect(),
    })
}

fn share(part: i64, whole: i64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

impl From<Percentiles> for PercentileView {
    fn from(p: Percentiles) -> Self {
        // Milliseconds to the tenth: finer is noise.
        let round = |v: f64| (v * 10.0).round() / 10.0;
        PercentileView { p50: round(p.p50), p95: round(p.p95), p99: round(p.p99) }
    }
}

impl TokenView {
    fn new(input: i64, cached: i64, output: i64) -> Self {
        TokenView { input, cached, output, total: input + output }
    }
}

impl From<Outcomes> for OutcomeView {
    fn from(o: Outcomes) -> Self {
        let finished = o.finished();
        OutcomeView {
            rates: Rates {
                success: share(o.success, finished),
                clarification: share(o.clarification, finished),
                error: share(o.error, finished),
                timeout: share(o.timeout, finished),
                cancelled: share(o.cancelled, finished),
            },
            by_status: ByStatus {
                pending: o.pending,
                processing: o.processing,
                success: o.success,
                need_clarification: o.clarification,
                error: o.error,
                timeout: o.timeout,
                cancelled: o.cancelled,
            },
            latency_ms: o.latency_ms.map(PercentileView::from),
            run_ms: o.run_ms.map(PercentileView::from),
            tokens: TokenView::new(o.input_tokens, o.cached_tokens, o.output_tokens),
            cost: nanos_to_amount(o.cost_nanos),
            fast_path: FastPath { tasks: o.fast_path, eligible: o.fast_path_eligible, share: share(o.fast_path, o.fast_path_eligible) },
            key: o.key,
            label: o.label,
            tasks: o.tasks,
            finished,
        }
    }
}

impl From<DailyUsage> for UsageView {
    fn from(u: DailyUsage) -> Self {
        UsageView {
            tokens: TokenView::new(u.input_tokens, u.cached_tokens, u.output_tokens),
            cost: nanos_to_amount(u.cost_nanos),
            day: u.day,
            model: u.model,
            tasks: u.tasks,
        }
    }
}

impl QueueView {
    fn new(now: QueueNow, wait: Option<Percentiles>, by_priority: Vec<PriorityQueueNow>, users: Vec<UserQueueNow>) -> Self {
        let secs = |s: f64| (s * 1000.0).round() / 1000.0;
        QueueView {
            pending: now.pending,
            processing: now.processing,
            oldest_pending_age_secs: secs(now.oldest_pending_secs),
            wait_ms: wait.map(PercentileView::from),
            by_priority: by_priority
                .into_iter()
                .map(|p| PriorityQueueView { priority: p.priority, pending: p.pending, processing: p.processing, oldest_pending_age_secs: secs(p.oldest_pending_secs) })
                .collect(),
            users: users
                .into_iter()
                .map(|u| UserQueueView { user_id: u.user_id, name: u.name, pending: u.pending, running: u.running, oldest_pending_age_secs: secs(u.oldest_pending_secs) })
                .collect(),
        }
    }
}

impl From<WorkerNow> for WorkerView {
    fn from(w: WorkerNow) -> Self {
        WorkerView {
            name: w.name,
            last_seen: w.last_seen,
            running: w
                .running
                .into_iter()
                .map(|t| RunningView { task_id: t.task_id, user_id: t.user_id, input_text: t.input_text, started_at: t.started_at })
                .collect(),
        }
    }
}
