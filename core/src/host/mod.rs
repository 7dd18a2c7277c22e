//! The engine side of a host-language binding (Python, Node): one
//! [`HostConnection`] per connection, built so that crossing the language
//! boundary costs once per burst, not once per message.
//!
//! - Inbound traffic (requests, notifications, responses to our requests,
//!   cancellations, close) goes in wire order onto one queue. The first
//!   event after a drain calls the host's `wake` (an eventfd write, a
//!   thread-safe function call); the host then calls [`HostConnection::drain`]
//!   and gets every queued event as one JSON array text (event shapes: see
//!   [`kind`]). Notifications are handled by the host in that order.
//! - Outbound messages come in as JSON text and are queued for the writer on
//!   the calling thread, without a task hop. When the write queue is full the
//!   send is parked (in order) and returns a ticket; a `WRITTEN` event says
//!   when it was queued. Nothing ever blocks the host's thread.
//! - With [`Side::Agent`] / [`Side::Client`] the engine checks ACP messages
//!   both ways: inbound requests and notifications that do not fit the schema
//!   never reach the host (-32601 / -32602), and outbound ones are refused.

mod bridge;
mod queue;
mod responders;
mod runtime;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::connection::Connection;
use crate::engine::{TryEnqueueError, Waiter};
use crate::error::RequestError;
use crate::message::{frame, RequestId};
use crate::method_check::{self, Receiver};
use crate::permission_cancel;
use crate::transport::Transport;
use crate::Protocol;

pub use queue::kind;
pub use runtime::runtime;

/// The writer task's spin for host connections: a host thread sending a
/// burst produces a frame every few microseconds.
const HOST_WRITE_SPIN: std::time::Duration = std::time::Duration::from_micros(30);

/// A host batch is written once it holds this much.
const OUTPUT_BATCH: usize = 64 * 1024;
/// Write queue capacity, in batches, with `buffer_output`.
const OUTPUT_QUEUE_BATCHES: usize = 64;

/// Which side of ACP a host connection plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Plain JSON-RPC: any method, no schema checks.
    Raw,
    /// Receives agent methods, sends client methods.
    Agent,
    /// Receives client methods, sends agent methods.
    Client,
}

impl Side {
    /// The other end: what an agent sends, a client receives.
    pub fn peer(self) -> Side {
        match self {
            Side::Raw => Side::Raw,
            Side::Agent => Side::Client,
            Side::Client => Side::Agent,
        }
    }

    /// The side that receives what this side is sent (None: `Raw`).
    fn receiver(self) -> Option<Receiver> {
        match self {
            Side::Raw => None,
            Side::Agent => Some(Receiver::Agent),
            Side::Client => Some(Receiver::Client),
        }
    }

    /// Check an inbound request for this side: an unknown method is -32601,
    /// params that do not fit the schema -32602 (`Raw` accepts anything).
    pub fn check_request(
        self,
        protocol: Protocol,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), RequestError> {
        self.check_text(protocol, method, params.map(RawValue::get), true)
            .map(drop)
    }

    /// Check an inbound notification for this side (an `Err`: drop it).
    pub fn check_notification(
        self,
        protocol: Protocol,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), RequestError> {
        self.check_text(protocol, method, params.map(RawValue::get), false)
            .map(drop)
    }

    /// Check params text for this side: `Ok(true)` when the check read all of it (so
    /// it is valid JSON), `Ok(false)` when nothing did (`Raw`, extension methods).
    fn check_text(
        self,
        protocol: Protocol,
        method: &str,
        params: Option<&str>,
        request: bool,
    ) -> Result<bool, RequestError> {
        match self.receiver() {
            None => Ok(false),
            Some(receiver) => method_check::check(protocol, receiver, !request, method, params),
        }
    }
}

