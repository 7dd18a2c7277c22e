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
mod closing;
#[cfg(feature = "remote")]
mod dial;
mod options;
mod output;
mod queue;
mod responders;
mod runtime;
#[cfg(feature = "remote")]
mod server;
mod side;
pub mod threaded;
mod wake;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::value::RawValue;
use tokio::runtime::Handle;

use crate::connection::Connection;
use crate::engine::{Outgoing, Waiter};
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::{frame, RequestId};
use crate::permission_cancel;
use crate::transport::{HostSource, Transport};
use crate::version::Negotiation;
use crate::{Protocol, UncheckedMethods};

#[cfg(feature = "remote")]
pub use dial::{DialOutcome, HostDial};
pub use options::{BlockWhenFull, HostOptions};
pub use output::Ticket;
pub use queue::kind;
pub use runtime::{runtime, runtime_alive, runtime_and_generation, shutdown_runtime};
#[cfg(feature = "remote")]
pub use server::{Accepted, HostServer};
pub use side::Side;
pub use wake::EventFd;

/// The writer task's spin for host connections: a host thread sending a
/// burst produces a frame every few microseconds.
const HOST_WRITE_SPIN: std::time::Duration = std::time::Duration::from_micros(30);

/// Write queue capacity, in batches, with `buffer_output` (4 MiB of 64 KiB
/// batches).
const OUTPUT_QUEUE_BATCHES: usize = 64;

/// Append `text` as a JSON string, the way the engine writes frames (plain
/// text is copied as it stands): for the bindings' value writers.
pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
    crate::json_string::write_string(out, text);
}

/// What a host connection shares with its engine tasks.
pub(crate) struct Shared {
    pub queue: queue::HostQueue,
    pub responders: responders::Responders,
    pub negotiation: Negotiation,
    /// `HostOptions::strip_unknown_fields`.
    pub strip_unknown_fields: bool,
    /// Queue an `OBSERVED` event per message (`HostOptions::observe`,
    /// `HostConnection::set_observe`).
    pub observing: AtomicBool,
}

impl Shared {
    /// Check an inbound request for `side`, in the version the connection
    /// speaks (which an agent's `initialize` selects first): the params to
    /// hand the host instead of the received ones, when stripped.
    pub fn check_request(
        &self,
        side: Side,
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        request: &IncomingRequest,
    ) -> Result<Option<crate::RawJson>, RequestError> {
        let received = request.params.as_deref();
        let (version, rewritten) = match side {
            Side::Agent => self
                .negotiation
                .agent_receives(&request.method, received.map(RawValue::get))?,
            _ => (self.negotiation.peer_sends(&request.method)?, None),
        };
        // An `initialize` rewritten for the version selected is checked, and
        // handed to the host, as rewritten.
        let rewritten = rewritten.and_then(|text| RawValue::from_string(text).ok());
        let params = rewritten.as_deref().or(received);
        let stripped =
            self.stripped(|| side.check_request(version, protocol, unchecked, &request.method, params))?;
        Ok(stripped.or(rewritten))
    }

    /// Check an inbound notification for `side` (an `Err`: refuse it); the
    /// params to hand the host instead, when stripped.
    pub fn check_notification(
        &self,
        side: Side,
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        notification: &IncomingNotification,
    ) -> Result<Option<crate::RawJson>, RequestError> {
        let version = self.negotiation.peer_sends(&notification.method)?;
        let params = notification.params.as_deref();
        self.stripped(|| side.check_notification(version, protocol, unchecked, &notification.method, params))
    }

    fn stripped(
        &self,
        check: impl FnOnce() -> Result<(), RequestError>,
    ) -> Result<Option<crate::RawJson>, RequestError> {
        if !self.strip_unknown_fields {
            return check().map(|()| None);
        }
        let (checked, stripped) = crate::schema::strip::stripping(check);
        checked.map(|()| stripped.and_then(|text| RawValue::from_string(text).ok()))
    }
}

