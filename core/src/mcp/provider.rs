//! The provider's side: MCP servers registered on one ACP connection, and the
//! `mcp/message` requests they are running. One [`McpProvider`] per
//! connection. A request is checked ([`McpProvider::start`]) before any
//! handler sees it: a malformed envelope or a second active request with
//! the same id is -32602, an unknown server -33001, a server at its limit
//! -33000, a request without MCP 2026-07-28's meta an inner MCP error.
//!
//! Rust handlers are registered with the server ([`McpProvider::register`])
//! and run by [`McpProvider::handle_request`]; a binding registers none and
//! runs its host's handler between [`McpProvider::start`] and
//! [`McpOperation::finish`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::binding::{self, Envelope, McpHandlerError, RequestMeta};
use crate::connection::Connection;
use crate::error::RequestError;
use crate::handler::BoxFuture;
use crate::tables::{codes, messages};

/// A Rust server's handler: one MCP request in, its outcome out.
pub type McpHandler = Arc<dyn Fn(McpOperation) -> BoxFuture<Result<Value, McpHandlerError>> + Send + Sync>;

/// The servers' default limit on requests running at once.
pub const DEFAULT_MAX_ACTIVE_REQUESTS: usize = 64;

/// One connection's registered MCP servers (the official SDKs'
/// `McpOverAcpProvider`, for one connection).
#[derive(Default)]
pub struct McpProvider {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    servers: HashMap<String, Server>,
    /// Every id ever registered here: an id is never reused on a connection.
    used_ids: HashSet<String>,
}

struct Server {
    max_active: usize,
    active: HashSet<String>,
    /// Cancelled when the registration is disposed; each request's token is a child.
    cancellation: CancellationToken,
    handler: Option<McpHandler>,
}

/// A registered server: what to publish in a session's `mcpServers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpRegistration {
    /// The human-readable name.
    pub name: String,
    /// The opaque id, unique on the connection for its lifetime.
    pub server_id: String,
}

impl McpRegistration {
    /// `{"type": "acp", "name", "serverId"}`, for `session/new`'s `mcpServers`.
    pub fn declaration(&self) -> Value {
        binding::declaration(&self.name, &self.server_id)
    }
}

/// What [`McpProvider::start`] made of a request.
pub enum McpStart {
    /// Run the server's handler for it.
    Run(Box<McpOperation>),
    /// Answer this outcome without running anything (an inner MCP error).
    Answer(Value),
}

impl McpProvider {
    /// No servers yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Register a server named `name`, under `server_id` (a fresh one when
    /// `None`), running at most `max_active` requests at once (64 when
    /// `None`). `handler` serves it in [`Self::handle_request`]; a binding
    /// passes `None` and runs its own. Ready before this returns, so publish
    /// the declaration only afterwards.
    pub fn register(
        &self,
        name: &str,
        server_id: Option<&str>,
        max_active: Option<usize>,
        handler: Option<McpHandler>,
    ) -> Result<McpRegistration, RequestError> {
        let max_active = max_active.unwrap_or(DEFAULT_MAX_ACTIVE_REQUESTS);
        if max_active == 0 {
            return Err(RequestError::invalid_params()
                .with_message_detail("maxActiveRequests must be a positive integer"));
        }
        let server_id = server_id.map_or_else(|| binding::generate_id(name), str::to_owned);
        let mut state = self.state.lock().expect("not poisoned");
        if !state.used_ids.insert(server_id.clone()) {
            return Err(RequestError::invalid_params().with_message_detail(format_args!(
                "MCP server ID {server_id} was already registered on this connection"
            )));
        }
        let server = Server {
            max_active,
            active: HashSet::new(),
            cancellation: CancellationToken::new(),
            handler,
        };
        state.servers.insert(server_id.clone(), server);
        Ok(McpRegistration {
            name: name.to_owned(),
            server_id,
        })
    }

