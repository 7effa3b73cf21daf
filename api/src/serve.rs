//! The HTTP/1.1 server: accepts connections and serves the router on each, with graceful shutdown.
//!
//! This is `axum::serve` minus its protocol sniffing. `axum::serve` hands every connection to
//! hyper-util's auto builder, which reads the first 24 bytes to tell HTTP/1 from HTTP/2 and then
//! replays them to hyper. Those 24 bytes arrive in a read of their own, and hyper's 8 KiB read
//! buffer, to make room for the next 8 KiB read behind them, doubles to 16 KiB: a held long-poll
//! kept 16 KiB of buffer where 8 KiB do. We serve HTTP/1.1 only (axum's `http2` feature was never
//! on), so the sniffing bought nothing; here hyper's HTTP/1 connection reads the socket directly.

use std::{convert::Infallible, future::Future, io, time::Duration};

use axum::{body::Body, extract::Request, response::Response};
use hyper::body::Incoming;
use hyper_util::{
    rt::TokioIo,
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use tokio::net::TcpListener;
use tower::{Service, ServiceExt};

/// Serves `app` on `listener` until `shutdown` completes; then accepts no more connections, lets
/// each in-flight request finish (idle keep-alive connections close at once) and returns when
/// every connection has closed.
pub async fn serve<S>(listener: TcpListener, app: S, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let http = hyper::server::conn::http1::Builder::new();
    let connections = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(app.clone().map_request(|request: Request<Incoming>| request.map(Body::new)));
        let connection = connections.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::trace!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
    Ok(())
}

/// A failed accept: a connection that went away before we took it is nothing; anything else (e.g.
/// out of file descriptors) is logged and waited out for a second, as hyper's own server did.
async fn accept_failed(error: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(%error, "accept failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
