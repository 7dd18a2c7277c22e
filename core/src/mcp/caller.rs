//! The caller's side: MCP requests to servers the peer declared with
//! `"type": "acp"`, and the `mcp/message` notifications (progress,
//! subscription events) routed to the request that owns them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::binding::{self, Envelope};
use crate::connection::Connection;
use crate::error::RequestError;

/// Receives the notifications of one request: `{"method", "params"?, "_meta"?}`.
pub type McpNotificationListener = Arc<dyn Fn(Value) + Send + Sync>;

/// What a caller sends with every request whose params do not carry it.
#[derive(Debug, Clone, Default)]
pub struct McpCallerOptions {
    /// MCP client capabilities (`{}` when `None`).
    pub client_capabilities: Option<Value>,
    /// MCP client info (`{"name", "version"}`), sent when set.
    pub client_info: Option<Value>,
}

/// Options of one request.
#[derive(Clone, Default)]
pub struct McpRequestOptions {
    /// The MCP request id (a fresh one when `None`); never one still active
    /// for the same server on the connection.
    pub request_id: Option<String>,
    /// The outer ACP `_meta` of the envelope (not the inner MCP one).
    pub envelope_meta: Option<Map<String, Value>>,
    /// Receives the request's notifications until it settles.
    pub on_notification: Option<McpNotificationListener>,
}

/// Calls MCP servers over one or more ACP connections (the official SDKs'
/// `McpOverAcpCaller`). Register [`McpCaller::handle_notification`] for
/// `mcp/message` notifications.
#[derive(Default)]
pub struct McpCaller {
    options: McpCallerOptions,
    routes: Mutex<HashMap<(String, String), McpNotificationListener>>,
}

impl McpCaller {
    /// A caller sending `options` with each request.
    pub fn new(options: McpCallerOptions) -> Arc<Self> {
        Arc::new(Self {
            options,
            routes: Mutex::default(),
        })
    }

    /// The params of an `mcp/message` request: the envelope, with the MCP
    /// meta added to `params._meta` where the caller did not supply it.
    pub fn request_params(
        &self,
        server_id: &str,
        request_id: &str,
        method: &str,
        params: Option<&Value>,
        envelope_meta: Option<&Map<String, Value>>,
    ) -> Value {
        let inner = binding::with_request_meta(
            params,
            self.options.client_capabilities.as_ref(),
            self.options.client_info.as_ref(),
        );
        Envelope {
            server_id: server_id.to_owned(),
            request_id: request_id.to_owned(),
            method: method.to_owned(),
            params: inner.as_object().cloned(),
            meta: envelope_meta.cloned(),
        }
        .to_value()
    }

    /// Send one MCP request over `connection` and return its inner outcome
    /// (`{"result"}` or `{"error"}`); outer ACP failures are `Err`.
    pub async fn request(
        &self,
        connection: &Connection,
        server_id: &str,
        method: &str,
        params: Option<&Value>,
        options: McpRequestOptions,
    ) -> Result<Value, RequestError> {
        let request_id = options
            .request_id
            .unwrap_or_else(|| binding::generate_id("mcp-request"));
        let key = (server_id.to_owned(), request_id.clone());
        {
            let mut routes = self.routes.lock().expect("not poisoned");
            if routes.contains_key(&key) {
                return Err(RequestError::invalid_params().with_message_detail(format_args!(
                    "MCP request {request_id} is already active for server {server_id}"
                )));
            }
            routes.insert(
                key.clone(),
                options.on_notification.unwrap_or_else(|| Arc::new(|_| {})),
            );
        }
        let route = RouteGuard { caller: self, key };
        let params = self.request_params(
            server_id,
            &request_id,
            method,
            params,
            options.envelope_meta.as_ref(),
        );
        let response: Value = connection.send_request(super::MCP_MESSAGE, &params).await?;
        drop(route);
        binding::outcome_of_response(&response)
    }

    /// Route an `mcp/message` notification to its request's listener;
    /// notifications of unknown or settled requests are dropped.
    pub fn handle_notification(&self, params: &Value) {
        let Ok(envelope) = Envelope::parse(params) else {
            return;
        };
        let key = (envelope.server_id.clone(), envelope.request_id.clone());
        let listener = self.routes.lock().expect("not poisoned").get(&key).cloned();
        if let Some(listener) = listener {
            listener(notification_of(envelope));
        }
    }
}

/// What a request's listener gets: `{"method", "params"?, "_meta"?}`.
pub fn notification_of(envelope: Envelope) -> Value {
    let mut out = Map::new();
    out.insert("method".into(), envelope.method.into());
    if let Some(params) = envelope.params {
        out.insert("params".into(), Value::Object(params));
    }
    if let Some(meta) = envelope.meta {
        out.insert("_meta".into(), Value::Object(meta));
    }
    Value::Object(out)
}

/// Removes a request's route when it settles, or its future is dropped.
struct RouteGuard<'a> {
    caller: &'a McpCaller,
    key: (String, String),
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        self.caller.routes.lock().expect("not poisoned").remove(&self.key);
    }
}
