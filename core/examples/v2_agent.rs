//! An ACP v2 (draft) agent on this process's stdio, on the typed
//! `acp_engine::v2` API: it says "echo: <text>" to each prompt. v2
//! acknowledges the prompt with a message id; the turn is told in session
//! updates after the answer (running, the user message, the chunk, idle with
//! `end_turn`).
//!
//! With `--router` it serves v1 clients too (`AgentProtocolRouter`): a v1
//! client gets a v1 echo agent, which answers the prompt `end_turn` after
//! its chunk.
//!
//! `target/debug/examples/v2_client target/debug/examples/v2_agent`

use std::sync::atomic::{AtomicU64, Ordering};

use acp_engine::v2::schema::*;
use acp_engine::v2::{run_agent, run_router, Agent, AgentSideConnection};
use acp_engine::RequestError;

#[tokio::main]
async fn main() {
    if std::env::args().nth(1).as_deref() == Some("--router") {
        run_router(v1::EchoAgent, EchoAgent::new).await;
    } else {
        run_agent(EchoAgent::new).await;
    }
}

/// The text blocks of a prompt, joined.
fn text_of(prompt: &[ContentBlock]) -> String {
    let texts = prompt.iter().filter_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    });
    texts.collect::<Vec<_>>().join(" ")
}

struct EchoAgent {
    client: AgentSideConnection,
    ids: AtomicU64,
}

impl EchoAgent {
    fn new(client: AgentSideConnection) -> Self {
        Self {
            client,
            ids: AtomicU64::new(1),
        }
    }

    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.ids.fetch_add(1, Ordering::Relaxed))
    }
}

impl Agent for EchoAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        Ok(InitializeResponse::new(
            2,
            Implementation::new("acp-engine-v2-agent", "1.0.0"),
        ))
    }

    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        Ok(NewSessionResponse::new(self.next_id("s")))
    }

    async fn prompt(&self, request: PromptRequest) -> Result<PromptResponse, RequestError> {
        let (user_message, reply) = (self.next_id("m"), self.next_id("m"));
        let echo = format!("echo: {}", text_of(&request.prompt));
        let (client, session) = (self.client.clone(), request.session_id);
        let mut said = UserMessage::new(user_message.clone());
        said.content = Some(request.prompt);
        let updates = [
            SessionUpdate::StateUpdate(StateUpdate::Running(RunningStateUpdate::new())),
            SessionUpdate::UserMessage(said),
            SessionUpdate::AgentMessageChunk(ContentChunk::new(reply, TextContent::new(echo).into())),
            SessionUpdate::StateUpdate(StateUpdate::Idle(IdleStateUpdate::new(
                IdleStateUpdateStopReason::EndTurn,
            ))),
        ];
        // The turn goes on after the acknowledgement, in order.
        tokio::spawn(async move {
            for update in updates {
                if client
                    .update_session(UpdateSessionNotification::new(session.clone(), update))
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
        Ok(PromptResponse::new(user_message))
    }
}

/// The v1 agent the router serves v1 clients with.
mod v1 {
    use acp_engine::schema::*;
    use acp_engine::{Agent, AgentSideConnection, RequestError};

    pub struct EchoAgent(pub AgentSideConnection);

    impl Agent for EchoAgent {
        async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
            let info = Implementation::new("acp-engine-v2-agent (v1)", "1.0.0");
            let mut answer = InitializeResponse::new(1);
            answer.agent_info = Some(info);
            Ok(answer)
        }

        async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
            Ok(NewSessionResponse::new("s1"))
        }

        async fn prompt(&self, request: PromptRequest) -> Result<PromptResponse, RequestError> {
            let texts: Vec<&str> = request
                .prompt
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(text) => Some(text.text.as_str()),
                    _ => None,
                })
                .collect();
            let chunk = ContentChunk::new(TextContent::new(format!("echo: {}", texts.join(" "))).into());
            let update =
                SessionNotification::new(request.session_id, SessionUpdate::AgentMessageChunk(chunk));
            self.0.session_update(update).await?;
            Ok(PromptResponse::new(StopReason::EndTurn))
        }

        async fn cancel(&self, _: CancelNotification) -> Result<(), RequestError> {
            Ok(())
        }
    }
}