    /// Remove a registration: later requests get -33001, running ones see
    /// their cancellation fire. False when it was not registered (any more).
    pub fn dispose(&self, server_id: &str) -> bool {
        let server = self.state.lock().expect("not poisoned").servers.remove(server_id);
        server.map(|server| server.cancellation.cancel()).is_some()
    }

    /// How many requests `server_id` is running (0 when not registered).
    pub fn active_requests(&self, server_id: &str) -> usize {
        let state = self.state.lock().expect("not poisoned");
        state
            .servers
            .get(server_id)
            .map_or(0, |server| server.active.len())
    }

    /// Check an `mcp/message` request's params and take a slot for it.
    pub fn start(self: &Arc<Self>, params: &Value) -> Result<McpStart, RequestError> {
        let envelope = Envelope::parse(params)?;
        let (meta, cancellation) = {
            let mut state = self.state.lock().expect("not poisoned");
            let server = state
                .servers
                .get_mut(&envelope.server_id)
                .ok_or_else(|| binding::server_unavailable(&envelope.server_id))?;
            if server.active.contains(&envelope.request_id) {
                return Err(RequestError::invalid_params()
                    .with_message_detail("duplicate active MCP request ID")
                    .with_data(json!({"serverId": envelope.server_id, "requestId": envelope.request_id})));
            }
            if server.active.len() >= server.max_active {
                return Err(RequestError::new(
                    codes::MCP_RESOURCE_LIMIT_EXCEEDED,
                    messages::MCP_RESOURCE_LIMIT_EXCEEDED,
                )
                .with_data(json!({ "serverId": envelope.server_id })));
            }
            let meta = match RequestMeta::check(envelope.params.as_ref()) {
                Ok(meta) => meta,
                Err(outcome) => return Ok(McpStart::Answer(outcome)),
            };
            server.active.insert(envelope.request_id.clone());
            (meta, server.cancellation.child_token())
        };
        Ok(McpStart::Run(Box::new(McpOperation {
            provider: self.clone(),
            envelope,
            meta,
            cancellation,
            finished: Arc::new(AtomicBool::new(false)),
            connection: None,
            owns_slot: true,
        })))
    }

    /// Answer an `mcp/message` request from `connection` with the Rust
    /// handler its server was registered with. Dropping the future (the
    /// caller cancelled) cancels the operation.
    pub async fn handle_request(
        self: &Arc<Self>,
        connection: &Connection,
        params: &Value,
    ) -> Result<Value, RequestError> {
        let mut operation = match self.start(params)? {
            McpStart::Answer(outcome) => return Ok(outcome),
            McpStart::Run(operation) => *operation,
        };
        let handler = {
            let state = self.state.lock().expect("not poisoned");
            state
                .servers
                .get(operation.server_id())
                .and_then(|server| server.handler.clone())
        };
        let Some(handler) = handler else {
            return Err(binding::server_unavailable(operation.server_id()));
        };
        operation.connection = Some(connection.clone());
        let guard = operation.take_slot();
        let outcome = handler(operation).await;
        guard.finish(outcome)
    }

    fn release(&self, server_id: &str, request_id: &str) {
        let mut state = self.state.lock().expect("not poisoned");
        if let Some(server) = state.servers.get_mut(server_id) {
            server.active.remove(request_id);
        }
    }
}

/// One running `mcp/message` request: what its handler needs, and its slot
/// on the server (freed when the last copy is dropped or it finishes).
pub struct McpOperation {
    provider: Arc<McpProvider>,
    envelope: Envelope,
    meta: RequestMeta,
    cancellation: CancellationToken,
    finished: Arc<AtomicBool>,
    connection: Option<Connection>,
    /// The copy that frees the slot: the one that finishes, not the one a
    /// Rust handler holds (which may outlive the answer).
    owns_slot: bool,
}

