//! Prometheus metrics of an API or worker process, through the `metrics` facade and
//! `metrics-exporter-prometheus` (rendered by our own `/metrics` routes, no exporter server).
//!
//! Every label takes values from a fixed set, so no series is unbounded: routes are the router's
//! patterns (`/api/quick-action/{id}`, not ids), tools outside the registry count as `unknown`,
//! statuses and verdicts are the contract's, models are the deployment's configured ones.
//!
//! | metric | type | labels | where |
//! |---|---|---|---|
//! | `quickact_tasks_submitted_total` | counter | | API |
//! | `quickact_tasks_finished_total` | counter | `status`, `verdict` | the process that ended the task |
//! | `quickact_task_post_to_verdict_seconds` | histogram | `status` | same |
//! | `quickact_task_run_seconds` | histogram | `status` | same (start to verdict) |
//! | `quickact_model_turn_seconds` | histogram | `model`, `outcome` | worker |
//! | `quickact_model_tokens_total` | counter | `model`, `kind` (`input`, `cached`, `output`) | worker |
//! | `quickact_model_cost_nanos_total` | counter | `model`, `currency` | worker (cost in 10^-9 of the currency) |
//! | `quickact_tool_calls_total` | counter | `tool`, `outcome` (`ok`, `error`) | worker |
//! | `quickact_queue_pending`, `quickact_queue_processing` | gauge | | both, read at scrape |
//! | `quickact_queue_oldest_pending_seconds` | gauge | | both, read at scrape |
//! | `quickact_queue_pending_by_priority`, `quickact_queue_processing_by_priority` | gauge | `priority` | both, read at scrape |
//! | `quickact_queue_oldest_pending_by_priority_seconds` | gauge | `priority` | both, read at scrape |
//! | `quickact_queue_users_waiting`, `quickact_queue_users_running` | gauge | | both, read at scrape (users with a pending, with a running task) |
//! | `quickact_queue_user_most_pending`, `quickact_queue_user_most_running` | gauge | | both, read at scrape (the busiest user's; per user: the admin page, `GET /api/admin/stats`) |
//! | `quickact_worker_running_tasks` | gauge | | worker, at scrape |
//! | `quickact_long_polls_open`, `quickact_sse_streams_open` | gauge | | API |
//! | `quickact_http_requests_total` | counter | `method`, `route`, `status` | API |
//! | `quickact_http_request_seconds` | histogram | `method`, `route` | API |
//! | `quickact_database_errors_total` | counter | `kind` (`unavailable`, `other`) | both |
//! | `quickact_budget_refusals_total` | counter | `period` (`day`, `month`) | worker (the process that ended the task) |
//! | `quickact_budget_refusals_today` | gauge | | both, read at scrape (all users, this UTC day) |
//! | `quickact_provider_requests_total` | counter | `model`, `kind` (`request`, `probe`) | worker: requests the fleet's budget let through |
//! | `quickact_provider_waits_total` | counter | `model`, `reason` (`paused`, `budget`) | worker: requests told to wait |
//! | `quickact_provider_hand_backs_total` | counter | `model` | worker: tasks handed back to wait for their model |
//! | `quickact_provider_pauses_total` | counter | `model` | worker: 429s with `Retry-After` that paused the model |
//! | `quickact_model_fallbacks_total` | counter | `from`, `to` | worker: runs that went on with the next model |
//! | `quickact_provider_budget_used_ratio` | gauge | `model`, `budget` (`requests`, `tokens`) | both, read at scrape: share of a minute's budget spent |
//! | `quickact_provider_paused_seconds` | gauge | `model` | both, read at scrape: time left of the model's pause (0: none) |
//! | `quickact_webhook_attempts_total` | counter | `outcome` (`delivered`, `retry`, `failed`, `gone`) | worker: webhook attempts it made |
//! | `quickact_webhook_verdict_to_delivery_seconds` | histogram | | worker: the verdict's moment to the receiver's 2xx |
//! | `quickact_webhook_deliveries_pending` | gauge | | both, read at scrape: deliveries not yet made nor given up |

use std::{sync::OnceLock, time::Duration};

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::PrometheusBuilder;
pub use metrics_exporter_prometheus::PrometheusHandle;

use crate::{
    domain::{
        cost_budget::BudgetPeriod,
        task::{TaskPriority, TaskRecord},
    },
    store::{cost_budgets, stats},
    unavailable::is_unavailable,
};

