//! The connection's shared state and its three tasks: the reader (framing,
//! classification, request dispatch), the ordered dispatcher (notifications
//! and the responses queued behind them) and the writer (one bounded queue,
//! written in batches). A supervisor closes the loop: once all three ended
//! it reaps the child process, if any, and resolves `closed()`.

mod dispatcher;
mod reader;
mod writer;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::error::RequestError;
use crate::framing::{FrameWriter, LineReader};
use crate::handler::{NotificationHandler, Observer, RequestHandler};
use crate::message::{RawJson, RequestId};
use crate::transport::Transport;

pub(crate) use dispatcher::Ordered;
pub(crate) use reader::CANCEL_REQUEST;

/// Where a response goes: the local waiter of an outbound request (a
/// `PendingRequest` future), or a callback run where the response is
/// released, in order with the notifications around it.
pub(crate) enum Waiter {
    Future(oneshot::Sender<Result<RawJson, RequestError>>),
    Callback(Box<dyn FnOnce(Result<RawJson, RequestError>) + Send>),
}

impl Waiter {
    pub fn complete(self, outcome: Result<RawJson, RequestError>) {
        match self {
            Waiter::Future(sender) => {
                let _ = sender.send(outcome);
            }
            Waiter::Callback(callback) => callback(outcome),
        }
    }
}

/// Poll a request's task once, right here: most handlers answer without
/// waiting, and this saves a task hop per request (and keeps whatever the
/// handler does first in arrival order). Only a task that has to wait is
/// spawned; its next poll registers the real waker (a future re-registers
/// on every poll, so the first, no-op waker is harmless).
pub(crate) fn run_inline_or_spawn(mut task: crate::handler::BoxFuture<()>, runtime: &Handle) {
    use std::task::{Context, Waker};
    let mut context = Context::from_waker(Waker::noop());
    if task.as_mut().poll(&mut context).is_pending() {
        runtime.spawn(task);
    }
}

/// Why `try_enqueue` did not take a frame.
pub(crate) enum TryEnqueueError {
    Full(Vec<u8>),
    Closed(RequestError),
}

/// How long the writer may keep flushing after the connection closed.
const CLOSE_FLUSH_GRACE: Duration = Duration::from_secs(1);

pub(crate) struct Settings {
    pub read_spin: std::time::Duration,
    pub observer: Option<Arc<dyn Observer>>,
    pub max_message_size: usize,
    pub write_queue_capacity: usize,
    pub dispatch_queue_capacity: usize,
}

/// The user's handlers. Owned by the reader and dispatcher tasks, not by
/// `Inner`: a handler may hold the connection (an agent calling its client),
/// and this way the cycle ends with the tasks.
pub struct Handlers {
    pub request: Arc<dyn RequestHandler>,
    pub notification: Option<Arc<dyn NotificationHandler>>,
}

pub(crate) struct Inner {
    pub settings: Settings,
    pub runtime: Handle,
    next_id: AtomicI64,
    /// Outbound requests awaiting their response.
    pending: Mutex<HashMap<i64, Waiter>>,
    /// Inbound requests whose handler is running, for `$/cancel_request`.
    running: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Notifications handed to the dispatcher and not yet fully handled; a
    /// response may skip the dispatcher queue only when this is zero.
    pub unhandled_notifications: AtomicUsize,
    outbound: mpsc::Sender<Vec<u8>>,
    close_reason: OnceLock<String>,
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
        let (outbound, outbound_rx) = mpsc::channel(settings.write_queue_capacity);
        let (dispatch_tx, dispatch_rx) = mpsc::channel(settings.dispatch_queue_capacity);
        let lines =
            LineReader::new(transport.reader, settings.max_message_size).with_spin(settings.read_spin);
        let frames = FrameWriter::new(transport.writer);
        let inner = Arc::new(Self {
            settings,
            runtime: runtime.clone(),
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            unhandled_notifications: AtomicUsize::new(0),
            outbound,
            close_reason: OnceLock::new(),
            closing: CancellationToken::new(),
            aborted: CancellationToken::new(),
            closed: CancellationToken::new(),
        });
        let handlers = make_handlers(&inner);
        let reader = runtime.spawn(reader::run(inner.clone(), lines, dispatch_tx, handlers.request));
        let dispatcher = runtime.spawn(dispatcher::run(inner.clone(), dispatch_rx, handlers.notification));
        let writer = runtime.spawn(writer::run(inner.clone(), outbound_rx, frames));
        let child = transport.child;
        let supervised = inner.clone();
        runtime.spawn(async move {
            let _ = tokio::join!(reader, dispatcher, writer);
            if let Some(child) = child {
                child.terminate().await;
            }
            supervised.closed.cancel();
        });
        inner
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

