//! A JSON-level ACP agent on this process's stdio, built on the raw
//! `Connection` (the typed `Agent` API builds on the same engine).
//!
//! It answers `initialize` and `session/new`; on `session/prompt` it streams
//! a reply as `session/update` notifications, reads a file through the
//! client (`fs/read_text_file`), and ends the turn. A few `_demo/*`
//! extension methods exist for tests: `_demo/whoami` (pid, cwd, env),
//! `_demo/sleep` and `_demo/hang`.
//!
//! Run it under a client: `cargo run --example json_client -- cargo run --example json_agent`.

use std::time::Duration;

use acp_engine::schema::method;
use acp_engine::{
    to_raw, Connection, IncomingNotification, IncomingRequest, RawJson, RequestError, Transport,
};
use serde_json::{json, Value};

#[tokio::main]
async fn main() {
    let connection = Connection::builder()
        .on_request(handle_request)
        .on_notification(|notification: IncomingNotification| async move {
            eprintln!("[agent] notification {}", notification.method);
            Ok(())
        })
        .connect(Transport::stdio());
    connection.closed().await;
    eprintln!(
        "[agent] connection closed: {}",
        connection.close_reason().unwrap_or_default()
    );
}

async fn handle_request(request: IncomingRequest) -> Result<RawJson, RequestError> {
    let result = match request.method.as_str() {
        method::INITIALIZE => json!({
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": false},
            "authMethods": []
        }),
        method::SESSION_NEW => json!({ "sessionId": "demo-session" }),
        method::SESSION_PROMPT => prompt(&request).await?,
        "_demo/whoami" => json!({
            "pid": std::process::id(),
            "cwd": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
            "env": std::env::var("ACP_DEMO_ENV").ok(),
        }),
        "_demo/sleep" => {
            let ms = request.params::<Value>()?["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            json!({ "slept": ms })
        }
        "_demo/hang" => std::future::pending().await,
        _ => return Err(RequestError::method_not_found(&request.method)),
    };
    to_raw(&result).map_err(RequestError::internal)
}

/// Stream a reply, read a file through the client, end the turn.
async fn prompt(request: &IncomingRequest) -> Result<Value, RequestError> {
    let params: Value = request.params()?;
    let session_id = params["sessionId"].as_str().unwrap_or("demo-session").to_owned();
    let text = params["prompt"][0]["text"].as_str().unwrap_or("").to_owned();
    let client = &request.connection;
    let say = |text: String| {
        let session_id = session_id.clone();
        async move {
            client
                .send_notification(
                    method::SESSION_UPDATE,
                    &json!({
                        "sessionId": session_id,
                        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
                    }),
                )
                .await
        }
    };
    for word in format!("You said: {text}.").split_inclusive(' ') {
        say(word.to_owned()).await?;
    }
    let file: Result<Value, RequestError> = client
        .send_request(
            method::FS_READ_TEXT_FILE,
            &json!({"sessionId": session_id, "path": "Cargo.toml", "limit": 1}),
        )
        .await;
    match file {
        Ok(file) => {
            say(format!(
                " Your Cargo.toml starts with {:?}.",
                file["content"].as_str().unwrap_or("").trim()
            ))
            .await?
        }
        Err(error) => say(format!(" I could not read Cargo.toml: {error}.")).await?,
    }
    Ok(json!({ "stopReason": "end_turn" }))
}