pub const TASKS_SUBMITTED: &str = "quickact_tasks_submitted_total";
pub const TASKS_FINISHED: &str = "quickact_tasks_finished_total";
pub const TASK_POST_TO_VERDICT: &str = "quickact_task_post_to_verdict_seconds";
pub const TASK_RUN: &str = "quickact_task_run_seconds";
pub const MODEL_TURN: &str = "quickact_model_turn_seconds";
pub const MODEL_TOKENS: &str = "quickact_model_tokens_total";
pub const MODEL_COST: &str = "quickact_model_cost_nanos_total";
pub const TOOL_CALLS: &str = "quickact_tool_calls_total";
pub const QUEUE_PENDING: &str = "quickact_queue_pending";
pub const QUEUE_PROCESSING: &str = "quickact_queue_processing";
pub const QUEUE_OLDEST_PENDING: &str = "quickact_queue_oldest_pending_seconds";
pub const QUEUE_PENDING_BY_PRIORITY: &str = "quickact_queue_pending_by_priority";
pub const QUEUE_PROCESSING_BY_PRIORITY: &str = "quickact_queue_processing_by_priority";
pub const QUEUE_OLDEST_PENDING_BY_PRIORITY: &str = "quickact_queue_oldest_pending_by_priority_seconds";
pub const QUEUE_USERS_WAITING: &str = "quickact_queue_users_waiting";
pub const QUEUE_USERS_RUNNING: &str = "quickact_queue_users_running";
pub const QUEUE_USER_MOST_PENDING: &str = "quickact_queue_user_most_pending";
pub const QUEUE_USER_MOST_RUNNING: &str = "quickact_queue_user_most_running";
pub const WORKER_RUNNING: &str = "quickact_worker_running_tasks";
pub const LONG_POLLS_OPEN: &str = "quickact_long_polls_open";
pub const SSE_STREAMS_OPEN: &str = "quickact_sse_streams_open";
pub const HTTP_REQUESTS: &str = "quickact_http_requests_total";
pub const HTTP_REQUEST_SECONDS: &str = "quickact_http_request_seconds";
pub const DATABASE_ERRORS: &str = "quickact_database_errors_total";
pub const BUDGET_REFUSALS: &str = "quickact_budget_refusals_total";
pub const BUDGET_REFUSALS_TODAY: &str = "quickact_budget_refusals_today";
pub const PROVIDER_REQUESTS: &str = "quickact_provider_requests_total";
pub const PROVIDER_WAITS: &str = "quickact_provider_waits_total";
pub const PROVIDER_HAND_BACKS: &str = "quickact_provider_hand_backs_total";
pub const PROVIDER_PAUSES: &str = "quickact_provider_pauses_total";
pub const MODEL_FALLBACKS: &str = "quickact_model_fallbacks_total";
pub const PROVIDER_BUDGET_USED: &str = "quickact_provider_budget_used_ratio";
pub const PROVIDER_PAUSED: &str = "quickact_provider_paused_seconds";
pub const WEBHOOK_ATTEMPTS: &str = "quickact_webhook_attempts_total";
pub const WEBHOOK_VERDICT_TO_DELIVERY: &str = "quickact_webhook_verdict_to_delivery_seconds";
pub const WEBHOOK_DELIVERIES_PENDING: &str = "quickact_webhook_deliveries_pending";

/// Histogram buckets in seconds: from a local run's milliseconds to a task's 120 s limit.
const SECONDS_BUCKETS: &[f64] = &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

/// Installs the process's recorder once (later calls, e.g. several apps in one test process,
/// return the same handle) and returns the handle `/metrics` renders.
pub fn install() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets(SECONDS_BUCKETS)
                .expect("the buckets are not empty")
                .install_recorder()
                .expect("no other metrics recorder is installed in this process");
            describe();
            // Histograms keep raw samples until upkeep folds them into buckets: bound that memory
            // between scrapes.
            let upkeep = handle.clone();
            std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(Duration::from_secs(5));
                        upkeep.run_upkeep();
                    }
                })
                .expect("spawn the metrics upkeep thread");
            handle
        })
        .clone()
}

