//! The history: every user's tasks, newest first, with the JSON listing's filters (user, status,
//! verdict, model, time range, text) and cursor paging. The first page's table and count refresh
//! every two seconds (htmx fetches the page and swaps that part: new tasks appear, running ones
//! finish); on later pages each unfinished row refreshes itself until it is final.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, Query, State, rejection::QueryRejection},
    http::StatusCode,
    response::Response,
};
use quickact_shared::{
    domain::task::{ResultType, TaskRecord, TaskStatus},
    pricing::nanos_to_amount,
    store::{
        tasks::{self, Cursor},
        users,
    },
};
use uuid::Uuid;

use super::{
    page::{Chrome, Moment, PageError, clip, duration_ms, html, money},
    session::AdminSession,
};
use crate::{
    actions::parse_uuid_or_404,
    routes::admin::{AdminListParams, task_filter},
    state::AppState,
};

/// Rows per page.
const PAGE_SIZE: i64 = 25;

/// One task as a row of the history.
pub struct TaskRow {
    pub id: Uuid,
    pub created_at: Moment,
    pub user_id: Uuid,
    pub user_name: String,
    pub text: String,
    pub status: &'static str,
    pub verdict: String,
    pub model: String,
    pub tokens: i64,
    pub cost: String,
    pub duration: String,
    /// Refreshes itself (an unfinished task outside the live first page).
    pub poll: bool,
}

impl TaskRow {
    pub fn new(task: &TaskRecord, user_name: &str, poll: bool) -> Self {
        TaskRow {
            id: task.id,
            created_at: Moment::of(&task.created_at),
            user_id: task.user_id,
            user_name: user_name.to_owned(),
            text: clip(&task.input_text, 90),
            status: task.status.as_str(),
            verdict: task.result_type.map(|r| r.as_str().to_owned()).unwrap_or_default(),
            model: task.model_used.clone().unwrap_or_default(),
            tokens: task.input_tokens + task.output_tokens,
            cost: money(nanos_to_amount(task.cost_nanos), &task.currency),
            duration: match (task.started_at, task.completed_at) {
                (Some(start), Some(end)) => duration_ms((end - start).num_milliseconds() as f64),
                _ => String::new(),
            },
            poll: poll && !task.status.is_final(),
        }
    }
}

/// A choice of a `<select>`.
pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

fn choices<'a>(values: impl IntoIterator<Item = (&'a str, &'a str)>, current: &Option<String>) -> Vec<Choice> {
    values
        .into_iter()
        .map(|(value, label)| Choice { value: value.to_owned(), label: label.to_owned(), selected: current.as_deref() == Some(value) })
        .collect()
}

