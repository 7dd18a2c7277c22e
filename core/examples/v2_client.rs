//! An ACP v2 (draft) client on the typed `acp_engine::v2` API: it spawns the
//! agent given on its command line, asks for version 2, opens a session in
//! the current directory and sends "Hello". v2 only acknowledges the
//! prompt; the turn is told in session updates, so the client reads the
//! agent's chunks until an idle state update (after the turn began) and
//! checks it ended with `end_turn`. Prints the agent's text, then "v2 ok";
//! exits 1 with the reason otherwise. Permission requests are answered with
//! the first option.
//!
//! `target/debug/examples/v2_client target/debug/examples/v2_agent`

use acp_engine::v2::schema::*;
use acp_engine::v2::{spawn_agent, Client};
use acp_engine::{RequestError, SpawnOptions};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

#[tokio::main]
async fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((program, args)) = argv.split_first() else {
        eprintln!("usage: v2_client AGENT [ARGS...]");
        std::process::exit(2);
    };
    match turn(SpawnOptions::new(program).args(args)).await {
        Ok(text) => println!("{text}\nv2 ok"),
        Err(why) => {
            eprintln!("FAIL: {why}");
            std::process::exit(1);
        }
    }
}

/// Forwards every session update to the turn.
struct TurnClient {
    updates: UnboundedSender<SessionUpdate>,
}

impl Client for TurnClient {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        let outcome = match request.options.first() {
            Some(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()))
            }
            None => RequestPermissionOutcome::Cancelled(CancelledPermissionOutcome::new()),
        };
        Ok(RequestPermissionResponse::new(outcome))
    }

    async fn update_session(&self, notification: UpdateSessionNotification) -> Result<(), RequestError> {
        let _ = self.updates.send(notification.update);
        Ok(())
    }
}

async fn turn(agent: SpawnOptions) -> Result<String, String> {
    let (updates, mut received) = unbounded_channel();
    let agent = spawn_agent(agent, |_| TurnClient { updates }).map_err(|e| format!("spawn: {e}"))?;
    let info = Implementation::new("acp-engine-v2-client", "1.0.0");
    let answer = agent
        .initialize(InitializeRequest::new(2, info))
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    if answer.protocol_version != 2 {
        return Err(format!("the agent answered version {}", answer.protocol_version));
    }
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let session = agent
        .new_session(NewSessionRequest::new(cwd.to_string_lossy().into_owned()))
        .await
        .map_err(|e| format!("session/new: {e}"))?
        .session_id;
    let prompt = vec![ContentBlock::Text(TextContent::new("Hello"))];
    agent
        .prompt(PromptRequest::new(session, prompt))
        .await
        .map_err(|e| format!("session/prompt: {e}"))?;
    let (mut text, mut began) = (String::new(), false);
    loop {
        match received
            .recv()
            .await
            .ok_or("the agent left before the turn ended")?
        {
            SessionUpdate::StateUpdate(StateUpdate::Idle(idle)) if began => {
                if idle.stop_reason != IdleStateUpdateStopReason::EndTurn {
                    return Err(format!("the turn stopped: {:?}", idle.stop_reason));
                }
                break;
            }
            SessionUpdate::StateUpdate(_) => began = true,
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(block) = chunk.content {
                    text.push_str(&block.text);
                }
            }
            _ => {}
        }
    }
    agent.close();
    agent.closed().await;
    if text.is_empty() {
        return Err("no agent text before the session went idle".into());
    }
    Ok(text)
}