impl McpOperation {
    /// The declared server the request is for.
    pub fn server_id(&self) -> &str {
        &self.envelope.server_id
    }
    /// The caller's MCP request id (also the inner JSON-RPC id).
    pub fn request_id(&self) -> &str {
        &self.envelope.request_id
    }
    /// The inner MCP method (`tools/call`, `server/discover`, ...).
    pub fn method(&self) -> &str {
        &self.envelope.method
    }
    /// The inner MCP params (`null` and omission are both `None`).
    pub fn params(&self) -> Option<&Map<String, Value>> {
        self.envelope.params.as_ref()
    }
    /// The checked MCP meta: protocol version, client capabilities and info.
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }
    /// The outer ACP `_meta` of the envelope.
    pub fn envelope_meta(&self) -> Option<&Map<String, Value>> {
        self.envelope.meta.as_ref()
    }
    /// Fires when the registration is disposed or the operation is dropped
    /// unfinished (the caller cancelled, the connection closed).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// The handler's context as JSON (`serverId`, `requestId`, `method`,
    /// `params`, `protocolVersion`, `clientCapabilities`, `clientInfo`,
    /// `envelopeMeta`), for bindings.
    pub fn context(&self) -> Value {
        let mut context = json!({
            "serverId": self.envelope.server_id,
            "requestId": self.envelope.request_id,
            "method": self.envelope.method,
            "protocolVersion": self.meta.protocol_version,
            "clientCapabilities": self.meta.client_capabilities,
        });
        if let Some(params) = &self.envelope.params {
            context["params"] = Value::Object(params.clone());
        }
        if let Some(info) = &self.meta.client_info {
            context["clientInfo"] = info.clone();
        }
        if let Some(meta) = &self.envelope.meta {
            context["envelopeMeta"] = Value::Object(meta.clone());
        }
        context
    }

    /// The params of an `mcp/message` notification scoped to this request,
    /// or `None` once it finished (a late notification is dropped).
    pub fn notification(&self, method: &str, params: Option<Value>) -> Option<Value> {
        if self.finished.load(Ordering::Acquire) {
            return None;
        }
        let mut out = json!({"serverId": self.envelope.server_id, "requestId": self.envelope.request_id, "method": method});
        if let Some(params) = params {
            out["params"] = params;
        }
        Some(out)
    }

    /// Send an MCP notification scoped to this request (Rust handlers run by
    /// [`McpProvider::handle_request`]); dropped once the request finished.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RequestError> {
        let (Some(connection), Some(params)) = (&self.connection, self.notification(method, params)) else {
            return Ok(());
        };
        connection.send_notification(super::MCP_MESSAGE, &params).await
    }

    /// The answer for the handler's outcome: a valid carrier, the inner error
    /// of a [`McpHandlerError::Protocol`], -32800 when cancelled, else -33002.
    pub fn finish(self, outcome: Result<Value, McpHandlerError>) -> Result<Value, RequestError> {
        self.finished.store(true, Ordering::Release);
        match outcome {
            Ok(outcome) => binding::check_handler_outcome(&outcome),
            Err(error) => error.into_answer(self.cancellation.is_cancelled()),
        }
    }

    /// A second handle that takes over the slot (this one goes to a Rust handler).
    fn take_slot(&mut self) -> McpOperation {
        self.owns_slot = false;
        McpOperation {
            provider: self.provider.clone(),
            envelope: self.envelope.clone(),
            meta: self.meta.clone(),
            cancellation: self.cancellation.clone(),
            finished: self.finished.clone(),
            connection: None,
            owns_slot: true,
        }
    }
}

impl Drop for McpOperation {
    fn drop(&mut self) {
        if !self.owns_slot {
            return;
        }
        if !self.finished.load(Ordering::Acquire) {
            self.finished.store(true, Ordering::Release);
            self.cancellation.cancel();
        }
        self.provider
            .release(&self.envelope.server_id, &self.envelope.request_id);
    }
}
