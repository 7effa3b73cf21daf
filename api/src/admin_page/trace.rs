//! A task's trace: the sentence, the timeline of model turns and tool calls (arguments, results,
//! errors, attempts, tokens split input / cached / output, latency, cost per step), the verdict with
//! its items and options (each linking to the item, marked when deleted since) and, for a sentence
//! of several actions, each action's own outcome; the buttons to cancel it while it runs or undo
//! what it changed (only when it changed something not undone yet). While the task runs, the trace
//! refreshes itself every second until the verdict is there. Also an item's page: the item as it
//! is now (deleted ones too) and the tasks that created and changed it.

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use quickact_shared::{
    domain::task::TaskRecord,
    planner::{
        history::{self, UndoState},
        store as items,
    },
    pricing::nanos_to_amount,
    telemetry::traces::trace_id_of,
    store::{
        steps::{self, Step, StepKind},
        tasks, users,
    },
};
use serde_json::Value;
use uuid::Uuid;

use super::{
    page::{Chrome, Moment, PageError, clip, duration_ms, html, money, pretty_json},
    session::{AdminSession, ButtonPress},
};
use crate::{
    actions::{
        parse_uuid_or_404,
        tasks::{cancel_task, undo_task},
    },
    state::AppState,
};

/// Longest JSON shown in full for one argument list or result.
const MAX_JSON_CHARS: usize = 6000;

/// An item the verdict names.
pub struct ItemLink {
    pub url: String,
    pub title: String,
    pub kind: String,
    pub when: String,
    pub status: String,
    /// Deleted since (by this task or later): the link still leads to what it was.
    pub deleted: bool,
}

impl ItemLink {
    fn from_json(user_id: Uuid, item: &Value, deleted: &[Uuid]) -> Option<Self> {
        let text = |key: &str| item[key].as_str().unwrap_or_default().to_owned();
        let id = item["id"].as_str()?;
        let mut when = text("date");
        match (item["start_time"].as_str(), item["end_time"].as_str(), item["segment"].as_str()) {
            (Some(start), Some(end), _) => when.push_str(&format!(" {start}-{end}")),
            (Some(start), None, _) => when.push_str(&format!(" {start}")),
            (None, _, Some(segment)) => when.push_str(&format!(" ({segment})")),
            _ => {}
        }
        Some(ItemLink {
            url: format!("/admin/users/{user_id}/items/{id}"),
            title: text("title"),
            kind: text("kind"),
            when,
            status: text("status"),
            deleted: id.parse::<Uuid>().is_ok_and(|id| deleted.contains(&id)),
        })
    }
}

/// One action of a sentence that asked for several, and how it went.
pub struct ActionRow {
    pub action: String,
    pub verdict: String,
    pub message: String,
    pub suggestion: String,
    pub items: Vec<ItemLink>,
    pub options: Vec<ItemLink>,
}

/// The ids of every item a verdict names (its items, options, and each action's).
fn item_ids(result: &Value) -> Vec<Uuid> {
    let lists = [&result["items"], &result["options"]]
        .into_iter()
        .chain(result["actions"].as_array().into_iter().flatten().flat_map(|action| [&action["items"], &action["options"]]));
    let mut ids: Vec<Uuid> = lists.flat_map(|list| list.as_array().into_iter().flatten()).filter_map(|item| item["id"].as_str()?.parse().ok()).collect();
    ids.sort();
    ids.dedup();
    ids
}

/// One journal step as the timeline shows it.
pub struct StepRow {
    pub seq: i32,
    pub model_turn: bool,
    pub name: String,
    pub ok: bool,
    pub error: String,
    /// Which run of the task wrote the step (a task resumed after a crash has several).
    pub attempt: i32,
    /// For a model turn: which request for this turn it was (1, then 2 after a failed one...).
    pub request: u32,
    /// A failed model request that the run retried (or gave up on).
    pub retry: bool,
    pub started_at: Moment,
    pub latency: String,
    pub input_tokens: i32,
    pub cached_tokens: i32,
    pub output_tokens: i32,
    pub cost: String,
    /// A model turn's words and the calls it asked for, in short.
    pub said: String,
    pub arguments: String,
    pub result: String,
}