/// Settings for [`HostConnection::connect`].
#[derive(Debug, Clone)]
pub struct HostOptions {
    pub side: Side,
    /// Speak the unstable protocol too (its methods are unknown otherwise).
    pub protocol: Protocol,
    /// Inbound notifications and requests the host may leave undrained
    /// before the engine stops reading (backpressure).
    pub queue_capacity: usize,
    pub max_message_size: usize,
    /// See `ConnectionBuilder::read_spin`.
    pub read_spin: std::time::Duration,
    /// Let the host read the stream on its own thread: it watches
    /// `HostConnection::read_fd` and calls `pump` (the fastest path: no
    /// thread hop per message). Only for pipes and sockets; otherwise, or
    /// when false, an engine task reads and `wake` signals events.
    pub host_reads: bool,
    /// Collect outbound frames until `flush` (or 64 KiB) and write them
    /// with one call: a host thread sending a burst then costs one write per
    /// batch, and no wake-up of the writer task. The host must call `flush`
    /// before it waits (Python: `loop.call_soon`).
    pub buffer_output: bool,
    /// The most events one `drain` returns (the host then drains until
    /// `None`). A garbage-collected host that parses a drained batch into
    /// objects keeps them all alive until the batch is handled; CPython
    /// collects every 700 new objects and promotes what is alive, so a
    /// batch of hundreds of messages paid for collections that a batch
    /// small enough to be freed first never triggers.
    pub drain_chunk: usize,
}

impl Default for HostOptions {
    fn default() -> Self {
        Self {
            side: Side::Raw,
            protocol: Protocol::Stable,
            queue_capacity: 4096,
            max_message_size: crate::framing::DEFAULT_MAX_MESSAGE_SIZE,
            // No read spin: the host's own thread needs the core (measured:
            // a 50 µs spin made Python round trips 40% slower on 2 cores).
            read_spin: std::time::Duration::ZERO,
            host_reads: false,
            buffer_output: false,
            drain_chunk: usize::MAX,
        }
    }
}

/// Append `text` as a JSON string, the way the engine writes frames (plain
/// text is copied as it stands): for the bindings' value writers.
pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
    crate::message::frame::write_string(out, text);
}

/// What a host connection shares with its engine tasks.
pub(crate) struct Shared {
    pub queue: queue::HostQueue,
    pub responders: responders::Responders,
}

/// A connection driven by a host language. Dropping it closes it.
pub struct HostConnection {
    connection: Connection,
    shared: Arc<Shared>,
    side: Side,
    protocol: Protocol,
    /// Sends parked because the write queue was full, in order.
    parked: mpsc::UnboundedSender<(Vec<u8>, u64)>,
    /// How many parked sends are not queued yet: while any is, new sends
    /// park behind them, so nothing overtakes.
    parked_count: Arc<AtomicUsize>,
    next_ticket: AtomicU64,
    pid: Option<u32>,
    /// Frames collected for one write (`HostOptions::buffer_output`).
    output: Mutex<Vec<u8>>,
    buffer_output: bool,
    /// The host-driven reader and the fd it reads (`HostOptions::host_reads`).
    host_reader: Option<(crate::engine::HostReader, std::os::fd::RawFd)>,
}

/// A send's outcome: `None` when the message is queued for writing, or a
/// ticket whose `WRITTEN` event will say when it is.
pub type Ticket = Option<u64>;

