//! A JSON-level ACP client: spawns an agent command line, initializes,
//! opens a session, sends one prompt, serves `fs/read_text_file`, and
//! prints every message that flows, then the streamed reply.
//!
//! `cargo run --example json_client -- <agent command> [args...]`

use std::io::Write;
use std::sync::{Arc, Mutex};

use acp_engine::schema::method;
use acp_engine::{
    to_raw, Connection, Direction, IncomingNotification, IncomingRequest, RawJson, RequestError,
    SpawnOptions, Transport,
};
use serde_json::{json, Value};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args_os().skip(1);
    let command = argv
        .next()
        .ok_or("usage: json_client <agent command> [args...]")?;
    let transport = Transport::spawn(SpawnOptions::new(command).args(argv))?;

    let reply = Arc::new(Mutex::new(String::new()));
    let streamed = reply.clone();
    let connection = Connection::builder()
        .observer(|direction: Direction, line: &[u8]| {
            let arrow = if direction == Direction::Outbound {
                "client -> agent"
            } else {
                "agent -> client"
            };
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{arrow}  {}", String::from_utf8_lossy(line));
        })
        .on_request(serve_file)
        .on_notification(move |notification: IncomingNotification| {
            let streamed = streamed.clone();
            async move {
                if notification.method == method::SESSION_UPDATE {
                    let params: Value = notification.params()?;
                    if let Some(text) = params["update"]["content"]["text"].as_str() {
                        streamed.lock().unwrap().push_str(text);
                    }
                }
                Ok(())
            }
        })
        .connect(transport);

    let init: Value = connection
        .send_request(
            method::INITIALIZE,
            &json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": false}}}),
        )
        .await?;
    let cwd = std::env::current_dir()?.display().to_string();
    let session: Value = connection
        .send_request(method::SESSION_NEW, &json!({"cwd": cwd, "mcpServers": []}))
        .await?;
    let outcome: Value = connection
        .send_request(
            method::SESSION_PROMPT,
            &json!({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hello, agent"}]}),
        )
        .await?;

    println!();
    println!("agent protocol version: {}", init["protocolVersion"]);
    println!("streamed reply: {}", reply.lock().unwrap());
    println!("stop reason: {}", outcome["stopReason"]);
    connection.close();
    connection.closed().await;
    println!("connection closed; agent process reaped");
    Ok(())
}

/// Serve `fs/read_text_file` from disk; everything else is -32601.
async fn serve_file(request: IncomingRequest) -> Result<RawJson, RequestError> {
    if request.method != method::FS_READ_TEXT_FILE {
        return Err(RequestError::method_not_found(&request.method));
    }
    let params: Value = request.params()?;
    let path = params["path"]
        .as_str()
        .ok_or_else(|| RequestError::invalid_params().with_data(json!({"missing": "path"})))?;
    let limit = params["limit"].as_u64().map(|l| l as usize).unwrap_or(usize::MAX);
    let text = std::fs::read_to_string(path).map_err(|_| RequestError::resource_not_found(Some(path)))?;
    let content: Vec<&str> = text.lines().take(limit).collect();
    to_raw(&json!({ "content": content.join("\n") })).map_err(RequestError::internal)
}
