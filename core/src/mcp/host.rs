//! MCP-over-ACP for host languages: the provider's operations and the
//! caller's rules with JSON text in and out, so a binding passes strings
//! and converts nothing else.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::binding::{self, McpHandlerError};
use super::provider::{McpOperation, McpProvider, McpStart};
use crate::error::RequestError;

fn parse(text: Option<&str>) -> Option<Value> {
    text.and_then(|text| serde_json::from_str(text).ok())
}

/// What [`start`] made of an `mcp/message` request.
pub enum HostStart {
    /// Run the host's handler with `context` (JSON text: `serverId`,
    /// `requestId`, `method`, `params`, `protocolVersion`,
    /// `clientCapabilities`, `clientInfo`, `envelopeMeta`).
    Run {
        /// The running request, to finish once.
        operation: HostOperation,
        /// The handler's context.
        context: String,
    },
    /// Answer this outcome (JSON text) at once.
    Answer(String),
}

/// Check an `mcp/message` request's params (JSON text) against `provider`.
pub fn start(provider: &Arc<McpProvider>, params: &str) -> Result<HostStart, RequestError> {
    let params = parse(Some(params)).unwrap_or(Value::Null);
    Ok(match provider.start(&params)? {
        McpStart::Answer(outcome) => HostStart::Answer(outcome.to_string()),
        McpStart::Run(operation) => HostStart::Run {
            context: operation.context().to_string(),
            operation: HostOperation {
                operation: Mutex::new(Some(operation)),
            },
        },
    })
}

/// One running request, held by the host until it finishes.
pub struct HostOperation {
    operation: Mutex<Option<Box<McpOperation>>>,
}

impl HostOperation {
    /// The params (JSON text) of a notification scoped to this request, or
    /// `None` once it finished.
    pub fn notification(&self, method: &str, params: Option<&str>) -> Option<String> {
        let operation = self.operation.lock().expect("not poisoned");
        let params = operation.as_ref()?.notification(method, parse(params));
        params.map(|params| params.to_string())
    }

    /// Whether the request is cancelled: its registration was disposed, or
    /// [`cancel`](Self::cancel) was called (true once it finished, too).
    pub fn is_cancelled(&self) -> bool {
        let operation = self.operation.lock().expect("not poisoned");
        operation
            .as_ref()
            .is_none_or(|operation| operation.cancellation().is_cancelled())
    }

    /// The caller cancelled the request.
    pub fn cancel(&self) {
        if let Some(operation) = self.operation.lock().expect("not poisoned").as_ref() {
            operation.cancellation().cancel();
        }
    }

    /// The answer (JSON text) for the handler's `outcome` (JSON text), or for
    /// its `failure` ([`McpHandlerError::from_host`]); the outer error
    /// otherwise. A second finish is -32603.
    pub fn finish(&self, outcome: Option<&str>, failure: Option<&str>) -> Result<String, RequestError> {
        let operation = self.operation.lock().expect("not poisoned").take();
        let operation = operation.ok_or_else(RequestError::internal_error)?;
        let outcome = match parse(failure) {
            None => Ok(parse(outcome).unwrap_or(Value::Null)),
            Some(failure) => Err(McpHandlerError::from_host(&failure)),
        };
        Ok(operation.finish(outcome)?.to_string())
    }
}

/// [`binding::with_request_meta`] on JSON text.
pub fn with_request_meta(
    params: Option<&str>,
    capabilities: Option<&str>,
    client_info: Option<&str>,
) -> String {
    let (params, capabilities, client_info) = (parse(params), parse(capabilities), parse(client_info));
    binding::with_request_meta(params.as_ref(), capabilities.as_ref(), client_info.as_ref()).to_string()
}

/// [`binding::parse_outcome`] on JSON text.
pub fn parse_outcome(value: &str) -> Option<String> {
    binding::parse_outcome(&parse(Some(value))?).map(|outcome| outcome.to_string())
}

/// [`binding::outcome_of_response`] on JSON text.
pub fn outcome_of_response(response: &str) -> Result<String, RequestError> {
    let response = parse(Some(response)).unwrap_or(Value::Null);
    Ok(binding::outcome_of_response(&response)?.to_string())
}
