//! An agent that uses the MCP servers its client offers over ACP
//! (`{"type": "acp"}` entries in `session/new`'s `mcpServers`, reached with
//! `mcp/message`): on each prompt it lists the first one's tools and calls
//! `add` with 2 and 3, and says what it got. Raw `Connection`, stdio.
//!
//! Run it under `mcp_client`: `target/debug/examples/mcp_client --mcp "node
//! interop/ts/mcp-server.mjs" -- target/debug/examples/mcp_agent`.

use std::sync::{Arc, Mutex};

use acp_engine::mcp::MCP_MESSAGE;
use acp_engine::schema::method;
use acp_engine::{to_raw, Connection, IncomingRequest, RawJson, RequestError, Transport};
use serde_json::{json, Value};

#[tokio::main]
async fn main() {
    let offered: Arc<Mutex<Vec<String>>> = Arc::default();
    let connection = Connection::builder()
        .on_request(move |request: IncomingRequest| handle(request, offered.clone()))
        .connect(Transport::stdio());
    connection.closed().await;
}

async fn handle(request: IncomingRequest, offered: Arc<Mutex<Vec<String>>>) -> Result<RawJson, RequestError> {
    let result = match request.method.as_str() {
        method::INITIALIZE => json!({
            "protocolVersion": 1,
            "agentCapabilities": {"mcpCapabilities": {"acp": true}},
            "authMethods": []
        }),
        method::SESSION_NEW => {
            let params: Value = request.params()?;
            let servers = params["mcpServers"].as_array().cloned().unwrap_or_default();
            *offered.lock().unwrap() = servers
                .iter()
                .filter(|server| server["type"] == "acp")
                .filter_map(|server| server["serverId"].as_str().map(str::to_owned))
                .collect();
            json!({"sessionId": "mcp-session"})
        }
        method::SESSION_PROMPT => {
            let server = offered.lock().unwrap().first().cloned();
            let text = match server {
                Some(server) => use_the_server(&request.connection, &server).await?,
                None => "no MCP server was offered over ACP".to_owned(),
            };
            let update = json!({
                "sessionId": "mcp-session",
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
            });
            request
                .connection
                .send_notification(method::SESSION_UPDATE, &update)
                .await?;
            json!({"stopReason": "end_turn"})
        }
        other => return Err(RequestError::method_not_found(other)),
    };
    Ok(to_raw(&result)?)
}

/// List the server's tools and call `add`; a sentence saying what happened.
async fn use_the_server(connection: &Connection, server: &str) -> Result<String, RequestError> {
    let mcp = |request_id: &str, method: &str, params: Value| json!({"serverId": server, "requestId": request_id, "method": method, "params": params});
    let listed: Value = connection
        .send_request(MCP_MESSAGE, &mcp("list-1", "tools/list", json!({})))
        .await?;
    let tools: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|tool| tool["name"].as_str()).collect())
        .unwrap_or_default();
    let called: Value = connection
        .send_request(
            MCP_MESSAGE,
            &mcp(
                "call-1",
                "tools/call",
                json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            ),
        )
        .await?;
    let sum = called["result"]["content"][0]["text"].as_str().unwrap_or("?");
    Ok(format!("tools: {}; add(2, 3) = {sum}", tools.join(", ")))
}
