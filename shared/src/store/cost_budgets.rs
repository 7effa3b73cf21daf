//! Cost budgets in the database: users' own limits (columns of `users`) and what they spent
//! (`user_spend`, one row per user and UTC day; `migrations/20261130000001_schema.sql`).
//!
//! The spend is written by the statements that add a paid turn's cost to its task (the ledger's
//! writes and the endings, in [`super::tasks`] and [`super::ending`]), in the same transaction, so
//! it always equals the sum of the costs recorded that day. Reading a user's spend is one statement
//! over at most 31 rows of the primary key: a run makes it before each paid model turn.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::domain::cost_budget::{BudgetLimits, Spend};

/// A user's budget as stored: their own limits, their spend this UTC day and month, and the budget
/// refusals of their tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct UserBudget {
    pub user_id: Uuid,
    pub name: String,
    /// The user's own limits; `None` follows the deployment's default.
    pub own: BudgetLimits,
    pub spend: Spend,
    pub refusals_today: i64,
    pub refusals_this_month: i64,
}

struct Row {
    user_id: Uuid,
    name: String,
    budget_per_day_nanos: Option<i64>,
    budget_per_month_nanos: Option<i64>,
    day_nanos: i64,
    month_nanos: i64,
    refusals_today: i64,
    refusals_this_month: i64,
    now: DateTime<Utc>,
}

impl From<Row> for UserBudget {
    fn from(row: Row) -> Self {
        UserBudget {
            user_id: row.user_id,
            name: row.name,
            own: BudgetLimits { per_day_nanos: row.budget_per_day_nanos, per_month_nanos: row.budget_per_month_nanos },
            spend: Spend { day_nanos: row.day_nanos, month_nanos: row.month_nanos, now: row.now },
            refusals_today: row.refusals_today,
            refusals_this_month: row.refusals_this_month,
        }
    }
}

/// `query_as!` of [`Row`]s: every user matching `$where` with their spend of the current UTC month.
macro_rules! query_budgets {
    ($where:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Row,
            r#"SELECT u.id AS user_id, u.name, u.budget_per_day_nanos, u.budget_per_month_nanos,
                      coalesce(sum(s.cost_nanos) FILTER (WHERE s.day = (now() AT TIME ZONE 'UTC')::date), 0)::int8 AS "day_nanos!",
                      coalesce(sum(s.cost_nanos), 0)::int8 AS "month_nanos!",
                      coalesce(sum(s.refusals) FILTER (WHERE s.day = (now() AT TIME ZONE 'UTC')::date), 0)::int8 AS "refusals_today!",
                      coalesce(sum(s.refusals), 0)::int8 AS "refusals_this_month!",
                      now() AS "now!"
               FROM users u
               LEFT JOIN user_spend s
                 ON s.user_id = u.id AND s.day >= date_trunc('month', now() AT TIME ZONE 'UTC')::date "# + $where
            $(, $arg)*
        )
    };
}

/// User `user_id`'s budget, `None` for an unknown user.
pub async fn user_budget(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<Option<UserBudget>, sqlx::Error> {
    let row = query_budgets!("WHERE u.id = $1 GROUP BY u.id", user_id).fetch_optional(db).await?;
    Ok(row.map(UserBudget::from))
}

/// Every user's budget, oldest user first (the admin page's table).
pub async fn all_user_budgets(db: impl PgExecutor<'_>) -> Result<Vec<UserBudget>, sqlx::Error> {
    let rows = query_budgets!("GROUP BY u.id ORDER BY u.created_at, u.id").fetch_all(db).await?;
    Ok(rows.into_iter().map(UserBudget::from).collect())
}

/// Sets user `user_id`'s own limits (`None`: follow the deployment's default). False for an unknown
/// user. Runs read the limits before each paid turn, so the next turn of any of the user's tasks
/// goes by them.
pub async fn set_user_limits(db: impl PgExecutor<'_>, user_id: Uuid, own: BudgetLimits) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE users SET budget_per_day_nanos = $2, budget_per_month_nanos = $3 WHERE id = $1",
        user_id,
        own.per_day_nanos,
        own.per_month_nanos,
    )
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Tasks a budget refused this UTC day, all users together (the API's `/metrics`).
pub async fn refusals_today(db: impl PgExecutor<'_>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT coalesce(sum(refusals), 0)::int8 AS "refusals!" FROM user_spend WHERE day = (now() AT TIME ZONE 'UTC')::date"#
    )
    .fetch_one(db)
    .await
}
