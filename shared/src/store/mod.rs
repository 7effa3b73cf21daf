//! SQL on our tables. Every function takes `impl PgExecutor`, so it runs on a pool or inside the
//! caller's transaction.
//!
//! - [`tasks`]: creating, reading and listing tasks; the worker's claim and lease.
//! - [`ending`]: how a task ends: its verdict, built from the journal, and its final state.
//! - [`steps`]: the journal of a run.
//! - [`users`]: users and their API keys.
//! - [`budgets`]: per-user request budgets shared by every API process (the submit rate limit).
//! - [`cost_budgets`]: users' cost limits and what they spent per day (refusals too).
//! - [`providers`]: the fleet's budgets and pauses of each model (provider limits).
//! - [`admin_sessions`]: sessions of the admin web page.
//! - [`mcp_servers`]: MCP servers admins registered through the API, for everyone or one user.
//! - [`mcp_tokens`]: users' own tokens for the deployment's MCP servers.
//! - [`stats`]: outcomes, latency, tokens and cost over a window; the queue and workers now.
//! - [`webhooks`]: webhook endpoints, their deliveries (the outbox) and attempts.
pub mod admin_sessions;
pub mod budgets;
pub mod cost_budgets;
pub mod ending;
pub mod mcp_servers;
pub mod mcp_tokens;
pub mod providers;
pub mod stats;
pub mod steps;
pub mod tasks;
pub mod users;
pub mod webhooks;

/// One column of `rows`, for a statement that inserts them all at once (`UNNEST` of arrays).
pub fn column<'r, R, T>(rows: &'r [R], field: impl Fn(&'r R) -> T) -> Vec<T> {
    rows.iter().map(field).collect()
}
