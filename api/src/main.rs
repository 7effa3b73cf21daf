//! `quickact-api`: reads configuration, prepares the database, serves until SIGINT/SIGTERM.

use quickact_shared::{config::Config, telemetry};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> Result<(), quickact_api::StartupError> {
    let traces = telemetry::init("quickact-api")?;
    let config = Config::from_env()?;
    let bind = config.bind;
    let stop = CancellationToken::new();
    let state = quickact_api::prepare(config, stop.clone()).await?;
    let listener = tokio::net::TcpListener::bind(bind).await?;
    tracing::info!(address = %listener.local_addr()?, "quickact-api listening");
    quickact_api::run(listener, state, telemetry::shutdown_signal()).await?;
    stop.cancel();
    // The last requests' spans are still batched: sent before the process goes.
    if let Some(traces) = traces {
        traces.shutdown().await;
    }
    tracing::info!("quickact-api stopped");
    Ok(())
}

// jemalloc, not the system allocator: each held long-poll keeps two of hyper's 8 KiB connection
// buffers that it barely writes, and glibc's malloc touches (so makes resident) a page at each end
// of such a block where jemalloc, keeping its metadata apart, leaves unwritten pages untouched.
// The RSS per held connection, measured both ways, is in docs/performance.md.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
