//! Benchmark agent on acp-engine's Connection (see bench/README.md).

use acp_engine::{to_raw, Connection, IncomingRequest, RawJson, RequestError, Transport};
use acp_engine_bench::{parse_scenario, SessionNotification, Text, Update, CHUNK_TEXT, SESSION_ID};
use serde_json::{json, Value};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let connection = Connection::builder()
        .on_request(handle)
        .connect(Transport::stdio());
    connection.closed().await;
}

async fn handle(request: IncomingRequest) -> Result<RawJson, RequestError> {
    let result = match request.method.as_str() {
        "initialize" => json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}),
        "session/new" => json!({"sessionId": SESSION_ID}),
        "session/prompt" => {
            let params: Value = request.params()?;
            let text = params["prompt"][0]["text"].as_str().unwrap_or_default();
            let (scenario, n) = parse_scenario(text).ok_or_else(RequestError::invalid_params)?;
            run(&request.connection, &scenario, n).await?;
            json!({"stopReason": "end_turn"})
        }
        _ => return Err(RequestError::method_not_found(&request.method)),
    };
    to_raw(&result).map_err(RequestError::internal)
}

async fn run(client: &Connection, scenario: &str, n: u64) -> Result<(), RequestError> {
    match scenario {
        "stream" => {
            for _ in 0..n {
                let update = SessionNotification {
                    session_id: SESSION_ID,
                    update: Update {
                        session_update: "agent_message_chunk",
                        content: Text {
                            kind: "text",
                            text: CHUNK_TEXT,
                        },
                    },
                };
                client.send_notification("session/update", &update).await?;
            }
        }
        "rpc" => {
            for _ in 0..n {
                let read = json!({"sessionId": SESSION_ID, "path": "/bench/file.txt"});
                let _: Value = client.send_request("fs/read_text_file", &read).await?;
            }
        }
        _ => return Err(RequestError::invalid_params().with_data(json!({"scenario": scenario}))),
    }
    Ok(())
}