impl HostConnection {
    /// Start a connection on `runtime`. `wake` is called (from engine
    /// threads, so it must be quick and must not take the host's locks)
    /// whenever events arrive on an empty queue.
    pub fn connect(
        transport: Transport,
        options: HostOptions,
        runtime: &Handle,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        let mut transport = transport;
        let pid = transport.child_pid();
        let shared = Arc::new(Shared {
            queue: queue::HostQueue::new(options.queue_capacity, options.drain_chunk, Box::new(wake)),
            responders: responders::Responders::new(options.side == Side::Client),
        });
        let mut builder = Connection::builder()
            .max_message_size(options.max_message_size)
            .read_spin(options.read_spin)
            .write_spin(HOST_WRITE_SPIN);
        if options.buffer_output {
            // Queue entries are batches of up to 64 KiB: bound the queue in
            // bytes (4 MiB), not in thousands of batches.
            builder = builder.write_queue_capacity(OUTPUT_QUEUE_BATCHES);
        }
        let read_fd = if options.host_reads {
            transport.take_host_reader()
        } else {
            None
        };
        let (connection, host_reader) = match read_fd {
            Some(fd) => {
                let bridge = Arc::new(bridge::InlineBridge {
                    side: options.side,
                    protocol: options.protocol,
                    shared: shared.clone(),
                });
                let (connection, reader) =
                    builder.start_inline(transport, runtime, crate::engine::ReaderMode::Host, |_| bridge);
                (connection, reader.map(|reader| (reader, fd)))
            }
            None => {
                let bridge = Arc::new(bridge::Bridge {
                    side: options.side,
                    protocol: options.protocol,
                    shared: shared.clone(),
                });
                let requests = bridge.clone();
                let connection = builder
                    .on_request(move |request| requests.clone().handle_request(request))
                    .on_notification(move |notification| bridge.clone().handle_notification(notification))
                    .connect_on(transport, runtime);
                (connection, None)
            }
        };

        let (parked, parked_rx) = mpsc::unbounded_channel();
        let parked_count = Arc::new(AtomicUsize::new(0));
        runtime.spawn(write_parked(
            connection.clone(),
            shared.clone(),
            parked_rx,
            parked_count.clone(),
        ));
        let closing = connection.clone();
        let closed_shared = shared.clone();
        runtime.spawn(async move {
            closing.closed().await;
            let reason = closing.close_reason().unwrap_or_else(|| "closed".to_owned());
            closed_shared.queue.push_closed(&reason);
        });
        Self {
            connection,
            shared,
            side: options.side,
            protocol: options.protocol,
            parked,
            parked_count,
            next_ticket: AtomicU64::new(1),
            pid,
            host_reader,
            output: Mutex::new(Vec::new()),
            buffer_output: options.buffer_output,
        }
    }

    /// With `HostOptions::host_reads`: the fd to watch for readability
    /// (then call `pump`). None when the engine reads by itself.
    pub fn read_fd(&self) -> Option<std::os::fd::RawFd> {
        self.host_reader.as_ref().map(|(_, fd)| *fd)
    }

    /// Read and handle what the stream holds now, on this thread, without
    /// waiting; the events land in the queue (`drain`). Call it after
    /// draining, when `read_fd` is readable. False once the stream ended
    /// (stop watching the fd; a `CLOSED` event follows).
    pub fn pump(&self) -> bool {
        match &self.host_reader {
            Some((reader, _)) => reader.pump() == crate::engine::Pumped::Read,
            None => false,
        }
    }

    /// Every event queued since the last drain, as one JSON array text;
    /// `None` when there is none.
    pub fn drain(&self) -> Option<String> {
        self.shared.queue.drain()
    }

    /// `pump` until an event is ready or `spin` has passed (without
    /// sleeping): true if events are ready. On virtual machines waking an
    /// idle thread costs tens of microseconds, more than a request/response
    /// exchange; a host with nothing else to do spins briefly after activity
    /// instead of parking at once.
    pub fn pump_for(&self, spin: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + spin;
        loop {
            // Events already waiting come first: pumping on could read the
            // end of the stream and close before they are handled.
            if self.shared.queue.len() > 0 {
                return true;
            }
            let open = self.pump();
            if self.shared.queue.len() > 0 {
                return true;
            }
            if !open || std::time::Instant::now() >= deadline {
                return false;
            }
            std::hint::spin_loop();
        }
    }

    /// Send a request; its outcome arrives as a `RESULT` or `ERROR` event
    /// with the returned id. `params` is JSON text (None: no params).
    pub fn send_request(&self, method: &str, params: Option<&str>) -> Result<(i64, Ticket), RequestError> {
        let params = self.outbound_params(method, params, true)?;
        let inner = self.connection.inner();
        let id = inner.next_request_id();
        let shared = self.shared.clone();
        let waiter = Waiter::Callback(Box::new(move |outcome| shared.queue.push_response(id, &outcome)));
        inner.register(id, waiter)?;
        match self.send_built(|out| frame::write_request(out, id, method, params)) {
            Ok(ticket) => Ok((id, ticket)),
            Err(error) => {
                // Not sent: withdraw it, silently (close may have taken it).
                if let Some(Waiter::Callback(callback)) = inner.take_waiter(id) {
                    drop(callback);
                }
                Err(error)
            }
        }
    }

