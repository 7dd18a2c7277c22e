//! An MCP-over-ACP pair over a socket: a connection whose `mcp/message`
//! requests a provider serves, and one whose notifications a caller routes.

use std::sync::Arc;

use acp_engine::mcp::{McpCaller, McpProvider, MCP_MESSAGE};
use acp_engine::{Connection, IncomingNotification, IncomingRequest, RawJson, RequestError, Transport};
use serde_json::Value;
use tokio::net::UnixStream;

/// The provider's side (serving `provider`) and the caller's (routing to `caller`).
pub fn connect(provider: Arc<McpProvider>, caller: Arc<McpCaller>) -> (Connection, Connection) {
    let (a, b) = UnixStream::pair().unwrap();
    let serves = Connection::builder()
        .on_request(move |request: IncomingRequest| {
            let provider = provider.clone();
            async move {
                assert_eq!(request.method, MCP_MESSAGE);
                let params: Value = request.params()?;
                let answer = provider.handle_request(&request.connection, &params).await?;
                Ok::<RawJson, RequestError>(acp_engine::to_raw(&answer)?)
            }
        })
        .connect(Transport::from_stream(a));
    let calls = Connection::builder()
        .on_notification(move |notification: IncomingNotification| {
            let caller = caller.clone();
            async move {
                caller.handle_notification(&notification.params()?);
                Ok(())
            }
        })
        .connect(Transport::from_stream(b));
    (serves, calls)
}