impl StepRow {
    fn new(step: &Step, currency: &str, request: u32) -> Self {
        let model_turn = step.kind == StepKind::ModelTurn;
        let said = if model_turn { summarize_turn(step.result.as_ref()) } else { String::new() };
        StepRow {
            seq: step.seq,
            model_turn,
            name: step.name.clone(),
            ok: step.ok,
            error: step.error.clone().unwrap_or_default(),
            attempt: step.attempt,
            request,
            retry: model_turn && !step.ok,
            started_at: Moment::of(&step.started_at),
            latency: duration_ms(step.latency_ms as f64),
            input_tokens: step.input_tokens,
            cached_tokens: step.cached_tokens,
            output_tokens: step.output_tokens,
            cost: if model_turn { money(nanos_to_amount(step.cost_nanos), currency) } else { String::new() },
            said,
            arguments: step.arguments.as_ref().map(|a| pretty_json(a, MAX_JSON_CHARS)).unwrap_or_default(),
            result: step.result.as_ref().map(|r| pretty_json(r, MAX_JSON_CHARS)).unwrap_or_default(),
        }
    }
}

/// The steps in order, each model request numbered within its turn: failed requests count up until
/// one answers, so retries read as "request 2", "request 3".
fn numbered_steps(journal: &[Step], currency: &str) -> Vec<StepRow> {
    let mut request = 0;
    journal
        .iter()
        .map(|step| {
            let number = if step.kind == StepKind::ModelTurn {
                request += 1;
                request
            } else {
                0
            };
            if step.kind == StepKind::ModelTurn && step.ok {
                request = 0;
            }
            StepRow::new(step, currency, number)
        })
        .collect()
}

/// "calls search_items, finish" and the text of an assistant message.
fn summarize_turn(message: Option<&Value>) -> String {
    let Some(message) = message else { return String::new() };
    let calls: Vec<&str> = message["tool_calls"].as_array().into_iter().flatten().filter_map(|c| c["function"]["name"].as_str()).collect();
    let mut parts = Vec::new();
    if let Some(content) = message["content"].as_str().filter(|c| !c.trim().is_empty()) {
        parts.push(format!("“{}”", clip(content.trim(), 300)));
    }
    if !calls.is_empty() {
        parts.push(format!("calls {}", calls.join(", ")));
    }
    parts.join(" · ")
}

