//! The agent under test, driven over raw pipes, or a raw connection to a
//! remote agent (a conformance check must send what a well-behaved client
//! never would): lines out, messages in, and the client's side of the
//! protocol answered automatically.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_engine::schema::{
    method, CreateTerminalResponse, KillTerminalResponse, PermissionOptionKind, ReadTextFileResponse,
    ReleaseTerminalResponse, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, TerminalExitStatus, TerminalOutputResponse, WaitForTerminalExitResponse,
    WriteTextFileResponse,
};
use acp_engine::transport::{BoxReader, BoxWriter};
use acp_engine::validate::{self, Protocol, Receiver};
use acp_engine::{from_raw, remote, ProcessTree, RequestError};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

/// How much of the agent's stderr is kept as evidence.
const STDERR_KEPT: usize = 4096;

/// What the agent wrote: a message, a line that is not JSON, or the end.
#[derive(Debug)]
pub enum Incoming {
    Message(Value),
    Unreadable(String),
    Closed,
}

pub struct AgentUnderTest {
    /// The agent's process (and its tree); None for a remote agent (one
    /// connection per case, the server's process to stop).
    process: Option<ProcessTree>,
    stdin: Option<BoxWriter>,
    /// Why reading failed, if it did (not a plain end of output).
    failure: Arc<Mutex<Option<String>>>,
    incoming: mpsc::UnboundedReceiver<Incoming>,
    closed: bool,
    /// Permission requests held (not answered) while a case wants them so.
    pub hold_permissions: bool,
    held: Vec<Value>,
    /// Terminals created so far.
    terminals: u32,
    /// The last messages seen, for evidence.
    pub recent: VecDeque<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Notifications the agent sent that fail the schema (method, update
    /// kind, why), the first few.
    pub invalid_notifications: Vec<String>,
    /// The ACP version its notifications are checked as.
    version: u16,
}

/// How many invalid notifications are kept per case.
const INVALID_KEPT: usize = 8;

impl AgentUnderTest {
    /// Start the agent (in our working directory: its command may name
    /// files relative to it; sessions get a directory of their own), or
    /// connect to it when the command is one ws:// or http:// URL.
    pub async fn start(command: &[String], token: Option<&str>, version: u16) -> std::io::Result<Self> {
        let mut peer = Self::started(command, token).await?;
        peer.version = version;
        Ok(peer)
    }

    async fn started(command: &[String], token: Option<&str>) -> std::io::Result<Self> {
        if command.len() == 1 && remote::is_url(&command[0]) {
            let options = remote::ConnectOptions {
                bearer_token: token.map(str::to_owned),
                ..Default::default()
            };
            let (reader, writer) = remote::connect(&command[0], &options).await?.into_streams();
            return Ok(Self::over(None, reader, writer, None));
        }
        let mut spawn = Command::new(&command[0]);
        spawn
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut tree = ProcessTree::spawn(&mut spawn)?;
        let child = tree.child_mut();
        let stdout: BoxReader = Box::new(child.stdout.take().expect("piped"));
        let stdin: BoxWriter = Box::new(child.stdin.take().expect("piped"));
        let stderr_pipe = child.stderr.take().expect("piped");
        Ok(Self::over(Some(tree), stdout, stdin, Some(stderr_pipe)))
    }

