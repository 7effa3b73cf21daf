//! Users, their keys and their cost budgets: the list of users with what each spent today and this
//! month against their budget, a form to create one (its first key shown once), and each user's
//! keys with a button to revoke one and their budget with a form to set it. Through the same code
//! as `POST /api/admin/users`, `DELETE /api/admin/keys/{id}` and
//! `PUT /api/admin/users/{id}/budget`.

use askama::Template;
use axum::{
    Form,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
};
use std::collections::HashMap;

use quickact_shared::{
    domain::{cost_budget::BudgetLimits, user::User},
    pricing::{amount_text, nanos_to_amount},
    store::{cost_budgets, users},
};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    page::{Chrome, Moment, PageError, html, html_with_status, money},
    session::{AdminSession, ButtonPress},
};
use crate::{
    actions::parse_uuid_or_404,
    routes::{
        admin::{create_user_with_key, revoke_any_key},
        budgets::{BudgetView, PeriodBudgetView, SetBudgetRequest, budget_view, set_limits},
    },
    state::AppState,
};

pub struct UserRow {
    pub id: Uuid,
    pub name: String,
    pub is_admin: bool,
    pub tz: String,
    pub model: String,
    pub created_at: Moment,
}

impl From<User> for UserRow {
    fn from(u: User) -> Self {
        UserRow { id: u.id, name: u.name, is_admin: u.is_admin, tz: u.time_zone, model: u.model.unwrap_or_default(), created_at: Moment::of(&u.created_at) }
    }
}

/// One period of a user's budget as the pages show it.
pub struct PeriodCell {
    /// What was spent, e.g. `0.36 CNY`.
    pub spent: String,
    /// The limit that applies (`no limit`), and whether it is the user's own or the default.
    pub limit: String,
    pub own: bool,
    /// The user's own limit as the form's value (empty: the default).
    pub own_value: String,
    /// Spent of the limit in percent, for the meter (none without a limit).
    pub percent: Option<u32>,
    pub remaining: String,
    pub refusals: i64,
    pub renews_at: Moment,
}

/// A user's budget as the pages show it.
pub struct BudgetCells {
    pub day: PeriodCell,
    pub month: PeriodCell,
    pub exhausted: bool,
}

impl BudgetCells {
    /// The periods with their names, for a table's rows or cells.
    pub fn periods(&self) -> Vec<(&'static str, &PeriodCell)> {
        vec![("today", &self.day), ("this month", &self.month)]
    }

