//! The native half of the `acp-engine` npm package: one [`NativeConnection`]
//! per ACP connection, a thin shell over [`acp_engine::host::HostConnection`].
//!
//! - Inbound, over pipes and sockets (spawn, stdio): Node's own thread reads
//!   the stream. A libuv poll handle watches its fd and the callback pumps
//!   the engine in place and hands JS each batch of events as one JSON array
//!   text, parsed with one `JSON.parse` (see [`poll`]).
//! - Inbound otherwise, and events made on engine threads (CLOSED, WRITTEN):
//!   the engine calls one thread-safe function per burst (when an event
//!   lands in an empty queue); the JS side then calls `drain()`.
//! - Outbound: JS passes `JSON.stringify`'d params; they are checked and
//!   queued for the writer on the calling thread.
//! - The thread-safe function is strong (it keeps Node alive) while the
//!   connection is open; JS calls `release()` when it handles the CLOSED
//!   event, after which nothing of the connection keeps the process alive.
//! - Transports: this process's stdio, a spawned agent, or bytes JS moves
//!   (`feed` / `pump` / `takeOutput`, the engine's `Transport::fed`) for Web
//!   Streams (`ndJsonStream`), read and written on Node's thread too; the
//!   framing and the protocol stay in Rust in every case.

#![warn(missing_docs)]
mod dial;
mod errors;
pub mod fed;
pub mod mcp;
pub mod mcp_http;
mod poll;
mod proxy;
mod send;
mod server;
mod text;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_engine::host::{runtime, HostConnection, HostOptions, Side};
use acp_engine::{
    Protocol, ProtocolVersions, RequestError, RequestId, SpawnOptions, Transport, UncheckedMethods,
};
use napi::bindgen_prelude::{FromNapiValue, Function, ToNapiValue, Uint8Array};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, JsValue, Result, Status, Unknown};
use napi_derive::napi;

use crate::dial::RemoteSettings;

type WakeFn = ThreadsafeFunction<(), (), (), Status, false>;

/// The wake-up function, shared with the engine's threads; `None` once
/// released.
#[derive(Clone, Default)]
pub(crate) struct Waker(Arc<Mutex<Option<WakeFn>>>);

impl Waker {
    pub(crate) fn new(wake: Function<(), ()>) -> Result<Self> {
        let tsfn = wake
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .build()?;
        Ok(Self(Arc::new(Mutex::new(Some(tsfn)))))
    }

