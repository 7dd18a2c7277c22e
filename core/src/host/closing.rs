//! How a host hears that its connection closed: the requests it still owes
//! an answer are cancelled, then `CLOSED` comes, the last event. A watcher
//! on the engine's runtime reports the close; when the runtime is shut down
//! first (`shutdown_runtime`, C's `acp_shutdown`), the watcher is dropped
//! unfinished and closes the connection and reports it then, so a host
//! thread waiting for events is not left waiting forever.

use std::sync::Arc;

use super::Shared;
use crate::connection::Connection;
use crate::fed::Fed;

/// Why a connection closes when the runtime under it stopped.
pub(super) const RUNTIME_SHUT_DOWN: &str = "the engine's runtime was shut down";

/// Watch `connection` on `runtime` and report its close to the host.
pub(super) fn watch(
    connection: Connection,
    shared: Arc<Shared>,
    fed: Option<Arc<Fed>>,
    runtime: &tokio::runtime::Handle,
) {
    let report = CloseReport {
        connection,
        shared,
        fed,
        reported: false,
    };
    runtime.spawn(async move {
        let mut report = report;
        report.connection.closed().await;
        report.report();
    });
}

struct CloseReport {
    connection: Connection,
    shared: Arc<Shared>,
    fed: Option<Arc<Fed>>,
    reported: bool,
}

impl CloseReport {
    fn report(&mut self) {
        self.reported = true;
        // What the writer left is still taken; nothing more comes.
        if let Some(fed) = &self.fed {
            fed.end_output();
        }
        let reason = self
            .connection
            .close_reason()
            .unwrap_or_else(|| "closed".to_owned());
        // Requests the host still owes an answer are cancelled before
        // CLOSED, the last event (their handlers end with the connection).
        for token in self.shared.responders.take_all() {
            self.shared.queue.push_cancelled(token);
        }
        self.shared.queue.push_closed(&reason);
    }
}

impl Drop for CloseReport {
    fn drop(&mut self) {
        if !self.reported {
            // The runtime stopped under an open connection: close it here
            // (its pending requests fail, later sends are refused).
            self.connection.inner().close(RUNTIME_SHUT_DOWN);
            self.report();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::host::{HostConnection, HostOptions};
    use crate::transport::Transport;

    /// A runtime stopped under an open connection: the connection closes and
    /// the host gets `CLOSED` (without it, a host thread waiting for events
    /// waited forever: `acp_shutdown` under a C text connection).
    #[test]
    fn a_runtime_shut_down_under_an_open_connection_reports_the_close() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (ours, _peer) = {
            let _entered = runtime.enter();
            Transport::memory_pair()
        };
        let host = HostConnection::connect(ours, HostOptions::default(), runtime.handle(), || {});
        assert!(!host.is_closed());
        runtime.shutdown_timeout(Duration::from_secs(2));
        assert!(host.is_closed());
        assert_eq!(host.close_reason().as_deref(), Some(super::RUNTIME_SHUT_DOWN));
        let events = host.drain().expect("the close is queued");
        assert_eq!(events, format!("[[6,\"{}\"]]", super::RUNTIME_SHUT_DOWN));
    }
}
