//! An ACP client (the editor's side) built on the typed `Client` API.
//!
//! Spawns any agent command line, then runs two prompt turns in a fresh
//! working directory holding `hello.txt`: "Say hello" (it answers permission
//! requests with "allow once", serves file reads and writes and runs real
//! terminal commands, printing the streamed reply), and "cancel me" (it
//! cancels the turn while the agent waits for permission). It shows notices
//! and context compactions (and says so in its capabilities). It checks what
//! came back and exits non-zero if anything is off, so it doubles as the
//! interop client of interop/ (with `ACP_INTEROP_NEWS=1` it also expects the
//! notice and compaction updates of interop/news.json).
//!
//! `cargo run --example client -- <agent command> [args...]`, or a remote
//! agent's URL in place of the command (`ws://`, `wss://`, `http://`,
//! `https://`; a bearer token from ACP_ENGINE_TOKEN).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::schema::*;
use acp_engine::{spawn_agent, Client, ClientSideConnection, RequestError, SpawnOptions};
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, watch};

#[tokio::main]
async fn main() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    let cwd = std::env::temp_dir().join(format!("acp-engine-client-{}-{nanos}", std::process::id()));
    let outcome = match std::fs::create_dir(&cwd) {
        Ok(()) => {
            let outcome = run(&cwd).await;
            // The session's directory goes whether the session passed or failed.
            let _ = std::fs::remove_dir_all(&cwd);
            outcome
        }
        Err(error) => Err(error.into()),
    };
    if let Err(problem) = outcome {
        eprintln!("client: {problem}");
        std::process::exit(1);
    }
    println!("interop ok");
}

async fn run(cwd: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args_os().skip(1);
    let command = argv
        .next()
        .ok_or("usage: client <agent command> [args...] | URL")?;
    std::fs::write(cwd.join("hello.txt"), "Hello from the client's file\n")?;

    let (permission_asked, mut permission_waits) = mpsc::unbounded_channel();
    let reply = Arc::new(Mutex::new(String::new()));
    let news = Arc::new(Mutex::new(Vec::new()));
    let answer_permissions = Arc::new(AtomicBool::new(true));
    let client = ExampleClient {
        reply: reply.clone(),
        news: news.clone(),
        terminals: Mutex::new(HashMap::new()),
        next_terminal: AtomicU64::new(1),
        answer_permissions: answer_permissions.clone(),
        permission_asked,
    };
    let agent = match command.to_str().filter(|command| remote::is_url(command)) {
        Some(url) => {
            let options = ConnectOptions {
                bearer_token: std::env::var("ACP_ENGINE_TOKEN").ok(),
                ..ConnectOptions::default()
            };
            ClientSideConnection::new(|_agent| client, remote::dial(url, &options))
        }
        None => spawn_agent(SpawnOptions::new(command).args(argv), |_agent| client)?,
    };

    let mut init = InitializeRequest::new(1);
    let fs = FileSystemCapabilities {
        read_text_file: Some(true),
        write_text_file: Some(true),
        ..Default::default()
    };
    // We show notices and context compactions.
    let session_capabilities = ClientSessionCapabilities {
        notices: Some(NoticeCapabilities::default()),
        compaction: Some(CompactionCapabilities::default()),
        ..Default::default()
    };
    init.client_capabilities = Some(ClientCapabilities {
        fs: Some(fs),
        terminal: Some(true),
        session: Some(session_capabilities),
        ..Default::default()
    });
    init.client_info = Some(Implementation::new("acp-engine-interop-client", "1.0.0"));
    let initialized = agent.initialize(init).await?;
    check(
        initialized.protocol_version == 1,
        "the agent speaks protocol version 1",
    )?;
    println!("connected to {:?}", initialized.agent_info.map(|info| info.name));

    let session = agent
        .new_session(NewSessionRequest::new(cwd.display().to_string(), vec![]))
        .await?;
    let session_id = session.session_id;

    println!("> Say hello");
    let turn = agent.prompt(prompt(&session_id, "Say hello")).await?;
    println!("\n< stop reason: {}", turn.stop_reason);
    check(
        turn.stop_reason == StopReason::EndTurn,
        "the first turn ends with end_turn",
    )?;
    let text = reply.lock().unwrap().clone();
    check(
        text.contains("Hello from the client's file"),
        "the agent read hello.txt through us",
    )?;
    check(
        text.contains("terminal said: hi"),
        "the agent ran `echo hi` in our terminal",
    )?;
    let written = std::fs::read_to_string(cwd.join("written.txt"))?;
    check(
        written == "written by agent",
        "the agent wrote written.txt through us",
    )?;
    if std::env::var("ACP_INTEROP_NEWS").as_deref() == Ok("1") {
        let news = serde_json::to_value(&*news.lock().unwrap())?;
        check(
            news == expected_news(),
            &format!("the notice and compaction updates of interop/news.json arrived (got {news})"),
        )?;
    }

    println!("> cancel me");
    answer_permissions.store(false, Ordering::SeqCst);
    let turn = {
        let agent_for_turn = agent.clone();
        let session_for_turn = session_id.clone();
        let turn = tokio::spawn(async move {
            agent_for_turn
                .prompt(prompt(&session_for_turn, "cancel me"))
                .await
        });
        // The agent asks permission and waits; we cancel instead of answering.
        permission_waits
            .recv()
            .await
            .ok_or("the agent never asked for permission")?;
        agent.cancel(CancelNotification::new(session_id.clone())).await?;
        turn.await??
    };
    println!("< stop reason: {}", turn.stop_reason);
    check(
        turn.stop_reason == StopReason::Cancelled,
        "the cancelled turn ends with cancelled",
    )?;

    agent.close();
    agent.closed().await;
    Ok(())
}

