//! MCP-over-ACP for Kotlin (`acp_engine::mcp`): one connection's provider,
//! whose Kotlin handlers run between `start` and `finish`, and the caller's
//! rules. JSON crosses as text; RequestErrors are thrown as `AcpError`.

use std::sync::{Arc, Mutex};

use acp_engine::mcp::{binding, McpHandlerError, McpOperation, McpProvider, McpStart};
use serde_json::Value;

use crate::AcpError;

fn parse(text: Option<&str>) -> Option<Value> {
    text.and_then(|text| serde_json::from_str(text).ok())
}

/// One ACP connection's registered MCP servers.
#[derive(uniffi::Object)]
pub struct McpProviderHandle {
    provider: Arc<McpProvider>,
}

/// What `start` made of a request: an operation to run the handler for (with
/// its context as JSON), or the answer to send at once (`operation` null).
#[derive(uniffi::Record)]
pub struct McpStarted {
    /// The operation, when the handler runs.
    pub operation: Option<Arc<McpOperationHandle>>,
    /// The handler's context, or the answer, as JSON text.
    pub json: String,
}

#[uniffi::export]
impl McpProviderHandle {
    /// No servers yet.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            provider: McpProvider::new(),
        })
    }

    /// Register a server; returns its id (a fresh one when `server_id` is null).
    pub fn register(
        &self,
        name: String,
        server_id: Option<String>,
        max_active_requests: Option<u32>,
    ) -> Result<String, AcpError> {
        let limit = max_active_requests.map(|limit| limit as usize);
        Ok(self
            .provider
            .register(&name, server_id.as_deref(), limit, None)?
            .server_id)
    }

    /// Remove a registration; false when it was not registered.
    pub fn dispose(&self, server_id: String) -> bool {
        self.provider.dispose(&server_id)
    }

    /// Check an `mcp/message` request's params (JSON text).
    pub fn start(&self, params: String) -> Result<McpStarted, AcpError> {
        let params = parse(Some(&params)).unwrap_or(Value::Null);
        Ok(match self.provider.start(&params)? {
            McpStart::Answer(outcome) => McpStarted {
                operation: None,
                json: outcome.to_string(),
            },
            McpStart::Run(operation) => McpStarted {
                json: operation.context().to_string(),
                operation: Some(Arc::new(McpOperationHandle {
                    operation: Mutex::new(Some(*operation)),
                })),
            },
        })
    }
}

/// One running `mcp/message` request.
#[derive(uniffi::Object)]
pub struct McpOperationHandle {
    operation: Mutex<Option<McpOperation>>,
}

#[uniffi::export]
impl McpOperationHandle {
    /// The params (JSON text) of a notification scoped to this request, or
    /// null once it finished.
    pub fn notification(&self, method: String, params: Option<String>) -> Option<String> {
        let operation = self.operation.lock().expect("not poisoned");
        let params = operation
            .as_ref()?
            .notification(&method, parse(params.as_deref()));
        params.map(|params| params.to_string())
    }

    /// The caller cancelled this request.
    pub fn cancel(&self) {
        if let Some(operation) = self.operation.lock().expect("not poisoned").as_ref() {
            operation.cancellation().cancel();
        }
    }

    /// The answer (JSON text) for the handler's outcome (JSON text), or for
    /// its failure (`{"protocol": {...}}` or `{"details", "code"?}`).
    pub fn finish(&self, outcome: Option<String>, failure: Option<String>) -> Result<String, AcpError> {
        let operation = self.operation.lock().expect("not poisoned").take();
        let operation =
            operation.ok_or_else(|| AcpError::from(acp_engine::RequestError::internal_error()))?;
        let outcome = match parse(failure.as_deref()) {
            None => Ok(parse(outcome.as_deref()).unwrap_or(Value::Null)),
            Some(failure) => Err(McpHandlerError::from_host(&failure)),
        };
        Ok(operation.finish(outcome)?.to_string())
    }
}

/// `params` (JSON text or null) with MCP 2026-07-28's request meta added.
#[uniffi::export]
pub fn mcp_with_request_meta(
    params: Option<String>,
    capabilities: Option<String>,
    client_info: Option<String>,
) -> String {
    let (params, capabilities) = (parse(params.as_deref()), parse(capabilities.as_deref()));
    let client_info = parse(client_info.as_deref());
    binding::with_request_meta(params.as_ref(), capabilities.as_ref(), client_info.as_ref()).to_string()
}

/// A received `mcp/message` answer (JSON text) as an outcome; -33002 when invalid.
#[uniffi::export]
pub fn mcp_outcome_of_response(response: String) -> Result<String, AcpError> {
    let response = parse(Some(&response)).unwrap_or(Value::Null);
    Ok(binding::outcome_of_response(&response)?.to_string())
}

/// A fresh id, `<prefix>:<random>`.
#[uniffi::export]
pub fn mcp_generate_id(prefix: String) -> String {
    binding::generate_id(&prefix)
}

/// MCP-over-ACP's constants and binding error codes (the generated tables).
#[derive(uniffi::Record)]
pub struct McpConstants {
    /// The MCP revision carried.
    pub protocol_version: String,
    /// Inner `_meta` key of the protocol version.
    pub meta_protocol_version: String,
    /// Inner `_meta` key of the client capabilities.
    pub meta_client_capabilities: String,
    /// Inner `_meta` key of the client info.
    pub meta_client_info: String,
    /// -33000: a binding limit was exceeded.
    pub resource_limit_exceeded: i64,
    /// -33001: no such server is registered.
    pub server_unavailable: i64,
    /// -33002: the server failed without a valid MCP outcome.
    pub backend_failed: i64,
}

/// The constants.
#[uniffi::export]
pub fn mcp_constants() -> McpConstants {
    use acp_engine::error::codes;
    use acp_engine::mcp::constants as mcp;
    McpConstants {
        protocol_version: mcp::PROTOCOL_VERSION.into(),
        meta_protocol_version: mcp::META_PROTOCOL_VERSION.into(),
        meta_client_capabilities: mcp::META_CLIENT_CAPABILITIES.into(),
        meta_client_info: mcp::META_CLIENT_INFO.into(),
        resource_limit_exceeded: codes::MCP_RESOURCE_LIMIT_EXCEEDED,
        server_unavailable: codes::MCP_SERVER_UNAVAILABLE,
        backend_failed: codes::MCP_BACKEND_FAILED,
    }
}
