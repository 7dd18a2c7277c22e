//! The editor's side of `acp-engine run`: shows what the agent streams,
//! hands permission requests to the person at the keyboard, serves files
//! inside the working directory and runs terminals.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use acp_engine::schema::*;
use acp_engine::{Client, RequestError};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::terminals::Terminals;
use super::Style;

/// A permission request waiting for the person's choice.
pub struct Ask {
    pub request: RequestPermissionRequest,
    pub answer: oneshot::Sender<RequestPermissionOutcome>,
}

pub struct RunClient {
    pub cwd: PathBuf,
    pub style: Style,
    pub asks: mpsc::UnboundedSender<Ask>,
    /// Answer every permission request with an "allow once" option (else
    /// "allow always").
    pub yes: bool,
    pub terminals: Arc<Terminals>,
    /// Tool call titles by id: later updates usually carry only the id.
    pub titles: Mutex<HashMap<String, String>>,
    /// What was streamed last (a message or a thought), to break the line
    /// when the other starts.
    pub streaming: Mutex<Option<Streamed>>,
}

/// A kind of streamed text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Streamed {
    Message,
    Thought,
}

impl RunClient {
    /// `path`, if it is inside the working directory (the agent may not
    /// read or write anywhere else).
    fn inside(&self, path: &str) -> Result<PathBuf, RequestError> {
        let path = Path::new(path);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        };
        let parent = full.parent().and_then(|parent| parent.canonicalize().ok());
        let resolved = parent
            .zip(full.file_name())
            .map(|(parent, name)| parent.join(name));
        match resolved {
            Some(resolved) if resolved.starts_with(&self.cwd) => Ok(resolved),
            _ => Err(RequestError::invalid_params().with_data(json!({
                "reason": format!("{} is outside the working directory {}", full.display(), self.cwd.display())
            }))),
        }
    }

    fn say(&self, text: &str) {
        *self.streaming.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.write(text);
    }

    fn write(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// A chunk of a message or thought: on a new line when the other kind
    /// was streaming.
    fn stream(&self, kind: Streamed, text: &str) {
        let mut streaming = self.streaming.lock().unwrap_or_else(|p| p.into_inner());
        if streaming.is_some_and(|last| last != kind) {
            self.write("\n");
        }
        *streaming = Some(kind);
        self.write(text);
    }

    /// The title a tool call was announced with, else its id.
    fn title(&self, id: &ToolCallId, title: Option<String>) -> String {
        let mut titles = self.titles.lock().unwrap_or_else(|p| p.into_inner());
        match title {
            Some(title) => {
                titles.insert(id.to_string(), title.clone());
                title
            }
            None => titles
                .get(&id.to_string())
                .cloned()
                .unwrap_or_else(|| id.to_string()),
        }
    }
}