    pub(crate) fn wake(&self) {
        if let Some(tsfn) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    pub(crate) fn release(&self) {
        let tsfn = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(tsfn);
    }
}

/// A connection's settings from JS.
#[napi(object)]
pub struct NativeSettings {
    /// 0: raw JSON-RPC, 1: agent, 2: client (the `Side` enum of `streams.ts`).
    pub side: u32,
    /// Speak the unstable protocol too.
    pub unstable: Option<bool>,
    /// The largest inbound message, in bytes.
    pub max_message_size: Option<u32>,
    /// The peer's requests handled at once before the engine stops reading.
    pub max_in_flight_requests: Option<u32>,
    /// Bytes of output queued for the peer before the engine stops reading.
    pub max_buffered_bytes: Option<f64>,
    /// Close when reading was held at a limit this long with no progress.
    pub output_stall_timeout_ms: Option<u32>,
    /// Methods outside the ACP schema sent and received as they are, unchecked.
    pub unchecked_methods: Option<Vec<String>>,
    /// The ACP versions spoken (1, 2 or both; default 1), selected at `initialize`.
    pub protocol_versions: Option<Vec<u32>>,
}

/// Spawn options from JS.
#[napi(object)]
pub struct NativeSpawnOptions {
    /// The agent's working directory.
    pub cwd: Option<String>,
    /// Variables added to (or, with `clear_env`, making up) its environment.
    pub env: Option<HashMap<String, String>>,
    /// Replace the inherited environment with `env` instead of adding to it.
    pub clear_env: Option<bool>,
    /// Pass the agent's stderr through (default true) or drop it.
    pub inherit_stderr: Option<bool>,
    /// Milliseconds the agent may take to exit after its stdin closes before it is killed.
    pub exit_grace_ms: Option<u32>,
}

/// One engine connection, driven from JS (`dispatcher.ts`).
#[napi]
pub struct NativeConnection {
    /// The poll reading `connection`'s fd on this thread, while it runs.
    poll: RefCell<Option<Rc<poll::Poll>>>,
    connection: Arc<HostConnection>,
    waker: Waker,
}

fn side(side: u32) -> Result<Side> {
    match side {
        0 => Ok(Side::Raw),
        1 => Ok(Side::Agent),
        2 => Ok(Side::Client),
        other => Err(Error::new(
            Status::InvalidArg,
            format!("acp-engine: unknown side {other} (0: raw, 1: agent, 2: client)"),
        )),
    }
}

pub(crate) fn options(settings: &NativeSettings) -> Result<HostOptions> {
    let mut options = HostOptions {
        side: side(settings.side)?,
        // Pipes and sockets are read on Node's thread (`startReading`).
        host_reads: true,
        // Sends are collected and written once per batch or loop turn
        // (`flush`: after each delivered batch, and on `setImmediate`).
        buffer_output: true,
        // Handlers get params as the official TypeScript SDK's do: without
        // the properties their schema type does not describe.
        strip_unknown_fields: true,
        // A cancelled handler's signal aborts and what it then returns is
        // the answer, as in the official TypeScript SDK.
        handler_answers_cancelled: true,
        // Every request's handler starts, even one whose cancellation came
        // in the same read (its signal is then aborted), as in the official
        // TypeScript SDK.
        withdraw_cancelled_requests: false,
        ..HostOptions::default()
    };
    if settings.unstable == Some(true) {
        options.protocol = Protocol::Unstable;
    }
    if let Some(max) = settings.max_message_size {
        options.max_message_size = max as usize;
    }
    if let Some(requests) = settings.max_in_flight_requests {
        options.limits.max_in_flight_requests = (requests as usize).max(1);
    }
    if let Some(bytes) = settings.max_buffered_bytes {
        options.limits.max_buffered_bytes = (bytes.max(1.0)) as usize;
    }
    if let Some(ms) = settings.output_stall_timeout_ms {
        options.limits.output_stall_timeout = Some(std::time::Duration::from_millis(ms.into()));
    }
    if let Some(methods) = &settings.unchecked_methods {
        options.unchecked_methods = UncheckedMethods::new(methods.iter().cloned());
    }
    if let Some(versions) = &settings.protocol_versions {
        let listed: Vec<u16> = versions.iter().map(|&v| u16::try_from(v).unwrap_or(0)).collect();
        options.protocol_versions = ProtocolVersions::from_list(&listed).ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!("acp-engine: protocolVersions must name 1, 2 or both, not {versions:?}"),
            )
        })?;
    }
    Ok(options)
}

/// The kinds of the events the engine hands JS (`acp_engine::host::kind`).
#[napi(object)]
pub struct EngineEventKinds {
    /// An inbound request.
    pub request: u8,
    /// An inbound notification.
    pub notification: u8,
    /// The result of one of our requests.
    pub result: u8,
    /// One of our requests failed.
    pub error: u8,
    /// An inbound request's handler must stop.
    pub cancelled: u8,
    /// A parked send was queued (or dropped at close).
    pub written: u8,
    /// The connection closed: the last event.
    pub closed: u8,
    /// A notification from the peer that fails the schema was dropped.
    pub invalid_notification: u8,
}

/// Whether `json` is a valid `definition` (a union with a catch-all variant) of the stable
/// or unstable schema of ACP `version`: the narrowing guards' check. Null for any other
/// definition.
#[napi]
pub fn guard_check(version: u32, unstable: bool, definition: String, json: String) -> Option<bool> {
    let version = u16::try_from(version).ok()?;
    acp_engine::schema::guard_check(version, unstable, &definition, &json)
}

/// Throws the -32602 `RequestError` for the first of `servers` (JSON: `McpServer[]` or null)
/// an ACP v2 agent advertising `capabilities` (JSON: `McpCapabilities` or null) cannot
/// accept (`acp_engine::mcp_servers`).
#[napi]
pub fn check_supported_mcp_servers(env: Env, servers: String, capabilities: String) -> Result<()> {
    let parse =
        |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap_or(serde_json::Value::Null);
    acp_engine::mcp_servers::check_supported_mcp_servers(&parse(&servers), &parse(&capabilities))
        .map_err(|error| errors::request_error(&env, &error))
}

/// The event kinds.
#[napi]
pub fn engine_event_kinds() -> EngineEventKinds {
    use acp_engine::host::kind;
    EngineEventKinds {
        request: kind::REQUEST,
        notification: kind::NOTIFICATION,
        result: kind::RESULT,
        error: kind::ERROR,
        cancelled: kind::CANCELLED,
        written: kind::WRITTEN,
        closed: kind::CLOSED,
        invalid_notification: kind::INVALID_NOTIFICATION,
    }
}

