//! An ACP agent on this process's stdio, built on the typed `Agent` API.
//!
//! On a prompt it streams a reply, asks the user's permission, reads a file
//! through the client, writes one, runs `echo hi` in a client terminal and
//! reports what it said. The prompt `cancel me` instead waits on a
//! permission request until the client cancels the turn, and ends it with
//! stop reason `cancelled`. To a client that can show them (it advertises
//! `session.notices` and `session.compaction`), the turn also reports a
//! notice and a context compaction. (This is also the interop contract the
//! tests run against the official SDKs: see interop/.)
//!
//! `cargo run --example client -- cargo run --example agent`
//!
//! With `--serve HOST:PORT` it serves remote clients instead, one agent per
//! connection, over WebSocket and Streamable HTTP (it prints both URLs; a
//! bearer token from ACP_ENGINE_TOKEN is required when set):
//! `cargo run --example agent -- --serve 127.0.0.1:8080`, then
//! `cargo run --example client -- http://127.0.0.1:8080/acp`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use acp_engine::remote::{ServeOptions, Server};
use acp_engine::schema::*;
use acp_engine::{run_agent, Agent, AgentSideConnection, RequestError, Transport};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, address] if flag == "--serve" => serve(address).await,
        _ => run_agent(ExampleAgent::new).await,
    }
}

/// Serve remote clients until killed: every connection gets its own agent.
async fn serve(address: &str) {
    let options = ServeOptions {
        bearer_token: std::env::var("ACP_ENGINE_TOKEN").ok(),
        ..ServeOptions::default()
    };
    let server = Server::bind(address, options, |lines, _peer| {
        let connection = AgentSideConnection::new(ExampleAgent::new, Transport::from_stream(lines));
        tokio::spawn(async move { connection.closed().await });
    })
    .await
    .unwrap_or_else(|error| panic!("cannot listen on {address}: {error}"));
    println!("{}\n{}", server.websocket_url(), server.http_url());
    std::future::pending::<()>().await;
}

struct ExampleAgent {
    client: AgentSideConnection,
    /// Each session's working directory.
    sessions: Mutex<HashMap<SessionId, PathBuf>>,
    next_session: AtomicU64,
    /// The client can show notices and compactions (its capabilities).
    client_shows_news: AtomicBool,
    /// What the client said it can do: read files, write them, run terminals
    /// (an agent asks only for what the client advertised).
    client_reads: AtomicBool,
    client_writes: AtomicBool,
    client_terminals: AtomicBool,
}

impl ExampleAgent {
    fn new(client: AgentSideConnection) -> Self {
        Self {
            client,
            sessions: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            client_shows_news: AtomicBool::new(false),
            client_reads: AtomicBool::new(false),
            client_writes: AtomicBool::new(false),
            client_terminals: AtomicBool::new(false),
        }
    }

    async fn update(&self, session_id: &SessionId, update: SessionUpdate) -> Result<(), RequestError> {
        self.client
            .session_update(SessionNotification::new(session_id.clone(), update))
            .await
    }

    async fn say(&self, session_id: &SessionId, text: impl Into<String>) -> Result<(), RequestError> {
        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
        self.update(session_id, SessionUpdate::AgentMessageChunk(chunk))
            .await
    }

    /// A notice, and a context compaction from start to end with its summary.
    async fn report_compaction(&self, session_id: &SessionId) -> Result<(), RequestError> {
        let notice = Notice {
            description: Some("Older messages were summarized.".into()),
            ..Notice::new(NoticeSeverity::Info, "Context compacted")
        };
        self.update(session_id, SessionUpdate::Notice(notice)).await?;
        let id = CompactionId::from("compaction-1");
        let started = CompactionUpdate::new(id.clone(), CompactionStatus::InProgress);
        self.update(session_id, SessionUpdate::CompactionUpdate(started))
            .await?;
        let summary = ContentBlock::Text(TextContent::new("The user asked for a greeting."));
        let chunk = CompactionSummaryChunk::new(id.clone(), summary);
        self.update(session_id, SessionUpdate::CompactionSummaryChunk(chunk))
            .await?;
        let done = CompactionUpdate::new(id, CompactionStatus::Completed);
        self.update(session_id, SessionUpdate::CompactionUpdate(done))
            .await
    }

    /// Ask to read `hello.txt`; true if the user allowed it.
    async fn ask_permission(&self, session_id: &SessionId) -> Result<Option<bool>, RequestError> {
        let mut tool_call = ToolCallUpdate::new(ToolCallId::from("call-1"));
        tool_call.title = Some("Read hello.txt".into());
        tool_call.kind = Some(ToolKind::Read);
        tool_call.status = Some(ToolCallStatus::Pending);
        let options = vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let request = RequestPermissionRequest::new(session_id.clone(), tool_call, options);
        let response = self.client.request_permission(request).await?;
        Ok(match response.outcome {
            RequestPermissionOutcome::Selected(selected) => Some(selected.option_id.as_ref() == "allow"),
            _ => None,
        })
    }

