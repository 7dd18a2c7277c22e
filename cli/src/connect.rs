//! `acp-engine connect`: this process's stdin/stdout bridged to a remote
//! agent (WebSocket or Streamable HTTP), so that an editor that only spawns processes can use
//! one (configure `acp-engine connect ws://host:port/acp` as the agent).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::transport::{BoxReader, BoxWriter};
use acp_engine::Transport;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use crate::args::{self, Args, Failure};

const HELP: &str = "\
usage: acp-engine connect [options] URL

Connects to the remote agent at URL and bridges this process's stdin and
stdout to it, one JSON-RPC message per line. URL is ws:// or wss://
(WebSocket) or http:// or https:// (Streamable HTTP), as `acp-engine serve`
and the official SDKs' servers serve them.
When stdin ends, every request sent is still answered on stdout before
the connection closes. Exits 0 when the agent closes the connection or
stdin ends, 1 when the connection fails (the reason on stderr).

options:
  --token TOKEN           send `Authorization: Bearer TOKEN`; or set ACP_ENGINE_TOKEN
  --max-message-size N    the largest message accepted, in bytes (default 64 MiB)
  --ca-file PEM           trust these certificates too (a private CA, a self-signed server)
  -h, --help              this text
";

/// How long to wait for the agent to close after our stdin ended.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let args = Args::parse(argv, &["token", "max-message-size", "ca-file"])?;
    if args.help {
        print!("{HELP}");
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
    let url = url.clone();
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(async move {
        let (from_agent, to_agent) = remote::connect(&url, &options)
            .await
            .map_err(|error| Failure::Run(format!("cannot connect to {url}: {error}")))?
            .into_streams();
        let (stdin, stdout) = Transport::stdio().into_streams();
        let owed = Arc::new(Owed::default());
        let mut down = tokio::spawn(relay_down(from_agent, stdout, owed.clone()));
        let up = relay_up(stdin, to_agent, owed);
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

/// The ids of the requests sent to the agent that it has not answered yet.
#[derive(Default)]
struct Owed {
    ids: Mutex<HashSet<String>>,
    answered: Notify,
}

/// The parts of a message that say whether it is a request or a response.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<IgnoredAny>,
}

fn head(line: &[u8]) -> Option<Head<'_>> {
    serde_json::from_slice(line).ok()
}

/// Lines from stdin to the agent, remembering the requests among them;
/// at the end of stdin, wait for every answer still owed, then close.
async fn relay_up(stdin: BoxReader, mut to_agent: BoxWriter, owed: Arc<Owed>) {
    let mut lines = BufReader::new(stdin).split(b'\n');
    while let Ok(Some(mut line)) = lines.next_segment().await {
        if let Some(Head {
            id: Some(id),
            method: Some(_),
        }) = head(&line)
        {
            owed.ids
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id.get().to_owned());
        }
        line.push(b'\n');
        if to_agent.write_all(&line).await.is_err() {
            return;
        }
    }
    loop {
        let answered = owed.answered.notified();
        if owed.ids.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
            break;
        }
        answered.await;
    }
    let _ = to_agent.shutdown().await;
}

/// Lines from the agent to stdout, striking off the answers among them.
async fn relay_down(from_agent: BoxReader, mut stdout: BoxWriter, owed: Arc<Owed>) -> std::io::Result<()> {
    let mut lines = BufReader::new(from_agent).split(b'\n');
    while let Some(mut line) = lines.next_segment().await? {
        if let Some(Head {
            id: Some(id),
            method: None,
        }) = head(&line)
        {
            let mut ids = owed.ids.lock().unwrap_or_else(|p| p.into_inner());
            if ids.remove(id.get()) && ids.is_empty() {
                owed.answered.notify_waiters();
            }
        }
        line.push(b'\n');
        stdout.write_all(&line).await?;
        stdout.flush().await?;
    }
    Ok(())
}