/// Node opens its stdio with close-on-exec, so a child spawned with an
/// inherited stderr would start without one (and e.g. Python's
/// `sys.stderr` would be None): make fd 2 inheritable, as it is in any
/// non-Node process.
fn inheritable_stderr() {
    // SAFETY: fcntl on fd 2 with F_GETFD/F_SETFD only changes its flags.
    unsafe {
        let flags = libc::fcntl(2, libc::F_GETFD);
        if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
            libc::fcntl(2, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
        }
    }
}

/// Sends write straight to the pipe from the calling thread when nothing is
/// queued; some writers (tokio's stdout on a file or a terminal) need the
/// runtime's context for that.
pub(crate) fn enter() -> tokio::runtime::EnterGuard<'static> {
    engine_runtime().enter()
}

/// The engine's runtime, kept for good (Node never shuts it down).
pub(crate) fn engine_runtime() -> &'static tokio::runtime::Handle {
    static HANDLE: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();
    HANDLE.get_or_init(runtime)
}

fn ticket(ticket: Option<u64>) -> f64 {
    ticket.map_or(0.0, |t| t as f64)
}

#[napi]
impl NativeConnection {
    pub(crate) fn start(transport: Transport, options: HostOptions, waker: Waker) -> Self {
        let engine_waker = waker.clone();
        let connection = HostConnection::connect(transport, options, engine_runtime(), move || {
            // Events queued while this thread pumps are drained right after.
            if !poll::pumping() {
                engine_waker.wake();
            }
        });
        Self {
            poll: RefCell::new(None),
            connection: Arc::new(connection),
            waker,
        }
    }

    /// An agent on this process's stdin/stdout.
    #[napi(factory)]
    pub fn stdio(settings: NativeSettings, wake: Function<(), ()>) -> Result<Self> {
        let options = options(&settings)?;
        let waker = Waker::new(wake)?;
        let _guard = enter();
        Ok(Self::start(Transport::stdio(), options, waker))
    }

    /// A client of a spawned agent process. A failure to start it throws an
    /// `Error` whose `code` is the system's (`ENOENT`, `EACCES`, ...).
    #[napi(factory)]
    pub fn spawn(
        env: Env,
        settings: NativeSettings,
        command: String,
        args: Vec<String>,
        spawn: Option<NativeSpawnOptions>,
        wake: Function<(), ()>,
    ) -> Result<Self> {
        let mut options_ = SpawnOptions::new(command).args(args);
        let mut inherit_stderr = true;
        if let Some(spawn) = spawn {
            if spawn.clear_env == Some(true) {
                options_ = options_.clear_env();
            }
            for (key, value) in spawn.env.unwrap_or_default() {
                options_ = options_.env(key, value);
            }
            if let Some(cwd) = spawn.cwd {
                options_ = options_.cwd(cwd);
            }
            if let Some(inherit) = spawn.inherit_stderr {
                inherit_stderr = inherit;
                options_ = options_.inherit_stderr(inherit);
            }
            if let Some(ms) = spawn.exit_grace_ms {
                options_ = options_.exit_grace(Duration::from_millis(ms.into()));
            }
        }
        if inherit_stderr {
            inheritable_stderr();
        }
        let options = options(&settings)?;
        let transport = {
            let _guard = enter();
            Transport::spawn(options_).map_err(|error| errors::spawn_error(&env, &error))?
        };
        let waker = Waker::new(wake)?;
        Ok(Self::start(transport, options, waker))
    }

    /// A client of a remote agent, connected in the background: a failure
    /// closes the connection with the reason. `on_cookies` gets the
    /// `Set-Cookie` values of the handshake's answer once connected.
    #[napi(factory)]
    pub fn remote(
        settings: NativeSettings,
        remote: RemoteSettings,
        wake: Function<(), ()>,
        on_cookies: Option<Function<Vec<String>, ()>>,
    ) -> Result<Self> {
        let options = options(&settings)?;
        let on_cookies = on_cookies
            .map(|f| {
                f.build_threadsafe_function::<Vec<String>>()
                    .callee_handled::<false>()
                    .build()
            })
            .transpose()?;
        let transport = {
            let _guard = enter();
            acp_engine::remote::dial_for_cookies(&remote.url, &remote.connect_options(), move |cookies| {
                if let Some(on_cookies) = on_cookies {
                    on_cookies.call(cookies, ThreadsafeFunctionCallMode::NonBlocking);
                }
            })
        };
        let waker = Waker::new(wake)?;
        let _guard = enter();
        Ok(Self::start(transport, options, waker))
    }

