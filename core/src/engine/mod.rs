//! The connection's shared state (`Inner`) and its three tasks: the reader
//! (framing, classification, request dispatch: `reader.rs`), the ordered
//! dispatcher (notifications and the responses queued behind them:
//! `dispatcher.rs`) and the writer (one bounded queue, written in batches:
//! `writer.rs`, fed by `outbound.rs`); the reader reads only while
//! `admission.rs` admits more. The registries live in `pending.rs`
//! (our requests awaiting responses) and `running.rs` (the peer's requests
//! being handled). A supervisor closes the loop: once all three tasks ended
//! it reaps the child process, if any, and resolves `closed()`.

mod admission;
mod dispatcher;
mod outbound;
mod pending;
mod reader;
mod running;
mod writer;

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::RequestError;
use crate::framing::{FrameWriter, LineReader};
use crate::handler::{IncomingNotification, IncomingRequest, NotificationHandler, Observer, RequestHandler};
use crate::transport::Transport;

pub use admission::{Limits, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_IN_FLIGHT_REQUESTS};
pub(crate) use dispatcher::Ordered;
pub(crate) use outbound::{Kind, Offered, Outgoing};
pub(crate) use pending::Waiter;
pub(crate) use reader::{HostReader, Pumped};
pub(crate) use running::OnCancel;

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
/// How long a spawned peer whose stream ended may take to become waitable,
/// for its exit to go into the close reason.
const PEER_EXIT_PATIENCE: Duration = Duration::from_millis(20);

pub(crate) struct Settings {
    pub read_spin: std::time::Duration,
    /// How long the writer task polls for the next frame before parking.
    pub write_spin: std::time::Duration,
    /// Block SIGPIPE around writes made on a caller's thread (see
    /// `ConnectionBuilder::guard_sigpipe`).
    pub guard_sigpipe: bool,
    pub observer: Option<Arc<dyn Observer>>,
    pub max_message_size: usize,
    pub write_queue_capacity: usize,
    pub dispatch_queue_capacity: usize,
    /// What the connection may hold for a peer that is not reading.
    pub limits: Limits,
}

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

pub(crate) struct Inner {
    pub settings: Settings,
    pub runtime: Handle,
    next_id: AtomicI64,
    /// Outbound requests awaiting their response.
    pub pending: pending::Pending,
    /// Inbound requests whose handler is running.
    pub running: running::Running,
    /// Notifications handed to the dispatcher and not yet fully handled; a
    /// response may skip the dispatcher queue only when this is zero.
    pub unhandled_notifications: AtomicUsize,
    /// The write path.
    pub outbound: outbound::Outbound,
    close_reason: OnceLock<String>,
    /// The spawned peer process, if any: its exit goes into the close reason.
    peer_pid: Option<u32>,
    /// Cancelled when the connection starts closing, for any reason.
    pub closing: CancellationToken,
    /// Cancelled by a local `close()`: drop what was received but not handled.
    pub aborted: CancellationToken,
    /// Cancelled once everything is torn down: what `closed()` awaits.
    pub closed: CancellationToken,
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
        let inner = Arc::new(Self {
            settings,
            runtime: runtime.clone(),
            next_id: AtomicI64::new(1),
            pending: pending::Pending::default(),
            running: running::Running::default(),
            unhandled_notifications: AtomicUsize::new(0),
            outbound: outbound::Outbound::new(outbound, frames),
            close_reason: OnceLock::new(),
            peer_pid,
            closing: CancellationToken::new(),
            aborted: CancellationToken::new(),
            closed: CancellationToken::new(),
        });
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

    pub fn next_request_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub fn close_reason(&self) -> Option<&str> {
        self.close_reason.get().map(String::as_str)
    }

    pub fn is_closing(&self) -> bool {
        self.closing.is_cancelled()
    }

    pub(crate) fn closed_error(&self) -> RequestError {
        RequestError::connection_closed(self.close_reason().unwrap_or("closed"))
    }

    /// `close` because the peer's stream ended or failed: with a spawned
    /// peer, the reason says how its process ended (a crash shows as
    /// "...; the peer process was killed by signal 11 (SIGSEGV)", not as a
    /// bare broken pipe).
    pub fn close_by_peer(&self, reason: &str) {
        if self.close_reason.get().is_some() {
            return;
        }
        let exit = self
            .peer_pid
            .and_then(|pid| crate::process_tree::exit_of(pid, PEER_EXIT_PATIENCE));
        match exit {
            Some(exit) => self.close(&format!("{reason}; the peer process {exit}")),
            None => self.close(reason),
        }
    }

    /// Start closing: fail every pending request at once, cancel running
    /// handlers, stop reading, and let the writer flush and shut down.
    pub fn close(&self, reason: &str) {
        if self.close_reason.set(reason.to_owned()).is_err() {
            return;
        }
        tracing::debug!(reason, "connection closing");
        self.pending.fail_all(&self.closed_error());
        // Requests a reader handler took have no task to cancel: tell them (before
        // `closing`, which lets teardown finish and report the close).
        for on_cancel in self.running.take_deferred() {
            on_cancel();
        }
        self.closing.cancel();
    }

    /// Put a frame on the wire, waiting while the write queue is full.
    pub async fn enqueue(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        match self.outbound.offer(self, frame, Kind::Frame)? {
            Offered::Taken => Ok(()),
            Offered::Full(frame) => self.outbound.wait(self, frame).await,
        }
    }

    /// Put a frame on the wire from synchronous code, blocking the calling
    /// thread while the queue is full. Not for async contexts.
    pub fn enqueue_blocking(&self, frame: Vec<u8>, outgoing: Outgoing) -> Result<(), RequestError> {
        match self.outbound.offer(self, frame, Kind::Frame)? {
            Offered::Taken => Ok(()),
            Offered::Full(frame) => self.outbound.block(self, frame, outgoing, || {}),
        }
    }

    /// Put a frame on the wire without waiting (from `Drop` or sync code):
    /// when the queue is full a task sends it.
    pub fn enqueue_detached(self: &Arc<Self>, frame: Vec<u8>) {
        if let Ok(Offered::Full(frame)) = self.outbound.offer(self, frame, Kind::Frame) {
            self.outbound.detach(self, frame);
        }
    }

    /// Register an outbound request's waiter under a fresh id.
    pub fn register(&self, id: i64, waiter: Waiter) -> Result<(), RequestError> {
        self.pending.register(id, waiter, || self.closed_error())
    }

    /// Take the waiter for `id`, if it is still pending.
    pub fn take_waiter(&self, id: i64) -> Option<Waiter> {
        self.pending.take(id)
    }

    pub fn observe(&self, direction: crate::Direction, line: &[u8]) {
        if let Some(observer) = &self.settings.observer {
            observer.on_message(direction, line);
        }
    }
}
