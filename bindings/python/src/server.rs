//! `NativeServer`: the engine's remote server (WebSocket and Streamable
//! HTTP), driven from an asyncio loop. The package (acp_engine/_server.py)
//! watches `fileno()` and, for each connection `accept` hands it, starts an
//! agent connection over it.

use std::sync::Arc;
use std::time::Duration;

use acp_engine::host::{self, EventFd, HostServer};
use acp_engine::remote::{PeerTransport, RefusalBody, ServeOptions, ServerTls};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::connection::NativeConnection;

#[pyclass(frozen, module = "acp_engine._native")]
pub(crate) struct NativeServer {
    server: HostServer,
    wake: Arc<EventFd>,
}

fn os_error(error: std::io::Error) -> PyErr {
    PyOSError::new_err(error.to_string())
}

/// A server's settings, from the dict the package passes (`path`, `token`,
/// `max_connections`, `max_message_size`, `output_stall_timeout_ms`,
/// `max_buffered_bytes`, `max_replay_bytes`, `idle_timeout_ms`, `max_id_length`,
/// `max_buffered_session_streams`, `tls_cert`, `tls_key`, `attach`,
/// `refusal_body` ("text" or "json"); absent or None: the default; a
/// timeout of 0: none).
fn serve_options(settings: &Bound<'_, PyDict>) -> PyResult<ServeOptions> {
    let mut options = ServeOptions::default();
    let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(settings.get_item(key)?.filter(|value| !value.is_none()))
    };
    let timeout = |ms: u64| (ms > 0).then(|| Duration::from_millis(ms));
    if let Some(path) = get("path")? {
        options.path = path.extract()?;
    }
    options.bearer_token = get("token")?.map(|token| token.extract()).transpose()?;
    if let Some(max) = get("max_connections")? {
        options.max_connections = max.extract()?;
    }
    if let Some(max) = get("max_message_size")? {
        options.max_message_size = max.extract()?;
    }
    if let Some(ms) = get("output_stall_timeout_ms")? {
        options.output_stall_timeout = timeout(ms.extract()?);
    }
    if let Some(max) = get("max_buffered_bytes")? {
        options.max_buffered_bytes = max.extract()?;
    }
    if let Some(max) = get("max_replay_bytes")? {
        options.max_replay_bytes = max.extract()?;
    }
    if let Some(ms) = get("idle_timeout_ms")? {
        options.idle_timeout = timeout(ms.extract()?);
    }
    if let Some(max) = get("max_id_length")? {
        options.max_id_length = max.extract()?;
    }
    if let Some(max) = get("max_buffered_session_streams")? {
        options.max_buffered_session_streams = max.extract()?;
    }
    if let Some(attach) = get("attach")? {
        options.attach = attach.extract()?;
    }
    if let Some(style) = get("refusal_body")? {
        options.refusal_body = match style.extract::<String>()?.as_str() {
            "text" => RefusalBody::Text,
            "json" => RefusalBody::Json,
            other => {
                return Err(PyValueError::new_err(format!(
                    "refusal_body: {other:?} is not \"text\" or \"json\""
                )))
            }
        };
    }
    if let (Some(cert), Some(key)) = (get("tls_cert")?, get("tls_key")?) {
        let (cert, key): (String, String) = (cert.extract()?, key.extract()?);
        options.tls = Some(ServerTls::from_pem_files(cert, key).map_err(os_error)?);
    }
    Ok(options)
}

#[pymethods]
impl NativeServer {
    /// Listen on `address` (`HOST:PORT`) with `options` (see `serve_options`).
    #[staticmethod]
    fn bind(py: Python<'_>, address: &str, options: &Bound<'_, PyDict>) -> PyResult<Self> {
        let options = serve_options(options)?;
        let wake = Arc::new(EventFd::new().map_err(os_error)?);
        let signal = wake.clone();
        let server = py
            .detach(|| HostServer::bind(address, options, &host::runtime(), move || signal.signal()))
            .map_err(os_error)?;
        Ok(Self { server, wake })
    }

    /// Readable when connections wait to be accepted.
    fn fileno(&self) -> i32 {
        self.wake.raw()
    }

    /// The next waiting connection, opened with `settings` (those of
    /// `NativeConnection`), as (connection, peer address, transport); None
    /// when none waits.
    fn accept(
        &self,
        settings: &Bound<'_, PyDict>,
    ) -> PyResult<Option<(NativeConnection, String, &'static str)>> {
        self.wake.reset();
        let Some(accepted) = self.server.accept() else {
            return Ok(None);
        };
        // More came meanwhile: keep the fd readable for them. Not otherwise:
        // a readable fd with nothing to take would call the loop's reader
        // on every turn (one arriving later signals it itself).
        if self.server.waiting() > 0 {
            self.wake.signal();
        }
        let transport = match accepted.peer.transport {
            PeerTransport::WebSocket => "websocket",
            PeerTransport::StreamableHttp => "http",
        };
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        let connection = NativeConnection::open(accepted.transport, settings)?;
        Ok(Some((connection, accepted.peer.address.to_string(), transport)))
    }

    /// Connections accepted and not taken yet.
    fn waiting(&self) -> usize {
        self.server.waiting()
    }

    #[getter]
    fn websocket_url(&self) -> &str {
        self.server.websocket_url()
    }

    #[getter]
    fn http_url(&self) -> &str {
        self.server.http_url()
    }

    /// `(host, port)` served.
    #[getter]
    fn address(&self) -> (String, u16) {
        let address = self.server.local_addr();
        (address.ip().to_string(), address.port())
    }

    /// Connections open now.
    fn connections(&self) -> usize {
        self.server.connections()
    }

    /// Stop accepting and end every connection (waits a few seconds at
    /// most, without the GIL).
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.server.shutdown())
    }

    /// Drain, then stop: no new connection; each ends once its agent has
    /// answered its client's requests, the rest after `timeout_ms` (blocks
    /// until then, without the GIL: call it off the event loop).
    fn drain(&self, py: Python<'_>, timeout_ms: u64) {
        py.detach(|| self.server.drain(std::time::Duration::from_millis(timeout_ms)))
    }
}