    fn of(view: &BudgetView) -> Self {
        let cell = |period: &PeriodBudgetView| PeriodCell {
            spent: money(period.spent, &view.currency),
            limit: period.limit.map_or_else(|| "no limit".to_owned(), |limit| money(limit, &view.currency)),
            own: period.own_limit.is_some(),
            own_value: period.own_limit.map(amount_text).unwrap_or_default(),
            percent: period.limit.map(|limit| if limit > 0.0 { ((period.spent / limit) * 100.0).round().min(100.0) as u32 } else { 100 }),
            remaining: period.remaining.map_or_else(|| "—".to_owned(), |left| money(left, &view.currency)),
            refusals: period.refusals,
            renews_at: Moment::of(&period.renews_at),
        };
        BudgetCells { day: cell(&view.day), month: cell(&view.month), exhausted: view.exhausted }
    }
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct UsersPage {
    chrome: Chrome,
    users: Vec<(UserRow, Option<BudgetCells>)>,
    /// Tasks a budget refused today and this month, all users together.
    refusals_today: i64,
    refusals_this_month: i64,
    /// The deployment's default budgets, as a sentence.
    defaults: String,
    /// A user just created and their key, shown this once.
    created: Option<(UserRow, String)>,
    error: Option<String>,
}

async fn users_page(state: &AppState, session: AdminSession, created: Option<(UserRow, String)>, error: Option<String>) -> Result<UsersPage, PageError> {
    let (defaults, currency) = (state.config.model.budgets, &state.config.model.currency);
    let mut budgets: HashMap<Uuid, BudgetView> =
        cost_budgets::all_user_budgets(&state.pool).await?.iter().map(|b| (b.user_id, budget_view(b, defaults, currency))).collect();
    let refusals_today = budgets.values().map(|b| b.day.refusals).sum();
    let refusals_this_month = budgets.values().map(|b| b.month.refusals).sum();
    let users = users::list_users(&state.pool)
        .await?
        .into_iter()
        .map(|user| {
            let cells = budgets.remove(&user.id).as_ref().map(BudgetCells::of);
            (UserRow::from(user), cells)
        })
        .collect();
    Ok(UsersPage {
        chrome: Chrome { admin: session.user.name, csrf: session.csrf, section: "users" },
        users,
        refusals_today,
        refusals_this_month,
        defaults: describe_defaults(defaults, currency),
        created,
        error,
    })
}

/// `GET /admin/users`
pub async fn list(State(state): State<AppState>, session: AdminSession) -> Result<Response, PageError> {
    Ok(html(&users_page(&state, session, None, None).await?))
}

#[derive(Deserialize)]
pub struct CreateForm {
    csrf: Option<String>,
    name: String,
    #[serde(default)]
    is_admin: Option<String>,
    #[serde(default)]
    tz: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// `POST /admin/users`: creates a user and shows their key once (the page is not cached).
pub async fn create(State(state): State<AppState>, session: AdminSession, headers: HeaderMap, Form(form): Form<CreateForm>) -> Result<Response, PageError> {
    session.check_form(&headers, form.csrf.as_deref())?;
    let is_admin = form.is_admin.is_some();
    match create_user_with_key(&state, &session.user, &form.name, is_admin, form.tz.as_deref(), form.model.as_deref()).await {
        Ok((user, key)) => Ok(html_with_status(StatusCode::CREATED, &users_page(&state, session, Some((UserRow::from(user), key)), None).await?)),
        Err(err) => {
            let status = err.status();
            if status.is_server_error() {
                return Err(err.into());
            }
            Ok(html_with_status(status, &users_page(&state, session, None, Some(err.to_string())).await?))
        }
    }
}

pub struct KeyRow {
    pub id: Uuid,
    pub prefix: String,
    pub created_at: Moment,
    pub revoked_at: Moment,
}

/// The deployment's default budgets in a few words.
fn describe_defaults(defaults: BudgetLimits, currency: &str) -> String {
    let limit = |nanos: Option<i64>| nanos.map_or_else(|| "no limit".to_owned(), |n| money(nanos_to_amount(n), currency));
    format!("{} a day, {} a month", limit(defaults.per_day_nanos), limit(defaults.per_month_nanos))
}

#[derive(Template)]
#[template(path = "admin/user.html")]
struct UserPage {
    chrome: Chrome,
    user: UserRow,
    keys: Vec<KeyRow>,
    budget: BudgetCells,
    currency: String,
    defaults: String,
    /// Why the budget form was refused, shown above it.
    budget_error: Option<String>,
}

/// `GET /admin/users/{id}`: a user, their keys and their budget.
pub async fn detail(State(state): State<AppState>, session: AdminSession, Path(id): Path<String>) -> Result<Response, PageError> {
    Ok(html(&user_page(&state, session, parse_uuid_or_404(&id)?, None).await?))
}

async fn user_page(state: &AppState, session: AdminSession, id: Uuid, budget_error: Option<String>) -> Result<UserPage, PageError> {
    let not_found = || PageError::new(StatusCode::NOT_FOUND, "no such user");
    let user = users::find_user(&state.pool, id).await?.ok_or_else(not_found)?;
    let budget = cost_budgets::user_budget(&state.pool, id).await?.ok_or_else(not_found)?;
    let (defaults, currency) = (state.config.model.budgets, &state.config.model.currency);
    let keys = users::list_api_keys(&state.pool, id)
        .await?
        .into_iter()
        .map(|k| KeyRow { id: k.id, prefix: k.prefix, created_at: Moment::of(&k.created_at), revoked_at: Moment(k.revoked_at) })
        .collect();
    Ok(UserPage {
        chrome: Chrome { admin: session.user.name, csrf: session.csrf, section: "users" },
        user: UserRow::from(user),
        keys,
        budget: BudgetCells::of(&budget_view(&budget, defaults, currency)),
        currency: currency.clone(),
        defaults: describe_defaults(defaults, currency),
        budget_error,
    })
}

#[derive(Deserialize)]
pub struct BudgetForm {
    csrf: Option<String>,
    #[serde(default)]
    per_day: String,
    #[serde(default)]
    per_month: String,
}

/// `POST /admin/users/{id}/budget`: sets the user's own limits (an empty field follows the
/// deployment's default) and shows the user again; a value out of range is shown above the form.
pub async fn set_budget(
    State(state): State<AppState>,
    session: AdminSession,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<BudgetForm>,
) -> Result<Response, PageError> {
    session.check_form(&headers, form.csrf.as_deref())?;
    let id = parse_uuid_or_404(&id)?;
    let amount = |name: &str, text: &str| -> Result<Option<f64>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse::<f64>().map(Some).map_err(|_| format!("{name}: {text:?} is not a number"))
    };
    let limits = amount("per day", &form.per_day)
        .and_then(|per_day| Ok(SetBudgetRequest { per_day, per_month: amount("per month", &form.per_month)? }))
        .and_then(|request| request.limits().map_err(|err| err.to_string()));
    match limits {
        Ok(limits) => {
            set_limits(&state, &session.user, id, limits).await?;
            Ok(Redirect::to(&format!("/admin/users/{id}")).into_response())
        }
        Err(message) => Ok(html_with_status(StatusCode::BAD_REQUEST, &user_page(&state, session, id, Some(message)).await?)),
    }
}

/// `POST /admin/keys/{id}/revoke`: revokes a key (at once on every API process) and shows its user.
pub async fn revoke(State(state): State<AppState>, Path(id): Path<String>, ButtonPress(session): ButtonPress) -> Result<Response, PageError> {
    let owner = revoke_any_key(&state, &session.user, parse_uuid_or_404(&id)?).await?;
    Ok(Redirect::to(&format!("/admin/users/{owner}")).into_response())
}
