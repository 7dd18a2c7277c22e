//! An ACP agent whose sessions outlive its process: each session is a file
//! in a directory (its working directory and every finished turn), so any
//! agent process sharing that directory can `session/load` it. This is how
//! a deployment of several `acp-engine serve` backends behind a load
//! balancer restores a session after its backend died (deploy/README.md):
//! the directory stands for the volume or store the backends share.
//!
//! A turn replies to the prompt's text, in four chunks, naming the turn and
//! this process (`hello (turn 1, agent 4242)`); the prompt `slow N` spreads
//! the chunks over N milliseconds, and a cancelled turn stops between
//! chunks; a prompt starting with `ask` first asks the client's permission
//! (options `allow` and `reject`) and replies with the option chosen
//! (`ask (allow, turn 2, agent 4242)`). `session/load` replays the session's finished turns as
//! `user_message_chunk` and `agent_message_chunk` updates before answering.
//!
//! `acp-engine serve --listen 127.0.0.1:8080 -- target/debug/examples/durable_agent --sessions DIR`

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use acp_engine::schema::*;
use acp_engine::{run_agent, Agent, AgentSideConnection, RequestError};
use serde_json::{json, Value};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let directory = match args.as_slice() {
        [flag, directory] if flag == "--sessions" => PathBuf::from(directory),
        _ => {
            eprintln!("usage: durable_agent --sessions DIR");
            std::process::exit(2);
        }
    };
    run_agent(|client| DurableAgent::new(client, directory)).await;
}

struct DurableAgent {
    client: AgentSideConnection,
    store: SessionStore,
    /// The sessions this process serves, each with its turns so far.
    turns: Mutex<HashMap<SessionId, u64>>,
    cancelled: Mutex<HashSet<SessionId>>,
    next_session: AtomicU64,
}

impl DurableAgent {
    /// Ask the client's permission for turn `turn`: the option chosen, or
    /// `cancelled`.
    async fn ask(&self, session_id: &SessionId, turn: u64) -> Result<String, RequestError> {
        let options = vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let tool_call = ToolCallUpdate::new(format!("turn-{turn}"));
        let request = RequestPermissionRequest::new(session_id.clone(), tool_call, options);
        Ok(match self.client.request_permission(request).await?.outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string(),
            _ => "cancelled".to_owned(),
        })
    }

    fn new(client: AgentSideConnection, directory: PathBuf) -> Self {
        Self {
            client,
            store: SessionStore { directory },
            turns: Mutex::new(HashMap::new()),
            cancelled: Mutex::new(HashSet::new()),
            next_session: AtomicU64::new(1),
        }
    }

    async fn send(&self, session_id: &SessionId, update: SessionUpdate) -> Result<(), RequestError> {
        self.client
            .session_update(SessionNotification::new(session_id.clone(), update))
            .await
    }

    /// Replays a stored session's finished turns, in order.
    async fn replay(&self, session_id: &SessionId, history: &[Value]) -> Result<(), RequestError> {
        for entry in history {
            let text = entry["text"].as_str().unwrap_or_default();
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
            let update = match entry["role"].as_str() {
                Some("user") => SessionUpdate::UserMessageChunk(chunk),
                _ => SessionUpdate::AgentMessageChunk(chunk),
            };
            self.send(session_id, update).await?;
        }
        Ok(())
    }

    fn take_cancelled(&self, session_id: &SessionId) -> bool {
        self.cancelled.lock().unwrap().remove(session_id)
    }
}

impl Agent for DurableAgent {
    async fn initialize(&self, _params: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        Ok(InitializeResponse {
            agent_capabilities: Some(AgentCapabilities {
                load_session: Some(true),
                ..AgentCapabilities::default()
            }),
            auth_methods: Some(vec![]),
            agent_info: Some(Implementation::new("acp-engine-durable-agent", "0.1.0")),
            ..InitializeResponse::new(1)
        })
    }

