//! A client of the ACP v2 draft on the official Rust SDK (`Client.v2()`,
//! feature `unstable_protocol_v2`): what acp-engine's v2 agents are tested
//! against (interop/v2.sh).
//!
//! Usage: official-v2-client "AGENT COMMAND LINE"
//!
//! initialize asking for version 2, a session in the current directory,
//! one "Hello" prompt (only acknowledged in v2), then the session's updates
//! until an idle state update after foreground work began; the agent's text
//! is the turn's `agent_message_chunk`s. Prints the text, then "v2 ok";
//! exits 1 with the reason otherwise.

use std::str::FromStr;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v2::{schema, ConnectionTo};
use agent_client_protocol::{AcpAgent, Agent, Client, Error};
use tokio::sync::mpsc::unbounded_channel;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let command = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: official-v2-client \"AGENT COMMAND LINE\"");
        std::process::exit(2);
    });
    match run(&command).await {
        Ok(text) => {
            println!("{text}");
            println!("v2 ok");
        }
        Err(error) => {
            eprintln!("FAIL: {error:?}");
            std::process::exit(1);
        }
    }
}

async fn run(command: &str) -> Result<String, Error> {
    let agent = AcpAgent::from_str(command).map_err(|e| Error::invalid_params().data(e.to_string()))?;
    let (updates, mut received) = unbounded_channel();
    Client
        .v2()
        .name("official-v2-client")
        .on_receive_notification(
            async move |notification: schema::UpdateSessionNotification, _: ConnectionTo<Agent>| {
                updates.send(notification).map_err(Error::into_internal_error)
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(agent, async move |connection| {
            let info = schema::Implementation::new("official-v2-client", "1.0.0");
            let answer = connection
                .send_request(schema::InitializeRequest::new(ProtocolVersion::V2, info))
                .block_task()
                .await?;
            if answer.protocol_version != ProtocolVersion::V2 {
                return Err(Error::internal_error().data(format!("answered {:?}", answer.protocol_version)));
            }
            let session = connection
                .build_session_cwd()?
                .start_session()
                .block_task()
                .await?
                .session;
            session.send_prompt("Hello").block_task().await?;
            let mut text = String::new();
            let mut active = false;
            loop {
                let Some(notification) = received.recv().await else {
                    return Err(Error::internal_error().data("the agent left before the turn ended"));
                };
                match notification.update {
                    schema::SessionUpdate::StateUpdate(schema::StateUpdate::Idle(idle)) if active => {
                        if idle.stop_reason != Some(schema::StopReason::EndTurn) {
                            return Err(
                                Error::internal_error().data(format!("stopped: {:?}", idle.stop_reason))
                            );
                        }
                        break;
                    }
                    schema::SessionUpdate::StateUpdate(_) => active = true,
                    schema::SessionUpdate::AgentMessageChunk(chunk) => {
                        if let schema::ContentBlock::Text(block) = chunk.content {
                            text.push_str(&block.text);
                        }
                    }
                    _ => {}
                }
            }
            if text.is_empty() {
                return Err(Error::internal_error().data("no agent text before the session went idle"));
            }
            Ok(text)
        })
        .await
}