fn prompt(session_id: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(
        session_id.clone(),
        vec![ContentBlock::Text(TextContent::new(text))],
    )
}

/// The updates of interop/news.json, as an agent sends them to a client that
/// shows notices and compactions.
fn expected_news() -> serde_json::Value {
    serde_json::json!([
        {"sessionUpdate": "notice", "severity": "info", "title": "Context compacted",
         "description": "Older messages were summarized."},
        {"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "in_progress"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "compaction-1",
         "content": {"type": "text", "text": "The user asked for a greeting."}},
        {"sessionUpdate": "compaction_update", "compactionId": "compaction-1", "status": "completed"}
    ])
}

fn check(ok: bool, what: &str) -> Result<(), Box<dyn std::error::Error>> {
    if ok {
        Ok(())
    } else {
        Err(format!("check failed: {what}").into())
    }
}

/// The editor: prints the reply, answers permission requests, serves files
/// and runs terminal commands for real.
struct ExampleClient {
    reply: Arc<Mutex<String>>,
    /// The notice and compaction updates received, in order.
    news: Arc<Mutex<Vec<SessionUpdate>>>,
    terminals: Mutex<HashMap<TerminalId, Arc<Terminal>>>,
    next_terminal: AtomicU64,
    /// While false, permission requests wait (until the turn is cancelled).
    answer_permissions: Arc<AtomicBool>,
    permission_asked: mpsc::UnboundedSender<()>,
}

impl ExampleClient {
    fn terminal(&self, id: &TerminalId) -> Result<Arc<Terminal>, RequestError> {
        let terminals = self.terminals.lock().unwrap();
        terminals
            .get(id)
            .cloned()
            .ok_or_else(|| RequestError::resource_not_found(Some(id.as_ref())))
    }
}

