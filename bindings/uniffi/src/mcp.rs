//! MCP-over-ACP for Kotlin (`acp_engine::mcp::host`): one connection's
//! provider, whose Kotlin handlers run between `start` and `finish`, and the
//! caller's rules. JSON crosses as text; RequestErrors are thrown as `AcpError`.

use std::sync::Arc;

use acp_engine::mcp::host::{self, HostOperation, HostStart};
use acp_engine::mcp::{binding, McpProvider};

use crate::AcpError;

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
        Ok(match host::start(&self.provider, &params)? {
            HostStart::Answer(outcome) => McpStarted {
                operation: None,
                json: outcome,
            },
            HostStart::Run { operation, context } => McpStarted {
                operation: Some(Arc::new(McpOperationHandle { operation })),
                json: context,
            },
        })
    }
}

/// One running `mcp/message` request.
#[derive(uniffi::Object)]
pub struct McpOperationHandle {
    operation: HostOperation,
}

#[uniffi::export]
impl McpOperationHandle {
    /// The params (JSON text) of a notification scoped to this request, or
    /// null once it finished.
    pub fn notification(&self, method: String, params: Option<String>) -> Option<String> {
        self.operation.notification(&method, params.as_deref())
    }

    /// The caller cancelled this request.
    pub fn cancel(&self) {
        self.operation.cancel();
    }

    /// The answer (JSON text) for the handler's outcome (JSON text), or for
    /// its failure (`{"protocol": {...}}` or `{"details", "code"?}`).
    pub fn finish(&self, outcome: Option<String>, failure: Option<String>) -> Result<String, AcpError> {
        Ok(self.operation.finish(outcome.as_deref(), failure.as_deref())?)
    }
}

/// `params` (JSON text or null) with MCP 2026-07-28's request meta added.
#[uniffi::export]
pub fn mcp_with_request_meta(
    params: Option<String>,
    capabilities: Option<String>,
    client_info: Option<String>,
) -> String {
    host::with_request_meta(params.as_deref(), capabilities.as_deref(), client_info.as_deref())
}

/// A received `mcp/message` answer (JSON text) as an outcome; -33002 when invalid.
#[uniffi::export]
pub fn mcp_outcome_of_response(response: String) -> Result<String, AcpError> {
    Ok(host::outcome_of_response(&response)?)
}

/// A fresh id, `<prefix>:<random>`.
#[uniffi::export]
pub fn mcp_generate_id(prefix: String) -> String {
    binding::generate_id(&prefix)
}

/// MCP-over-ACP's constants (the generated tables; its error codes are in `ErrorCodes`).
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
}

/// The constants.
#[uniffi::export]
pub fn mcp_constants() -> McpConstants {
    use acp_engine::mcp::constants as mcp;
    McpConstants {
        protocol_version: mcp::PROTOCOL_VERSION.into(),
        meta_protocol_version: mcp::META_PROTOCOL_VERSION.into(),
        meta_client_capabilities: mcp::META_CLIENT_CAPABILITIES.into(),
        meta_client_info: mcp::META_CLIENT_INFO.into(),
    }
}
