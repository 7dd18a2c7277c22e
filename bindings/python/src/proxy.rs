//! A proxy's connection to its conductor as two connections, each opened
//! as an ordinary `NativeConnection` (`acp_engine::conductor::split`: the
//! envelope and id rules are the engine's).

use acp_engine::conductor::split::ProxyHalves;
use acp_engine::host;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::connection::NativeConnection;

/// The two halves of this process's stdio as a proxy, each opened once.
#[pyclass(frozen, module = "acp_engine._native")]
pub struct NativeProxyStreams {
    halves: ProxyHalves,
}

#[pymethods]
impl NativeProxyStreams {
    /// This process's stdin/stdout, the conductor's connection to it.
    #[staticmethod]
    fn stdio() -> Self {
        Self {
            halves: ProxyHalves::stdio(&host::runtime()),
        }
    }

    /// Open the connection toward the client (`successor` false) or toward
    /// the agent (`successor` true).
    fn open(&self, successor: bool, settings: &Bound<'_, PyDict>) -> PyResult<NativeConnection> {
        let transport = self
            .halves
            .take(successor)
            .map_err(|opened| PyRuntimeError::new_err(opened.to_string()))?;
        let runtime = host::runtime();
        let _runtime = runtime.enter();
        NativeConnection::open(transport, settings)
    }
}
