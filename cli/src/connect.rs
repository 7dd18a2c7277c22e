//! `acp-engine connect`: this process's stdin/stdout bridged to a remote
//! agent (WebSocket or Streamable HTTP), so that an editor that only spawns processes can use
//! one (configure `acp-engine connect ws://host:port/acp` as the agent).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::transport::{BoxReader, BoxWriter};
use acp_engine::Transport;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::Notify;

use crate::args::{self, Args, Failure};

const HELP: &str = "\
usage: acp-engine connect [options] URL

Connects to the remote agent at URL and bridges this process's stdin and
stdout to it, one JSON-RPC message per line. URL is ws:// or wss://
(WebSocket) or http:// or https:// (Streamable HTTP), as `acp-engine serve`
and the official SDKs' servers serve them.
When stdin ends, every request sent is still answered on stdout before
the connection closes (unless the agent then says nothing for 60 s). Exits 0 when the agent closes the connection or
stdin ends, 1 when the connection fails (the reason on stderr).

options:
  --token TOKEN           send `Authorization: Bearer TOKEN`; or set ACP_ENGINE_TOKEN
  --max-message-size N    the largest message accepted, in bytes (default 64 MiB)
  --ca-file PEM           trust these certificates too (a private CA, a self-signed server)
  --reconnect-timeout-ms N
                          reopen a broken Streamable HTTP event stream after the last event
                          received, or resume a broken WebSocket (the server sends what was
                          lost), and retry what cannot reach the server, for up to N ms
                          (default 0: end at the first break)
  --connect-timeout-ms N  give the server N ms to take the connection (TCP, TLS and the
                          WebSocket upgrade) before failing (default 10000; 0: wait for ever)
  -h, --help              this text
";

/// How long to wait for the agent to close after our stdin ended.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let args = Args::parse(
        argv,
        &[
            "token",
            "max-message-size",
            "ca-file",
            "reconnect-timeout-ms",
            "connect-timeout-ms",
        ],
    )?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    let [url] = args.rest.as_slice() else {
        return Err(Failure::Usage("connect needs one URL".to_owned()));
    };
    let mut options = ConnectOptions {
        bearer_token: args::token(&args),
        ..ConnectOptions::default()
    };
    if let Some(max) = args.number("max-message-size")? {
        options.max_message_size = max;
    }
    options.ca_file = args.value("ca-file").map(Into::into);
    if let Some(ms) = args.number("reconnect-timeout-ms")? {
        options.reconnect_timeout = (ms > 0).then(|| Duration::from_millis(ms as u64));
    }
    if let Some(ms) = args.number("connect-timeout-ms")? {
        options.connect_timeout = (ms > 0).then(|| Duration::from_millis(ms as u64));
    }
    let url = url.clone();
    let max_size = options.max_message_size;
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(async move {
        let (from_agent, to_agent) = remote::connect(&url, &options)
            .await
            .map_err(|error| Failure::Run(format!("cannot connect to {url}: {error}")))?
            .into_streams();
        let (stdin, stdout) = Transport::stdio().into_streams();
        let owed = Arc::new(Owed::new());
        let mut down = tokio::spawn(relay_down(from_agent, stdout, owed.clone()));
        let up = relay_up(stdin, to_agent, owed, max_size);
        let down = tokio::select! {
            down = &mut down => down,
            _ = up => {
                // Our side ended and every answer owed to it arrived (`relay_up`):
                // let the agent's last messages arrive.
                match tokio::time::timeout(CLOSE_GRACE, down).await {
                    Ok(down) => down,
                    Err(_) => Ok(Ok(())),
                }
            }
        };
        // The connection failing (not the agent ending it) is a failure.
        match down {
            Ok(Err(error)) if error.kind() == std::io::ErrorKind::ConnectionAborted => {
                Err(Failure::Run(format!("{url}: {error}")))
            }
            _ => Ok(()),
        }
    });
    // A read of stdin in progress must not keep the process alive.
    runtime.shutdown_background();
    outcome
}

/// The requests sent to the agent that it has not answered yet.
struct Owed {
    ids: Mutex<HashSet<String>>,
    answered: Notify,
    /// When the agent last sent anything.
    last_heard: Mutex<Instant>,
}

impl Owed {
    fn new() -> Self {
        Self {
            ids: Mutex::default(),
            answered: Notify::new(),
            last_heard: Mutex::new(Instant::now()),
        }
    }