impl Client for RunClient {
    async fn request_permission(
        &self,
        params: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        if self.yes {
            // Once rather than always: the least that lets the turn go on (an
            // agent may refuse "always" where it does not trust the folder).
            let allow = [PermissionOptionKind::AllowOnce, PermissionOptionKind::AllowAlways]
                .iter()
                .find_map(|kind| params.options.iter().find(|option| &option.kind == kind));
            let title = self.title(&params.tool_call.tool_call_id, params.tool_call.title.clone());
            let outcome = match allow {
                Some(option) => {
                    self.say(
                        &self
                            .style
                            .dim(&format!("\n[--yes: allowed {title}: {}]\n", option.name)),
                    );
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        option.option_id.clone(),
                    ))
                }
                None => {
                    self.say(
                        &self
                            .style
                            .dim(&format!("\n[--yes: no allow option for {title}; cancelled]\n")),
                    );
                    RequestPermissionOutcome::Cancelled
                }
            };
            return Ok(RequestPermissionResponse::new(outcome));
        }
        let (answer, chosen) = oneshot::channel();
        let _ = self.asks.send(Ask {
            request: params,
            answer,
        });
        // Dropped unanswered (the turn was cancelled): `cancelled`.
        let outcome = chosen.await.unwrap_or(RequestPermissionOutcome::Cancelled);
        Ok(RequestPermissionResponse::new(outcome))
    }

    async fn session_update(&self, params: SessionNotification) -> Result<(), RequestError> {
        let style = self.style;
        match params.update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                self.stream(Streamed::Message, &text_of(&chunk.content))
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                self.stream(Streamed::Thought, &style.dim(&text_of(&chunk.content)))
            }
            SessionUpdate::ToolCall(call) => {
                let status = call
                    .status
                    .map(|status| format!(" [{status}]"))
                    .unwrap_or_default();
                let title = self.title(&call.tool_call_id, Some(call.title));
                self.say(&style.tool(&format!("\n⚙ {title}{status}\n")));
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let title = self.title(&update.tool_call_id, update.title.clone());
                if let Some(status) = update.status {
                    self.say(&style.tool(&format!("⚙ {title} [{status}]\n")));
                    // Why it failed: the text the agent attached.
                    if status == ToolCallStatus::Failed {
                        let why: Vec<String> = update
                            .content
                            .iter()
                            .flatten()
                            .filter_map(|content| match content {
                                ToolCallContent::Content(block) => Some(text_of(&block.content)),
                                _ => None,
                            })
                            .collect();
                        if !why.is_empty() {
                            self.say(&style.ask(&format!("  {}\n", why.join("\n  "))));
                        }
                    }
                }
            }
            SessionUpdate::Plan(plan) => {
                let mut text = String::from("\nplan:\n");
                for entry in plan.entries {
                    text.push_str(&format!("  [{}] {}\n", entry.status, entry.content));
                }
                self.say(&style.dim(&text));
            }
            SessionUpdate::Notice(notice) => {
                self.say(&style.dim(&format!("\n[{}: {}]\n", notice.severity, notice.title)));
            }
            _ => {}
        }
        Ok(())
    }

    async fn read_text_file(
        &self,
        params: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, RequestError> {
        let path = self.inside(&params.path)?;
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|_| RequestError::resource_not_found(Some(&params.path)))?;
        let skip = params.line.map_or(0, |line| line.saturating_sub(1) as usize);
        let take = params.limit.map_or(usize::MAX, |limit| limit as usize);
        let content: Vec<&str> = text.split_inclusive('\n').skip(skip).take(take).collect();
        self.say(&self.style.dim(&format!("\n[read {}]\n", path.display())));
        Ok(ReadTextFileResponse::new(content.concat()))
    }

    async fn write_text_file(
        &self,
        params: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, RequestError> {
        let path = self.inside(&params.path)?;
        tokio::fs::write(&path, &params.content)
            .await
            .map_err(RequestError::internal)?;
        self.say(&self.style.dim(&format!("\n[wrote {}]\n", path.display())));
        Ok(WriteTextFileResponse::default())
    }

    async fn create_terminal(
        &self,
        params: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, RequestError> {
        let line = std::iter::once(params.command.as_str())
            .chain(params.args.iter().flatten().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        self.say(&self.style.dim(&format!("\n[$ {line}]\n")));
        Ok(CreateTerminalResponse::new(
            self.terminals.create(&params, &self.cwd)?,
        ))
    }

    async fn terminal_output(
        &self,
        params: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, RequestError> {
        let (output, truncated, exit_status) = self.terminals.get(&params.terminal_id)?.output();
        let mut response = TerminalOutputResponse::new(output, truncated);
        response.exit_status = exit_status;
        Ok(response)
    }

    async fn wait_for_terminal_exit(
        &self,
        params: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, RequestError> {
        let status = self.terminals.get(&params.terminal_id)?.wait().await;
        let mut response = WaitForTerminalExitResponse::new();
        response.exit_code = status.exit_code;
        response.signal = status.signal;
        Ok(response)
    }

    async fn kill_terminal(&self, params: KillTerminalRequest) -> Result<KillTerminalResponse, RequestError> {
        self.terminals.get(&params.terminal_id)?.kill();
        Ok(KillTerminalResponse::default())
    }

    async fn release_terminal(
        &self,
        params: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, RequestError> {
        self.terminals.release(&params.terminal_id);
        Ok(ReleaseTerminalResponse::default())
    }
}

/// A content block as text (what is not text, by its kind).
fn text_of(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(_) => "[image]".to_owned(),
        ContentBlock::Audio(_) => "[audio]".to_owned(),
        ContentBlock::ResourceLink(link) => format!("[{}]", link.uri),
        _ => "[resource]".to_owned(),
    }
}