    async fn new_session(&self, params: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        // Unique across processes and machines sharing the directory.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let serial = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = SessionId::from(format!("{nanos:x}-{:x}-{serial}", std::process::id()));
        self.store
            .save(&id, &json!({ "cwd": params.cwd, "history": [] }))
            .map_err(RequestError::internal)?;
        self.turns.lock().unwrap().insert(id.clone(), 0);
        Ok(NewSessionResponse::new(id))
    }

    async fn load_session(&self, params: LoadSessionRequest) -> Result<LoadSessionResponse, RequestError> {
        let session = self.store.load(&params.session_id)?;
        let history = session["history"].as_array().cloned().unwrap_or_default();
        self.replay(&params.session_id, &history).await?;
        let turns = history.len() as u64 / 2;
        self.turns.lock().unwrap().insert(params.session_id, turns);
        Ok(LoadSessionResponse::default())
    }

    async fn prompt(&self, params: PromptRequest) -> Result<PromptResponse, RequestError> {
        let session_id = params.session_id;
        let turn = match self.turns.lock().unwrap().get_mut(&session_id) {
            Some(turns) => {
                *turns += 1;
                *turns
            }
            None => return Err(RequestError::session_not_found(session_id.as_ref())),
        };
        self.take_cancelled(&session_id);
        let text: String = params
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect();
        let total_ms = text
            .strip_prefix("slow ")
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let chosen = match text.starts_with("ask") {
            true => format!("{}, ", self.ask(&session_id, turn).await?),
            false => String::new(),
        };
        let reply = format!("{text} ({chosen}turn {turn}, agent {})", std::process::id());
        let chunks = split_in_four(&reply);
        for chunk in &chunks {
            if self.take_cancelled(&session_id) {
                return Ok(PromptResponse::new(StopReason::Cancelled));
            }
            let block = ContentChunk::new(ContentBlock::Text(TextContent::new(*chunk)));
            self.send(&session_id, SessionUpdate::AgentMessageChunk(block))
                .await?;
            tokio::time::sleep(Duration::from_millis(total_ms / 4)).await;
        }
        // Only a finished turn is stored: a turn cut short is not history.
        let mut session = self.store.load(&session_id)?;
        if let Some(history) = session["history"].as_array_mut() {
            history.push(json!({ "role": "user", "text": text }));
            history.push(json!({ "role": "agent", "text": reply }));
        }
        self.store
            .save(&session_id, &session)
            .map_err(RequestError::internal)?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn cancel(&self, params: CancelNotification) -> Result<(), RequestError> {
        self.cancelled.lock().unwrap().insert(params.session_id);
        Ok(())
    }
}

/// Sessions as JSON files, `DIR/<session id>.json`, each replaced whole
/// (written beside it, then renamed) so a reader never sees half a file.
struct SessionStore {
    directory: PathBuf,
}

impl SessionStore {
    fn path(&self, id: &SessionId) -> Result<PathBuf, RequestError> {
        // The id names a file: nothing that could leave the directory.
        let safe =
            !id.as_ref().is_empty() && id.as_ref().chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !safe {
            return Err(RequestError::session_not_found(id.as_ref()));
        }
        Ok(self.directory.join(format!("{}.json", id.as_ref())))
    }

    fn load(&self, id: &SessionId) -> Result<Value, RequestError> {
        let path = self.path(id)?;
        let text =
            std::fs::read_to_string(&path).map_err(|_| RequestError::session_not_found(id.as_ref()))?;
        serde_json::from_str(&text)
            .map_err(|error| RequestError::internal(format!("{}: {error}", path.display())))
    }

    fn save(&self, id: &SessionId, session: &Value) -> Result<(), String> {
        let path = self.path(id).map_err(|error| error.message)?;
        write_whole(&path, &session.to_string()).map_err(|error| format!("{}: {error}", path.display()))
    }
}

fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let partial = path.with_extension(format!("json.{}.partial", std::process::id()));
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path)
}

/// `text` in four pieces (some empty when it is short), on char boundaries.
fn split_in_four(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let cut = |quarter: usize| {
        chars
            .get(chars.len() * quarter / 4)
            .map_or(text.len(), |(at, _)| *at)
    };
    (0..4)
        .map(|quarter| &text[cut(quarter)..cut(quarter + 1)])
        .collect()
}
