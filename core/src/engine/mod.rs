//! The connection's three tasks, started on its shared state (`inner.rs`,
//! which a `Connection` handle holds): the reader (framing,
//! classification, request dispatch: `reader.rs`), the ordered
//! dispatcher (notifications and the responses queued behind them:
//! `dispatcher.rs`) and the writer (one bounded queue, written in batches:
//! `writer.rs`, fed by `outbound.rs`); the reader reads only while
//! `admission.rs` admits more. The registries live in `pending.rs`
//! (our requests awaiting responses) and `running.rs` (the peer's requests
//! being handled). A supervisor closes the loop: once all three tasks ended
//! it reaps the child process, if any, and resolves `closed()`.

mod admission;
mod dispatcher;
pub(crate) mod inner;
pub(crate) mod outbound;
pub(crate) mod pending;
mod reader;
mod running;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::error::RequestError;
use crate::framing::{FrameWriter, LineReader};
use crate::handler::{IncomingNotification, IncomingRequest, NotificationHandler, RequestHandler};
use crate::transport::Transport;

pub use admission::{Limits, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_IN_FLIGHT_REQUESTS};
pub(crate) use dispatcher::Ordered;
pub(crate) use inner::{Inner, Settings};
pub(crate) use outbound::{Kind, Offered, Outgoing};
pub(crate) use pending::Waiter;
pub(crate) use reader::{HostReader, Pumped};
pub(crate) use running::{CancelCause, OnCancel};

/// Poll a request's task once, right here: most handlers answer without
/// waiting, and this saves a task hop per request (and keeps whatever the
/// handler does first in arrival order). Only a task that has to wait is
/// spawned; its next poll registers the real waker (a future re-registers
/// on every poll, so the first, no-op waker is harmless).
pub(crate) fn poll_once_or_spawn(mut task: crate::handler::BoxFuture<()>, runtime: &Handle) {
    use std::task::{Context, Waker};
    let mut context = Context::from_waker(Waker::noop());
    if task.as_mut().poll(&mut context).is_pending() {
        runtime.spawn(task);
    }
}

/// How long the writer may keep flushing after the connection closed.
const CLOSE_FLUSH_GRACE: Duration = Duration::from_secs(1);

/// The user's handlers. Owned by the reader and dispatcher tasks, not by
/// `Inner`: a handler may hold the connection (an agent calling its client),
/// and this way the cycle ends with the tasks.
pub struct Handlers {
    pub request: Arc<dyn RequestHandler>,
    pub notification: Option<Arc<dyn NotificationHandler>>,
    /// Handlers that never wait (host-language bindings): run by the reader
    /// itself, in place of `request` and `notification`, without a task or
    /// a dispatcher hop per message.
    pub reader_handler: Option<Arc<dyn ReaderHandler>>,
}

/// Handlers the reader runs itself, as it reads (see `Handlers::reader_handler`).
pub(crate) trait ReaderHandler: Send + Sync + 'static {
    /// An inbound notification, in arrival order. Must not block.
    fn notification(&self, notification: IncomingNotification);

    /// An inbound request, taken to be answered later through its
    /// `Responder` (which then untracks it from `Inner::running`): return what
    /// to do if it is cancelled first (`$/cancel_request` or close). An
    /// `Err` is answered at once.
    fn request(&self, request: IncomingRequest) -> Result<OnCancel, RequestError>;
}

/// Who reads the stream.
pub(crate) enum ReaderMode {
    /// A reader task on the runtime.
    Task,
    /// The host's thread, through `HostReader::pump` (the host watches the
    /// file descriptor itself): no cross-thread wake-up per message.
    Host,
}

impl Inner {
    /// Start the connection's tasks on `runtime`, with the handlers that
    /// `make_handlers` builds once the connection exists.
    pub(crate) fn start(
        settings: Settings,
        transport: Transport,
        runtime: Handle,
        make_handlers: impl FnOnce(&Arc<Inner>) -> Handlers,
    ) -> Arc<Self> {
        Self::start_with(settings, transport, runtime, ReaderMode::Task, make_handlers).0
    }

    /// `start`, with the choice of who reads; with `ReaderMode::Host` the
    /// returned `HostReader` is the reader (with a reader handler).
    pub(crate) fn start_with(
        settings: Settings,
        transport: Transport,
        runtime: Handle,
        mode: ReaderMode,
        make_handlers: impl FnOnce(&Arc<Inner>) -> Handlers,
    ) -> (Arc<Self>, Option<HostReader>) {
        let peer_pid = transport.child_pid();
        let (outbound, outbound_rx) = mpsc::channel(settings.write_queue_capacity);
        let (dispatch_tx, dispatch_rx) = mpsc::channel(settings.dispatch_queue_capacity);
        let lines =
            LineReader::new(transport.reader, settings.max_message_size).with_spin(settings.read_spin);
        let frames = FrameWriter::new(transport.writer);
        let inner = Arc::new(Self::new(
            settings,
            runtime.clone(),
            peer_pid,
            outbound::Outbound::new(outbound, frames),
        ));
        let handlers = make_handlers(&inner);
        let writer = runtime.spawn(writer::run(inner.clone(), outbound_rx));
        let dispatcher = runtime.spawn(dispatcher::run(
            inner.clone(),
            dispatch_rx,
            handlers.notification.clone(),
        ));
        let reader_state = reader::Reader::new(lines, dispatch_tx, &handlers);
        let (reader, host_reader) = match mode {
            ReaderMode::Task => (
                Some(runtime.spawn(reader::run(inner.clone(), reader_state))),
                None,
            ),
            ReaderMode::Host => (None, Some(HostReader::new(inner.clone(), reader_state))),
        };
        let child = transport.child;
        let supervised = inner.clone();
        runtime.spawn(async move {
            match reader {
                Some(reader) => {
                    let _ = tokio::join!(reader, dispatcher, writer);
                }
                // The host's reader hangs up when the connection closes.
                None => {
                    let _ = tokio::join!(dispatcher, writer);
                }
            }
            if let Some(child) = child {
                child.terminate().await;
            }
            supervised.closed.cancel();
        });
        (inner, host_reader)
    }
}
