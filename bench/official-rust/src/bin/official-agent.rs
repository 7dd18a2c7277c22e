//! Benchmark ACP agent built on the official Rust SDK (`agent-client-protocol` v5, protocol v1).
//!
//! Serves ACP on its own stdin/stdout and exits when stdin reaches EOF.
//! The prompt text is "<scenario> <N>":
//! - `stream`: send N `agent_message_chunk` session updates, then end the turn.
//! - `rpc`: send N sequential `fs/read_text_file` requests to the client, then end the turn.

use agent_client_protocol::v1::schema::{
    AgentCapabilities, ContentBlock, ContentChunk, InitializeRequest, InitializeResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ReadTextFileRequest, SessionId, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{on_receive_request, Agent, Error, ErrorCode, Result, Stdio};

const SESSION_ID: &str = "bench-session";
/// Fixed chunk text shared by all benchmark peers (the v1 envelope alone is ~168 bytes,
/// so each session/update line is ~250 bytes on the wire).
const CHUNK_TEXT: &str = "chunk of agent text";

/// Parse "<scenario> <N>" from the first text block of the prompt.
fn parse_prompt(prompt: &PromptRequest) -> Option<(String, u64)> {
    let text = prompt.prompt.iter().find_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    })?;
    let mut parts = text.split_whitespace();
    let scenario = parts.next()?.to_string();
    let n = parts.next()?.parse().ok()?;
    Some((scenario, n))
}

// The SDK is executor-agnostic (its I/O runs on smol-style helper threads); a
// single-threaded tokio executor is enough and measured faster than multi-thread here.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    Agent
        .v1()
        .name("official-agent")
        .on_receive_request(
            async |init: InitializeRequest, responder, _cx| {
                responder.respond(
                    InitializeResponse::new(init.protocol_version)
                        .agent_capabilities(AgentCapabilities::new()),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async |_req: NewSessionRequest, responder, _cx| {
                responder.respond(NewSessionResponse::new(SESSION_ID))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async |prompt: PromptRequest, responder, cx| {
                let session_id: SessionId = prompt.session_id.clone();
                match parse_prompt(&prompt) {
                    Some((scenario, n)) if scenario == "stream" => {
                        // Notifications are queued (never block), so send them inline.
                        for _ in 0..n {
                            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(CHUNK_TEXT)));
                            cx.send_notification(SessionNotification::new(
                                session_id.clone(),
                                SessionUpdate::AgentMessageChunk(chunk),
                            ))?;
                        }
                        responder.respond(PromptResponse::new(StopReason::EndTurn))
                    }
                    Some((scenario, n)) if scenario == "rpc" => {
                        // Awaiting a response inside a handler would block the dispatch
                        // loop (deadlock), so the request loop runs in a spawned task.
                        cx.spawn({
                            let cx = cx.clone();
                            async move {
                                for _ in 0..n {
                                    cx.send_request(ReadTextFileRequest::new(
                                        session_id.clone(),
                                        "/bench/file.txt",
                                    ))
                                    .block_task()
                                    .await?;
                                }
                                responder.respond(PromptResponse::new(StopReason::EndTurn))
                            }
                        })
                    }
                    _ => responder.respond_with_error(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        "unknown scenario: expected prompt \"<stream|rpc> <N>\"",
                    )),
                }
            },
            on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
