//! `acp-engine trace`: a transparent proxy between an editor and an agent
//! that records every message, with its validation verdict, as JSON lines.
//! The editor runs `acp-engine trace -- my-agent` as its agent command.
//!
//! Bytes are forwarded as they arrive, unchanged (`pump.rs`); a copy goes
//! to the recorder task, which splits lines, judges each message
//! (`inspect.rs`) and writes the trace (`record.rs`), off the forwarding
//! path.

mod inspect;
mod pump;
mod record;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::{ProcessTree, Transport};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::Command;
use tokio::sync::mpsc;

use crate::args::{self, Args, Failure};
pub use inspect::Direction;

const HELP: &str = "\
usage: acp-engine trace [options] -- AGENT_COMMAND [ARGS...]
       acp-engine trace [options] -- URL   (ws://, wss://, http://, https://)

Runs the agent (or connects to a remote agent at a ws://, wss://, http://
or https:// URL) and passes this process's stdin and stdout through to it,
byte for byte: configure
`acp-engine trace -- my-agent` as the agent command in an editor. Every
message each way is recorded as one JSON line: sequence number, time,
direction, size, kind, id, method, session, the latency of a response, the
verdict against the ACP schema and the message itself.

Verdicts: `ok`, or `violation` with the problems found: malformed (not a
JSON-RPC message), unknown_method, invalid_params, duplicate_request_id,
unknown_response_id, update_after_turn (a session/update with turn content
after the turn's session/prompt was answered).

Exits with the agent's exit status (1 if it was killed by a signal, or the
remote connection failed); the trace's path and a summary go to stderr.
When the editor's input ends, the agent has 2 s to exit; then its process
group (the agent and everything it started, as through npx) is stopped.
Stopped by a signal (SIGINT, SIGTERM, SIGHUP), trace kills the agent's
process group and exits 128 + the signal.

options:
  --out FILE      the trace (default: acp-engine-trace-TIME-PID.jsonl in the
                  temporary directory)
  --token TOKEN   for a remote agent: send `Authorization: Bearer TOKEN`; or set
                  ACP_ENGINE_TOKEN
  -h, --help      this text
";

/// How long the agent may take to exit after its stdin closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Chunks in flight to the recorder before forwarding waits for it.
const TAP_CAPACITY: usize = 1024;

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let args = Args::parse(argv, &["out", "token"])?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    if args.rest.is_empty() {
        return Err(Failure::Usage(
            "trace needs the agent's command (or URL) after --".to_owned(),
        ));
    }
    let out = args.value("out").map(PathBuf::from).unwrap_or_else(default_out);
    let token = args::token(&args);
    let agent = args.rest.clone();
    let runtime = crate::runtime()?;
    let status = runtime.block_on(crate::interrupt::unless_interrupted(run(agent, token, out)));
    // Nothing may keep the process alive now (a read of stdin in progress).
    runtime.shutdown_background();
    match status? {
        0 => Ok(()),
        code => Err(Failure::Exit(code)),
    }
}

fn default_out() -> PathBuf {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    std::env::temp_dir().join(format!("acp-engine-trace-{seconds}-{}.jsonl", std::process::id()))
}

/// The agent's end: a child process, or a remote connection.
struct AgentEnd {
    reader: Box<dyn AsyncRead + Send + Unpin>,
    writer: Box<dyn AsyncWrite + Send + Unpin>,
    child: Option<ProcessTree>,
}

async fn open_agent(agent: &[String], token: Option<String>) -> Result<AgentEnd, Failure> {
    if let [url] = agent {
        if remote::is_url(url) {
            let options = ConnectOptions {
                bearer_token: token,
                ..ConnectOptions::default()
            };
            let (reader, writer) = remote::connect(url, &options)
                .await
                .map_err(|error| Failure::Run(format!("cannot connect to {url}: {error}")))?
                .into_streams();
            return Ok(AgentEnd {
                reader,
                writer,
                child: None,
            });
        }
    }
    let mut command = Command::new(&agent[0]);
    command
        .args(&agent[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut tree = ProcessTree::spawn(&mut command)
        .map_err(|error| Failure::Run(format!("cannot start {:?}: {error}", agent[0])))?;
    let child = tree.child_mut();
    Ok(AgentEnd {
        writer: Box::new(child.stdin.take().expect("piped")),
        reader: Box::new(child.stdout.take().expect("piped")),
        child: Some(tree),
    })
}

/// Move bytes both ways until the agent's output ends (or the editor's
/// input ends and the agent exits); the agent's exit status.
async fn run(agent: Vec<String>, token: Option<String>, out: PathBuf) -> Result<u8, Failure> {
    let file = std::fs::File::create(&out)
        .map_err(|error| Failure::Run(format!("cannot write {}: {error}", out.display())))?;
    let AgentEnd {
        reader: from_agent,
        writer: to_agent,
        mut child,
    } = open_agent(&agent, token).await?;
    let (from_editor, to_editor) = Transport::stdio().into_streams();
    let (tap, taps) = mpsc::channel(TAP_CAPACITY);
    let start = Instant::now();
    let recorder = record::spawn(taps, file, start);
    let mut up = tokio::spawn(pump::forward(
        from_editor,
        to_agent,
        Direction::ClientToAgent,
        tap.clone(),
    ));
    let mut down = tokio::spawn(pump::forward(
        from_agent,
        to_editor,
        Direction::AgentToClient,
        tap,
    ));
    let editor_done = tokio::select! {
        _ = &mut down => false,
        _ = &mut up => {
            // The editor is done: the agent's stdin is closed; let it finish.
            let _ = tokio::time::timeout(EXIT_GRACE, &mut down).await;
            true
        }
    };
    if let (false, Some(child)) = (editor_done, child.as_mut()) {
        // The agent closed its output: the editor may still write to it
        // until it exits.
        tokio::select! {
            _ = child.wait() => {}
            _ = &mut up => {}
        }
    }
    // Whichever is still running stops (and drops its end of the tap).
    up.abort();
    down.abort();
    let status = match child.as_mut() {
        Some(child) => exit_status(child).await,
        None => 0,
    };
    // Every sender is gone once both pumps ended: the recorder finishes.
    let summary = tokio::task::spawn_blocking(move || recorder.join())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| Failure::Run("the recorder failed".to_owned()))?
        .map_err(|error| Failure::Run(format!("cannot write {}: {error}", out.display())))?;
    errln!(
        "acp-engine trace: {} messages, {} with violations; trace in {}",
        summary.messages,
        summary.violations,
        out.display()
    );
    Ok(status)
}

/// Wait (a grace period, then stop its process tree) for the agent; its
/// exit code, or 1.
async fn exit_status(child: &mut ProcessTree) -> u8 {
    child
        .stop(EXIT_GRACE)
        .await
        .and_then(|status| status.code())
        .map_or(1, |code| u8::try_from(code).unwrap_or(1))
}
