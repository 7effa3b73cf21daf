//! `quickact-api`: reads configuration, prepares the database, serves until SIGINT/SIGTERM.

use quickact_shared::{config::Config, telemetry};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> Result<(), quickact_api::StartupError> {
    telemetry::init()?;
    let config = Config::from_env()?;
    let bind = config.bind;
    let stop = CancellationToken::new();
    let state = quickact_api::prepare(config, stop.clone()).await?;
    let listener = tokio::net::TcpListener::bind(bind).await?;
    tracing::info!(address = %listener.local_addr()?, "quickact-api listening");
    quickact_api::run(listener, state, telemetry::shutdown_signal()).await?;
    stop.cancel();
    tracing::info!("quickact-api stopped");
    Ok(())
}
