//! `quickact-worker`: reads configuration, prepares the database, consumes the queue until
//! SIGINT/SIGTERM.

use quickact_shared::{config::Config, telemetry};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> Result<(), quickact_worker::StartupError> {
    let traces = telemetry::init("quickact-worker")?;
    let config = Config::from_env()?;
    let stop = CancellationToken::new();
    let runner = quickact_worker::prepare(&config, stop.clone()).await?;
    tracing::info!(name = %runner.name, concurrency = config.worker.concurrency, "quickact-worker started");
    if let Some(bind) = config.worker.metrics_bind {
        let listener = tokio::net::TcpListener::bind(bind).await?;
        tracing::info!(address = %listener.local_addr()?, "worker metrics listening");
        tokio::spawn(quickact_worker::metrics::serve_metrics(listener, runner.clone(), stop.clone().cancelled_owned()));
    }
    quickact_worker::serve(runner, telemetry::shutdown_signal()).await;
    stop.cancel();
    // The last runs' spans are still batched: sent before the process goes.
    if let Some(traces) = traces {
        traces.shutdown().await;
    }
    tracing::info!("quickact-worker stopped");
    Ok(())
}

// jemalloc, as in the API (api/src/main.rs): a run allocates and frees many small buffers (JSON
// bodies, rows, strings), and glibc's malloc spent about a tenth of the worker's CPU on them
// (the A/B is in docs/performance.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
