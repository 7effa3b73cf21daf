//! The quickact worker: takes quick-action tasks off the Postgres queue and runs the tool-calling
//! agent for each until it reaches a verdict.
//!
//! # Layout
//! - [`queue`]: the apalis backend over the task table: claimed tasks, as room frees up.
//! - [`runner`]: one task from claim to final state: lease, cancellation, timeout, retries, panics.
//! - [`groups`]: local runs committed many at a time, in one transaction.
//! - [`agent`]: the loop of model turns and tool calls, journaled step by step.
//! - [`provider`]: model providers behind one interface (OpenAI-compatible, local; which serves a
//!   task; lenient parsing).
//! - [`tools`]: the tool registry and the tools the model may call.
//! - [`mcp`]: external tools: the tools of the deployment's MCP servers.
//! - [`metrics`]: the worker's `GET /metrics` listener (`QUICKACT_WORKER_METRICS_BIND`).
//! - [`webhooks`]: delivery of the webhooks of task endings (the outbox), signed, with retries.
//!
//! [`serve`] runs a worker until a shutdown future completes, so tests start and stop workers in
//! process; `main` wires it to SIGINT/SIGTERM.

pub mod agent;
pub mod claim;
pub mod groups;
pub mod mcp;
pub mod metrics;
pub mod provider;
pub mod queue;
pub mod runner;
pub mod tools;
pub mod webhooks;

use std::{sync::Arc, time::Duration};

use quickact_shared::{config::Config, db, notify::Notifications, schema};
use rand::Rng;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::{provider::choice::ConfiguredProviders, runner::Runner, tools::ToolRegistry};

/// A boxed error for startup paths.
pub type StartupError = Box<dyn std::error::Error + Send + Sync>;

/// Makes rustls use the `ring` crypto provider (the one sqlx's TLS already links), once per process.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A name unique to this process, which begins the holder of each lease it takes (tasks, webhook
/// deliveries): the configured prefix, the process id and a random suffix (process ids repeat across
/// containers).
pub fn process_name(prefix: &str) -> String {
    let suffix: u32 = rand::rng().random();
    format!("{prefix}-{}-{suffix:08x}", std::process::id())
}

/// Connects, migrates (unless told not to) and builds the runner.
pub async fn prepare(config: &Config, stop: CancellationToken) -> Result<Arc<Runner>, StartupError> {
    install_crypto_provider();
    let url = config.database_url.clone().ok_or("DATABASE_URL is not set")?;
    // A run holds a connection only for its short statements, never while it waits on a model:
    // the main pool needs no more than twice the runs, and at most its share of the process's
    // connections (a larger cap bought nothing measurable with the slow model at 2,048 runs:
    // docs/performance.md).
    let pools = db::WorkerPools::within(config.worker.database_connections);
    let connections = (config.worker.concurrency as u32 * 2 + 4).min(pools.main);
    let pool = db::connect(&url, connections, Duration::from_secs(60)).await?;
    if !config.skip_migrations {
        schema::migrate(&pool).await?;
    }
    db::warn_if_the_fleet_may_not_fit(&pool, config.worker.database_connections).await;
    build_runner(config, pool, stop)
}

/// Builds the runner over an existing pool (tests share theirs).
pub fn build_runner(config: &Config, pool: PgPool, stop: CancellationToken) -> Result<Arc<Runner>, StartupError> {
    install_crypto_provider();
    quickact_shared::metrics::install();
    tokio::spawn(quickact_shared::sweeper::run_until_stopped(pool.clone(), config.sweeper, stop.clone()));
    let notifications = Notifications::start(pool.clone(), stop.clone());
    let providers = ConfiguredProviders::from_config(&config.model)?;
    let name = process_name(&config.worker.name_prefix);
    webhooks::start(pool.clone(), notifications.clone(), config.webhooks.clone(), name.clone(), stop);
    Ok(Runner::new(
        pool,
        notifications,
        name,
        config.worker.clone(),
        config.model.clone(),
        Arc::new(providers),
        ToolRegistry::standard(config.planner).with_external(Some(mcp::McpServers::new(&config.mcp_servers, config.secrets.clone()))),
    ))
}

/// Takes tasks until `shutdown` completes; then stops taking tasks, lets running ones finish for
/// the configured grace period, and hands the rest back to the queue.
pub async fn serve(runner: Arc<Runner>, shutdown: impl Future<Output = ()>) {
    let draining = CancellationToken::new();
    let mut consumer = tokio::spawn(queue::consume_until_drained(runner.clone(), draining.clone()));
    tokio::select! {
        _ = shutdown => {}
        _ = &mut consumer => return,
    }
    draining.cancel();
    let grace = runner.worker.shutdown_grace;
    tracing::info!(running = runner.running_count(), grace_secs = grace.as_secs(), "draining");
    if tokio::time::timeout(grace, &mut consumer).await.is_err() {
        tracing::info!(running = runner.running_count(), "grace period over, handing running tasks back");
        runner.hand_back_all();
        let _ = tokio::time::timeout(Duration::from_secs(10), consumer).await;
    }
}
