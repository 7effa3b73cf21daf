//! What the quickact API and worker share.
//!
//! # Layout
//! - [`config`]: typed configuration from environment variables.
//! - [`credentials`]: the API keys (and users) a process has seen lately, kept true by
//!   notifications.
//! - [`db`]: the connection pools, outages seen, durable flushes.
//! - [`schema`]: migrations, and the SQL functions and triggers, each written once.
//! - [`unavailable`]: telling "database down" from other failures.
//! - [`domain`]: tasks, verdicts and users as the service speaks of them.
//! - [`store`]: the SQL behind them (plain functions over `impl PgExecutor`, so they work on a pool
//!   or inside a transaction).
//! - [`queue`]: the queue, which is the task table: fetch (which claims), hand-back, heartbeats.
//! - [`notify`]: LISTEN/NOTIFY fanned out in process (long-poll wakeups, waiting-task wakeups).
//! - [`provider_pauses`]: the pauses models asked for, as this process heard them.
//! - [`batch`]: many callers' requests served together, one statement or commit for all
//!   (submissions, reads, endings, local runs), with one answer type.
//! - [`planner`]: the items the agent acts on (store, rules).
//! - [`sweeper`]: overdue tasks and retention, swept by every process.
//! - [`pricing`]: per-model prices and the cost of a turn.
//! - [`metrics`]: the Prometheus metrics both processes export, and their fixed labels.
//! - [`telemetry`]: logging (text or JSON) and the shutdown signal.
//! - [`phrases`]: the words of the answers the backend writes, in the sentence's language.
//! - [`views`]: tasks and steps as clients (and webhook receivers) see them.
//! - [`webhooks`]: webhooks when a task ends: configuration, secrets, allowed destinations, retries.
//! - [`secrets`]: users' secrets that must be sent on (MCP tokens), encrypted at rest with the
//!   deployment's keys.
//!
//! The time resolver the planner reads dates with is a crate of its own, `quickact-time`
//! (`shared/time/`).

pub mod batch;
pub mod config;
pub mod credentials;
pub mod db;
pub mod domain;
pub mod metrics;
pub mod planner;
pub mod notify;
pub mod phrases;
pub mod pricing;
pub mod provider_pauses;
pub mod queue;
pub mod schema;
pub mod secrets;
pub mod store;
pub mod sweeper;
pub mod telemetry;
pub mod unavailable;
pub mod views;
pub mod webhooks;