    fn over(
        process: Option<ProcessTree>,
        stdout: BoxReader,
        stdin: BoxWriter,
        stderr_pipe: Option<tokio::process::ChildStderr>,
    ) -> Self {
        let (tx, incoming) = mpsc::unbounded_channel();
        let failure = Arc::new(Mutex::new(None));
        let failed = failure.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).split(b'\n');
            loop {
                let line = match lines.next_segment().await {
                    Ok(Some(line)) => line,
                    Ok(None) => break,
                    Err(error) => {
                        // A remote connection's reason (a refusal, a dropped socket).
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.to_string());
                        break;
                    }
                };
                let text = String::from_utf8_lossy(&line);
                if text.trim().is_empty() {
                    continue;
                }
                let item = match serde_json::from_str::<Value>(&text) {
                    Ok(message) => Incoming::Message(message),
                    Err(_) => Incoming::Unreadable(text.into_owned()),
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
            let _ = tx.send(Incoming::Closed);
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = stderr.clone();
        tokio::spawn(async move {
            let Some(mut stderr_pipe) = stderr_pipe else {
                return;
            };
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stderr_pipe.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                kept.extend_from_slice(&buffer[..read]);
                let excess = kept.len().saturating_sub(STDERR_KEPT);
                kept.drain(..excess);
            }
        });
        Self {
            version: acp_engine::version::V1,
            stdin: Some(stdin),
            failure,
            process,
            incoming,
            closed: false,
            hold_permissions: false,
            held: Vec::new(),
            terminals: 0,
            recent: VecDeque::new(),
            stderr,
            invalid_notifications: Vec::new(),
        }
    }

    /// Why the agent's output failed (a remote connection's reason), if it did.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A remote agent: no process of ours to watch.
    pub fn is_remote(&self) -> bool {
        self.process.is_none()
    }

    /// Write one line (a newline is added).
    pub async fn send_line(&mut self, line: &str) -> Result<(), String> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("stdin is closed".to_owned());
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin
            .write_all(&bytes)
            .await
            .map_err(|error| format!("the agent stopped reading: {error}"))?;
        stdin
            .flush()
            .await
            .map_err(|error| format!("the agent stopped reading: {error}"))
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next thing the agent wrote, within `wait` (None: nothing came).
    /// Requests of the client's side are answered on the way.
    pub async fn next(&mut self, wait: Duration) -> Option<Incoming> {
        if self.closed {
            return Some(Incoming::Closed);
        }
        let item = tokio::time::timeout(wait, self.incoming.recv()).await.ok()?;
        let item = item.unwrap_or(Incoming::Closed);
        match &item {
            Incoming::Message(message) => {
                self.remember(message.to_string());
                self.judge_notification(message);
                self.answer(message).await;
            }
            Incoming::Unreadable(line) => self.remember(format!("(not JSON) {line}")),
            Incoming::Closed => self.closed = true,
        }
        Some(item)
    }

    fn remember(&mut self, text: String) {
        let cut: String = text.chars().take(400).collect();
        self.recent.push_back(cut);
        if self.recent.len() > 4 {
            self.recent.pop_front();
        }
    }