/// Everything of the trace that changes while the task runs.
#[derive(Template)]
#[template(path = "admin/trace_body.html")]
struct TraceBody {
    id: Uuid,
    user_id: Uuid,
    user_name: String,
    sentence: String,
    status: &'static str,
    running: bool,
    verdict_type: String,
    message: String,
    suggestion: String,
    /// Why an error verdict was given (`budget_exhausted`), and when that budget renews.
    reason: String,
    renews_at: Moment,
    items: Vec<ItemLink>,
    options: Vec<ItemLink>,
    actions: Vec<ActionRow>,
    created_at: Moment,
    started_at: Moment,
    completed_at: Moment,
    post_to_verdict: String,
    run: String,
    attempts: i32,
    timeout: i32,
    model: String,
    input_tokens: i64,
    cached_tokens: i64,
    output_tokens: i64,
    cost: String,
    reference_time: Moment,
    tz: String,
    steps: Vec<StepRow>,
    csrf: String,
    can_cancel: bool,
    can_undo: bool,
    /// How many items the task changed (what an undo would put back).
    changed_items: i64,
    /// The undo that reverted this task.
    undone_by: Option<Uuid>,
    /// For an undo: the task it reverted.
    undoes: Option<Uuid>,
    /// The task's OpenTelemetry trace id, when it was traced (docs/tracing.md).
    trace_id: Option<String>,
    /// Where the trace is shown (`QUICKACT_TRACE_URL` with the id in it), when that is configured.
    trace_link: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/trace.html")]
struct TracePage {
    chrome: Chrome,
    id: Uuid,
    /// The rendered [`TraceBody`], which also stands alone as the live fragment.
    body_html: String,
}

fn no_such_task() -> PageError {
    PageError::new(StatusCode::NOT_FOUND, "There is no task with this id.")
}

async fn trace_body(state: &AppState, id: Uuid, csrf: String) -> Result<TraceBody, PageError> {
    let mut conn = state.pool.acquire().await?;
    let task = tasks::find_task(&mut *conn, id).await?.ok_or_else(no_such_task)?;
    let journal = steps::steps_to_show(&mut conn, id, -1, !task.status.is_final()).await?;
    drop(conn);
    let user_name = users::find_user(&state.pool, task.user_id).await?.map(|u| u.name).unwrap_or_default();
    let deleted = match &task.result {
        Some(result) => history::deleted_items(&state.pool, task.user_id, &item_ids(result)).await?,
        None => Vec::new(),
    };
    // Only a finished task can be undone; what it left to undo is read once it is.
    let undo = if task.status.is_final() { Some(history::undo_state(&state.pool, id).await?) } else { None };
    let trace_id = task.trace_parent.as_deref().and_then(trace_id_of).map(str::to_owned);
    let trace_link = trace_id.as_deref().and_then(|id| Some(state.config.trace_url.as_ref()?.replace("{trace_id}", id)));
    Ok(TraceBody { trace_id, trace_link, ..body_of(task, &journal, user_name, csrf, &deleted, undo) })
}

fn body_of(task: TaskRecord, journal: &[Step], user_name: String, csrf: String, deleted: &[Uuid], undo: Option<UndoState>) -> TraceBody {
    let result = task.result.clone().unwrap_or(Value::Null);
    let user_id = task.user_id;
    let links = |list: &Value| -> Vec<ItemLink> { list.as_array().into_iter().flatten().filter_map(|item| ItemLink::from_json(user_id, item, deleted)).collect() };
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let actions = result["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|action| ActionRow {
            action: text(&action["action"]),
            verdict: text(&action["type"]),
            message: text(&action["message"]),
            suggestion: text(&action["suggestion"]),
            items: links(&action["items"]),
            options: links(&action["options"]),
        })
        .collect();
    let ms_between = |a: Option<chrono::DateTime<chrono::Utc>>, b: Option<chrono::DateTime<chrono::Utc>>| match (a, b) {
        (Some(a), Some(b)) => duration_ms((b - a).num_milliseconds() as f64),
        _ => String::new(),
    };
    TraceBody {
        id: task.id,
        user_id,
        user_name,
        sentence: task.input_text.clone(),
        status: task.status.as_str(),
        running: !task.status.is_final(),
        verdict_type: text(&result["type"]),
        message: text(&result["message"]),
        suggestion: text(&result["suggestion"]),
        reason: text(&result["reason"]),
        renews_at: Moment(result["renews_at"].as_str().and_then(|at| at.parse().ok())),
        items: links(&result["items"]),
        options: links(&result["options"]),
        actions,
        created_at: Moment::of(&task.created_at),
        started_at: Moment(task.started_at),
        completed_at: Moment(task.completed_at),
        post_to_verdict: ms_between(Some(task.created_at), task.completed_at),
        run: ms_between(task.started_at, task.completed_at),
        attempts: task.attempts,
        timeout: task.timeout_seconds,
        model: task.model_used.clone().unwrap_or_default(),
        input_tokens: task.input_tokens,
        cached_tokens: task.cached_tokens,
        output_tokens: task.output_tokens,
        cost: money(nanos_to_amount(task.cost_nanos), &task.currency),
        reference_time: Moment::of(&task.reference_time),
        tz: task.time_zone.clone(),
        steps: numbered_steps(journal, &task.currency),
        csrf,
        can_cancel: !task.status.is_final(),
        // A task that changed nothing, or whose changes were undone already, has nothing to undo.
        // One whose items were changed again since is still offered: the undo says why it refuses.
        can_undo: undo.as_ref().is_some_and(UndoState::can_undo),
        changed_items: undo.as_ref().map_or(0, |u| u.changed_items),
        undone_by: undo.and_then(|u| u.undone_by),
        undoes: task.undoes,
        trace_id: None,
        trace_link: None,
    }
}

fn chrome_of(session: &AdminSession) -> Chrome {
    Chrome { admin: session.user.name.clone(), csrf: session.csrf.clone(), section: "history" }
}

