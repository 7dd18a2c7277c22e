//! `NativeConnection`: one engine connection, driven from an asyncio loop.
//! The Python side (acp_engine/_connection.py) watches `fileno()`, calls
//! `drain()` for every burst of events and answers/sends through the other
//! methods. Nothing here blocks or waits: the GIL is held only to convert
//! values, never while the engine waits on I/O.

use std::sync::Arc;

use acp_engine::host::{self, HostConnection, HostOptions, Side};
use acp_engine::{Protocol, ProtocolVersions, RequestError, SpawnOptions, Transport, UncheckedMethods};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::json::{raw_json, to_json};
use crate::EngineError;
use acp_engine::host::EventFd;

#[pyclass(frozen, weakref, module = "acp_engine._native")]
pub(crate) struct NativeConnection {
    host: HostConnection,
    wake: Arc<EventFd>,
}

fn side(name: &str) -> PyResult<Side> {
    match name {
        "raw" => Ok(Side::Raw),
        "agent" => Ok(Side::Agent),
        "client" => Ok(Side::Client),
        other => Err(PyValueError::new_err(format!(
            "side must be 'raw', 'agent' or 'client', not {other:?}"
        ))),
    }
}

/// A RequestError as the Python exception `EngineError(code, message, data_json)`.
pub(crate) fn engine_error(error: RequestError) -> PyErr {
    let data = error.data.as_ref().map(|data| data.to_string());
    EngineError::new_err((error.code, error.message, data))
}

/// Params or a result as JSON text: a Python value, in which `bytes` are
/// the JSON they hold (a serializer's output, e.g. pydantic's `to_json`: no
/// second pass through Python objects), checked to be one value.
fn params_json(params: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match params {
        Some(params) if !params.is_none() => Ok(Some(to_json(params)?)),
        _ => Ok(None),
    }
}

/// The most events one `drain` returns (see `HostOptions::drain_chunk`).
const DRAIN_CHUNK: usize = 64;

/// A connection's settings, from the dict the package passes (`side`,
/// `max_message_size`, `unstable`, `protocol_versions`, `unchecked_methods`, `observe`, the limits `max_in_flight_requests`,
/// `max_buffered_bytes`, `output_stall_timeout_ms`; absent or None: the
/// default).
fn host_options(settings: &Bound<'_, PyDict>) -> PyResult<HostOptions> {
    let mut options = HostOptions::default();
    if let Some(name) = settings.get_item("side")? {
        options.side = side(&name.extract::<String>()?)?;
    }
    if let Some(bytes) = settings.get_item("max_message_size")?.filter(|v| !v.is_none()) {
        options.max_message_size = bytes.extract()?;
    }
    if let Some(requests) = settings
        .get_item("max_in_flight_requests")?
        .filter(|v| !v.is_none())
    {
        options.limits.max_in_flight_requests = requests.extract::<usize>()?.max(1);
    }
    if let Some(bytes) = settings.get_item("max_buffered_bytes")?.filter(|v| !v.is_none()) {
        options.limits.max_buffered_bytes = bytes.extract::<usize>()?.max(1);
    }
    if let Some(ms) = settings
        .get_item("output_stall_timeout_ms")?
        .filter(|v| !v.is_none())
    {
        options.limits.output_stall_timeout = Some(std::time::Duration::from_millis(ms.extract()?));
    }
    if let Some(unstable) = settings.get_item("unstable")? {
        if unstable.extract::<bool>()? {
            options.protocol = Protocol::Unstable;
        }
    }
    if let Some(versions) = settings.get_item("protocol_versions")?.filter(|v| !v.is_none()) {
        let versions = versions.extract::<Vec<u16>>()?;
        options.protocol_versions = ProtocolVersions::from_list(&versions).ok_or_else(|| {
            PyValueError::new_err(format!(
                "protocol_versions must name 1, 2 or both, not {versions:?}"
            ))
        })?;
    }
    if let Some(methods) = settings.get_item("unchecked_methods")?.filter(|v| !v.is_none()) {
        options.unchecked_methods = UncheckedMethods::new(methods.extract::<Vec<String>>()?);
    }
    if let Some(observe) = settings.get_item("observe")? {
        options.observe = observe.extract::<bool>()?;
    }
    Ok(options)
}

impl NativeConnection {
    pub(crate) fn open(transport: Transport, settings: &Bound<'_, PyDict>) -> PyResult<Self> {
        let wake = Arc::new(EventFd::new().map_err(|e| PyOSError::new_err(e.to_string()))?);
        let options = HostOptions {
            // asyncio watches the stream itself and pumps it on its own
            // thread: no thread hop per message.
            host_reads: true,
            // Sends are collected and written once per loop turn (the
            // package schedules `flush` with `loop.call_soon`).
            buffer_output: true,
            // A drained chunk's objects all live until the chunk is handled:
            // 64 messages stay under CPython's 700-object collection
            // threshold, so a burst no longer makes the collector traverse
            // (and promote) hundreds of live messages over and over.
            drain_chunk: DRAIN_CHUNK,
            // A cancelled handler's Task is cancelled and what it then
            // returns is the answer, as in the official Python SDK.
            handler_answers_cancelled: true,
            // A request cancelled in the read that brought it never starts
            // its handler, as in the official Python SDK.
            withdraw_cancelled_requests: true,
            ..host_options(settings)?
        };
        let signal = wake.clone();
        let host = HostConnection::connect(transport, options, &host::runtime(), move || signal.signal());
        Ok(Self { host, wake })
    }
}