    /// The client's side: permission requests get the first "allow"
    /// option (unless held), file reads a fixed text, writes succeed, a
    /// terminal runs every command as one line of output and exit 0;
    /// anything else -32601.
    async fn answer(&mut self, message: &Value) {
        let (Some(id), Some(called)) = (message.get("id"), message.get("method").and_then(Value::as_str))
        else {
            return;
        };
        let params = message.get("params").map(|params| params.to_string());
        let raw = params
            .as_deref()
            .and_then(|text| serde_json::value::RawValue::from_string(text.to_owned()).ok());
        let result = match called {
            method::SESSION_REQUEST_PERMISSION => {
                if self.hold_permissions {
                    self.held.push(id.clone());
                    return;
                }
                match from_raw::<RequestPermissionRequest>(raw.as_deref()) {
                    Ok(request) => {
                        let chosen = request
                            .options
                            .iter()
                            .find(|option| {
                                matches!(
                                    option.kind,
                                    PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
                                )
                            })
                            .or(request.options.first());
                        match chosen {
                            Some(option) => Ok(json!(RequestPermissionResponse::new(
                                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                                    option.option_id.clone()
                                ))
                            ))),
                            None => Ok(json!(RequestPermissionResponse::new(
                                RequestPermissionOutcome::Cancelled
                            ))),
                        }
                    }
                    Err(error) => Err(RequestError::from(error)),
                }
            }
            method::FS_READ_TEXT_FILE => Ok(json!(ReadTextFileResponse::new("acp-engine check\n"))),
            method::FS_WRITE_TEXT_FILE => Ok(json!(WriteTextFileResponse::new())),
            // A terminal whose every command printed one line and exited 0.
            method::TERMINAL_CREATE => {
                self.terminals += 1;
                Ok(json!(CreateTerminalResponse::new(format!(
                    "check-terminal-{}",
                    self.terminals
                ))))
            }
            method::TERMINAL_OUTPUT => {
                let mut output = TerminalOutputResponse::new("acp-engine check\n", false);
                let mut status = TerminalExitStatus::new();
                status.exit_code = Some(0);
                output.exit_status = Some(status);
                Ok(json!(output))
            }
            method::TERMINAL_WAIT_FOR_EXIT => {
                let mut exit = WaitForTerminalExitResponse::new();
                exit.exit_code = Some(0);
                Ok(json!(exit))
            }
            method::TERMINAL_RELEASE => Ok(json!(ReleaseTerminalResponse::new())),
            method::TERMINAL_KILL => Ok(json!(KillTerminalResponse::new())),
            other => Err(RequestError::method_not_found(other)),
        };
        let reply = match result {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        let _ = self.send_line(&reply.to_string()).await;
    }

    /// Answer the held permission requests `cancelled` (what a client must
    /// do when it cancels the turn).
    pub async fn cancel_held(&mut self) -> usize {
        let held = std::mem::take(&mut self.held);
        for id in &held {
            let result = json!(RequestPermissionResponse::new(
                RequestPermissionOutcome::Cancelled
            ));
            let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result });
            let _ = self.send_line(&reply.to_string()).await;
        }
        held.len()
    }

    /// Whether the agent exits within `wait`; its status, in words.
    pub async fn exits_within(&mut self, wait: Duration) -> Result<String, String> {
        let Some(child) = &mut self.process else {
            return Err("a remote agent's process is not ours to watch".to_owned());
        };
        match tokio::time::timeout(wait, child.wait()).await {
            Ok(Ok(status)) => Ok(status.to_string()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("still running after {} ms", wait.as_millis())),
        }
    }

    /// Keep a notification of the agent's that fails the schema a client
    /// checks it against.
    fn judge_notification(&mut self, message: &Value) {
        let (Some(method), None) = (message.get("method").and_then(Value::as_str), message.get("id")) else {
            return;
        };
        let params = message
            .get("params")
            .and_then(|params| serde_json::value::to_raw_value(params).ok());
        let checked = validate::message_in(
            self.version,
            Protocol::COMPILED,
            &acp_engine::UncheckedMethods::default(),
            Receiver::Client,
            true,
            method,
            params.as_deref(),
        );
        if let (Err(error), true) = (checked, self.invalid_notifications.len() < INVALID_KEPT) {
            let kind = message
                .pointer("/params/update/sessionUpdate")
                .and_then(Value::as_str)
                .map(|kind| format!(" {kind}"))
                .unwrap_or_default();
            let why = error
                .data
                .as_ref()
                .and_then(|data| data.get("message").or(Some(data)))
                .map(|why| why.to_string())
                .unwrap_or_else(|| error.message.clone());
            self.invalid_notifications.push(format!("{method}{kind}: {why}"));
        }
    }

    /// Read what the agent still wrote within `wait` (as evidence of a
    /// failure: a crash message, a line that is not JSON).
    pub async fn gather(&mut self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while !self.closed {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if self.next(left).await.is_none() {
                break;
            }
        }
    }

    /// How the agent exited, if it has.
    pub fn exit(&mut self) -> Option<String> {
        let Some(child) = &mut self.process else {
            return None;
        };
        child.try_wait().ok().flatten().map(|status| status.to_string())
    }

    /// Still running?
    pub fn running(&mut self) -> bool {
        match &mut self.process {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => !self.closed,
        }
    }

    /// The end of what the agent wrote on stderr.
    pub fn stderr_tail(&self) -> String {
        let kept = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&kept)
            .trim()
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// Stop the agent: stdin closed, a moment to exit, then its whole
    /// process tree stopped (nothing a case started outlives it).
    pub async fn stop(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.shutdown().await;
        }
        if let Some(child) = &mut self.process {
            child.stop(Duration::from_millis(500)).await;
        }
    }
}
