//! MCP-over-ACP for the Node package (`acp_engine::mcp::host`): one
//! connection's provider, whose JavaScript handlers run between `start` and
//! `finish`, and the caller's rules. JSON crosses as text; RequestErrors are
//! thrown as the package's RequestError.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acp_engine::mcp::host::{self, HostOperation, HostStart};
use acp_engine::mcp::{binding, McpProvider};
use acp_engine::RequestError;
use napi::{Env, Result};
use napi_derive::napi;

use crate::errors;

fn thrown(env: &Env) -> impl Fn(RequestError) -> napi::Error + '_ {
    move |error| errors::request_error(env, &error)
}

/// One ACP connection's registered MCP servers and their running requests
/// (by number: JavaScript holds numbers, the operations stay here).
#[napi]
pub struct McpProviderHandle {
    provider: Arc<McpProvider>,
    operations: Mutex<HashMap<u32, HostOperation>>,
    next: Mutex<u32>,
}

#[napi]
impl McpProviderHandle {
    /// No servers yet.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self {
            provider: McpProvider::new(),
            operations: Mutex::default(),
            next: Mutex::new(0),
        }
    }

    /// Registers a server; returns its id (a fresh one when `server_id` is null).
    #[napi]
    pub fn register(
        &self,
        env: Env,
        name: String,
        server_id: Option<String>,
        max_active_requests: Option<u32>,
    ) -> Result<String> {
        let limit = max_active_requests.map(|limit| limit as usize);
        let registration = self
            .provider
            .register(&name, server_id.as_deref(), limit, None)
            .map_err(thrown(&env))?;
        Ok(registration.server_id)
    }

    /// Removes a registration (its running operations' tokens are cancelled).
    #[napi]
    pub fn dispose(&self, server_id: String) -> bool {
        self.provider.dispose(&server_id)
    }

    /// Checks an `mcp/message` request's params (JSON): `{"operation": n,
    /// "context": {...}}` to run the server's handler, or `{"answer": outcome}`.
    #[napi]
    pub fn start(&self, env: Env, params: String) -> Result<String> {
        Ok(
            match host::start(&self.provider, &params).map_err(thrown(&env))? {
                HostStart::Answer(outcome) => format!("{{\"answer\":{outcome}}}"),
                HostStart::Run { operation, context } => {
                    let id = {
                        let mut next = self.next.lock().expect("not poisoned");
                        *next = next.wrapping_add(1);
                        *next
                    };
                    self.operations
                        .lock()
                        .expect("not poisoned")
                        .insert(id, operation);
                    format!("{{\"operation\":{id},\"context\":{context}}}")
                }
            },
        )
    }

    /// The params (JSON) of a notification scoped to `operation`, or null once
    /// it finished.
    #[napi]
    pub fn notification(&self, operation: u32, method: String, params: Option<String>) -> Option<String> {
        let operations = self.operations.lock().expect("not poisoned");
        operations
            .get(&operation)?
            .notification(&method, params.as_deref())
    }

    /// The caller cancelled `operation` (its ACP request).
    #[napi]
    pub fn cancel(&self, operation: u32) {
        if let Some(operation) = self.operations.lock().expect("not poisoned").get(&operation) {
            operation.cancel();
        }
    }

    /// The answer (JSON) for the handler's `outcome` (JSON), or for its
    /// `failure`: `{"protocol": {"code", "message", "data"?}}` (an inner MCP
    /// error) or `{"details", "code"?}`. Throws the outer RequestError.
    #[napi]
    pub fn finish(
        &self,
        env: Env,
        operation: u32,
        outcome: Option<String>,
        failure: Option<String>,
    ) -> Result<String> {
        let operation = self.operations.lock().expect("not poisoned").remove(&operation);
        let operation =
            operation.ok_or_else(|| errors::request_error(&env, &RequestError::internal_error()))?;
        operation
            .finish(outcome.as_deref(), failure.as_deref())
            .map_err(thrown(&env))
    }
}

/// `params` (JSON or null) with MCP 2026-07-28's request meta added.
#[napi]
pub fn mcp_with_request_meta(
    params: Option<String>,
    capabilities: Option<String>,
    client_info: Option<String>,
) -> String {
    host::with_request_meta(params.as_deref(), capabilities.as_deref(), client_info.as_deref())
}

/// A carrier (JSON) as an outcome, or null when it is not a valid one.
#[napi]
pub fn mcp_parse_outcome(value: String) -> Option<String> {
    host::parse_outcome(&value)
}

/// A received `mcp/message` answer (JSON) as an outcome; throws -33002 when invalid.
#[napi]
pub fn mcp_outcome_of_response(env: Env, response: String) -> Result<String> {
    host::outcome_of_response(&response).map_err(thrown(&env))
}

/// A fresh id, `<prefix>:<random>`.
#[napi]
pub fn mcp_generate_id(prefix: String) -> String {
    binding::generate_id(&prefix)
}
