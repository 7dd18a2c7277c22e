//! Benchmark agent on acp-engine's typed `Agent` API (see bench/README.md);
//! `--serve HOST:PORT` serves remote clients instead (bench/remote.py).

use acp_engine::remote::{ServeOptions, Server};
use acp_engine::schema::*;
use acp_engine::{run_agent, Agent, AgentSideConnection, RequestError, Transport};
use acp_engine_bench::{large_content, parse_scenario, CHUNK_TEXT, FILE_PATH, LARGE_SIZE, SESSION_ID};
use futures_util::future::join_all;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    acp_engine_bench::runtime(&args).block_on(run());
}

async fn run() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, address] = args.as_slice() {
        if flag == "--serve" {
            return serve(address).await;
        }
    }
    run_agent(|client| BenchAgent { client }).await;
}

/// Serve remote clients until killed; prints the WebSocket and HTTP URLs.
async fn serve(address: &str) {
    let server = Server::bind(address, ServeOptions::default(), |lines, _| {
        let connection =
            AgentSideConnection::new(|client| BenchAgent { client }, Transport::from_stream(lines));
        tokio::spawn(async move { connection.closed().await });
    })
    .await
    .expect("listen");
    println!("{}\n{}", server.websocket_url(), server.http_url());
    std::future::pending::<()>().await;
}

struct BenchAgent {
    client: AgentSideConnection,
}

impl BenchAgent {
    fn read(&self, session_id: &SessionId) -> ReadTextFileRequest {
        ReadTextFileRequest::new(session_id.clone(), FILE_PATH)
    }
}

impl Agent for BenchAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        Ok(InitializeResponse::new(1))
    }

    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        Ok(NewSessionResponse::new(SESSION_ID))
    }

    async fn prompt(&self, params: PromptRequest) -> Result<PromptResponse, RequestError> {
        let text = match params.prompt.first() {
            Some(ContentBlock::Text(text)) => text.text.as_str(),
            _ => "",
        };
        let (scenario, n) = parse_scenario(text).ok_or_else(RequestError::invalid_params)?;
        let session_id = params.session_id;
        match scenario.as_str() {
            "stream" => {
                for _ in 0..n {
                    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(CHUNK_TEXT)));
                    let update =
                        SessionNotification::new(session_id.clone(), SessionUpdate::AgentMessageChunk(chunk));
                    self.client.session_update(update).await?;
                }
            }
            "rpc" => {
                for _ in 0..n {
                    self.client.read_text_file(self.read(&session_id)).await?;
                }
            }
            "perm" => {
                for i in 0..n {
                    let tool_call = ToolCallUpdate::new(format!("call-{i}"));
                    let allow = PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce);
                    let request = RequestPermissionRequest::new(session_id.clone(), tool_call, vec![allow]);
                    self.client.request_permission(request).await?;
                }
            }
            "concurrent" => {
                // join_all polls every request once before awaiting any:
                // all N are in flight at once.
                let reads = (0..n).map(|_| self.client.read_text_file(self.read(&session_id)));
                for read in join_all(reads).await {
                    read?;
                }
            }
            "large" => {
                let content = large_content();
                for _ in 0..n {
                    let write = WriteTextFileRequest::new(session_id.clone(), FILE_PATH, content.clone());
                    self.client.write_text_file(write).await?;
                    let read = self.client.read_text_file(self.read(&session_id)).await?;
                    if read.content.len() != LARGE_SIZE {
                        return Err(RequestError::new(
                            acp_engine::error::codes::INTERNAL_ERROR,
                            format!("read {} bytes, expected {LARGE_SIZE}", read.content.len()),
                        ));
                    }
                }
            }
            _ => return Err(RequestError::invalid_params()),
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn cancel(&self, _: CancelNotification) -> Result<(), RequestError> {
        Ok(())
    }
}