fn describe() {
    describe_counter!(TASKS_SUBMITTED, "Tasks accepted by POST /api/quick-action (idempotent replays aside).");
    describe_counter!(TASKS_FINISHED, "Tasks that reached a final state in this process, by status and verdict.");
    describe_histogram!(TASK_POST_TO_VERDICT, metrics::Unit::Seconds, "Submission to final state of the tasks this process ended.");
    describe_histogram!(TASK_RUN, metrics::Unit::Seconds, "Start to final state of the tasks this process ended (tasks that started).");
    describe_histogram!(MODEL_TURN, metrics::Unit::Seconds, "Latency of each model request, by model and outcome (ok or error).");
    describe_counter!(MODEL_TOKENS, "Tokens the model reported for its answers (paid for even when a cancel kept the run from using one), by model and kind (input, cached, output; cached is part of input).");
    describe_counter!(MODEL_COST, "Cost of the model's answers in billionths of the currency, by model and currency.");
    describe_counter!(TOOL_CALLS, "Tool calls the agent made, by tool (unknown for names outside the registry) and outcome.");
    describe_gauge!(QUEUE_PENDING, "Tasks waiting for a worker, read at scrape time.");
    describe_gauge!(QUEUE_PROCESSING, "Tasks a worker is running, read at scrape time.");
    describe_gauge!(QUEUE_OLDEST_PENDING, metrics::Unit::Seconds, "Age of the oldest pending task, read at scrape time (0 when none waits).");
    describe_gauge!(QUEUE_PENDING_BY_PRIORITY, "Tasks of a priority waiting for a worker, read at scrape time.");
    describe_gauge!(QUEUE_PROCESSING_BY_PRIORITY, "Tasks of a priority a worker is running, read at scrape time.");
    describe_gauge!(QUEUE_OLDEST_PENDING_BY_PRIORITY, metrics::Unit::Seconds, "Age of a priority's oldest pending task, read at scrape time.");
    describe_gauge!(QUEUE_USERS_WAITING, "Users with a task waiting for a worker, read at scrape time.");
    describe_gauge!(QUEUE_USERS_RUNNING, "Users with a task a worker holds, read at scrape time.");
    describe_gauge!(QUEUE_USER_MOST_PENDING, "The most tasks one user has waiting, read at scrape time.");
    describe_gauge!(QUEUE_USER_MOST_RUNNING, "The most tasks a worker holds for one user (QUICKACT_MAX_RUNNING_PER_USER caps it), read at scrape time.");
    describe_gauge!(WORKER_RUNNING, "Tasks this worker process is running.");
    describe_gauge!(LONG_POLLS_OPEN, "Long-polls (wait=true) this API process holds open.");
    describe_gauge!(SSE_STREAMS_OPEN, "Task event streams (SSE) this API process holds open.");
    describe_counter!(HTTP_REQUESTS, "HTTP requests answered, by method, route pattern and status.");
    describe_histogram!(HTTP_REQUEST_SECONDS, metrics::Unit::Seconds, "HTTP request latency, by method and route pattern.");
    describe_counter!(DATABASE_ERRORS, "Database operations that failed, by kind (unavailable: could not reach it).");
    describe_counter!(BUDGET_REFUSALS, "Tasks this process ended with a budget_exhausted verdict, by the period whose budget refused them (day or month).");
    describe_gauge!(BUDGET_REFUSALS_TODAY, "Tasks a cost budget refused this UTC day, all users and processes together, read at scrape time.");
    describe_counter!(PROVIDER_REQUESTS, "Model requests the fleet's budget let through, by model and kind (probe: the first after a pause).");
    describe_counter!(PROVIDER_WAITS, "Model requests told to wait, by model and reason (paused by the model, or its budget spent).");
    describe_counter!(PROVIDER_HAND_BACKS, "Tasks handed back to the queue to wait for their model, holding no run slot, by model.");
    describe_counter!(PROVIDER_PAUSES, "429 answers with Retry-After that paused the model for every worker, by model.");
    describe_counter!(MODEL_FALLBACKS, "Runs that went on with the next model of QUICKACT_MODEL_FALLBACK, by the model they left and the one they took.");
    describe_gauge!(PROVIDER_BUDGET_USED, "Share of a minute's budget of each limited model the fleet has spent (may exceed 1 with a token debt), read at scrape.");
    describe_gauge!(PROVIDER_PAUSED, metrics::Unit::Seconds, "Time left of the pause a model asked for (0 when none), read at scrape.");
    describe_counter!(WEBHOOK_ATTEMPTS, "Webhook attempts this worker made, by outcome (delivered, retry, failed: given up, gone: the receiver answered 410).");
    describe_histogram!(WEBHOOK_VERDICT_TO_DELIVERY, metrics::Unit::Seconds, "A task's verdict to its webhook receiver's 2xx, deliveries this worker made.");
    describe_gauge!(WEBHOOK_DELIVERIES_PENDING, "Webhook deliveries not yet made nor given up, read at scrape time.");
}