    fn closed_error(&self) -> RequestError {
        RequestError::connection_closed(self.close_reason().unwrap_or("closed"))
    }

    /// Start closing: fail every pending request at once, cancel running
    /// handlers, stop reading, and let the writer flush and shut down.
    pub fn close(&self, reason: &str) {
        if self.close_reason.set(reason.to_owned()).is_err() {
            return;
        }
        tracing::debug!(reason, "connection closing");
        let error = self.closed_error();
        let pending = std::mem::take(&mut *self.pending.lock().unwrap());
        for (_, waiter) in pending {
            waiter.complete(Err(error.clone()));
        }
        self.closing.cancel();
    }

    /// Put a frame on the write queue, waiting while the queue is full.
    pub async fn enqueue(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        if self.is_closing() {
            return Err(self.closed_error());
        }
        tokio::select! {
            sent = self.outbound.send(frame) => sent.map_err(|_| self.closed_error()),
            _ = self.closing.cancelled() => Err(self.closed_error()),
        }
    }

    /// Put a frame on the write queue from synchronous code, blocking the
    /// calling thread while the queue is full. Not for async contexts.
    pub fn enqueue_blocking(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        if self.is_closing() {
            return Err(self.closed_error());
        }
        self.outbound
            .blocking_send(frame)
            .map_err(|_| self.closed_error())
    }

    /// Put a frame on the write queue if it has room; give it back if not.
    pub fn try_enqueue(&self, frame: Vec<u8>) -> Result<(), TryEnqueueError> {
        if self.is_closing() {
            return Err(TryEnqueueError::Closed(self.closed_error()));
        }
        self.outbound.try_send(frame).map_err(|error| match error {
            mpsc::error::TrySendError::Full(frame) => TryEnqueueError::Full(frame),
            mpsc::error::TrySendError::Closed(_) => TryEnqueueError::Closed(self.closed_error()),
        })
    }

    /// Enqueue without waiting (from `Drop` or sync code): when the queue is
    /// full the frame is sent from a task instead.
    pub fn enqueue_detached(self: &Arc<Self>, frame: Vec<u8>) {
        if let Err(mpsc::error::TrySendError::Full(frame)) = self.outbound.try_send(frame) {
            let inner = self.clone();
            self.runtime.spawn(async move {
                let _ = inner.enqueue(frame).await;
            });
        }
    }

    /// Register an outbound request's waiter under a fresh id.
    pub fn register(&self, id: i64, waiter: Waiter) -> Result<(), RequestError> {
        let mut pending = self.pending.lock().unwrap();
        // Checked under the lock `close` drains, so no waiter is stranded.
        if self.is_closing() {
            return Err(self.closed_error());
        }
        pending.insert(id, waiter);
        Ok(())
    }

    /// Take the waiter for `id`, if it is still pending.
    pub fn take_waiter(&self, id: i64) -> Option<Waiter> {
        self.pending.lock().unwrap().remove(&id)
    }

    /// Track a running inbound request; false if the id is already running.
    pub fn track_running(&self, id: &RequestId, token: &CancellationToken) -> bool {
        let mut running = self.running.lock().unwrap();
        if running.contains_key(id) {
            return false;
        }
        running.insert(id.clone(), token.clone());
        true
    }

    pub fn running_requests(&self) -> usize {
        self.running.lock().unwrap().len()
    }

    pub fn untrack_running(&self, id: &RequestId) {
        self.running.lock().unwrap().remove(id);
    }

    /// An inbound `$/cancel_request`: cancel that handler, if running.
    pub fn cancel_running(&self, id: &RequestId) -> bool {
        match self.running.lock().unwrap().get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    pub fn observe(&self, direction: crate::Direction, line: &[u8]) {
        if let Some(observer) = &self.settings.observer {
            observer.on_message(direction, line);
        }
    }
}
