//! The stats view: the `GET /api/admin/stats` report of a window as tiles, charts and tables.

use std::collections::BTreeMap;

use askama::Template;
use axum::{
    extract::{Query, State, rejection::QueryRejection},
    http::{HeaderMap, StatusCode},
    response::Response,
};

use super::{
    charts::{PALETTE, Series, lines, stacked_bars},
    page::{Chrome, Moment, PageError, amount_text, duration_ms, html, money, percent},
    session::{AdminSession, cookie_value},
};
use quickact_shared::{config::ModelLimits, store::providers::{ProviderState, provider_states}};

use crate::{
    routes::stats::{OutcomeView, PercentileView, StatsParams, StatsReport, build_report},
    state::AppState,
};

/// A figure of the tiles.
pub struct Tile {
    pub id: &'static str,
    pub label: &'static str,
    pub value: String,
    pub sub: String,
}

/// A chart and its legend.
pub struct Chart {
    pub title: &'static str,
    pub svg: String,
    pub legend: Vec<(String, String)>,
}

/// A row of the grouped table.
pub struct GroupRow {
    pub label: String,
    pub key: String,
    pub tasks: i64,
    pub success: String,
    pub clarification: String,
    pub error: String,
    pub timeout: String,
    pub latency: String,
    pub tokens: String,
    pub cost: String,
    pub fast_path: String,
}

pub struct UsageRow {
    pub day: String,
    pub model: String,
    pub tasks: i64,
    pub tokens: String,
    pub cost: String,
}

pub struct WorkerRow {
    pub name: String,
    pub last_seen: Moment,
    pub running: Vec<(String, String)>,
}

/// A model's budget and pauses across the fleet (`QUICKACT_MODEL_LIMITS`, a 429's `Retry-After`).
pub struct ProviderRow {
    pub model: String,
    /// Spent of the minute's budget, e.g. `12 of 600 a minute`, or `no limit`.
    pub requests: String,
    pub tokens: String,
    /// Until when the model asked for a pause, if it is paused now.
    pub paused_until: Option<Moment>,
    /// Fleet totals since the budget's row was made (a database crash empties it).
    pub totals: String,
    pub fallbacks: i64,
}

/// The providers panel: one row per model a worker has asked (or that has a limit).
fn provider_rows(states: Vec<ProviderState>, limits: &ModelLimits) -> Vec<ProviderRow> {
    let used = |ahead_secs: f64, per_minute: Option<u64>| match per_minute {
        // A GCRA's arrival time runs ahead of now by the share of the minute's budget spent.
        Some(per_minute) => format!("{:.0} of {per_minute} a minute", (ahead_secs / 60.0 * per_minute as f64).ceil()),
        None => "no limit".to_owned(),
    };
    states
        .into_iter()
        .map(|state| {
            let limit = limits.of(&state.model);
            ProviderRow {
                requests: used(state.requests_ahead_secs, limit.requests_per_minute.map(u64::from)),
                tokens: used(state.tokens_ahead_secs, limit.tokens_per_minute),
                paused_until: state.paused_until.as_ref().map(Moment::of),
                totals: format!("{} / {} / {}", state.requests_total, state.waits_total, state.pauses_total),
                fallbacks: state.fallbacks_total,
                model: state.model,
            }
        })
        .collect()
}

#[derive(Template)]
#[template(path = "admin/stats.html")]
struct StatsPage {
    chrome: Chrome,
    since: String,
    until: String,
    group_by: String,
    window_since: Moment,
    window_until: Moment,
    /// The zone days are counted in.
    tz: String,
    tiles: Vec<Tile>,
    charts: Vec<Chart>,
    groups: Vec<GroupRow>,
    usage: Vec<UsageRow>,
    workers: Vec<WorkerRow>,
    providers: Vec<ProviderRow>,
    queue_priorities: Vec<QueueRow>,
    queue_users: Vec<QueueRow>,
}

