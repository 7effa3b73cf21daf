//! What every request handler can reach.

use std::sync::Arc;

use quickact_shared::metrics::PrometheusHandle;
use quickact_shared::{config::Config, notify::Notifications};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::{
    limits::{LongPollSlots, SubmitRate},
    reads::Reads,
    submit::Submissions,
};

#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub notifications: Notifications,
    pub config: Arc<Config>,
    /// Fired when the server begins to shut down: long-polls answer at once with the task as it is,
    /// so a graceful shutdown does not wait out their timeouts.
    pub stopping: CancellationToken,
    /// Long-polls each user holds open in this process (bounded per user).
    pub long_polls: Arc<LongPollSlots>,
    /// The per-user submit rate (shared across API processes through Postgres).
    pub submit_rate: Arc<SubmitRate>,
    /// Submissions are written in batches (see [`crate::submit`]).
    pub submissions: Submissions,
    /// Tasks and journals are read in batches (see [`crate::reads`]).
    pub reads: Reads,
    /// Renders this process's Prometheus metrics (`GET /metrics`).
    pub metrics: PrometheusHandle,
}
