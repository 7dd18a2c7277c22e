//! MCP-over-ACP for Python (`acp_engine::mcp::host`): one connection's
//! provider, whose Python handlers run between `start` and `finish`, and the
//! caller's rules. JSON crosses as text; RequestErrors are raised as `EngineError`.

use std::sync::Arc;

use acp_engine::mcp::host::{self, HostOperation, HostStart};
use acp_engine::mcp::{binding, McpProvider};
use pyo3::prelude::*;

use crate::connection::engine_error;

/// One ACP connection's registered MCP servers.
#[pyclass(module = "acp_engine._native", frozen)]
pub struct McpProviderHandle {
    provider: Arc<McpProvider>,
}

#[pymethods]
impl McpProviderHandle {
    #[new]
    fn new() -> Self {
        Self {
            provider: McpProvider::new(),
        }
    }

    /// Register a server; returns its id (a fresh one when `server_id` is None).
    #[pyo3(signature = (name, server_id=None, max_active_requests=None))]
    fn register(
        &self,
        name: &str,
        server_id: Option<&str>,
        max_active_requests: Option<usize>,
    ) -> PyResult<String> {
        let registration = self
            .provider
            .register(name, server_id, max_active_requests, None)
            .map_err(engine_error)?;
        Ok(registration.server_id)
    }

    /// Remove a registration; False when it was not registered.
    fn dispose(&self, server_id: &str) -> bool {
        self.provider.dispose(server_id)
    }

    /// Check an `mcp/message` request's params (JSON text): `(None, answer)`
    /// to answer at once, or `(operation, context)` to run the handler.
    fn start(&self, params: &str) -> PyResult<(Option<McpOperationHandle>, String)> {
        Ok(match host::start(&self.provider, params).map_err(engine_error)? {
            HostStart::Answer(outcome) => (None, outcome),
            HostStart::Run { operation, context } => (Some(McpOperationHandle { operation }), context),
        })
    }
}

/// One running `mcp/message` request.
#[pyclass(module = "acp_engine._native", frozen)]
pub struct McpOperationHandle {
    operation: HostOperation,
}

#[pymethods]
impl McpOperationHandle {
    /// The params (JSON text) of a notification scoped to this request, or
    /// None once it finished.
    #[pyo3(signature = (method, params=None))]
    fn notification(&self, method: &str, params: Option<&str>) -> Option<String> {
        self.operation.notification(method, params)
    }

    /// The caller cancelled this request.
    fn cancel(&self) {
        self.operation.cancel();
    }

    /// The answer (JSON text) for the handler's outcome (JSON text), or for
    /// its failure (`{"protocol": {...}}` or `{"details", "code"?}`).
    /// Raises EngineError with the outer error.
    #[pyo3(signature = (outcome=None, failure=None))]
    fn finish(&self, outcome: Option<&str>, failure: Option<&str>) -> PyResult<String> {
        self.operation.finish(outcome, failure).map_err(engine_error)
    }
}

/// `params` (JSON text or None) with MCP 2026-07-28's request meta added.
#[pyfunction]
#[pyo3(signature = (params=None, capabilities=None, client_info=None))]
pub fn mcp_with_request_meta(
    params: Option<&str>,
    capabilities: Option<&str>,
    client_info: Option<&str>,
) -> String {
    host::with_request_meta(params, capabilities, client_info)
}

/// A carrier (JSON text) as an outcome, or None when it is not a valid one.
#[pyfunction]
pub fn mcp_parse_outcome(value: &str) -> Option<String> {
    host::parse_outcome(value)
}

/// A received `mcp/message` answer (JSON text) as an outcome; EngineError -33002 when invalid.
#[pyfunction]
pub fn mcp_outcome_of_response(response: &str) -> PyResult<String> {
    host::outcome_of_response(response).map_err(engine_error)
}

/// A fresh id, `<prefix>:<random>`.
#[pyfunction]
pub fn mcp_generate_id(prefix: &str) -> String {
    binding::generate_id(prefix)
}