/// A webhook attempt was made and recorded.
pub fn webhook_attempt(outcome: &crate::store::webhooks::AttemptOutcome) {
    use crate::store::webhooks::AttemptOutcome;
    let outcome = match outcome {
        AttemptOutcome::Delivered => "delivered",
        AttemptOutcome::Retry { .. } => "retry",
        AttemptOutcome::GaveUp => "failed",
        AttemptOutcome::Gone => "gone",
    };
    counter!(WEBHOOK_ATTEMPTS, "outcome" => outcome).increment(1);
}

/// A webhook reached its receiver `since_verdict` after the task's verdict.
pub fn webhook_delivered(since_verdict: Duration) {
    histogram!(WEBHOOK_VERDICT_TO_DELIVERY).record(since_verdict.as_secs_f64());
}

/// A task was accepted.
pub fn task_submitted() {
    counter!(TASKS_SUBMITTED).increment(1);
}

/// `task` reached its final state in this process (call once, after the commit).
pub fn task_finished(task: &TaskRecord) {
    let status = task.status.as_str();
    let verdict = task.result_type.map_or("none", |r| r.as_str());
    counter!(TASKS_FINISHED, "status" => status, "verdict" => verdict).increment(1);
    if let Some(completed) = task.completed_at {
        let seconds = |d: chrono::TimeDelta| d.num_microseconds().unwrap_or(0).max(0) as f64 / 1e6;
        histogram!(TASK_POST_TO_VERDICT, "status" => status).record(seconds(completed - task.created_at));
        if let Some(started) = task.started_at {
            histogram!(TASK_RUN, "status" => status).record(seconds(completed - started));
        }
    }
}

/// One model request of `model` took `latency`.
pub fn model_turn(model: &str, ok: bool, latency: Duration) {
    histogram!(MODEL_TURN, "model" => model.to_owned(), "outcome" => if ok { "ok" } else { "error" }).record(latency.as_secs_f64());
}

/// The usage and cost the model reported for an answer (counted when it arrives, as it is billed).
pub fn model_usage(model: &str, input: u64, cached: u64, output: u64, cost_nanos: i64, currency: &str) {
    for (kind, tokens) in [("input", input), ("cached", cached), ("output", output)] {
        counter!(MODEL_TOKENS, "model" => model.to_owned(), "kind" => kind).increment(tokens);
    }
    counter!(MODEL_COST, "model" => model.to_owned(), "currency" => currency.to_owned()).increment(cost_nanos.max(0) as u64);
}

/// A tool call; `tool` must be a registered tool's name or `unknown`.
pub fn tool_call(tool: &'static str, ok: bool) {
    counter!(TOOL_CALLS, "tool" => tool, "outcome" => if ok { "ok" } else { "error" }).increment(1);
}

/// A cost budget refused a task (call once, after its verdict committed).
pub fn budget_refusal(period: BudgetPeriod) {
    counter!(BUDGET_REFUSALS, "period" => period.as_str()).increment(1);
}

/// The fleet's budget of `model` let a request through (`probe`: the first after a pause).
pub fn provider_request(model: &str, probe: bool) {
    counter!(PROVIDER_REQUESTS, "model" => model.to_owned(), "kind" => if probe { "probe" } else { "request" }).increment(1);
}

/// A request of `model` was told to wait (`paused`: the model asked for the pause).
pub fn provider_wait(model: &str, paused: bool) {
    counter!(PROVIDER_WAITS, "model" => model.to_owned(), "reason" => if paused { "paused" } else { "budget" }).increment(1);
}

/// A task was handed back to wait for `model`.
pub fn provider_hand_back(model: &str) {
    counter!(PROVIDER_HAND_BACKS, "model" => model.to_owned()).increment(1);
}

/// `model` answered 429 with a wait, which paused it for every worker.
pub fn provider_pause(model: &str) {
    counter!(PROVIDER_PAUSES, "model" => model.to_owned()).increment(1);
}

/// A run went on with `to` after `from` failed it.
pub fn model_fallback(from: &str, to: &str) {
    counter!(MODEL_FALLBACKS, "from" => from.to_owned(), "to" => to.to_owned()).increment(1);
}