/// `GET /admin/tasks/{id}`
pub async fn trace(State(state): State<AppState>, session: AdminSession, Path(id): Path<String>) -> Result<Response, PageError> {
    let chrome = chrome_of(&session);
    let page = async {
        let id = parse_uuid_or_404(&id)?;
        let body = trace_body(&state, id, session.csrf.clone()).await?;
        let body_html = body.render().map_err(|err| PageError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the trace could not be shown: {err}")))?;
        Ok(html(&TracePage { chrome: chrome.clone(), id, body_html }))
    };
    page.await.map_err(|err: PageError| err.within(chrome))
}

/// `GET /admin/tasks/{id}/timeline`: the changing part of the trace (polled while it runs).
pub async fn timeline(State(state): State<AppState>, session: AdminSession, Path(id): Path<String>) -> Result<Response, PageError> {
    let id = parse_uuid_or_404(&id)?;
    Ok(html(&trace_body(&state, id, session.csrf).await?))
}

/// `POST /admin/tasks/{id}/cancel`: cancels a pending or running task of any user.
pub async fn cancel(State(state): State<AppState>, Path(id): Path<String>, ButtonPress(session): ButtonPress) -> Result<Response, PageError> {
    let back = format!("/admin/tasks/{id}");
    let chrome = chrome_of(&session);
    let cancelled = async {
        let id = parse_uuid_or_404(&id)?;
        cancel_task(&state, &session.user, id).await?;
        Ok(Redirect::to(&format!("/admin/tasks/{id}")).into_response())
    };
    cancelled.await.map_err(|err: PageError| err.within(chrome).back_to(back, "Back to the task"))
}

/// `POST /admin/tasks/{id}/undo`: reverts what the task changed, through the action of
/// `POST /api/quick-action/{id}/undo` (as the admin), and shows the undo task. A refusal (409:
/// changed again since, undone already...) is shown with a link back to the task.
pub async fn undo(State(state): State<AppState>, Path(id): Path<String>, ButtonPress(session): ButtonPress) -> Result<Response, PageError> {
    let back = format!("/admin/tasks/{id}");
    let chrome = chrome_of(&session);
    let undone = async {
        let undo = undo_task(&state, &session.user, parse_uuid_or_404(&id)?).await?;
        Ok(Redirect::to(&format!("/admin/tasks/{}", undo.task_id)).into_response())
    };
    undone.await.map_err(|err: PageError| err.within(chrome).back_to(back, "Back to the task"))
}

/// A field of an item as its page shows it: text, or a moment.
pub struct Field {
    pub name: String,
    pub text: String,
    pub moment: Option<Moment>,
}

/// A task that created or changed the item.
pub struct ChangeRow {
    pub kind: &'static str,
    pub at: Moment,
    pub task_id: Uuid,
    pub task_text: String,
    pub undo: bool,
}

#[derive(Template)]
#[template(path = "admin/item.html")]
struct ItemPage {
    chrome: Chrome,
    user_id: Uuid,
    user_name: String,
    id: Uuid,
    found: bool,
    title: String,
    fields: Vec<Field>,
    json: String,
    deleted_at: Moment,
    changes: Vec<ChangeRow>,
    /// What the recorded changes do not tell: writes through the item routes.
    notes: Vec<&'static str>,
}

/// `GET /admin/users/{user_id}/items/{id}`: an item a verdict named, as it is now (deleted or
/// not), and the tasks that created and changed it.
pub async fn item(State(state): State<AppState>, session: AdminSession, Path((user_id, id)): Path<(String, String)>) -> Result<Response, PageError> {
    let chrome = chrome_of(&session);
    let page = async {
        let (user_id, id) = (parse_uuid_or_404(&user_id)?, parse_uuid_or_404(&id)?);
        let user = users::find_user(&state.pool, user_id).await?.ok_or_else(|| PageError::new(StatusCode::NOT_FOUND, "There is no user with this id."))?;
        let found = items::find_item_even_deleted(&state.pool, user_id, id).await?.map(|item| item.to_json());
        let provenance = history::provenance(&state.pool, user_id, id).await?;
        let changes = history::changes_of_item(&state.pool, user_id, id).await?;
        let mut notes = Vec::new();
        if found.is_some() && changes.first().is_none_or(|c| c.kind != history::ChangeKind::Created) {
            notes.push("It was created through the item routes (/api/items), not by a task.");
        }
        if !changes.is_empty() && provenance.as_ref().is_some_and(|p| p.changed_without_a_task) {
            notes.push("It was changed since through the item routes (/api/items), not by a task.");
        }
        let changes = changes
            .into_iter()
            .map(|c| ChangeRow { kind: c.kind.as_str(), at: Moment(c.at), task_id: c.task_id, task_text: clip(&c.task_text, 120), undo: c.undoes.is_some() })
            .collect();
        let fields = found
            .as_ref()
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, value)| {
                let text = value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string());
                // Timestamps (created_at, updated_at, completed_at) read in the chosen zone like every time.
                let moment = name.ends_with("_at").then(|| value.as_str()?.parse().ok()).flatten().map(|at| Moment(Some(at)));
                Field { name: name.clone(), text, moment }
            })
            .collect();
        Ok(html(&ItemPage {
            chrome: chrome.clone(),
            user_id,
            user_name: user.name,
            id,
            found: found.is_some(),
            title: found.as_ref().and_then(|item| item["title"].as_str()).unwrap_or_default().to_owned(),
            json: found.as_ref().map(|item| pretty_json(item, MAX_JSON_CHARS)).unwrap_or_default(),
            fields,
            deleted_at: Moment(provenance.as_ref().and_then(|p| p.deleted_at)),
            changes,
            notes,
        }))
    };
    page.await.map_err(|err: PageError| err.within(chrome))
}