#[pymethods]
impl NativeConnection {
    /// A connection over this process's stdin/stdout.
    #[staticmethod]
    fn stdio(settings: &Bound<'_, PyDict>) -> PyResult<Self> {
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        Self::open(Transport::stdio(), settings)
    }

    /// A connection to a spawned child process (its stdin/stdout; stderr is
    /// inherited). `env` entries are added to this process's environment.
    #[staticmethod]
    #[pyo3(signature = (settings, command, args, env=None, cwd=None))]
    fn spawn(
        settings: &Bound<'_, PyDict>,
        command: &str,
        args: Vec<String>,
        env: Option<Vec<(String, String)>>,
        cwd: Option<String>,
    ) -> PyResult<Self> {
        let mut options = SpawnOptions::new(command).args(args);
        for (key, value) in env.unwrap_or_default() {
            options = options.env(key, value);
        }
        if let Some(cwd) = cwd {
            options = options.cwd(cwd);
        }
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        let transport = Transport::spawn(options)
            .map_err(|error| PyOSError::new_err(format!("cannot start {command}: {error}")))?;
        Self::open(transport, settings)
    }

    /// A connection to a remote agent (`ws://`, `wss://`, `http://` or
    /// `https://`), made in the background: a failure closes the connection
    /// with the reason. `reconnect_timeout_ms`: 0 or None, off. `headers`:
    /// more for the handshake or every HTTP request, as (name, value) pairs.
    /// `connect_timeout_ms`: None, the default; 0, wait for ever.
    #[staticmethod]
    #[pyo3(signature = (settings, url, token=None, ca_file=None, reconnect_timeout_ms=None, headers=None, connect_timeout_ms=None))]
    fn remote(
        settings: &Bound<'_, PyDict>,
        url: &str,
        token: Option<String>,
        ca_file: Option<String>,
        reconnect_timeout_ms: Option<u64>,
        headers: Option<Vec<(String, String)>>,
        connect_timeout_ms: Option<u64>,
    ) -> PyResult<Self> {
        let options = connect_options(token, ca_file, reconnect_timeout_ms, headers, connect_timeout_ms);
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        Self::open(acp_engine::remote::dial(url, &options), settings)
    }

    /// A connection over two file descriptors (duplicated: the caller keeps
    /// its own).
    #[staticmethod]
    fn from_fds(settings: &Bound<'_, PyDict>, read_fd: i32, write_fd: i32) -> PyResult<Self> {
        use std::os::fd::BorrowedFd;
        let duplicate = |fd: i32| {
            unsafe { BorrowedFd::borrow_raw(fd) }
                .try_clone_to_owned()
                .map_err(|e| PyOSError::new_err(e.to_string()))
        };
        let (read, write) = (duplicate(read_fd)?, duplicate(write_fd)?);
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        Self::open(Transport::from_fds(read, write), settings)
    }

    /// A connection whose bytes the caller moves: it feeds what the peer
    /// sent (`feed`, read and handled on this thread by `pump`) and takes
    /// what to send it (`take_output`, when the wake fd says some came).
    #[staticmethod]
    fn fed(settings: &Bound<'_, PyDict>) -> PyResult<Self> {
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        Self::open(Transport::fed(), settings)
    }

    /// Whether the caller moves this connection's bytes (`fed`).
    fn is_fed(&self) -> bool {
        self.host.is_fed()
    }

    /// Bytes the peer sent (`fed`), read by the next `pump`; False once the
    /// input ended.
    fn feed(&self, bytes: &[u8]) -> bool {
        self.host.feed(bytes)
    }

    /// The peer's stream ended (`fed`): the connection closes once what was
    /// fed is read.
    fn end_input(&self) {
        self.host.end_input();
    }

    /// Bytes fed and not read yet: feed more once this is 0.
    fn input_backlog(&self) -> usize {
        self.host.input_backlog()
    }