    /// A connection over bytes that JS moves: `feed()` what the peer sent
    /// and `pump()`, `takeOutput()` what to send it (a wake-up says when
    /// there is some that did not come from a call on this thread).
    #[napi(factory)]
    pub fn pipe(settings: NativeSettings, wake: Function<(), ()>) -> Result<Self> {
        let options = options(&settings)?;
        let waker = Waker::new(wake)?;
        let _guard = enter();
        Ok(Self::start(Transport::fed(), options, waker))
    }

    /// Read the stream on this thread: `onEvents` gets every batch of
    /// events (JSON array text); `pending[0]` is kept by JS at the number of
    /// its requests awaiting a response (the poll spins briefly for them).
    /// False when the engine reads by itself (Web Streams): then wake-ups
    /// and `drain()` bring everything.
    #[napi]
    pub fn start_reading(
        &self,
        env: Env,
        on_events: Function<String, ()>,
        #[napi(ts_arg_type = "Int32Array")] pending: Unknown,
    ) -> Result<bool> {
        if self.poll.borrow().is_some() || self.connection.is_closed() {
            return Ok(false);
        }
        // SAFETY: on the JS thread, with values of this env.
        let poll =
            unsafe { poll::Poll::start(self.connection.clone(), env.raw(), on_events.raw(), pending.raw())? };
        let started = poll.is_some();
        *self.poll.borrow_mut() = poll;
        Ok(started)
    }

    /// Stop reading for now (a notification handler is busy: the input
    /// waits in the pipe).
    #[napi]
    pub fn pause_reading(&self) {
        if let Some(poll) = self.poll.borrow().as_ref() {
            poll.pause();
        }
    }

    /// Read again after `pauseReading`.
    #[napi]
    pub fn resume_reading(&self) {
        if let Some(poll) = self.poll.borrow().as_ref() {
            poll.resume();
        }
    }

    fn stop_reading(&self) {
        if let Some(poll) = self.poll.borrow_mut().take() {
            poll.close();
        }
    }

    /// Every event queued since the last drain, as one JSON array text.
    #[napi]
    pub fn drain(&self) -> Option<String> {
        // A wake may mean that reading held at the limits can go on.
        if let Some(poll) = self.poll.borrow().as_ref() {
            poll.check_limits();
        }
        self.connection.drain()
    }

    /// `drain()`, after waiting up to the spin (`ACP_ENGINE_SPIN_US`) without
    /// sleeping for the events to come, on a connection the engine reads
    /// (no poll): what JS calls after its sends are out while a response is
    /// due, so the response wakes no one (a wake-up of Node's thread costs
    /// more than the exchange).
    #[napi]
    pub fn drain_after_spin(&self) -> Option<String> {
        if self.poll.borrow().is_none() && !self.connection.is_fed() {
            self.connection.pump_for(poll::spin());
        }
        self.connection.drain()
    }