    /// Send a notification. `params` is JSON text (None: no params). A
    /// client's `session/cancel` also answers the session's open permission
    /// requests `cancelled` (a `CANCELLED` event tells the host to stop their
    /// handlers).
    pub fn send_notification(&self, method: &str, params: Option<&str>) -> Result<Ticket, RequestError> {
        let params = self.outbound_params(method, params, false)?;
        let sent = self.send_built(|out| frame::write_notification(out, method, params))?;
        if permission_cancel::is_session_cancel(method) {
            let answer = permission_cancel::cancelled_answer();
            for token in self.shared.responders.withdraw_permissions(params) {
                if self.respond(token, Ok(&answer)).unwrap_or(false) {
                    self.shared.queue.push_cancelled(token);
                }
            }
        }
        Ok(sent)
    }

    /// Answer inbound request `token` with a result (JSON text) or an
    /// error. False if it needs no answer any more (answered, cancelled,
    /// closed, or an unknown token).
    pub fn respond(&self, token: u64, outcome: Result<&str, RequestError>) -> Result<bool, RequestError> {
        let outcome = match outcome {
            // ACP results are objects: a handler with nothing to say (Python's
            // None, JavaScript's undefined) answers `{}`.
            Ok(result) if self.side != Side::Raw && result.trim() == "null" => Ok("{}"),
            Ok(result) => Ok(parse_json(result, "result")?.get()),
            Err(error) => Err(error),
        };
        let Some(pending) = self.shared.responders.take(token) else {
            return Ok(false);
        };
        // Claimed and queued before the engine's handler future may end
        // (it would otherwise answer null first).
        if !pending.responder.claim() {
            return Ok(false);
        }
        if pending.answered.is_none() {
            // Before the answer goes out: the peer may reuse the id at once.
            self.connection.inner().untrack_running(pending.responder.id());
        }
        let id = pending.responder.id();
        let sent = match outcome {
            Ok(result) => self.send_built(|out| frame::write_success(out, id, result)),
            Err(error) => self.send_frame(frame::response(id, &Err(error))),
        }
        .is_ok();
        if let Some(answered) = pending.answered {
            let _ = answered.send(());
        }
        Ok(sent)
    }

    /// Cancel our pending request `id`: an `ERROR` event (-32800) follows,
    /// the peer gets `$/cancel_request`, a late response is dropped. False if
    /// it was not pending.
    pub fn cancel_pending_request(&self, id: i64) -> bool {
        let Some(waiter) = self.connection.inner().take_waiter(id) else {
            return false;
        };
        waiter.complete(Err(RequestError::request_cancelled()));
        let _ = self.send_cancel_request_notification(&RequestId::Number(id));
        true
    }

    /// Send `$/cancel_request` for `id` (ours or not), nothing else.
    pub fn send_cancel_request_notification(&self, id: &RequestId) -> Result<Ticket, RequestError> {
        let params = serde_json::json!({ "requestId": id });
        self.send_frame(frame::notification(crate::CANCEL_REQUEST_METHOD, &params)?)
    }