/// A line of the queue now: a priority, or a user (`key`: their id).
pub struct QueueRow {
    pub label: String,
    pub key: String,
    pub pending: i64,
    pub running: i64,
    pub oldest: String,
}

fn percentiles(p: &Option<PercentileView>) -> String {
    p.map(|p| format!("{} / {} / {}", duration_ms(p.p50), duration_ms(p.p95), duration_ms(p.p99))).unwrap_or_else(|| "–".into())
}

fn group_row(g: &OutcomeView, currency: &str) -> GroupRow {
    GroupRow {
        label: g.label.clone().or_else(|| g.key.clone()).unwrap_or_default(),
        key: g.key.clone().unwrap_or_default(),
        tasks: g.tasks,
        success: percent(g.rates.success),
        clarification: percent(g.rates.clarification),
        error: percent(g.rates.error),
        timeout: percent(g.rates.timeout),
        latency: percentiles(&g.latency_ms),
        tokens: format!("{} / {} / {}", g.tokens.input, g.tokens.cached, g.tokens.output),
        cost: money(g.cost, currency),
        fast_path: percent(g.fast_path.share),
    }
}

fn tiles(report: &StatsReport) -> Vec<Tile> {
    let t = &report.totals;
    let tile = |id, label, value: String, sub: String| Tile { id, label, value, sub };
    let latency = |pick: fn(&PercentileView) -> f64| t.latency_ms.as_ref().map(|p| duration_ms(pick(p))).unwrap_or_else(|| "–".into());
    vec![
        tile("tile-tasks", "tasks", t.tasks.to_string(), format!("{} finished", t.finished)),
        tile("tile-success", "success", percent(t.rates.success), format!("{} of {} finished", t.by_status.success, t.finished)),
        tile("tile-clarification", "clarification", percent(t.rates.clarification), format!("{} of {}", t.by_status.need_clarification, t.finished)),
        tile("tile-error", "error", percent(t.rates.error), format!("{} of {}", t.by_status.error, t.finished)),
        tile("tile-timeout", "timeout", percent(t.rates.timeout), format!("{} of {} · {} cancelled", t.by_status.timeout, t.finished, t.by_status.cancelled)),
        tile("tile-p50", "POST→verdict p50", latency(|p| p.p50), format!("p95 {} · p99 {}", latency(|p| p.p95), latency(|p| p.p99))),
        tile("tile-tokens", "tokens", t.tokens.total.to_string(), format!("{} in · {} cached · {} out", t.tokens.input, t.tokens.cached, t.tokens.output)),
        tile("tile-cost", "cost", money(t.cost, &report.currency), String::new()),
        // Of the tasks that could have gone to a model: an undo runs none.
        tile("tile-fast-path", "fast path", percent(t.fast_path.share), format!("{} of {} served locally", t.fast_path.tasks, t.fast_path.eligible)),
        tile(
            "tile-queue",
            "queue now",
            format!("{} pending", report.queue.pending),
            format!("{} running · oldest waits {:.1} s", report.queue.processing, report.queue.oldest_pending_age_secs),
        ),
        tile("tile-wait", "queue wait p50", report.queue.wait_ms.map(|w| duration_ms(w.p50)).unwrap_or_else(|| "–".into()), report.queue.wait_ms.map(|w| format!("p95 {}", duration_ms(w.p95))).unwrap_or_default()),
        tile("tile-workers", "workers alive", report.workers.len().to_string(), format!("running {} now", report.workers.iter().map(|w| w.running.len()).sum::<usize>())),
    ]
}

/// How long the oldest waiting task has waited, or a dash when none waits.
fn waited(pending: i64, secs: f64) -> String {
    if pending == 0 { "–".into() } else { format!("{secs:.1} s") }
}

fn count(v: f64) -> String {
    format!("{v:.0}")
}

fn millis(v: f64) -> String {
    duration_ms(v)
}

