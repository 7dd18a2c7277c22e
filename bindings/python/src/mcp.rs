//! MCP-over-ACP for Python (`acp_engine::mcp`): one connection's provider,
//! whose Python handlers run between `start` and `finish`, and the caller's
//! rules. JSON crosses as text; RequestErrors are raised as `EngineError`.

use std::sync::{Arc, Mutex};

use acp_engine::mcp::{binding, McpHandlerError, McpOperation, McpProvider, McpStart};
use pyo3::prelude::*;
use serde_json::Value;

use crate::connection::engine_error;

fn parse(text: Option<&str>) -> Option<Value> {
    text.and_then(|text| serde_json::from_str(text).ok())
}

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
        let params = parse(Some(params)).unwrap_or(Value::Null);
        match self.provider.start(&params).map_err(engine_error)? {
            McpStart::Answer(outcome) => Ok((None, outcome.to_string())),
            McpStart::Run(operation) => {
                let context = operation.context().to_string();
                let handle = McpOperationHandle {
                    operation: Mutex::new(Some(*operation)),
                };
                Ok((Some(handle), context))
            }
        }
    }
}

/// One running `mcp/message` request.
#[pyclass(module = "acp_engine._native", frozen)]
pub struct McpOperationHandle {
    operation: Mutex<Option<McpOperation>>,
}

#[pymethods]
impl McpOperationHandle {
    /// The params (JSON text) of a notification scoped to this request, or
    /// None once it finished.
    #[pyo3(signature = (method, params=None))]
    fn notification(&self, method: &str, params: Option<&str>) -> Option<String> {
        let operation = self.operation.lock().expect("not poisoned");
        let params = operation.as_ref()?.notification(method, parse(params));
        params.map(|params| params.to_string())
    }

    /// The caller cancelled this request.
    fn cancel(&self) {
        if let Some(operation) = self.operation.lock().expect("not poisoned").as_ref() {
            operation.cancellation().cancel();
        }
    }

    /// The answer (JSON text) for the handler's outcome (JSON text), or for
    /// its failure (`{"protocol": {...}}` or `{"details", "code"?}`).
    /// Raises EngineError with the outer error.
    #[pyo3(signature = (outcome=None, failure=None))]
    fn finish(&self, outcome: Option<&str>, failure: Option<&str>) -> PyResult<String> {
        let Some(operation) = self.operation.lock().expect("not poisoned").take() else {
            return Err(engine_error(acp_engine::RequestError::internal_error()));
        };
        let outcome = match parse(failure) {
            None => Ok(parse(outcome).unwrap_or(Value::Null)),
            Some(failure) => Err(McpHandlerError::from_host(&failure)),
        };
        Ok(operation.finish(outcome).map_err(engine_error)?.to_string())
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
    let (params, capabilities, client_info) = (parse(params), parse(capabilities), parse(client_info));
    binding::with_request_meta(params.as_ref(), capabilities.as_ref(), client_info.as_ref()).to_string()
}

/// A carrier (JSON text) as an outcome, or None when it is not a valid one.
#[pyfunction]
pub fn mcp_parse_outcome(value: &str) -> Option<String> {
    binding::parse_outcome(&parse(Some(value))?).map(|outcome| outcome.to_string())
}

/// A received `mcp/message` answer (JSON text) as an outcome; EngineError -33002 when invalid.
#[pyfunction]
pub fn mcp_outcome_of_response(response: &str) -> PyResult<String> {
    let response = parse(Some(response)).unwrap_or(Value::Null);
    Ok(binding::outcome_of_response(&response)
        .map_err(engine_error)?
        .to_string())
}

/// A fresh id, `<prefix>:<random>`.
#[pyfunction]
pub fn mcp_generate_id(prefix: &str) -> String {
    binding::generate_id(prefix)
}
