//! Benchmark ACP agent built on the official Rust SDK (`agent-client-protocol` v5, protocol v1).
//!
//! Serves ACP on its own stdin/stdout and exits when stdin reaches EOF.
//! The prompt text is "<scenario> <N>":
//! - `stream`: send N `agent_message_chunk` session updates, then end the turn.
//! - `rpc`: send N sequential `fs/read_text_file` requests to the client, then end the turn.
//! - `perm`: send N sequential `session/request_permission` requests, then end the turn.
//! - `concurrent`: send N `fs/read_text_file` requests at once, await them all, end the turn.
//! - `large`: N rounds of a 16 MiB `fs/write_text_file` and an `fs/read_text_file` whose
//!   answer must be 16 MiB (else the turn fails with an error), then end the turn.

use agent_client_protocol::v1::schema::{
    AgentCapabilities, ContentBlock, ContentChunk, InitializeRequest, InitializeResponse, NewSessionRequest,
    NewSessionResponse, PermissionOption, PermissionOptionKind, PromptRequest, PromptResponse,
    ReadTextFileRequest, RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    TextContent, ToolCallUpdate, ToolCallUpdateFields, WriteTextFileRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{on_receive_request, Agent, Client, Error, ErrorCode, Result, Stdio};

const SESSION_ID: &str = "bench-session";
/// Fixed chunk text shared by all benchmark peers (the v1 envelope alone is ~168 bytes,
/// so each session/update line is ~250 bytes on the wire).
const CHUNK_TEXT: &str = "chunk of agent text";
const FILE_PATH: &str = "/bench/file.txt";
/// The `large` scenario's file size: 16 MiB of ASCII.
const LARGE_SIZE: usize = 16 * 1024 * 1024;

/// The client requests of the scenarios that await answers (every one but `stream`).
/// Runs outside the dispatch loop (in a spawned task), so it may block on responses.
async fn run_requests(
    cx: &ConnectionTo<Client>,
    scenario: &str,
    n: u64,
    session_id: SessionId,
) -> Result<()> {
    let read = || ReadTextFileRequest::new(session_id.clone(), FILE_PATH);
    match scenario {
        "rpc" => {
            for _ in 0..n {
                cx.send_request(read()).block_task().await?;
            }
        }
        "perm" => {
            for i in 0..n {
                let tool_call = ToolCallUpdate::new(format!("call-{i}"), ToolCallUpdateFields::new());
                let allow = PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce);
                cx.send_request(RequestPermissionRequest::new(
                    session_id.clone(),
                    tool_call,
                    vec![allow],
                ))
                .block_task()
                .await?;
            }
        }
        "concurrent" => {
            // `send_request` publishes at once: all N are in flight before the first await.
            let pending: Vec<_> = (0..n).map(|_| cx.send_request(read())).collect();
            for request in pending {
                request.block_task().await?;
            }
        }
        "large" => {
            let content = "x".repeat(LARGE_SIZE);
            for _ in 0..n {
                cx.send_request(WriteTextFileRequest::new(
                    session_id.clone(),
                    FILE_PATH,
                    content.clone(),
                ))
                .block_task()
                .await?;
                let response = cx.send_request(read()).block_task().await?;
                if response.content.len() != LARGE_SIZE {
                    return Err(Error::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("read {} bytes, expected {LARGE_SIZE}", response.content.len()),
                    ));
                }
            }
        }
        _ => unreachable!("checked by the prompt handler"),
    }
    Ok(())
}

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
                    Some((scenario, n))
                        if matches!(scenario.as_str(), "rpc" | "perm" | "concurrent" | "large") =>
                    {
                        // Awaiting a response inside a handler would block the dispatch
                        // loop (deadlock), so the request loop runs in a spawned task.
                        cx.spawn({
                            let cx = cx.clone();
                            async move {
                                match run_requests(&cx, &scenario, n, session_id).await {
                                    Ok(()) => responder.respond(PromptResponse::new(StopReason::EndTurn)),
                                    Err(error) => responder.respond_with_error(error),
                                }
                            }
                        })
                    }
                    _ => responder.respond_with_error(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        "unknown scenario: expected prompt \"<stream|rpc|perm|concurrent|large> <N>\"",
                    )),
                }
            },
            on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
