//! `Inner`: one connection's shared state, below the tasks that run it
//! (`mod.rs` starts them). What a `Connection` handle reaches: the request
//! ids, the registries of our requests and the peer's, the write path and
//! the close signals. It knows no handler: handlers take a `Connection`,
//! and so sit above it.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use super::admission::Limits;
use super::outbound::{Kind, Offered, Outbound, Outgoing};
use super::pending::{Pending, Waiter};
use super::running::Running;
use crate::error::RequestError;
use crate::observer::{Direction, Observer};

/// How long a spawned peer whose stream ended may take to become waitable,
/// for its exit to go into the close reason.
const PEER_EXIT_PATIENCE: Duration = Duration::from_millis(20);

pub(crate) struct Settings {
    pub read_spin: Duration,
    /// How long the writer task polls for the next frame before parking.
    pub write_spin: Duration,
    /// Block SIGPIPE around writes made on a caller's thread (see
    /// `ConnectionBuilder::guard_sigpipe`).
    pub guard_sigpipe: bool,
    /// See `ConnectionBuilder::handler_answers_cancelled`.
    pub handler_answers_cancelled: bool,
    pub observer: Option<Arc<dyn Observer>>,
    pub max_message_size: usize,
    pub write_queue_capacity: usize,
    pub dispatch_queue_capacity: usize,
    /// What the connection may hold for a peer that is not reading.
    pub limits: Limits,
}

pub(crate) struct Inner {
    pub settings: Settings,
    pub runtime: Handle,
    next_id: AtomicI64,
    /// Outbound requests awaiting their response.
    pub pending: Pending,
    /// Inbound requests whose handler is running.
    pub running: Running,
    /// Notifications handed to the dispatcher and not yet fully handled; a
    /// response may skip the dispatcher queue only when this is zero.
    pub unhandled_notifications: AtomicUsize,
    /// The write path.
    pub outbound: Outbound,
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
    pub(crate) fn new(
        settings: Settings,
        runtime: Handle,
        peer_pid: Option<u32>,
        outbound: Outbound,
    ) -> Self {
        Self {
            settings,
            runtime,
            next_id: AtomicI64::new(0),
            pending: Pending::default(),
            running: Running::default(),
            unhandled_notifications: AtomicUsize::new(0),
            outbound,
            close_reason: OnceLock::new(),
            peer_pid,
            closing: CancellationToken::new(),
            aborted: CancellationToken::new(),
            closed: CancellationToken::new(),
        }
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
            on_cancel(super::CancelCause::Close);
        }
        self.closing.cancel();
    }

    /// Put a frame on the wire, waiting while the write queue is full.
    ///
    /// The wait, and a request's wait for its answer (`PendingRequest`),
    /// are outside tokio's cooperative budget: they end only when the
    /// writer or the peer moves, so they cannot starve a task. Within the
    /// budget, a task awaiting thousands of requests at once (`join_all`)
    /// would poll every one of them again on each of its turns once the
    /// budget ran out (each parking its waker again): time growing with
    /// the square of their number.
    pub async fn enqueue(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        match self.outbound.offer(self, frame, Kind::Frame)? {
            Offered::Taken => Ok(()),
            Offered::Full(frame) => tokio::task::unconstrained(self.outbound.wait(self, frame)).await,
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

    pub fn observe(&self, direction: Direction, line: &[u8]) {
        if let Some(observer) = &self.settings.observer {
            observer.on_message(direction, line);
        }
    }
}