    fn heard(&self) {
        *self.last_heard.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// Strike off the request `line` answers, if it answers an owed one
    /// (nothing owed: the line is not even read).
    fn strike(&self, line: &[u8]) {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if ids.is_empty() {
            return;
        }
        if let Some(key) = response_key(line) {
            if ids.remove(&key) && ids.is_empty() {
                self.answered.notify_waiters();
            }
        }
    }

    fn silent_for(&self) -> Duration {
        self.last_heard
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }
}

/// How long the end of stdin waits for owed answers while the agent says
/// nothing at all.
const OWED_PATIENCE: Duration = Duration::from_secs(60);

/// The parts of a message that say whether it is a request or a response.
#[derive(Deserialize)]
struct Head {
    jsonrpc: Option<IgnoredAny>,
    id: Option<Value>,
    method: Option<Value>,
}

/// A message's id as the key of an owed answer: a valid request's (a string
/// or an integer, as the agent will echo it) or a response's; None for
/// anything else (the agent answers an invalid request with id null).
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(text) => Some(format!("s{text}")),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(format!("n{number}")),
        _ => None,
    }
}

/// The owed-answer key of a valid request in `line` (UTF-8, within the size
/// the connection takes: the agent answers anything else with id null).
fn request_key(line: &[u8], max_size: usize) -> Option<String> {
    if line.len() > max_size || std::str::from_utf8(line).is_err() {
        return None;
    }
    let head: Head = serde_json::from_slice(line).ok()?;
    let valid = head.jsonrpc.is_some() && head.method.as_ref().is_some_and(Value::is_string);
    valid.then(|| head.id.as_ref().and_then(id_key)).flatten()
}

/// The owed-answer key of a response in `line`.
fn response_key(line: &[u8]) -> Option<String> {
    let head: Head = serde_json::from_slice(line).ok()?;
    head.method
        .is_none()
        .then(|| head.id.as_ref().and_then(id_key))
        .flatten()
}

/// The next line of `reader` into `line` (emptied first), newline-ended even
/// when the stream ended without one; false at the end.
async fn next_line(reader: &mut BufReader<BoxReader>, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    if reader.read_until(b'\n', line).await? == 0 {
        return Ok(false);
    }
    if line.last() != Some(&b'\n') {
        line.push(b'\n');
    }
    Ok(true)
}

/// Lines from stdin to the agent, remembering the requests among them;
/// at the end of stdin, wait for every answer still owed, then close.
/// Written in batches: flushed when nothing more is already read.
async fn relay_up(stdin: BoxReader, to_agent: BoxWriter, owed: Arc<Owed>, max_size: usize) {
    let (mut reader, mut to_agent) = (BufReader::new(stdin), BufWriter::new(to_agent));
    let mut line = Vec::new();
    while let Ok(true) = next_line(&mut reader, &mut line).await {
        if let Some(key) = request_key(line.trim_ascii_end(), max_size) {
            owed.ids.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
        }
        let written = to_agent.write_all(&line).await;
        if written.is_err() || (reader.buffer().is_empty() && to_agent.flush().await.is_err()) {
            return;
        }
    }
    if to_agent.flush().await.is_err() {
        return;
    }
    // Every answer owed, unless the agent falls silent for OWED_PATIENCE (a
    // turn waiting on a request of its own that nobody is left to answer).
    loop {
        let answered = owed.answered.notified();
        if owed.ids.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
            break;
        }
        let silent = owed.silent_for();
        if silent >= OWED_PATIENCE {
            break;
        }
        let _ = tokio::time::timeout(OWED_PATIENCE - silent, answered).await;
    }
    let _ = to_agent.shutdown().await;
}

/// Lines from the agent to stdout, striking off the answers among them
/// (read only while something is owed); written in batches as `relay_up`.
async fn relay_down(from_agent: BoxReader, stdout: BoxWriter, owed: Arc<Owed>) -> std::io::Result<()> {
    let (mut reader, mut stdout) = (BufReader::new(from_agent), BufWriter::new(stdout));
    let mut line = Vec::new();
    while next_line(&mut reader, &mut line).await? {
        owed.heard();
        owed.strike(line.trim_ascii_end());
        stdout.write_all(&line).await?;
        if reader.buffer().is_empty() {
            stdout.flush().await?;
        }
    }
    stdout.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_requests_the_agent_answers_by_id_are_owed() {
        let key = |line: &[u8]| request_key(line, 1024);
        assert_eq!(
            key(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#),
            Some("n1".into())
        );
        assert_eq!(
            key(br#"{"jsonrpc":"2.0","id":"1","method":"m"}"#),
            Some("s1".into())
        );
        // Answered with id null, or not requests at all.
        for line in [
            &br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#[..],
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":7,"id":8,"method":"m"}"#,
            br#"{"id":1,"method":"m"}"#,
            br#"[{"jsonrpc":"2.0","id":4,"method":"m"}]"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"x\":\"\xff\"}",
            br#"{"jsonrpc":"2.0","method":"m"}"#,
        ] {
            assert_eq!(key(line), None, "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(
            request_key(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#, 10),
            None,
            "too large"
        );
        assert_eq!(
            response_key(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Some("n1".into())
        );
    }
}
