//! What every request handler can reach.

use std::sync::Arc;

use quickact_shared::{config::Config, notify::Notifications};
use sqlx::PgPool;

#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub notifications: Notifications,
    pub config: Arc<Config>,
}