fn amount(v: f64) -> String {
    amount_text(v)
}

/// One model's tokens and cost on each day of the window.
struct ModelDays {
    tokens: Vec<f64>,
    cost: Vec<f64>,
}

/// The calendar days (`YYYY-MM-DD`, in the report's zone) the window touches.
fn window_days(report: &StatsReport) -> Vec<String> {
    let tz: chrono_tz::Tz = report.tz.parse().unwrap_or(chrono_tz::UTC);
    let first = report.since.with_timezone(&tz).date_naive();
    let last = (report.until - chrono::Duration::microseconds(1)).with_timezone(&tz).date_naive();
    first.iter_days().take_while(|d| *d <= last).map(|d| d.format("%Y-%m-%d").to_string()).collect()
}

fn charts(by_day: &StatsReport) -> Vec<Chart> {
    // Every day of the window, also those without a task (no bar, and a gap in the latency line), as
    // MM-DD under the bars; the full date is in each bar's title.
    let days = window_days(by_day);
    let short: Vec<String> = days.iter().map(|d| d.get(5..).unwrap_or(d).to_owned()).collect();
    let of_day = |day: &String| by_day.groups.iter().find(|g| g.key.as_ref() == Some(day));
    let outcome = |name: &str, color: &str, pick: fn(&OutcomeView) -> i64| Series {
        name: name.to_owned(),
        color: color.to_owned(),
        values: days.iter().map(|d| Some(of_day(d).map_or(0.0, |g| pick(g) as f64))).collect(),
    };
    let outcomes = vec![
        outcome("success", "#12805c", |g| g.by_status.success),
        outcome("clarification", "#6941c6", |g| g.by_status.need_clarification),
        outcome("error", "#c01048", |g| g.by_status.error),
        outcome("timeout", "#b54708", |g| g.by_status.timeout),
        outcome("cancelled", "#98a2b3", |g| g.by_status.cancelled),
        outcome("unfinished", "#2f6fed", |g| g.by_status.pending + g.by_status.processing),
    ];
    let latency = |name: &str, color: &str, pick: fn(&PercentileView) -> f64| Series {
        name: name.to_owned(),
        color: color.to_owned(),
        // A day without a finished task has no latency: a gap in the line, not 0 ms.
        values: days.iter().map(|d| of_day(d).and_then(|g| g.latency_ms.as_ref()).map(pick)).collect(),
    };
    let latencies = vec![latency("p50", "#2f6fed", |p| p.p50), latency("p95", "#b54708", |p| p.p95), latency("p99", "#c01048", |p| p.p99)];

    // Per model per day, from `usage`.
    let mut per_model: BTreeMap<&str, ModelDays> = BTreeMap::new();
    for u in &by_day.usage {
        let Some(i) = days.iter().position(|d| *d == u.day) else { continue };
        let entry = per_model.entry(u.model.as_str()).or_insert_with(|| ModelDays { tokens: vec![0.0; days.len()], cost: vec![0.0; days.len()] });
        entry.tokens[i] += u.tokens.total as f64;
        entry.cost[i] += u.cost;
    }
    let model_series = |pick: fn(&ModelDays) -> &Vec<f64>| -> Vec<Series> {
        per_model
            .iter()
            .enumerate()
            .map(|(i, (model, values))| Series {
                name: (*model).to_owned(),
                color: PALETTE[i % PALETTE.len()].to_owned(),
                values: pick(values).iter().copied().map(Some).collect(),
            })
            .collect()
    };
    let tokens = model_series(|m| &m.tokens);
    let costs = model_series(|m| &m.cost);
    let legend = |series: &[Series]| series.iter().map(|s| (s.name.clone(), s.color.clone())).collect();
    vec![
        Chart { title: "Tasks per day by outcome", legend: legend(&outcomes), svg: stacked_bars("tasks per day by outcome", &short, &outcomes, count, true) },
        Chart { title: "POST-to-verdict latency per day", legend: legend(&latencies), svg: lines("latency per day", &short, &latencies, millis, false) },
        Chart { title: "Tokens per model per day", legend: legend(&tokens), svg: stacked_bars("tokens per model per day", &short, &tokens, count, true) },
        Chart {
            title: "Cost per model per day",
            legend: legend(&costs),
            svg: stacked_bars(&format!("cost per model per day ({})", by_day.currency), &short, &costs, amount, false),
        },
    ]
}