    /// What to send the peer (`fed`), or None: nothing now (the wake fd
    /// signals when some comes), or nothing ever again (`output_ended`).
    fn take_output<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.host.take_output().map(|bytes| PyBytes::new(py, &bytes))
    }

    /// The engine will write nothing more, and all of it was taken.
    fn output_ended(&self) -> bool {
        self.host.output_ended()
    }

    /// The fd that becomes readable when events are waiting.
    fn fileno(&self) -> i32 {
        self.wake.raw()
    }

    /// The stream's fd when this thread reads it (watch it for
    /// readability, then `pump`); None when the engine reads by itself.
    fn read_fd(&self) -> Option<i32> {
        self.host.read_fd()
    }

    /// Read and handle what the stream holds now (without waiting, without
    /// the GIL); the events are then ready to `drain`. False once the
    /// stream ended.
    fn pump(&self, py: Python<'_>) -> bool {
        py.detach(|| self.host.pump())
    }

    /// Whether reading waits for the peer to read or requests to finish
    /// (the connection is at its limits): do not watch `read_fd` then; the
    /// wake fd signals when reading may go on.
    fn reading_paused(&self) -> bool {
        self.host.reading_paused()
    }

    /// `pump` until events are ready or `spin_us` microseconds passed,
    /// without the GIL; True if events are ready.
    fn pump_for(&self, py: Python<'_>, spin_us: u64) -> bool {
        py.detach(|| self.host.pump_for(std::time::Duration::from_micros(spin_us)))
    }

    /// Make `fileno()` unreadable again. Call it when the fd is readable,
    /// before the `drain` that follows (or a wake-up can be lost).
    fn reset_wake(&self) {
        self.wake.reset();
    }

    /// The events waiting, oldest first, as a list of event lists (None:
    /// nothing); call again until None.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(text) = self.host.drain() else {
            return Ok(None);
        };
        crate::decode::loads(py, &text).map(Some)
    }

    /// Send a request: returns (id, ticket or None).
    #[pyo3(signature = (method, params=None))]
    fn send_request(&self, method: &str, params: Option<&Bound<'_, PyAny>>) -> PyResult<(i64, Option<u64>)> {
        let params = params_json(params)?;
        self.host
            .send_request(method, params.as_deref())
            .map_err(engine_error)
    }

    /// Send a notification: returns a ticket or None.
    #[pyo3(signature = (method, params=None))]
    fn send_notification(&self, method: &str, params: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
        let params = params_json(params)?;
        self.host
            .send_notification(method, params.as_deref())
            .map_err(engine_error)
    }

    /// Answer inbound request `token` with `result`; False if it needed no
    /// answer any more.
    #[pyo3(signature = (token, result=None))]
    fn respond(&self, token: u64, result: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        // JSON bytes (a serializer's output: the official API's answers) are
        // checked once and framed from where they are, not copied first.
        if let Some(bytes) = result.and_then(|result| result.cast_exact::<PyBytes>().ok()) {
            let result = raw_json(bytes.as_bytes())?;
            return self.host.respond_json(token, Ok(result)).map_err(engine_error);
        }
        let result = params_json(result)?;
        self.host
            .respond(token, Ok(result.as_deref().unwrap_or("null")))
            .map_err(engine_error)
    }

    /// Answer inbound request `token` with an error.
    #[pyo3(signature = (token, code, message, data=None))]
    fn respond_error(
        &self,
        token: u64,
        code: i64,
        message: String,
        data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let mut error = RequestError::new(code, message);
        if let Some(data) = params_json(data)? {
            let data: serde_json::Value =
                serde_json::from_str(&data).map_err(|e| PyValueError::new_err(e.to_string()))?;
            error = error.with_data(data);
        }
        self.host.respond(token, Err(error)).map_err(engine_error)
    }

    /// Write what the sends since the last flush collected (one write);
    /// returns a ticket if the write queue was full.
    fn flush(&self) -> PyResult<Option<u64>> {
        self.host.flush().map_err(engine_error)
    }

    /// Start or stop the OBSERVED events: one per message read or written.
    fn set_observe(&self, observe: bool) {
        self.host.set_observe(observe)
    }

    /// Cancel our pending request `id` (an ERROR event -32800 follows).
    fn cancel_pending_request(&self, id: i64) -> bool {
        self.host.cancel_pending_request(id)
    }

    /// Send `$/cancel_request` for `id`.
    fn send_cancel_request_notification(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let id = if let Ok(number) = id.extract::<i64>() {
            acp_engine::RequestId::Number(number)
        } else {
            acp_engine::RequestId::Str(id.extract::<String>()?)
        };
        self.host
            .send_cancel_request_notification(&id)
            .map_err(engine_error)
    }

    fn close(&self) {
        self.host.close();
    }

    #[getter]
    fn is_closed(&self) -> bool {
        self.host.is_closed()
    }

    #[getter]
    fn close_reason(&self) -> Option<String> {
        self.host.close_reason()
    }

    #[getter]
    fn protocol_version(&self) -> u16 {
        self.host.protocol_version()
    }

    #[getter]
    fn pid(&self) -> Option<u32> {
        self.host.pid()
    }
}

/// A remote client's settings, from `NativeConnection.remote`'s (and
/// `NativeDial.start`'s) arguments.
pub(crate) fn connect_options(
    token: Option<String>,
    ca_file: Option<String>,
    reconnect_timeout_ms: Option<u64>,
    headers: Option<Vec<(String, String)>>,
    connect_timeout_ms: Option<u64>,
) -> acp_engine::remote::ConnectOptions {
    use acp_engine::remote::ConnectOptions;
    ConnectOptions {
        bearer_token: token,
        headers: headers.unwrap_or_default(),
        ca_file: ca_file.map(Into::into),
        reconnect_timeout: reconnect_timeout_ms
            .filter(|ms| *ms > 0)
            .map(std::time::Duration::from_millis),
        connect_timeout: ConnectOptions::connect_timeout_millis(connect_timeout_ms),
        ..Default::default()
    }
}