#[derive(Template)]
#[template(path = "admin/history.html")]
struct HistoryPage {
    chrome: Chrome,
    q: String,
    model: String,
    since: String,
    until: String,
    users: Vec<Choice>,
    statuses: Vec<Choice>,
    verdicts: Vec<Choice>,
    rows: Vec<TaskRow>,
    total: i64,
    /// Where the table refreshes from (the first page only: this page itself).
    live_url: Option<String>,
    next_url: Option<String>,
    first_url: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/row.html")]
struct RowFragment {
    row: TaskRow,
}

/// Names of every user, by id.
pub async fn user_names(state: &AppState) -> Result<HashMap<Uuid, String>, PageError> {
    Ok(users::list_users(&state.pool).await?.into_iter().map(|u| (u.id, u.name)).collect())
}

fn params_or_error(params: Result<Query<AdminListParams>, QueryRejection>) -> Result<AdminListParams, PageError> {
    params.map(|Query(p)| p).map_err(|rejection| PageError::new(StatusCode::BAD_REQUEST, rejection.body_text()))
}

fn url(path: &str, params: &AdminListParams) -> String {
    let query = serde_urlencoded::to_string(params).unwrap_or_default();
    if query.is_empty() { path.to_owned() } else { format!("{path}?{query}") }
}

/// Blank form fields mean "any": they are dropped so links stay short.
fn tidy(mut params: AdminListParams) -> AdminListParams {
    for field in [&mut params.user_id, &mut params.status, &mut params.result_type, &mut params.since, &mut params.until, &mut params.q, &mut params.model, &mut params.cursor] {
        if field.as_deref().is_some_and(|v| v.trim().is_empty()) {
            *field = None;
        }
    }
    params.limit = None;
    params
}

/// A page of rows (through the store functions of the JSON listing), the number of matching tasks
/// and the next page's cursor.
async fn load_rows(state: &AppState, params: &AdminListParams, poll: bool) -> Result<(Vec<TaskRow>, i64, Option<String>), PageError> {
    let filter = task_filter(params.clone())?;
    let cursor = match params.cursor.as_deref() {
        Some(text) => Some(Cursor::decode(text).ok_or_else(|| PageError::new(StatusCode::BAD_REQUEST, "this page's cursor is not valid"))?),
        None => None,
    };
    let listing = tasks::page_of_tasks(&state.pool, &filter, cursor, PAGE_SIZE).await?;
    let names = user_names(state).await?;
    let rows = listing.tasks.iter().map(|t| TaskRow::new(t, names.get(&t.user_id).map_or("?", String::as_str), poll)).collect();
    Ok((rows, listing.total, listing.next_cursor))
}

/// `GET /admin/tasks`
pub async fn history(
    State(state): State<AppState>,
    session: AdminSession,
    params: Result<Query<AdminListParams>, QueryRejection>,
) -> Result<Response, PageError> {
    let params = tidy(params_or_error(params)?);
    let first_page = params.cursor.is_none();
    let (rows, total, next_cursor) = load_rows(&state, &params, !first_page).await?;
    let without_cursor = AdminListParams { cursor: None, ..params.clone() };
    let mut users: Vec<Choice> = vec![Choice { value: String::new(), label: "any user".into(), selected: params.user_id.is_none() }];
    let mut all_users = users::list_users(&state.pool).await?;
    all_users.sort_by(|a, b| a.name.cmp(&b.name));
    users.extend(all_users.into_iter().map(|u| Choice {
        selected: params.user_id.as_deref() == Some(u.id.to_string().as_str()),
        value: u.id.to_string(),
        label: u.name,
    }));
    let page = HistoryPage {
        chrome: Chrome { admin: session.user.name, csrf: session.csrf, section: "history" },
        q: params.q.clone().unwrap_or_default(),
        model: params.model.clone().unwrap_or_default(),
        since: params.since.clone().unwrap_or_default(),
        until: params.until.clone().unwrap_or_default(),
        users,
        statuses: choices([("", "any status")].into_iter().chain(TaskStatus::ALL.iter().map(|s| (s.as_str(), s.as_str()))), &params.status),
        verdicts: choices(
            [("", "any verdict")].into_iter().chain(
                ResultType::ALL.iter().map(|r| (r.as_str(), r.as_str())),
            ),
            &params.result_type,
        ),
        rows,
        total,
        live_url: first_page.then(|| url("/admin/tasks", &without_cursor)),
        next_url: next_cursor.map(|cursor| url("/admin/tasks", &AdminListParams { cursor: Some(cursor), ..without_cursor.clone() })),
        first_url: (!first_page).then(|| url("/admin/tasks", &without_cursor)),
    };
    Ok(html(&page))
}

/// `GET /admin/tasks/{id}/row`: one row, as it is now (an unfinished row polls this).
pub async fn row(State(state): State<AppState>, _session: AdminSession, Path(id): Path<String>) -> Result<Response, PageError> {
    let id = parse_uuid_or_404(&id)?;
    let task = tasks::find_task(&state.pool, id).await?.ok_or_else(|| PageError::new(StatusCode::NOT_FOUND, "no such task"))?;
    let user = users::find_user(&state.pool, task.user_id).await?.map(|u| u.name).unwrap_or_default();
    Ok(html(&RowFragment { row: TaskRow::new(&task, &user, true) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_carry_only_the_filters_that_are_set() {
        assert_eq!(url("/admin/tasks", &AdminListParams::default()), "/admin/tasks");
        let params = AdminListParams { status: Some("failed".into()), q: Some("开会 today".into()), ..AdminListParams::default() };
        assert_eq!(url("/admin/tasks", &params), "/admin/tasks?status=failed&q=%E5%BC%80%E4%BC%9A+today");
    }
}