/// The zone the reader picked on the page (the cookie `admin.js` keeps), when it is a zone.
fn zone_of_reader(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, "quickact_tz")
        .and_then(|zone| zone.parse::<chrono_tz::Tz>().ok())
        .map(|tz| tz.name().to_owned())
}

/// `GET /admin/stats?since=&until=&group_by=&tz=`: days are counted in `tz`, else in the zone the
/// reader picked for times on the page, else UTC.
pub async fn stats(
    State(state): State<AppState>,
    session: AdminSession,
    headers: HeaderMap,
    params: Result<Query<StatsParams>, QueryRejection>,
) -> Result<Response, PageError> {
    let chrome = Chrome { admin: session.user.name, csrf: session.csrf, section: "stats" };
    let page = async {
        let Query(mut params) = params.map_err(|rejection| PageError::new(StatusCode::BAD_REQUEST, rejection.body_text()))?;
        if params.tz.as_deref().is_none_or(|tz| tz.trim().is_empty()) {
            params.tz = zone_of_reader(&headers);
        }
        let by_day = build_report(&state, &StatsParams { group_by: Some("day".into()), ..params.clone() }).await?;
        let grouped = match params.group_by.as_deref().map(str::trim) {
            None | Some("") | Some("day") => None,
            Some(_) => Some(build_report(&state, &params).await?),
        };
        let table = grouped.as_ref().unwrap_or(&by_day);
        let providers = provider_rows(provider_states(&state.pool).await?, &state.config.model.limits);
        Ok(html(&StatsPage {
            chrome: chrome.clone(),
            since: params.since.clone().unwrap_or_default(),
            until: params.until.clone().unwrap_or_default(),
            group_by: table.group_by.to_owned(),
            window_since: Moment::of(&by_day.since),
            window_until: Moment::of(&by_day.until),
            tz: by_day.tz.clone(),
            tiles: tiles(&by_day),
            charts: charts(&by_day),
            groups: table.groups.iter().map(|g| group_row(g, &table.currency)).collect(),
            usage: by_day
                .usage
                .iter()
                .map(|u| UsageRow {
                    day: u.day.clone(),
                    model: u.model.clone(),
                    tasks: u.tasks,
                    tokens: format!("{} / {} / {}", u.tokens.input, u.tokens.cached, u.tokens.output),
                    cost: money(u.cost, &by_day.currency),
                })
                .collect(),
            workers: by_day
                .workers
                .iter()
                .map(|w| WorkerRow {
                    name: w.name.clone(),
                    last_seen: Moment::of(&w.last_seen),
                    running: w.running.iter().map(|t| (t.task_id.to_string(), t.input_text.clone())).collect(),
                })
                .collect(),
            queue_priorities: by_day
                .queue
                .by_priority
                .iter()
                .map(|p| QueueRow {
                    label: p.priority.as_str().to_owned(),
                    key: String::new(),
                    pending: p.pending,
                    running: p.processing,
                    oldest: waited(p.pending, p.oldest_pending_age_secs),
                })
                .collect(),
            queue_users: by_day
                .queue
                .users
                .iter()
                .map(|u| QueueRow {
                    label: u.name.clone(),
                    key: u.user_id.to_string(),
                    pending: u.pending,
                    running: u.running,
                    oldest: waited(u.pending, u.oldest_pending_age_secs),
                })
                .collect(),
            providers,
        }))
    };
    page.await.map_err(|err: PageError| err.within(chrome))
}
