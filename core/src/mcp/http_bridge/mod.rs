//! MCP servers declared with `"type": "acp"` re-exported as loopback MCP
//! 2026-07-28 Streamable HTTP endpoints (the official SDKs'
//! `McpOverAcpHttpBridge`), for an agent whose MCP client only takes URLs.
//!
//! One listener on 127.0.0.1 per ACP connection, closed with it. Each HTTP
//! POST becomes one independent `mcp/message` request through a
//! [`McpHttpForward`] (usually an [`McpCaller`]); dropping the HTTP response
//! cancels only that request. Each server has its own route and bearer
//! token, sent in its declaration's `Authorization` header (never in the
//! URL). Only MCP 2026-07-28: no batches, `initialize`, session headers or
//! GET streams. Limits: admitted requests (HTTP 429), body size (413), and
//! notification bytes buffered for a slow reader (the request is cancelled
//! with -33000).
//!
//! - `route`: routes and tokens;
//! - `checks`: what is refused, and with which status and error;
//! - `answer`: one request from admission to its JSON or SSE answer;
//! - `annotations`: `x-mcp-header` removed from listed tools' schemas;
//! - [`host`]: the forward as JSON events, for the bindings.

mod annotations;
mod answer;
mod checks;
pub mod host;
mod listener;
mod route;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

pub use annotations::strip_header_annotations;

use super::binding::is_mcp_server_acp;
use super::{McpCaller, McpNotificationListener, McpRequestOptions};
use crate::connection::Connection;
use crate::error::RequestError;

/// The bridge's limits (the official bridge's defaults).
#[derive(Debug, Clone)]
pub struct McpHttpBridgeOptions {
    /// HTTP requests admitted at once; more are refused with 429 and -33000.
    pub max_active_requests: usize,
    /// The largest request body, in bytes (413 and -33000 beyond).
    pub max_request_body_bytes: usize,
    /// Notification bytes buffered for a slow reader before its request is
    /// cancelled and answered with -33000.
    pub max_buffered_response_bytes: usize,
}

impl Default for McpHttpBridgeOptions {
    fn default() -> Self {
        Self {
            max_active_requests: 64,
            max_request_body_bytes: 1024 * 1024,
            max_buffered_response_bytes: 1024 * 1024,
        }
    }
}

/// One MCP request an HTTP client sent, to forward as `mcp/message`.
pub struct McpHttpCall {
    /// The declared server it is for.
    pub server_id: String,
    /// The MCP request id to use on the ACP connection (fresh, unique).
    pub request_id: String,
    /// The MCP method.
    pub method: String,
    /// Its params (an object, with the MCP `_meta` the client sent).
    pub params: Value,
    /// Receives the request's notifications (`{"method", "params"?}`).
    pub notifications: McpNotificationListener,
}

/// Sends the bridge's requests over the ACP connection.
pub trait McpHttpForward: Send + Sync + 'static {
    /// The call's inner MCP outcome (`{"result"}` or `{"error"}`); outer ACP
    /// failures are `Err`. Dropping the future cancels the request.
    fn forward(&self, call: McpHttpCall) -> BoxFuture<'static, Result<Value, RequestError>>;
}

/// An [`McpCaller`] on one connection.
struct CallerForward {
    caller: Arc<McpCaller>,
    connection: Connection,
}

impl McpHttpForward for CallerForward {
    fn forward(&self, call: McpHttpCall) -> BoxFuture<'static, Result<Value, RequestError>> {
        let (caller, connection) = (self.caller.clone(), self.connection.clone());
        Box::pin(async move {
            let options = McpRequestOptions {
                request_id: Some(call.request_id),
                envelope_meta: None,
                on_notification: Some(call.notifications),
            };
            caller
                .request(
                    &connection,
                    &call.server_id,
                    &call.method,
                    Some(&call.params),
                    options,
                )
                .await
        })
    }
}

/// What the listener's requests share.
struct Shared {
    forward: Arc<dyn McpHttpForward>,
    options: McpHttpBridgeOptions,
    secret: route::Secret,
    /// Admitted requests whose responses are not finished or dropped.
    active: AtomicUsize,
}

/// One ACP connection's loopback MCP endpoint. Dropping it (or
/// [`McpHttpBridge::close`]) stops the listener and its requests.
pub struct McpHttpBridge {
    shared: Arc<Shared>,
    address: SocketAddr,
    stop: CancellationToken,
}

impl McpHttpBridge {
    /// Listens on 127.0.0.1 (a free port) and forwards through `forward`.
    /// Call inside a tokio runtime: the listener runs on it.
    pub fn bind(forward: Arc<dyn McpHttpForward>, options: McpHttpBridgeOptions) -> io::Result<Self> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            forward,
            options,
            secret: route::Secret::random(),
            active: AtomicUsize::new(0),
        });
        let stop = CancellationToken::new();
        listener::spawn(listener, shared.clone(), stop.clone())?;
        Ok(Self {
            shared,
            address,
            stop,
        })
    }

    /// A bridge to `caller`'s requests over `connection`, closed with it.
    pub fn over_caller(
        caller: Arc<McpCaller>,
        connection: &Connection,
        options: McpHttpBridgeOptions,
    ) -> io::Result<Self> {
        let forward = Arc::new(CallerForward {
            caller,
            connection: connection.clone(),
        });
        let bridge = Self::bind(forward, options)?;
        let (stop, connection) = (bridge.stop.clone(), connection.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = connection.closed() => stop.cancel(),
                () = stop.cancelled() => {}
            }
        });
        Ok(bridge)
    }

    /// The listener's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// The HTTP declaration (`{"type": "http", "name", "url", "headers"}`,
    /// with the server's `_meta`) serving an `"type": "acp"` one.
    pub fn to_http(&self, server: &Value) -> Value {
        let server_id = server.get("serverId").and_then(Value::as_str).unwrap_or_default();
        let token = self.shared.secret.token(server_id);
        let mut declaration = json!({
            "type": "http",
            "name": server.get("name").cloned().unwrap_or(Value::Null),
            "url": format!("http://{}/{}", self.address, route::server_route(server_id)),
            "headers": [{"name": "Authorization", "value": format!("Bearer {token}")}],
        });
        if let Some(meta) = server.get("_meta") {
            declaration["_meta"] = meta.clone();
        }
        declaration
    }

    /// A session's `mcpServers` with each `"type": "acp"` entry served here.
    pub fn adapt_servers(&self, servers: &[Value]) -> Vec<Value> {
        servers
            .iter()
            .map(|server| {
                if is_mcp_server_acp(server) {
                    self.to_http(server)
                } else {
                    server.clone()
                }
            })
            .collect()
    }

    /// Stops the listener: its connections close and their requests are cancelled.
    pub fn close(&self) {
        self.stop.cancel();
    }

    /// Whether the bridge was closed (or its connection ended).
    pub fn is_closed(&self) -> bool {
        self.stop.is_cancelled()
    }
}

impl Drop for McpHttpBridge {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