impl Client for ExampleClient {
    async fn request_permission(
        &self,
        params: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        let title = params.tool_call.title.clone().unwrap_or_default();
        println!("\n[permission asked: {title}]");
        if !self.answer_permissions.load(Ordering::SeqCst) {
            let _ = self.permission_asked.send(());
            // ClientSideConnection::cancel answers this `cancelled`.
            std::future::pending::<()>().await;
        }
        let allow = params
            .options
            .iter()
            .find(|option| option.kind == PermissionOptionKind::AllowOnce);
        let outcome = match allow {
            Some(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()))
            }
            None => RequestPermissionOutcome::Cancelled,
        };
        Ok(RequestPermissionResponse::new(outcome))
    }

    async fn session_update(&self, params: SessionNotification) -> Result<(), RequestError> {
        match params.update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(text) = chunk.content {
                    print!("{}", text.text);
                    let _ = std::io::stdout().flush();
                    self.reply.lock().unwrap().push_str(&text.text);
                }
            }
            SessionUpdate::Notice(notice) => {
                println!("[{} notice: {}]", notice.severity, notice.title);
                self.news.lock().unwrap().push(SessionUpdate::Notice(notice));
            }
            SessionUpdate::CompactionUpdate(compaction) => {
                println!("[compaction {}: {}]", compaction.compaction_id, compaction.status);
                self.news
                    .lock()
                    .unwrap()
                    .push(SessionUpdate::CompactionUpdate(compaction));
            }
            update @ SessionUpdate::CompactionSummaryChunk(_) => self.news.lock().unwrap().push(update),
            _ => {}
        }
        Ok(())
    }

    async fn read_text_file(
        &self,
        params: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, RequestError> {
        let text = tokio::fs::read_to_string(&params.path)
            .await
            .map_err(|_| RequestError::resource_not_found(Some(&params.path)))?;
        let skip = params.line.map_or(0, |line| line.saturating_sub(1) as usize);
        let take = params.limit.map_or(usize::MAX, |limit| limit as usize);
        let content: Vec<&str> = text.split_inclusive('\n').skip(skip).take(take).collect();
        Ok(ReadTextFileResponse::new(content.concat()))
    }

    async fn write_text_file(
        &self,
        params: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, RequestError> {
        tokio::fs::write(&params.path, &params.content)
            .await
            .map_err(RequestError::internal)?;
        Ok(WriteTextFileResponse::default())
    }

    async fn create_terminal(
        &self,
        params: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, RequestError> {
        let terminal = Terminal::start(&params).map_err(RequestError::internal)?;
        let id = TerminalId::from(format!(
            "term-{}",
            self.next_terminal.fetch_add(1, Ordering::Relaxed)
        ));
        self.terminals
            .lock()
            .unwrap()
            .insert(id.clone(), Arc::new(terminal));
        Ok(CreateTerminalResponse::new(id))
    }

    async fn terminal_output(
        &self,
        params: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, RequestError> {
        let terminal = self.terminal(&params.terminal_id)?;
        let mut response = TerminalOutputResponse::new(terminal.output.lock().unwrap().clone(), false);
        response.exit_status = terminal.exited.borrow().clone();
        Ok(response)
    }

    async fn wait_for_terminal_exit(
        &self,
        params: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, RequestError> {
        let terminal = self.terminal(&params.terminal_id)?;
        let mut exited = terminal.exited.clone();
        let status = exited
            .wait_for(Option::is_some)
            .await
            .map_err(RequestError::internal)?
            .clone()
            .unwrap_or_default();
        Ok(WaitForTerminalExitResponse {
            exit_code: status.exit_code,
            signal: status.signal,
            ..Default::default()
        })
    }

    async fn kill_terminal(&self, params: KillTerminalRequest) -> Result<KillTerminalResponse, RequestError> {
        self.terminal(&params.terminal_id)?.kill();
        Ok(KillTerminalResponse::default())
    }

    async fn release_terminal(
        &self,
        params: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, RequestError> {
        let terminal = self.terminals.lock().unwrap().remove(&params.terminal_id);
        if let Some(terminal) = terminal {
            terminal.kill();
        }
        Ok(ReleaseTerminalResponse::default())
    }
}

/// A command run for the agent, with its combined output.
struct Terminal {
    output: Arc<Mutex<String>>,
    exited: watch::Receiver<Option<TerminalExitStatus>>,
    kill: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
}

impl Terminal {
    fn start(params: &CreateTerminalRequest) -> std::io::Result<Self> {
        let mut command = tokio::process::Command::new(&params.command);
        command
            .args(params.args.iter().flatten())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &params.cwd {
            command.current_dir(cwd);
        }
        for variable in params.env.iter().flatten() {
            command.env(&variable.name, &variable.value);
        }
        let mut child = command.spawn()?;
        let output = Arc::new(Mutex::new(String::new()));
        let readers = [
            collect(child.stdout.take().map(|s| Box::new(s) as _), output.clone()),
            collect(child.stderr.take().map(|s| Box::new(s) as _), output.clone()),
        ];
        let (kill, killed) = tokio::sync::oneshot::channel();
        let (exit_tx, exited) = watch::channel(None);
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = killed => { let _ = child.start_kill(); child.wait().await }
            };
            for reader in readers {
                let _ = reader.await;
            }
            let mut exit = TerminalExitStatus::default();
            if let Ok(status) = status {
                use std::os::unix::process::ExitStatusExt;
                exit.exit_code = status.code().map(|code| code as u32);
                exit.signal = status.signal().map(|signal| format!("signal {signal}"));
            }
            let _ = exit_tx.send(Some(exit));
        });
        Ok(Self {
            output,
            exited,
            kill: Mutex::new(Some(kill)),
        })
    }

    fn kill(&self) {
        if let Some(kill) = self.kill.lock().unwrap().take() {
            let _ = kill.send(());
        }
    }
}

/// Append everything `stream` yields to `output`.
fn collect(
    stream: Option<Box<dyn tokio::io::AsyncRead + Send + Unpin>>,
    output: Arc<Mutex<String>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(mut stream) = stream else { return };
        let mut buf = [0u8; 8192];
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
            output
                .lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
}