/// A connection driven by a host language. Dropping it closes it.
pub struct HostConnection {
    connection: Connection,
    shared: Arc<Shared>,
    side: Side,
    protocol: Protocol,
    unchecked: UncheckedMethods,
    output: output::Output,
    pid: Option<u32>,
    /// The host-driven reader and what it reads (`HostOptions::host_reads`).
    host_reader: Option<(crate::engine::HostReader, HostSource)>,
    /// The bytes the host moves itself (`Transport::fed`).
    fed: Option<Arc<crate::fed::Fed>>,
}

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
            queue: queue::HostQueue::new(
                options.queue_capacity,
                options.drain_chunk,
                options.withdraw_cancelled_requests,
                Box::new(wake),
            ),
            responders: responders::Responders::new(options.side == Side::Client),
            negotiation: Negotiation::new(options.protocol_versions),
            strip_unknown_fields: options.strip_unknown_fields,
            observing: AtomicBool::new(options.observe),
        });
        let fed = transport.fed.clone();
        if let Some(fed) = &fed {
            // Output to take wakes the host as events do.
            let woken = shared.clone();
            fed.set_notify(move || woken.queue.wake_host());
        }
        let mut builder = Connection::builder()
            .guard_sigpipe(options.guard_sigpipe)
            .handler_answers_cancelled(options.handler_answers_cancelled)
            .max_message_size(options.max_message_size)
            .read_spin(options.read_spin)
            .write_spin(HOST_WRITE_SPIN)
            .limits(options.limits);
        let observed = shared.clone();
        builder = builder.observer(move |direction, line: &[u8]| {
            if observed.observing.load(Ordering::Relaxed) {
                observed
                    .queue
                    .push_observed_now(direction == crate::Direction::Inbound, line)
            }
        });
        if options.buffer_output {
            // Queue entries are batches of up to 64 KiB: bound the queue in
            // bytes (4 MiB), not in thousands of batches.
            builder = builder.write_queue_capacity(OUTPUT_QUEUE_BATCHES);
        }
        let host_source = if options.host_reads {
            transport.take_host_reader()
        } else {
            None
        };
        let (connection, host_reader) = match host_source {
            Some(source) => {
                let bridge = Arc::new(bridge::ReaderBridge {
                    side: options.side,
                    protocol: options.protocol,
                    unchecked: options.unchecked_methods.clone(),
                    shared: shared.clone(),
                });
                let (connection, reader) = builder.start_with_reader_handler(
                    transport,
                    runtime,
                    crate::engine::ReaderMode::Host,
                    |_| bridge,
                );
                let resumed = shared.clone();
                let reader = reader.map(|mut reader| {
                    reader.set_resume(move || resumed.queue.wake_host());
                    (reader, source)
                });
                (connection, reader)
            }
            None => {
                let bridge = Arc::new(bridge::TaskBridge {
                    side: options.side,
                    protocol: options.protocol,
                    unchecked: options.unchecked_methods.clone(),
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

        let output = output::Output::start(
            connection.clone(),
            shared.clone(),
            options.buffer_output,
            options.block_when_full.clone(),
            runtime,
        );
        closing::watch(connection.clone(), shared.clone(), fed.clone(), runtime);
        Self {
            connection,
            shared,
            side: options.side,
            protocol: options.protocol,
            unchecked: options.unchecked_methods,
            output,
            pid,
            host_reader,
            fed,
        }
    }

    /// The ACP version the connection speaks now: the lowest of
    /// `HostOptions::protocol_versions` until `initialize` selects one (an
    /// agent handling `initialize` already sees the selected version; a
    /// client, once the answer arrives).
    pub fn protocol_version(&self) -> u16 {
        self.shared.negotiation.current()
    }

    /// With `HostOptions::host_reads`: the fd to watch for readability
    /// (then call `pump`). None when the engine reads by itself.
    pub fn read_fd(&self) -> Option<std::os::fd::RawFd> {
        match self.host_reader {
            Some((_, HostSource::Fd(fd))) => Some(fd),
            _ => None,
        }
    }

    /// Read and handle what the stream holds now, on this thread, without
    /// waiting; the events land in the queue (`drain`). Call it after
    /// draining, when `read_fd` is readable or after `feed`. False once the
    /// stream ended (stop watching the fd; a `CLOSED` event follows). While
    /// `reading_paused` it reads nothing.
    pub fn pump(&self) -> bool {
        match &self.host_reader {
            Some((reader, _)) => reader.pump() != crate::engine::Pumped::Done,
            None => false,
        }
    }

    /// Bytes the peer sent, on a `Transport::fed` connection: read by `pump`
    /// with `HostOptions::host_reads`, else by the engine. False once the
    /// input ended (or the transport is not fed).
    pub fn feed(&self, bytes: &[u8]) -> bool {
        self.fed.as_ref().is_some_and(|fed| fed.feed(bytes))
    }

    /// Whether the host moves this connection's bytes (`Transport::fed`).
    pub fn is_fed(&self) -> bool {
        self.fed.is_some()
    }

    /// The peer's stream ended (`Transport::fed`): the connection closes
    /// once what was fed is read.
    pub fn end_input(&self) {
        if let Some(fed) = &self.fed {
            fed.end_input();
        }
    }

    /// Bytes fed and not read yet: feed more only once this is 0, so the
    /// input stays bounded while reading waits (`reading_paused`).
    pub fn input_backlog(&self) -> usize {
        self.fed.as_ref().map_or(0, |fed| fed.input_backlog())
    }

    /// What to send the peer (`Transport::fed`): the host's wake is called
    /// when some becomes available. A send from the host's thread is often
    /// here as soon as `flush` returns.
    pub fn take_output(&self) -> Option<Vec<u8>> {
        self.fed.as_ref().and_then(|fed| fed.take_output())
    }

    /// The engine will write nothing more and all was taken (`Transport::fed`;
    /// true for other transports).
    pub fn output_ended(&self) -> bool {
        self.fed.as_ref().is_none_or(|fed| fed.output_ended())
    }

    /// Whether reading waits until the peer reads or requests finish (the
    /// connection is at its `HostOptions::limits`): do not watch `read_fd`
    /// then; the host's wake is called when reading may go on.
    pub fn reading_paused(&self) -> bool {
        self.host_reader
            .as_ref()
            .is_some_and(|(reader, _)| reader.is_paused())
    }

    /// Every event queued since the last drain, as one JSON array text;
    /// `None` when there is none.
    pub fn drain(&self) -> Option<String> {
        self.shared.queue.drain()
    }

    /// How many events wait to be drained.
    pub fn queued_events(&self) -> usize {
        self.shared.queue.len()
    }

    /// `pump` until an event is ready or `spin` has passed (without
    /// sleeping): true if events are ready. On virtual machines waking an
    /// idle thread costs tens of microseconds, more than a request/response
    /// exchange; a host with nothing else to do spins briefly after activity
    /// instead of parking at once. On a connection the engine reads (no
    /// `read_fd`), it watches the queue instead, the engine's wake-up held
    /// off meanwhile (`HostQueue::watch_for`).
    pub fn pump_for(&self, spin: std::time::Duration) -> bool {
        if self.host_reader.is_none() {
            // The engine reads: watch the queue for what it brings.
            return self.shared.queue.watch_for(spin);
        }
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
            if !open || self.reading_paused() || std::time::Instant::now() >= deadline {
                return false;
            }
            std::hint::spin_loop();
        }
    }

    /// Send a request; its outcome arrives as a `RESULT` or `ERROR` event
    /// with the returned id. `params` is JSON text (None: no params).
    pub fn send_request(&self, method: &str, params: Option<&str>) -> Result<(i64, Ticket), RequestError> {
        self.send_request_with(method, params, |_| {})
    }

    /// `send_request`, calling `before_send` with the request's id before
    /// the request can go out: a host that drains on another thread learns
    /// the id before its answer can arrive.
    pub fn send_request_with(
        &self,
        method: &str,
        params: Option<&str>,
        before_send: impl FnOnce(i64),
    ) -> Result<(i64, Ticket), RequestError> {
        let params = self.outbound_params(method, params, true)?;
        let inner = self.connection.inner();
        let id = inner.next_request_id();
        before_send(id);
        let shared = self.shared.clone();
        let settles = self.side == Side::Client && shared.negotiation.client_reads_answer(method);
        let waiter = Waiter::Callback(Box::new(move |outcome| {
            // Before the host sees the answer: it may send in the new version at once.
            let outcome = match outcome {
                Ok(result) if settles => shared
                    .negotiation
                    .initialize_answered(result.get())
                    .map(|()| result),
                outcome => outcome,
            };
            shared.queue.push_response(id, &outcome)
        }));
        inner.register(id, waiter)?;
        match self
            .output
            .send_built(|out| frame::write_request(out, id, method, params), Outgoing::Own)
        {
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
        let sent = self.output.send_built(
            |out| frame::write_notification(out, method, params),
            Outgoing::Own,
        )?;
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

    /// Start or stop queueing an `OBSERVED` event for every message read or
    /// written (a host's stream observers, added or removed at any time).
    pub fn set_observe(&self, observe: bool) {
        self.shared.observing.store(observe, Ordering::Relaxed);
    }

    /// Answer inbound request `token` with a result (JSON text) or an
    /// error. False if it needs no answer any more (answered, cancelled,
    /// closed, or an unknown token).
    pub fn respond(&self, token: u64, outcome: Result<&str, RequestError>) -> Result<bool, RequestError> {
        match outcome {
            Ok(result) => self.respond_json(token, Ok(parse_json(result, "result")?)),
            Err(error) => self.respond_json(token, Err(error)),
        }
    }

    /// [`respond`](Self::respond) with a result the host already parsed (a
    /// `RawValue` is valid JSON): the engine does not read it again, which
    /// counts for a 16 MiB file's content.
    pub fn respond_json(
        &self,
        token: u64,
        outcome: Result<&RawValue, RequestError>,
    ) -> Result<bool, RequestError> {
        let outcome = match outcome {
            // ACP results are objects: a handler with nothing to say (Python's
            // None, JavaScript's undefined) answers `{}`.
            Ok(result) if self.side != Side::Raw && result.get() == "null" => Ok("{}"),
            Ok(result) => Ok(result.get()),
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
            self.connection.inner().running.untrack(pending.responder.id());
        }
        let id = pending.responder.id();
        let sent = match outcome {
            Ok(result) => self
                .output
                .send_built(|out| frame::write_success(out, id, result), Outgoing::Answer),
            Err(error) => self
                .output
                .send_frame(frame::response(id, &Err(error)), Outgoing::Answer),
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
        self.output.send_frame(
            frame::notification(crate::CANCEL_REQUEST_METHOD, &params)?,
            Outgoing::Own,
        )
    }

    /// Whether inbound request `token` still waits for the host's answer
    /// (false once answered, cancelled by the peer, or the connection closed).
    pub fn is_pending(&self, token: u64) -> bool {
        self.shared.responders.contains(token)
    }

    /// Close: requests the host has not answered are answered -32603,
    /// pending requests fail, handlers are cancelled, queued output is
    /// flushed, a spawned agent is reaped; a `CLOSED` event follows.
    pub fn close(&self) {
        if !self.connection.is_closed() {
            for token in self.shared.responders.tokens() {
                let _ = self.respond(token, Err(RequestError::internal_error()));
            }
        }
        let _ = self.flush();
        self.connection.close();
        if let Some((reader, _)) = &self.host_reader {
            reader.stop();
        }
    }

    /// Whether the connection is closed (or closing).
    pub fn is_closed(&self) -> bool {
        self.connection.is_closed()
    }

    /// Why the connection closed, once it did.
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
        let version = if request && self.side == Side::Client {
            self.shared.negotiation.client_sends(method, params)
        } else {
            self.shared.negotiation.current()
        };
        let checked =
            self.side
                .peer()
                .check_text(version, self.protocol, &self.unchecked, method, params, request);
        if !matches!(checked, Ok(true)) {
            // Text that is not JSON at all says so before any schema complaint.
            if let Some(text) = params {
                parse_json(text, "params")?;
            }
        }
        checked.map(|_| params)
    }

    /// Until the send that returned `ticket` was queued for writing (true),
    /// or failed with the connection (false). The `WRITTEN` event says the
    /// same; this is for hosts whose sends suspend instead (Kotlin).
    pub fn wait_written(&self, ticket: u64) -> impl std::future::Future<Output = bool> + Send + 'static {
        self.output.wait_written(ticket)
    }

    /// Write what `HostOptions::buffer_output` collected (the host calls
    /// this once it has run what it had to run: its loop's next turn).
    pub fn flush(&self) -> Result<Ticket, RequestError> {
        self.output.flush()
    }
}

impl Drop for HostConnection {
    fn drop(&mut self) {
        self.close();
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
