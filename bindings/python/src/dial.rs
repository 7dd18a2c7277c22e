//! `NativeDial`: a remote agent dialled before a connection runs on it (the
//! compat layer's `create_websocket_stream`), on the core's `HostDial`. The
//! package watches `fileno()` and, once the dial ended, reads `outcome()`.

use std::sync::Arc;

use acp_engine::host::{self, DialOutcome, EventFd, HostDial};
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::connection::{connect_options, NativeConnection};

#[pyclass(frozen, module = "acp_engine._native")]
pub(crate) struct NativeDial {
    dial: HostDial,
    done: Arc<EventFd>,
}

fn taken() -> PyErr {
    PyRuntimeError::new_err("the dialled connection was taken already")
}

#[pymethods]
impl NativeDial {
    /// Dial `url` in the background; the arguments are
    /// `NativeConnection.remote`'s.
    #[staticmethod]
    #[pyo3(signature = (url, token=None, ca_file=None, reconnect_timeout_ms=None, headers=None, connect_timeout_ms=None))]
    fn start(
        url: &str,
        token: Option<String>,
        ca_file: Option<String>,
        reconnect_timeout_ms: Option<u64>,
        headers: Option<Vec<(String, String)>>,
        connect_timeout_ms: Option<u64>,
    ) -> PyResult<Self> {
        let done = Arc::new(EventFd::new().map_err(|e| PyOSError::new_err(e.to_string()))?);
        let signal = done.clone();
        let options = connect_options(token, ca_file, reconnect_timeout_ms, headers, connect_timeout_ms);
        let dial = HostDial::start(url, options, &host::runtime(), move || signal.signal());
        Ok(Self { dial, done })
    }

    /// Readable once the dial ended.
    fn fileno(&self) -> i32 {
        self.done.raw()
    }

    /// None while it dials; once connected, the `Set-Cookie` values of the
    /// handshake's answer. Raises OSError with the reason if it failed.
    fn outcome(&self) -> PyResult<Option<Vec<String>>> {
        match self.dial.outcome() {
            None => Ok(None),
            Some(DialOutcome::Connected(cookies)) => Ok(Some(cookies)),
            Some(DialOutcome::Failed(why)) => Err(PyOSError::new_err(why)),
            Some(DialOutcome::Taken) => Err(taken()),
        }
    }

    /// A connection over what was dialled, opened with `settings` (those of
    /// `NativeConnection`); once.
    fn connection(&self, settings: &Bound<'_, PyDict>) -> PyResult<NativeConnection> {
        let transport = self.dial.take_transport().ok_or_else(taken)?;
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        NativeConnection::open(transport, settings)
    }

    /// What was dialled as one end of a Unix socket, for the package to
    /// read and write messages itself (the caller owns the descriptor); once.
    fn socket(&self) -> PyResult<i32> {
        use std::os::fd::IntoRawFd;
        let transport = self.dial.take_transport().ok_or_else(taken)?;
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        let socket = transport
            .into_socket()
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        Ok(socket.into_raw_fd())
    }

    /// Close what was dialled, unless a connection or the package took it.
    fn close(&self) {
        drop(self.dial.take_transport());
    }
}
