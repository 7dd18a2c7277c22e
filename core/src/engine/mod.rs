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
use crate::handler::{IncomingNotification, IncomingRequest, NotificationHandler, Observer, RequestHandler};
use crate::message::{RawJson, RequestId};
use crate::transport::Transport;

pub(crate) use dispatcher::Ordered;
pub(crate) use reader::{HostReader, Pumped};

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

mod sigpipe {
    /// Run `write` with SIGPIPE blocked on this thread, and swallow the
    /// SIGPIPE a write to a closed pipe raised (the write still fails with
    /// EPIPE): for hosts, such as C programs, whose threads would otherwise
    /// be killed by it.
    pub(super) fn guarded<T>(write: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        // SAFETY: plain signal-mask calls on this thread's own mask.
        unsafe {
            let mut pipe: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut pipe);
            libc::sigaddset(&mut pipe, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut previous);
            let result = write();
            let was_blocked = libc::sigismember(&previous, libc::SIGPIPE) == 1;
            if !was_blocked {
                if matches!(&result, Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe) {
                    let zero = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    };
                    while libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero) == libc::SIGPIPE {}
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
            }
            result
        }
    }
}

/// A monotonic clock in nanoseconds (for the burst check).
fn clock_ns() -> u64 {
    static ORIGIN: OnceLock<std::time::Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    // Never 0 after the first call, so "no direct write yet" never looks recent.
    origin.elapsed().as_nanos() as u64 + 1_000_000
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
    /// How long the writer task polls for the next frame before parking.
    pub write_spin: std::time::Duration,
    /// Block SIGPIPE around writes made on a caller's thread (see
    /// `ConnectionBuilder::guard_sigpipe`).
    pub guard_sigpipe: bool,
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
    /// Handlers that never wait (host-language bindings): run by the reader
    /// itself, in place of `request` and `notification`, without a task or
    /// a dispatcher hop per message.
    pub inline: Option<Arc<dyn InlineHandler>>,
}

/// Handlers run inline by the reader (see `Handlers::inline`).
pub(crate) trait InlineHandler: Send + Sync + 'static {
    /// An inbound notification, in arrival order. Must not block.
    fn notification(&self, notification: IncomingNotification);

    /// An inbound request, taken to be answered later through its
    /// `Responder` (which then calls `Inner::untrack_running`): return what
    /// to do if it is cancelled first (`$/cancel_request` or close). An
    /// `Err` is answered at once.
    fn request(&self, request: IncomingRequest) -> Result<OnCancel, RequestError>;
}

pub(crate) type OnCancel = Box<dyn FnOnce() + Send>;