/// A database operation failed.
pub fn database_error(err: &sqlx::Error) {
    counter!(DATABASE_ERRORS, "kind" => if is_unavailable(err) { "unavailable" } else { "other" }).increment(1);
}

/// An HTTP request was answered.
pub fn http_request(method: &str, route: &str, status: u16, latency: Duration) {
    let (method, route) = (method.to_owned(), route.to_owned());
    counter!(HTTP_REQUESTS, "method" => method.clone(), "route" => route.clone(), "status" => status.to_string()).increment(1);
    histogram!(HTTP_REQUEST_SECONDS, "method" => method, "route" => route).record(latency.as_secs_f64());
}

/// Counts something open (a long-poll, an event stream) in a gauge for as long as it lives.
#[derive(Debug)]
#[must_use = "the count drops when the guard does"]
pub struct OpenGuard(&'static str);

impl OpenGuard {
    /// Adds one to gauge `name` until the guard drops ([`LONG_POLLS_OPEN`], [`SSE_STREAMS_OPEN`]).
    pub fn new(name: &'static str) -> Self {
        gauge!(name).increment(1.0);
        OpenGuard(name)
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        gauge!(self.0).decrement(1.0);
    }
}

/// Reads the queue's gauges from the database and renders every metric in the Prometheus text
/// format. A database that cannot be read leaves the gauges as they were (and counts the error).
pub async fn render(handle: &PrometheusHandle, pool: &sqlx::PgPool) -> String {
    let read = async {
        let queue = stats::queue_now(pool).await?;
        gauge!(QUEUE_PENDING).set(queue.pending as f64);
        gauge!(QUEUE_PROCESSING).set(queue.processing as f64);
        gauge!(QUEUE_OLDEST_PENDING).set(queue.oldest_pending_secs);
        let by_priority = stats::queue_by_priority(pool).await?;
        for priority in [TaskPriority::Interactive, TaskPriority::Batch] {
            let now = by_priority.iter().find(|p| p.priority == priority);
            let label = priority.as_str();
            gauge!(QUEUE_PENDING_BY_PRIORITY, "priority" => label).set(now.map_or(0.0, |p| p.pending as f64));
            gauge!(QUEUE_PROCESSING_BY_PRIORITY, "priority" => label).set(now.map_or(0.0, |p| p.processing as f64));
            gauge!(QUEUE_OLDEST_PENDING_BY_PRIORITY, "priority" => label).set(now.map_or(0.0, |p| p.oldest_pending_secs));
        }
        let users = stats::queue_users(pool).await?;
        gauge!(QUEUE_USERS_WAITING).set(users.waiting as f64);
        gauge!(QUEUE_USERS_RUNNING).set(users.running as f64);
        gauge!(QUEUE_USER_MOST_PENDING).set(users.most_pending as f64);
        gauge!(QUEUE_USER_MOST_RUNNING).set(users.most_running as f64);
        Ok::<_, sqlx::Error>(())
    };
    if let Err(err) = read.await {
        tracing::warn!(error = %err, "metrics: could not read the queue");
        database_error(&err);
    }
    match crate::store::webhooks::count_pending(pool).await {
        Ok(pending) => gauge!(WEBHOOK_DELIVERIES_PENDING).set(pending as f64),
        Err(err) => {
            tracing::warn!(error = %err, "metrics: could not count the webhook deliveries");
            database_error(&err);
        }
    }
    match cost_budgets::refusals_today(pool).await {
        Ok(refusals) => gauge!(BUDGET_REFUSALS_TODAY).set(refusals as f64),
        Err(err) => {
            tracing::warn!(error = %err, "metrics: could not read the budget refusals");
            database_error(&err);
        }
    }
    match crate::store::providers::provider_states(pool).await {
        Ok(states) => {
            for state in states {
                // A GCRA's arrival time runs ahead of now by the share of the minute's budget spent.
                let used = |ahead_secs: f64| ahead_secs / 60.0;
                gauge!(PROVIDER_BUDGET_USED, "model" => state.model.clone(), "budget" => "requests").set(used(state.requests_ahead_secs));
                gauge!(PROVIDER_BUDGET_USED, "model" => state.model.clone(), "budget" => "tokens").set(used(state.tokens_ahead_secs));
                gauge!(PROVIDER_PAUSED, "model" => state.model).set(state.paused_secs);
            }
        }
        Err(err) => {
            tracing::warn!(error = %err, "metrics: could not read the providers' budgets");
            database_error(&err);
        }
    }
    handle.render()
}

/// The content type of the Prometheus text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