    /// The full turn: reply, permission, a file read and write, a terminal.
    async fn say_hello(&self, session_id: &SessionId, cwd: PathBuf) -> Result<StopReason, RequestError> {
        if self.client_shows_news.load(Ordering::Relaxed) {
            self.report_compaction(session_id).await?;
        }
        self.say(session_id, "Hello! ").await?;
        if !self.client_reads.load(Ordering::Relaxed) {
            self.say(session_id, "(this client cannot read files: nothing read)")
                .await?;
        } else if let Some(stop) = self.read_hello(session_id, &cwd).await? {
            return Ok(stop);
        }
        if self.client_writes.load(Ordering::Relaxed) {
            let written = cwd.join("written.txt").display().to_string();
            let write = WriteTextFileRequest::new(session_id.clone(), written, "written by agent");
            self.client.write_text_file(write).await?;
        }
        if self.client_terminals.load(Ordering::Relaxed) {
            let mut command = CreateTerminalRequest::new(session_id.clone(), "echo");
            command.args = Some(vec!["hi".into()]);
            let terminal = self.client.create_terminal(command).await?;
            terminal.wait_for_exit().await?;
            let output = terminal.current_output().await?;
            self.say(session_id, format!("terminal said: {}", output.output.trim()))
                .await?;
            terminal.release().await?;
        }
        Ok(StopReason::EndTurn)
    }

    /// Ask to read `hello.txt`, then read it and say what it holds: None to
    /// go on, or the turn's end (cancelled, or the read refused).
    async fn read_hello(
        &self,
        session_id: &SessionId,
        cwd: &std::path::Path,
    ) -> Result<Option<StopReason>, RequestError> {
        match self.ask_permission(session_id).await? {
            None => return Ok(Some(StopReason::Cancelled)),
            Some(false) => {
                self.say(session_id, "You did not let me read hello.txt.").await?;
                return Ok(Some(StopReason::EndTurn));
            }
            Some(true) => {}
        }
        let path = cwd.join("hello.txt").display().to_string();
        let file = self
            .client
            .read_text_file(ReadTextFileRequest::new(session_id.clone(), path))
            .await?;
        self.say(session_id, file.content).await?;
        Ok(None)
    }
}

impl Agent for ExampleAgent {
    async fn initialize(&self, params: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        let capabilities = params.client_capabilities.unwrap_or_default();
        let fs = capabilities.fs.clone().unwrap_or_default();
        self.client_reads
            .store(fs.read_text_file == Some(true), Ordering::Relaxed);
        self.client_writes
            .store(fs.write_text_file == Some(true), Ordering::Relaxed);
        self.client_terminals
            .store(capabilities.terminal == Some(true), Ordering::Relaxed);
        let session = capabilities.session;
        let shows_news = session.is_some_and(|s| s.notices.is_some() && s.compaction.is_some());
        self.client_shows_news.store(shows_news, Ordering::Relaxed);
        Ok(InitializeResponse {
            agent_capabilities: Some(AgentCapabilities::default()),
            auth_methods: Some(vec![]),
            agent_info: Some(Implementation::new("acp-engine-example-agent", "0.1.0")),
            ..InitializeResponse::new(1)
        })
    }

    async fn new_session(&self, params: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        let id = SessionId::from(format!(
            "session-{}",
            self.next_session.fetch_add(1, Ordering::Relaxed)
        ));
        self.sessions
            .lock()
            .unwrap()
            .insert(id.clone(), PathBuf::from(params.cwd));
        Ok(NewSessionResponse::new(id))
    }

    async fn prompt(&self, params: PromptRequest) -> Result<PromptResponse, RequestError> {
        let cwd = self.sessions.lock().unwrap().get(&params.session_id).cloned();
        let cwd = cwd.ok_or_else(|| RequestError::resource_not_found(Some(params.session_id.as_ref())))?;
        let text: String = params
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect();
        let stop_reason = if text.trim() == "cancel me" {
            // Waits until the client cancels the turn, which answers the
            // permission request `cancelled`.
            match self.ask_permission(&params.session_id).await? {
                None => StopReason::Cancelled,
                Some(_) => StopReason::EndTurn,
            }
        } else {
            self.say_hello(&params.session_id, cwd).await?
        };
        Ok(PromptResponse::new(stop_reason))
    }

    async fn cancel(&self, params: CancelNotification) -> Result<(), RequestError> {
        eprintln!("[agent] the client cancelled the turn of {}", params.session_id);
        Ok(())
    }
}