/// An inbound request being handled.
enum Running {
    /// By a task, which ends when this token is cancelled.
    Task(CancellationToken),
    /// By an inline handler; the callback runs if it is cancelled.
    Deferred(Option<OnCancel>),
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
    pending: Mutex<HashMap<i64, Waiter>>,
    /// Inbound requests whose handler is running, for `$/cancel_request`.
    running: Mutex<HashMap<RequestId, Running>>,
    /// Notifications handed to the dispatcher and not yet fully handled; a
    /// response may skip the dispatcher queue only when this is zero.
    pub unhandled_notifications: AtomicUsize,
    outbound: mpsc::Sender<Vec<u8>>,
    /// The stream's writer while the writer task is not using it: a sender
    /// that finds the write queue empty writes straight to the stream from
    /// its own thread, without waking the writer task (a cross-thread
    /// wake-up costs more than the write on a virtual machine).
    direct: Mutex<Option<FrameWriter<crate::transport::BoxWriter>>>,
    /// Frames in the write queue or being written by the writer task; a
    /// direct write may only go out when this is zero (ordering).
    in_flight: AtomicUsize,
    /// When the last frame was sent (`clock_ns`): a frame that follows
    /// closely is part of a burst and goes through the queue, where the
    /// writer task batches it.
    last_send: std::sync::atomic::AtomicU64,
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
        Self::start_with(settings, transport, runtime, ReaderMode::Task, make_handlers).0
    }

    /// `start`, with the choice of who reads; with `ReaderMode::Host` the
    /// returned `HostReader` is the reader (the handlers must be inline).
    pub(crate) fn start_with(
        settings: Settings,
        transport: Transport,
        runtime: Handle,
        mode: ReaderMode,
        make_handlers: impl FnOnce(&Arc<Inner>) -> Handlers,
    ) -> (Arc<Self>, Option<HostReader>) {
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
            direct: Mutex::new(Some(frames)),
            in_flight: AtomicUsize::new(0),
            last_send: std::sync::atomic::AtomicU64::new(0),
            close_reason: OnceLock::new(),
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
        // Requests handled inline have no task to cancel: tell them (before
        // `closing`, which lets teardown finish and report the close).
        let deferred: Vec<OnCancel> = {
            let mut running = self.running.lock().unwrap();
            let ids: Vec<RequestId> = running
                .iter()
                .filter(|(_, entry)| matches!(entry, Running::Deferred(_)))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| match running.remove(id) {
                    Some(Running::Deferred(on_cancel)) => on_cancel,
                    _ => None,
                })
                .collect()
        };
        for on_cancel in deferred {
            on_cancel();
        }
        self.closing.cancel();
    }

    /// Put a frame on the write queue, waiting while the queue is full.
    pub async fn enqueue(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        if self.is_closing() {
            return Err(self.closed_error());
        }
        let Some(frame) = self.write_direct(frame)? else {
            return Ok(());
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let sent = tokio::select! {
            sent = self.outbound.send(frame) => sent.map_err(|_| self.closed_error()),
            _ = self.closing.cancelled() => Err(self.closed_error()),
        };
        if sent.is_err() {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        sent
    }

    /// Write `frame` straight to the stream if nothing is queued before it
    /// and it is not part of a burst; `Some(frame)` back when it must go
    /// through the queue instead.
    fn write_direct(&self, frame: Vec<u8>) -> Result<Option<Vec<u8>>, RequestError> {
        self.write_direct_with(frame, true)
    }

    /// `write_direct`; `check_burst: false` for a frame that is a batch
    /// already.
    fn write_direct_with(&self, frame: Vec<u8>, check_burst: bool) -> Result<Option<Vec<u8>>, RequestError> {
        const BURST_GAP_NS: u64 = 20_000;
        if self.in_flight.load(Ordering::Acquire) != 0 {
            return Ok(Some(frame));
        }
        let now = clock_ns();
        if check_burst && now.saturating_sub(self.last_send.load(Ordering::Relaxed)) < BURST_GAP_NS {
            self.last_send.store(now, Ordering::Relaxed);
            return Ok(Some(frame));
        }
        let Ok(mut slot) = self.direct.try_lock() else {
            return Ok(Some(frame));
        };
        let Some(frames) = slot.as_mut() else {
            return Ok(Some(frame));
        };
        // Checked again under the lock the writer task takes first.
        if self.in_flight.load(Ordering::Acquire) != 0 {
            return Ok(Some(frame));
        }
        self.last_send.store(now, Ordering::Relaxed);
        self.observe(
            crate::Direction::Outbound,
            frame.strip_suffix(b"\n").unwrap_or(&frame),
        );
        // A writer that is not a plain pipe or socket (a file, a terminal:
        // tokio's blocking-thread writers) needs the runtime, and the
        // caller's thread may not be in it.
        let _runtime = self.runtime.enter();
        let written = if self.settings.guard_sigpipe {
            sigpipe::guarded(|| frames.try_write_now(&frame))
        } else {
            frames.try_write_now(&frame)
        };
        match written {
            Ok((written, needs_flush)) => {
                if written < frame.len() || needs_flush {
                    // The rest waits in the batch for the writer task, which
                    // an empty frame wakes.
                    frames.push(&frame[written..]);
                    self.in_flight.fetch_add(1, Ordering::AcqRel);
                    if self.outbound.try_send(Vec::new()).is_err() {
                        self.in_flight.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                Ok(None)
            }
            Err(error) => {
                drop(slot);
                self.close(&format!("write error: {error}"));
                Err(self.closed_error())
            }
        }
    }

    /// The writer, for the writer task (None only while a direct write
    /// holds it: the lock is then taken after it).
    pub(super) fn take_writer(&self) -> Option<FrameWriter<crate::transport::BoxWriter>> {
        self.direct.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    pub(super) fn put_writer(&self, frames: FrameWriter<crate::transport::BoxWriter>, written: usize) {
        *self.direct.lock().unwrap_or_else(|p| p.into_inner()) = Some(frames);
        self.in_flight.fetch_sub(written, Ordering::AcqRel);
    }

    /// Put a frame on the write queue from synchronous code, blocking the
    /// calling thread while the queue is full. Not for async contexts.
    pub fn enqueue_blocking(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        if self.is_closing() {
            return Err(self.closed_error());
        }
        let Some(frame) = self.write_direct(frame)? else {
            return Ok(());
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let sent = self
            .outbound
            .blocking_send(frame)
            .map_err(|_| self.closed_error());
        if sent.is_err() {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        sent
    }

    /// Put a frame on the write queue if it has room; give it back if not.
    pub fn try_enqueue(&self, frame: Vec<u8>) -> Result<(), TryEnqueueError> {
        self.try_enqueue_with(frame, true)
    }

    /// `try_enqueue` for a batch of frames a host collected: written
    /// directly whenever nothing is queued before it.
    pub fn try_enqueue_batch(&self, batch: Vec<u8>) -> Result<(), TryEnqueueError> {
        self.try_enqueue_with(batch, false)
    }

    fn try_enqueue_with(&self, frame: Vec<u8>, check_burst: bool) -> Result<(), TryEnqueueError> {
        if self.is_closing() {
            return Err(TryEnqueueError::Closed(self.closed_error()));
        }
        let frame = match self.write_direct_with(frame, check_burst) {
            Ok(None) => return Ok(()),
            Ok(Some(frame)) => frame,
            Err(error) => return Err(TryEnqueueError::Closed(error)),
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.outbound.try_send(frame).map_err(|error| {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            match error {
                mpsc::error::TrySendError::Full(frame) => TryEnqueueError::Full(frame),
                mpsc::error::TrySendError::Closed(_) => TryEnqueueError::Closed(self.closed_error()),
            }
        })
    }

    /// Enqueue without waiting (from `Drop` or sync code): when the queue is
    /// full the frame is sent from a task instead.
    pub fn enqueue_detached(self: &Arc<Self>, frame: Vec<u8>) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        if let Err(error) = self.outbound.try_send(frame) {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            let mpsc::error::TrySendError::Full(frame) = error else {
                return;
            };
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
        self.track(id, Running::Task(token.clone()))
    }

    /// Track a request taken by an inline handler (its `on_cancel` comes
    /// with `set_on_cancel`); false if the id is already running.
    pub fn track_deferred(&self, id: &RequestId) -> bool {
        self.track(id, Running::Deferred(None))
    }

    fn track(&self, id: &RequestId, entry: Running) -> bool {
        let mut running = self.running.lock().unwrap();
        if running.contains_key(id) {
            return false;
        }
        running.insert(id.clone(), entry);
        true
    }

    pub fn set_on_cancel(&self, id: &RequestId, on_cancel: OnCancel) {
        if let Some(Running::Deferred(slot)) = self.running.lock().unwrap().get_mut(id) {
            *slot = Some(on_cancel);
        }
    }

    pub fn running_requests(&self) -> usize {
        self.running.lock().unwrap().len()
    }

    pub fn untrack_running(&self, id: &RequestId) {
        self.running.lock().unwrap().remove(id);
    }

    /// An inbound `$/cancel_request`: cancel that handler, if running.
    pub fn cancel_running(&self, id: &RequestId) -> bool {
        let mut running = self.running.lock().unwrap();
        match running.get(id) {
            Some(Running::Task(token)) => {
                token.cancel();
                true
            }
            Some(Running::Deferred(_)) => {
                let Some(Running::Deferred(on_cancel)) = running.remove(id) else {
                    unreachable!()
                };
                drop(running);
                if let Some(on_cancel) = on_cancel {
                    on_cancel();
                }
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
