//! Per-user request budgets shared by every API process: the submit rate limit.
//!
//! A generic cell rate algorithm (GCRA, as in `governor` and Redis's `redis-cell`) over one row per
//! user in an unlogged table: `rate` requests per minute, in bursts of up to `rate`. Each request is
//! one statement that both checks and spends, so concurrent API processes never admit more than
//! the budget between them.

use std::time::Duration;

use sqlx::PgExecutor;
use uuid::Uuid;

/// Spends one request of `user_id`'s budget of `per_minute` submissions (bursts of up to
/// `per_minute`). `Err(wait)` when the budget is spent: the next request is admitted after `wait`.
pub async fn take_submit_budget(
    db: impl PgExecutor<'_> + Copy,
    user_id: Uuid,
    per_minute: u32,
) -> Result<Result<(), Duration>, sqlx::Error> {
    let interval = 60.0 / f64::from(per_minute.max(1));
    let tolerance = interval * f64::from(per_minute.max(1) - 1);
    let admitted = sqlx::query_scalar!(
        r#"INSERT INTO submit_budgets AS b (user_id, tat) VALUES ($1, now() + make_interval(secs => $2))
           ON CONFLICT (user_id) DO UPDATE SET tat = greatest(b.tat, now()) + make_interval(secs => $2)
           WHERE greatest(b.tat, now()) - now() <= make_interval(secs => $3)
           RETURNING true AS "admitted!""#,
        user_id,
        interval,
        tolerance,
    )
    .fetch_optional(db)
    .await?;
    if admitted.is_some() {
        return Ok(Ok(()));
    }
    let wait = sqlx::query_scalar!(
        r#"SELECT extract(epoch FROM tat - now())::float8 - $2 AS "wait!" FROM submit_budgets WHERE user_id = $1"#,
        user_id,
        tolerance,
    )
    .fetch_optional(db)
    .await?
    .unwrap_or(interval);
    Ok(Err(Duration::from_secs_f64(wait.clamp(0.0, 60.0))))
}
