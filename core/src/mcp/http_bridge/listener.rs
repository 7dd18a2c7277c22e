//! The loopback listener: HTTP/1.1 connections served until the bridge stops.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::{answer, Shared};

/// How long to wait after a failed accept (out of descriptors) before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub(super) fn spawn(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    stop: CancellationToken,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        tokio::spawn(serve(stream, shared.clone(), stop.clone()));
                    }
                    Err(error) => {
                        // A later failure (such as EMFILE) must not end the listener.
                        tracing::warn!(%error, "MCP-over-ACP HTTP bridge: accept failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                },
            }
        }
    });
    Ok(())
}

async fn serve(stream: TcpStream, shared: Arc<Shared>, stop: CancellationToken) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(answer::handle(request, shared).await) }
    });
    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        () = stop.cancelled() => {}
        _ = connection => {}
    }
}