    /// Close: pending requests fail, handlers are cancelled, queued output
    /// is flushed, a spawned agent is reaped; a `CLOSED` event follows.
    pub fn close(&self) {
        let _ = self.flush();
        self.connection.close();
        if let Some((reader, _)) = &self.host_reader {
            reader.stop();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.connection.is_closed()
    }

    pub fn close_reason(&self) -> Option<String> {
        self.connection.close_reason()
    }

    /// The spawned agent's process id, for connections made by spawning.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The core connection, for Rust code that shares it.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Check outbound params for this side; they go on the wire as given
    /// (borrowed, not copied). Text the schema check read in full is valid JSON;
    /// other text (raw connections, extension methods) is scanned.
    fn outbound_params<'t>(
        &self,
        method: &str,
        params: Option<&'t str>,
        request: bool,
    ) -> Result<Option<&'t str>, RequestError> {
        // What we send is what the peer receives.
        let checked = self
            .side
            .peer()
            .check_text(self.protocol, method, params, request);
        if !matches!(checked, Ok(true)) {
            // Text that is not JSON at all says so before any schema complaint.
            if let Some(text) = params {
                parse_json(text, "params")?;
            }
        }
        checked.map(|_| params)
    }

    /// Send a frame: into the host batch (`buffer_output`), or to the writer.
    fn send_frame(&self, frame: Vec<u8>) -> Result<Ticket, RequestError> {
        if !self.buffer_output {
            return self.send_now(frame, false);
        }
        self.send_built(|out| out.extend_from_slice(&frame))
    }

    /// Send the frame `write` appends: with `buffer_output` straight into the host
    /// batch (no buffer of its own), otherwise to the writer.
    fn send_built(&self, write: impl FnOnce(&mut Vec<u8>)) -> Result<Ticket, RequestError> {
        if !self.buffer_output {
            let mut frame = Vec::with_capacity(256);
            write(&mut frame);
            return self.send_now(frame, false);
        }
        let mut output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        if self.connection.is_closed() {
            return Err(RequestError::connection_closed(
                &self.close_reason().unwrap_or_else(|| "closed".into()),
            ));
        }
        if output.capacity() == 0 {
            // One allocation per batch, not a doubling series.
            output.reserve(OUTPUT_BATCH + OUTPUT_BATCH / 4);
        }
        write(&mut output);
        if output.len() < OUTPUT_BATCH {
            return Ok(None);
        }
        let batch = std::mem::take(&mut *output);
        // Sent under the lock: a concurrent flush must not overtake it.
        self.send_now(batch, true)
    }

    /// Write what `HostOptions::buffer_output` collected (the host calls
    /// this once it has run what it had to run: its loop's next turn).
    pub fn flush(&self) -> Result<Ticket, RequestError> {
        let mut output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        if output.is_empty() {
            return Ok(None);
        }
        let batch = std::mem::take(&mut *output);
        self.send_now(batch, true)
    }

    /// Queue a frame (or a batch) for the writer now if there is room and
    /// nothing is parked ahead of it; otherwise park it and return its ticket.
    fn send_now(&self, frame: Vec<u8>, batch: bool) -> Result<Ticket, RequestError> {
        let inner = self.connection.inner();
        let frame = if self.parked_count.load(Ordering::Acquire) == 0 {
            let queued = if batch {
                inner.try_enqueue_batch(frame)
            } else {
                inner.try_enqueue(frame)
            };
            match queued {
                Ok(()) => return Ok(None),
                Err(TryEnqueueError::Closed(error)) => return Err(error),
                Err(TryEnqueueError::Full(frame)) => frame,
            }
        } else if self.connection.is_closed() {
            return Err(RequestError::connection_closed(
                &self.close_reason().unwrap_or_else(|| "closed".into()),
            ));
        } else {
            frame
        };
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        self.parked_count.fetch_add(1, Ordering::AcqRel);
        if self.parked.send((frame, ticket)).is_err() {
            self.parked_count.fetch_sub(1, Ordering::AcqRel);
            return Err(RequestError::connection_closed("closed"));
        }
        Ok(Some(ticket))
    }
}

impl Drop for HostConnection {
    fn drop(&mut self) {
        self.close();
    }
}

/// Queue parked sends in order, waiting for room, and report each one.
async fn write_parked(
    connection: Connection,
    shared: Arc<Shared>,
    mut parked: mpsc::UnboundedReceiver<(Vec<u8>, u64)>,
    parked_count: Arc<AtomicUsize>,
) {
    let inner = connection.inner().clone();
    drop(connection);
    while let Some((frame, ticket)) = parked.recv().await {
        let ok = inner.enqueue(frame).await.is_ok();
        parked_count.fetch_sub(1, Ordering::AcqRel);
        shared.queue.push_written(ticket, ok);
    }
}

/// Check that `text` is one JSON value (a scan, no copy).
fn parse_json<'t>(text: &'t str, what: &str) -> Result<&'t RawValue, RequestError> {
    serde_json::from_str(text).map_err(|error| {
        RequestError::invalid_params().with_data(serde_json::json!({
            "message": format!("{what} is not valid JSON: {error}")
        }))
    })
}
