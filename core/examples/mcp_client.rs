//! A client that offers an MCP server to its agent over ACP (MCP-over-ACP,
//! `acp_engine::mcp::McpServers`): it starts the MCP server given with
//! `--mcp`, lists it in `session/new` as `{"type": "acp"}`, answers the
//! agent's `mcp/message` requests through it, prompts once and prints what
//! the agent says, then "mcp ok" when the agent reported `add(2, 3) = 5`.
//!
//! `target/debug/examples/mcp_client --mcp "node interop/ts/mcp-server.mjs" --
//! target/debug/examples/mcp_agent`

use std::sync::{Arc, Mutex};

use acp_engine::mcp::{McpServers, MCP_MESSAGE};
use acp_engine::schema::method;
use acp_engine::{
    to_raw, Connection, IncomingNotification, IncomingRequest, RequestError, SpawnOptions, Transport,
};
use serde_json::{json, Value};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some("--mcp"), Some(server), Some("--")) = (
        args.first().map(String::as_str),
        args.get(1),
        args.get(2).map(String::as_str),
    ) else {
        eprintln!("usage: mcp_client --mcp \"MCP SERVER COMMAND\" -- AGENT...");
        std::process::exit(2);
    };
    let agent = &args[3..];
    let server: Vec<&str> = server.split_whitespace().collect();
    let servers = McpServers::new();
    let said = Arc::new(Mutex::new(String::new()));

    let requests = servers.clone();
    let heard = said.clone();
    let transport =
        Transport::spawn(SpawnOptions::new(&agent[0]).args(&agent[1..])).expect("start the agent");
    let connection = Connection::builder()
        .on_request(move |request: IncomingRequest| {
            let servers = requests.clone();
            async move {
                match request.method.as_str() {
                    MCP_MESSAGE => servers.message(request.params.as_ref()).await,
                    method::SESSION_REQUEST_PERMISSION => {
                        let params: Value = request.params()?;
                        let option = params["options"][0]["optionId"].clone();
                        Ok(to_raw(
                            &json!({"outcome": {"outcome": "selected", "optionId": option}}),
                        )?)
                    }
                    other => Err(RequestError::method_not_found(other)),
                }
            }
        })
        .on_notification(move |notification: IncomingNotification| {
            let heard = heard.clone();
            async move {
                let params: Value = notification.params()?;
                if let Some(text) = params["update"]["content"]["text"].as_str() {
                    println!("{text}");
                    heard.lock().unwrap().push_str(text);
                }
                Ok(())
            }
        })
        .connect(transport);

    let initialize = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let _: Value = connection
        .send_request(method::INITIALIZE, &initialize)
        .await
        .expect("the agent answers initialize");
    let offered = servers
        .spawn("calculator", SpawnOptions::new(server[0]).args(&server[1..]))
        .await
        .expect("start the MCP server");
    let session: Value = connection
        .send_request(method::SESSION_NEW, &json!({"cwd": "/", "mcpServers": [offered]}))
        .await
        .expect("the agent starts a session");
    let prompt =
        json!({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "add 2 and 3"}]});
    let answer: Value = connection
        .send_request(method::SESSION_PROMPT, &prompt)
        .await
        .expect("prompt");
    println!("< stop reason: {}", answer["stopReason"]);
    connection.close();
    connection.closed().await;
    servers.close();
    if said.lock().unwrap().contains("add(2, 3) = 5") {
        println!("mcp ok");
    } else {
        std::process::exit(1);
    }
}