    /// What to write to the peer now (pipe connections), the sends collected
    /// since the last flush included: bytes; `false` when there are none;
    /// `true` once the engine will write nothing more and all was taken.
    #[napi(ts_return_type = "Buffer | boolean")]
    pub fn take_output<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let _runtime = enter();
        // Closed meanwhile: what was written before is still to take.
        let _ = self.flush_collected();
        // SAFETY: on the JS thread, with its env.
        unsafe {
            let output = match self.connection.take_output() {
                Some(bytes) => fed::output_buffer(env.raw(), bytes)?,
                None => bool::to_napi_value(env.raw(), self.connection.output_ended())?,
            };
            Unknown::from_napi_value(env.raw(), output)
        }
    }

    /// Bytes the peer sent (pipe connections); `pump()` reads them.
    #[napi]
    pub fn feed(&self, bytes: Uint8Array) {
        self.connection.feed(&bytes);
    }

    /// The peer's byte stream ended (pipe connections); `pump()` reads the end.
    #[napi]
    pub fn end_input(&self) {
        self.connection.end_input();
    }

    /// Feed `input` (when given), then read and handle what was fed (pipe
    /// connections), on this thread; `drain()` right after brings the
    /// events (they wake no one). Returns the connection's state after it,
    /// as `pumpStates()` bits: `open` until the input ended or the
    /// connection closed; `inputLeft` while fed bytes are unread (feed more
    /// only once they are read); `readingPaused` while reading waits at the
    /// connection's limits (a wake-up says when it may go on: then `pump()`
    /// again).
    #[napi]
    pub fn pump(&self, input: Option<Uint8Array>) -> u32 {
        if let Some(input) = input {
            self.connection.feed(&input);
        }
        let _runtime = enter();
        let open = poll::while_pumping(|| self.connection.pump());
        fed::pump_state(&self.connection, open)
    }

    /// `request(method, params?)`: send a request; returns its id (its outcome
    /// arrives as an event). A plain function, for speed (see `send.rs`).
    #[napi(ts_return_type = "(method: string, params?: string | null) => number")]
    pub fn request_function(&self, env: Env) -> Result<Unknown<'_>> {
        self.send_function(env, send::Send::Request)
    }

    /// `notify(method, params?)`: send a notification; returns 0, or a ticket
    /// whose WRITTEN event says when it was queued. A plain function, as above.
    #[napi(ts_return_type = "(method: string, params?: string | null) => number")]
    pub fn notify_function(&self, env: Env) -> Result<Unknown<'_>> {
        self.send_function(env, send::Send::Notify)
    }

    /// `respond(token, result)`: answer inbound request `token` with a result
    /// (JSON text); 1, or 0 if it needs no answer any more. A plain function, as above.
    #[napi(ts_return_type = "(token: number, result: string) => number")]
    pub fn respond_function(&self, env: Env) -> Result<Unknown<'_>> {
        self.send_function(env, send::Send::Respond)
    }

    fn send_function(&self, env: Env, kind: send::Send) -> Result<Unknown<'_>> {
        // SAFETY: on the JS thread, with its env.
        unsafe {
            let function = send::function(env.raw(), self.connection.clone(), kind)?;
            Unknown::from_napi_value(env.raw(), function)
        }
    }

    /// Write what the sends since the last flush collected, in one write.
    #[napi]
    pub fn flush(&self, env: Env) -> Result<f64> {
        let _runtime = enter();
        self.flush_collected()
            .map(ticket)
            .map_err(|error| errors::request_error(&env, &error))
    }

    /// `flush`, within the runtime's context.
    fn flush_collected(&self) -> std::result::Result<acp_engine::host::Ticket, RequestError> {
        if self.connection.is_fed() {
            // A pipe connection's output is written on this thread, into
            // `takeOutput()`: no wake-up is due for it.
            poll::while_pumping(|| self.connection.flush())
        } else {
            self.connection.flush()
        }
    }

    /// Answer inbound request `token` with an error.
    #[napi]
    pub fn respond_error(
        &self,
        env: Env,
        token: i64,
        code: i64,
        message: String,
        data: Option<String>,
    ) -> Result<bool> {
        let _runtime = enter();
        let mut error = RequestError::new(code, message);
        if let Some(data) = data {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&data) {
                error = error.with_data(value);
            }
        }
        let answered = self.connection.respond(token as u64, Err(error));
        answered.map_err(|error| errors::request_error(&env, &error))
    }

    /// Cancel our pending request `id` (an ERROR event -32800 follows).
    #[napi]
    pub fn cancel_pending(&self, id: i64) -> bool {
        let _runtime = enter();
        self.connection.cancel_pending_request(id)
    }

    /// Send `$/cancel_request` for `id` (a JSON number or string).
    #[napi]
    pub fn send_cancel_request(&self, env: Env, id: String) -> Result<f64> {
        let _runtime = enter();
        let sent = serde_json::from_str::<RequestId>(&id)
            .map_err(|error| {
                RequestError::invalid_params().with_data(serde_json::json!({
                    "message": format!("requestId: {error}")
                }))
            })
            .and_then(|id| self.connection.send_cancel_request_notification(&id));
        sent.map(ticket)
            .map_err(|error| errors::request_error(&env, &error))
    }

    /// Close: pending calls fail, a spawned agent is reaped; CLOSED follows.
    #[napi]
    pub fn close(&self) {
        let _runtime = enter();
        // Before the engine lets the fd go.
        self.stop_reading();
        self.connection.close();
    }

    /// Whether the connection is closed (or closing).
    #[napi]
    pub fn is_closed(&self) -> bool {
        self.connection.is_closed()
    }

    /// Stop holding the Node process alive (called once the CLOSED event
    /// was handled).
    #[napi]
    pub fn release(&self) {
        self.stop_reading();
        self.connection.end_input();
        self.waker.release();
    }

    /// The ACP version the connection speaks now (selected at `initialize`).
    #[napi(getter)]
    pub fn protocol_version(&self) -> u32 {
        self.connection.protocol_version().into()
    }

    /// The spawned agent's process id.
    #[napi(getter)]
    pub fn pid(&self) -> Option<u32> {
        self.connection.pid()
    }
}

impl Drop for NativeConnection {
    fn drop(&mut self) {
        // Before the engine (and its fd) goes.
        self.stop_reading();
    }
}
