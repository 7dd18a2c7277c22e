//! Benchmark agent on acp-engine's typed `Agent` API (see bench/README.md).

use acp_engine::schema::*;
use acp_engine::{run_agent, Agent, AgentSideConnection, RequestError};
use acp_engine_bench::{parse_scenario, CHUNK_TEXT, SESSION_ID};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run_agent(|client| BenchAgent { client }).await;
}

struct BenchAgent {
    client: AgentSideConnection,
}

impl Agent for BenchAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        Ok(InitializeResponse::new(1))
    }

    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        Ok(NewSessionResponse::new(SESSION_ID.into()))
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
                    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(CHUNK_TEXT.into())));
                    let update =
                        SessionNotification::new(session_id.clone(), SessionUpdate::AgentMessageChunk(chunk));
                    self.client.session_update(update).await?;
                }
            }
            "rpc" => {
                for _ in 0..n {
                    let read = ReadTextFileRequest::new(session_id.clone(), "/bench/file.txt".into());
                    self.client.read_text_file(read).await?;
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
