//! Cost budgets: `GET /api/budget` (the caller's own), `GET/PUT /api/admin/users/{id}/budget`
//! (admins: anyone's, and setting a user's own limits). What a budget is and when it refuses a task:
//! `quickact_shared::domain::cost_budget`.

use axum::{
    Json,
    extract::{Path, State},
};
use chrono::{DateTime, Utc};
use quickact_shared::{
    domain::cost_budget::{BudgetLimits, BudgetPeriod, limit_nanos, refusal},
    pricing::nanos_to_amount,
    store::cost_budgets::{UserBudget, set_user_limits, user_budget},
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    actions::parse_uuid_or_404,
    error::ApiError,
    extract::{Admin, Caller, JsonBody},
    openapi::ErrorBody,
    state::AppState,
};

/// A user's cost budgets: per UTC day and per UTC month, amounts in the deployment's currency.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BudgetView {
    pub user_id: Uuid,
    pub name: String,
    pub currency: String,
    pub day: PeriodBudgetView,
    pub month: PeriodBudgetView,
    /// Whether the next paid model turn of the user's tasks would be refused (a task then ends with
    /// an error verdict, `reason: "budget_exhausted"`).
    pub exhausted: bool,
}

/// One period's budget.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PeriodBudgetView {
    /// The limit that applies: the user's own, else the deployment's default; `null`: no limit.
    pub limit: Option<f64>,
    /// The user's own limit; `null` follows the deployment's default.
    pub own_limit: Option<f64>,
    /// The deployment's default (`QUICKACT_BUDGET_PER_DAY` / `_PER_MONTH`); `null`: none.
    pub default_limit: Option<f64>,
    /// Spent on model turns in this period so far.
    pub spent: f64,
    /// What is left (0 once the limit is reached); `null` without a limit.
    pub remaining: Option<f64>,
    /// Tasks a budget refused in this period.
    pub refusals: i64,
    /// When the period began (UTC midnight).
    pub period_start: DateTime<Utc>,
    /// When the period ends and its spend starts again from 0.
    pub renews_at: DateTime<Utc>,
}

/// A user's budget as the API shows it, with the deployment's defaults and currency.
pub fn budget_view(budget: &UserBudget, defaults: BudgetLimits, currency: &str) -> BudgetView {
    let limits = budget.own.over(defaults);
    let now = budget.spend.now;
    let amount = |nanos: Option<i64>| nanos.map(nanos_to_amount);
    let period = |period: BudgetPeriod, refusals: i64| {
        let spent = budget.spend.of(period);
        PeriodBudgetView {
            limit: amount(limits.of(period)),
            own_limit: amount(budget.own.of(period)),
            default_limit: amount(defaults.of(period)),
            spent: nanos_to_amount(spent),
            remaining: amount(limits.of(period).map(|limit| (limit - spent).max(0))),
            refusals,
            period_start: period.start(now),
            renews_at: period.renews_at(now),
        }
    };
    BudgetView {
        user_id: budget.user_id,
        name: budget.name.clone(),
        currency: currency.to_owned(),
        day: period(BudgetPeriod::Day, budget.refusals_today),
        month: period(BudgetPeriod::Month, budget.refusals_this_month),
        exhausted: refusal(limits, &budget.spend, 0, currency).is_some(),
    }
}

/// A user's own limits. `null` (or leaving a field out) follows the deployment's default.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"per_day": 5.0, "per_month": 100.0}))]
pub struct SetBudgetRequest {
    /// Most the user may spend per UTC day, in the deployment's currency (0 to 10^9; 0 allows no
    /// paid model turn).
    #[serde(default)]
    pub per_day: Option<f64>,
    /// Most the user may spend per UTC month.
    #[serde(default)]
    pub per_month: Option<f64>,
}

impl SetBudgetRequest {
    /// The limits in nano-units, or 400 for a value out of range.
    pub fn limits(&self) -> Result<BudgetLimits, ApiError> {
        let nanos = |name: &str, amount: Option<f64>| {
            amount.map(limit_nanos).transpose().map_err(|reason| ApiError::bad_request("invalid_input", format!("{name}: {reason}")))
        };
        Ok(BudgetLimits { per_day_nanos: nanos("per_day", self.per_day)?, per_month_nanos: nanos("per_month", self.per_month)? })
    }
}

/// The caller's own budgets and spend.
#[utoipa::path(get, operation_id = "get_budget", path = "/api/budget", tag = "budgets",
    responses((status = 200, description = "The caller's budgets", body = BudgetView)))]
pub async fn own(State(state): State<AppState>, Caller(user): Caller) -> Result<Json<BudgetView>, ApiError> {
    read_budget(&state, user.id).await.map(Json)
}

/// Any user's budgets and spend.
#[utoipa::path(get, operation_id = "admin_get_user_budget", path = "/api/admin/users/{id}/budget", tag = "admin",
    params(("id" = Uuid, Path, description = "The user")),
    responses(
        (status = 200, description = "The user's budgets", body = BudgetView),
        (status = 404, description = "No such user", body = ErrorBody),
    ))]
pub async fn get_user_budget(State(state): State<AppState>, Admin(_): Admin, Path(id): Path<String>) -> Result<Json<BudgetView>, ApiError> {
    read_budget(&state, parse_uuid_or_404(&id)?).await.map(Json)
}

/// Set a user's own limits (e.g. raise them); the next paid model turn of their tasks goes by them.
#[utoipa::path(put, operation_id = "admin_set_user_budget", path = "/api/admin/users/{id}/budget", tag = "admin",
    params(("id" = Uuid, Path, description = "The user")), request_body = SetBudgetRequest,
    responses(
        (status = 200, description = "The user's budgets, as set", body = BudgetView),
        (status = 404, description = "No such user", body = ErrorBody),
    ))]
pub async fn set_user_budget(
    State(state): State<AppState>,
    Admin(admin): Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<serde_json::Map<String, serde_json::Value>>,
) -> Result<Json<BudgetView>, ApiError> {
    let id = parse_uuid_or_404(&id)?;
    // Read from an object only: serde would take `[5, 100]` as the fields in order.
    let request: SetBudgetRequest =
        serde_json::from_value(body.into()).map_err(|err| ApiError::bad_request("invalid_input", err.to_string()))?;
    set_limits(&state, &admin, id, request.limits()?).await?;
    read_budget(&state, id).await.map(Json)
}

/// Sets user `id`'s own limits (also the admin page's form); 404 for an unknown user.
pub async fn set_limits(state: &AppState, admin: &quickact_shared::domain::user::User, id: Uuid, limits: BudgetLimits) -> Result<(), ApiError> {
    if !set_user_limits(&state.pool, id, limits).await? {
        return Err(ApiError::NotFound("no such user"));
    }
    tracing::info!(user_id = %id, set_by = %admin.id, per_day_nanos = ?limits.per_day_nanos, per_month_nanos = ?limits.per_month_nanos, "budget set");
    Ok(())
}

async fn read_budget(state: &AppState, id: Uuid) -> Result<BudgetView, ApiError> {
    let budget = user_budget(&state.pool, id).await?.ok_or(ApiError::NotFound("no such user"))?;
    Ok(budget_view(&budget, state.config.model.budgets, &state.config.model.currency))
}
