//! The terminals `acp-engine run` runs for the agent: real processes in
//! the working directory, their output collected (within the byte limit the
//! agent asked for), killed when released or when the program ends.

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acp_engine::schema::{CreateTerminalRequest, TerminalExitStatus, TerminalId};
use acp_engine::RequestError;
use tokio::io::AsyncReadExt;
use tokio::sync::{oneshot, watch};

#[derive(Default)]
pub struct Terminals {
    running: Mutex<HashMap<TerminalId, Arc<Terminal>>>,
    next: AtomicU64,
}

pub struct Terminal {
    output: Mutex<Output>,
    exited: watch::Receiver<Option<TerminalExitStatus>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
}

struct Output {
    text: String,
    /// Bytes kept at most (the oldest are dropped beyond it).
    limit: Option<usize>,
    truncated: bool,
}

impl Terminals {
    pub fn create(
        &self,
        params: &CreateTerminalRequest,
        cwd: &std::path::Path,
    ) -> Result<TerminalId, RequestError> {
        let terminal = Terminal::start(params, cwd).map_err(RequestError::internal)?;
        let id = TerminalId::from(format!(
            "terminal-{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        self.lock().insert(id.clone(), terminal);
        Ok(id)
    }

    pub fn get(&self, id: &TerminalId) -> Result<Arc<Terminal>, RequestError> {
        self.lock()
            .get(id)
            .cloned()
            .ok_or_else(|| RequestError::resource_not_found(Some(id.as_ref())))
    }

    pub fn release(&self, id: &TerminalId) {
        if let Some(terminal) = self.lock().remove(id) {
            terminal.kill();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TerminalId, Arc<Terminal>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Terminal {
    fn start(params: &CreateTerminalRequest, cwd: &std::path::Path) -> std::io::Result<Arc<Self>> {
        let mut command = tokio::process::Command::new(&params.command);
        command
            .args(params.args.iter().flatten())
            .current_dir(params.cwd.as_deref().map_or(cwd, std::path::Path::new))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for variable in params.env.iter().flatten() {
            command.env(&variable.name, &variable.value);
        }
        let mut child = command.spawn()?;
        let (kill, killed) = oneshot::channel();
        let (exit_tx, exited) = watch::channel(None);
        let terminal = Arc::new(Self {
            output: Mutex::new(Output {
                text: String::new(),
                limit: params.output_byte_limit.map(|limit| limit as usize),
                truncated: false,
            }),
            exited,
            kill: Mutex::new(Some(kill)),
        });
        let readers = [
            collect(child.stdout.take().map(|s| Box::new(s) as _), terminal.clone()),
            collect(child.stderr.take().map(|s| Box::new(s) as _), terminal.clone()),
        ];
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
                exit.exit_code = status.code().map(|code| code as u32);
                exit.signal = status.signal().map(|signal| format!("signal {signal}"));
            }
            let _ = exit_tx.send(Some(exit));
        });
        Ok(terminal)
    }

    /// The output so far, whether it was cut, and the exit status if it exited.
    pub fn output(&self) -> (String, bool, Option<TerminalExitStatus>) {
        let output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        (
            output.text.clone(),
            output.truncated,
            self.exited.borrow().clone(),
        )
    }

    pub async fn wait(&self) -> TerminalExitStatus {
        let mut exited = self.exited.clone();
        let status = match exited.wait_for(Option::is_some).await {
            Ok(status) => status.clone().unwrap_or_default(),
            Err(_) => TerminalExitStatus::default(),
        };
        status
    }

    pub fn kill(&self) {
        if let Some(kill) = self.kill.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = kill.send(());
        }
    }

    fn append(&self, bytes: &[u8]) {
        let mut output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        output.text.push_str(&String::from_utf8_lossy(bytes));
        if let Some(limit) = output.limit {
            if output.text.len() > limit {
                let mut cut = output.text.len() - limit;
                while !output.text.is_char_boundary(cut) {
                    cut += 1;
                }
                output.text.drain(..cut);
                output.truncated = true;
            }
        }
    }
}

fn collect(
    stream: Option<Box<dyn tokio::io::AsyncRead + Send + Unpin>>,
    terminal: Arc<Terminal>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(mut stream) = stream else { return };
        let mut buffer = [0u8; 8192];
        while let Ok(read) = stream.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            terminal.append(&buffer[..read]);
        }
    })
}
