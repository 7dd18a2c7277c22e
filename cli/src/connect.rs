//! `acp-engine connect`: this process's stdin/stdout bridged to a remote
//! agent (WebSocket or Streamable HTTP), so that an editor that only spawns processes can use
//! one (configure `acp-engine connect ws://host:port/acp` as the agent).

use std::time::Duration;

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::Transport;
use tokio::io::AsyncWriteExt;

use crate::args::{self, Args, Failure};

const HELP: &str = "\
usage: acp-engine connect [options] URL

Connects to the remote agent at URL and bridges this process's stdin and
stdout to it, one JSON-RPC message per line. URL is ws:// or wss://
(WebSocket) or http:// or https:// (Streamable HTTP), as `acp-engine serve`
and the official SDKs' servers serve them.
Exits 0 when the agent closes the connection or stdin ends, 1 when the
connection fails (the reason on stderr).

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
        let (mut from_agent, mut to_agent) = remote::connect(&url, &options)
            .await
            .map_err(|error| Failure::Run(format!("cannot connect to {url}: {error}")))?
            .into_streams();
        let (mut stdin, mut stdout) = Transport::stdio().into_streams();
        let mut down = tokio::spawn(async move {
            let copied = tokio::io::copy(&mut from_agent, &mut stdout).await;
            let _ = stdout.flush().await;
            copied.map(drop)
        });
        let up = async move {
            let _ = tokio::io::copy(&mut stdin, &mut to_agent).await;
            let _ = to_agent.shutdown().await;
        };
        let down = tokio::select! {
            down = &mut down => down,
            _ = up => {
                // Our side ended: let the agent's last messages arrive.
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
