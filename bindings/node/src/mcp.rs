//! MCP-over-ACP for the Node package (`acp_engine::mcp`): one connection's
//! provider, whose JavaScript handlers run between `start` and `finish`, and
//! the caller's rules. JSON crosses as text; RequestErrors are thrown as the
//! package's RequestError.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acp_engine::mcp::{binding, McpHandlerError, McpOperation, McpProvider, McpStart};
use acp_engine::RequestError;
use napi::{Env, Result};
use napi_derive::napi;
use serde_json::Value;

use crate::errors;

fn parse(text: Option<&str>) -> Option<Value> {
    text.and_then(|text| serde_json::from_str(text).ok())
}

fn thrown(env: &Env) -> impl Fn(RequestError) -> napi::Error + '_ {
    move |error| errors::request_error(env, &error)
}

/// One ACP connection's registered MCP servers and their running requests.
#[napi]
pub struct McpProviderHandle {
    provider: Arc<McpProvider>,
    operations: Mutex<HashMap<u32, McpOperation>>,
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
        let registration = self
            .provider
            .register(
                &name,
                server_id.as_deref(),
                max_active_requests.map(|n| n as usize),
                None,
            )
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
        let params = parse(Some(&params)).unwrap_or(Value::Null);
        let out = match self.provider.start(&params).map_err(thrown(&env))? {
            McpStart::Answer(outcome) => serde_json::json!({ "answer": outcome }),
            McpStart::Run(operation) => {
                let id = {
                    let mut next = self.next.lock().expect("not poisoned");
                    *next = next.wrapping_add(1);
                    *next
                };
                let context = operation.context();
                self.operations
                    .lock()
                    .expect("not poisoned")
                    .insert(id, *operation);
                serde_json::json!({ "operation": id, "context": context })
            }
        };
        Ok(out.to_string())
    }

    /// The params (JSON) of a notification scoped to `operation`, or null once
    /// it finished.
    #[napi]
    pub fn notification(&self, operation: u32, method: String, params: Option<String>) -> Option<String> {
        let operations = self.operations.lock().expect("not poisoned");
        let params = operations
            .get(&operation)?
            .notification(&method, parse(params.as_deref()));
        params.map(|params| params.to_string())
    }

    /// The caller cancelled `operation` (its ACP request).
    #[napi]
    pub fn cancel(&self, operation: u32) {
        if let Some(operation) = self.operations.lock().expect("not poisoned").get(&operation) {
            operation.cancellation().cancel();
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
        let Some(operation) = self.operations.lock().expect("not poisoned").remove(&operation) else {
            return Err(errors::request_error(&env, &RequestError::internal_error()));
        };
        let outcome = match parse(failure.as_deref()) {
            None => Ok(parse(outcome.as_deref()).unwrap_or(Value::Null)),
            Some(failure) => Err(McpHandlerError::from_host(&failure)),
        };
        let answer = operation.finish(outcome).map_err(thrown(&env))?;
        Ok(answer.to_string())
    }
}

/// `params` (JSON or null) with MCP 2026-07-28's request meta added.
#[napi]
pub fn mcp_with_request_meta(
    params: Option<String>,
    capabilities: Option<String>,
    client_info: Option<String>,
) -> String {
    let params = parse(params.as_deref());
    let capabilities = parse(capabilities.as_deref());
    let client_info = parse(client_info.as_deref());
    binding::with_request_meta(params.as_ref(), capabilities.as_ref(), client_info.as_ref()).to_string()
}

/// A carrier (JSON) as an outcome, or null when it is not a valid one.
#[napi]
pub fn mcp_parse_outcome(value: String) -> Option<String> {
    binding::parse_outcome(&parse(Some(&value))?).map(|outcome| outcome.to_string())
}

/// A received `mcp/message` answer (JSON) as an outcome; throws -33002 when invalid.
#[napi]
pub fn mcp_outcome_of_response(env: Env, response: String) -> Result<String> {
    let response = parse(Some(&response)).unwrap_or(Value::Null);
    let outcome = binding::outcome_of_response(&response).map_err(thrown(&env))?;
    Ok(outcome.to_string())
}

/// A fresh id, `<prefix>:<random>`.
#[napi]
pub fn mcp_generate_id(prefix: String) -> String {
    binding::generate_id(&prefix)
}
