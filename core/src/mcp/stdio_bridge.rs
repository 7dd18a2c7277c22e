//! The stdio bridge: MCP servers a client offers its agent over ACP, each
//! bridged to a real MCP server on stdio (any MCP SDK's). [`McpServers`]
//! starts each, does MCP's handshake with it once, and answers `mcp/message`
//! with what the server answers.
//!
//! ```no_run
//! use acp_engine::mcp::McpServers;
//! use acp_engine::SpawnOptions;
//!
//! # async fn demo() -> Result<(), acp_engine::RequestError> {
//! let servers = McpServers::new();
//! let entry = servers.spawn("calculator", SpawnOptions::new("my-mcp-server")).await?;
//! // `entry` goes into session/new's mcpServers; then, in the client's
//! // request handler, `mcp/message` is `servers.message(request.params.as_ref()).await`.
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::connection::Connection;
use crate::error::RequestError;
use crate::message::RawJson;
use crate::transport::{SpawnOptions, Transport};

/// The MCP revision the bridge speaks to a server it starts (MCP's own
/// handshake, not ACP's; the stateless revision MCP-over-ACP carries has none).
const MCP_PROTOCOL_VERSION: &str = "2025-06-18";
/// MCP's handshake: the request (named as ACP's is), then the notification.
const MCP_INITIALIZE: &str = "initialize";
const MCP_INITIALIZED: &str = "notifications/initialized";
/// MCP's cancellation of a request (it does not know `$/cancel_request`).
const MCP_CANCELLED: &str = "notifications/cancelled";

/// MCP servers offered over ACP, each bridged to a real one on stdio.
#[derive(Default)]
pub struct McpServers {
    servers: Mutex<HashMap<String, Server>>,
    next: AtomicU64,
}

struct Server {
    connection: Connection,
    /// The server's answer to the bridge's `initialize`, given again to an
    /// agent that asks for it (MCP revisions before the stateless one).
    initialized: RawJson,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    server_id: String,
    method: String,
    #[serde(default)]
    params: Option<Box<RawValue>>,
}

impl McpServers {
    /// No servers yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Start `server` (an MCP server on stdio), do MCP's handshake with it
    /// and offer it as `name`: returns the `mcpServers` entry for
    /// `session/new` (`{"type": "acp", "name", "serverId"}`).
    pub async fn spawn(&self, name: &str, server: SpawnOptions) -> Result<Value, RequestError> {
        let transport = Transport::spawn(server).map_err(|error| {
            RequestError::internal_error().with_data(json!({ "error": error.to_string() }))
        })?;
        let connection = Connection::builder().connect(transport);
        let initialize = json!({
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "acp-engine", "version": env!("CARGO_PKG_VERSION")},
        });
        let initialized: RawJson = connection.send_request(MCP_INITIALIZE, &initialize).await?;
        connection
            .send_notification(MCP_INITIALIZED, &Value::Null)
            .await?;
        let server_id = format!("{name}-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        self.servers.lock().expect("not poisoned").insert(
            server_id.clone(),
            Server {
                connection,
                initialized,
            },
        );
        Ok(json!({"type": "acp", "name": name, "serverId": server_id}))
    }

    /// Answer an `mcp/message` request, given its params: `{"result": ...}`
    /// or `{"error": ...}` as the MCP server answered; -32602 for params
    /// that are not an `mcp/message` or a `serverId` not offered here.
    pub async fn message(&self, params: Option<&RawJson>) -> Result<RawJson, RequestError> {
        let message: Message = crate::message::from_raw(params.map(|params| &**params))?;
        let (connection, initialized) = {
            let servers = self.servers.lock().expect("not poisoned");
            let server = servers.get(&message.server_id).ok_or_else(|| {
                RequestError::invalid_params()
                    .with_data(json!({ "error": format!("no MCP server {:?} here", message.server_id) }))
            })?;
            (server.connection.clone(), server.initialized.clone())
        };
        if message.method == MCP_INITIALIZE {
            return answer("result", &initialized);
        }
        let pending = connection.start_request(&message.method, &message.params).await?;
        // The agent cancelling its `mcp/message` drops this future: tell the
        // server in MCP's words.
        let cancel = CancelOnDrop {
            connection: Some(connection.clone()),
            request_id: pending.id().clone(),
        };
        let outcome = pending.await;
        cancel.disarm();
        match outcome {
            Ok(result) => answer("result", &result),
            // The server closed: the bridge failed, not the MCP request.
            Err(error) if connection.is_closed() => Err(error),
            Err(error) => answer("error", &error),
        }
    }

    /// Stop every server.
    pub fn close(&self) {
        for server in self.servers.lock().expect("not poisoned").values() {
            server.connection.close();
        }
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        self.close();
    }
}

/// Sends MCP's `notifications/cancelled` for a request still running when
/// dropped.
struct CancelOnDrop {
    connection: Option<Connection>,
    request_id: crate::message::RequestId,
}

impl CancelOnDrop {
    fn disarm(mut self) {
        self.connection = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        let params = json!({"requestId": self.request_id, "reason": "cancelled by the agent"});
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = connection.send_notification(MCP_CANCELLED, &params).await;
            });
        }
    }
}

/// `{"<key>": <value>}`, the value's text as it came.
fn answer(key: &str, value: &impl serde::Serialize) -> Result<RawJson, RequestError> {
    let value = serde_json::to_string(value).map_err(RequestError::from)?;
    RawValue::from_string(format!("{{\"{key}\":{value}}}")).map_err(RequestError::from)
}
