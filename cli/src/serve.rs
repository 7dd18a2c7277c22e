//! `acp-engine serve`: any stdio agent behind a server (WebSocket and
//! Streamable HTTP on one endpoint), one agent process per connection,
//! killed when its connection ends.

use std::io::Write;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use acp_engine::remote::{Lines, OnRefused, Peer, PeerTransport, Refusal, ServeOptions, Server, ServerTls};
use acp_engine::ProcessTree;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::args::{self, Args, Failure};

mod log;

const HELP: &str = "\
usage: acp-engine serve --listen HOST:PORT [options] -- AGENT_COMMAND [ARGS...]

Serves the agent at HOST:PORT/acp over both remote transports of the
official SDKs: WebSocket (one JSON-RPC message per text frame) and
Streamable HTTP (POST in, server-sent events out). Every connection starts
its own agent process, whose stdin/stdout carry that connection. When the
client leaves (or the agent closes its output), the agent's stdin closes
and it has 2 s to exit; then its process group (the agent and everything
it started) gets SIGTERM, and SIGKILL 1 s later.

The first two lines on stdout are the URLs served, `ws://HOST:PORT/acp` and
`http://HOST:PORT/acp` (wss:// and https:// with TLS; with port 0, the port
the system chose). Connections, their ends, refused requests (401, 403,
404, 503) and failures are logged on stderr, as text or (--log-json) as
one JSON object per line.

SIGTERM drains: no new connection is taken (503, and /readyz says so),
each connection ends once its agent has answered every request of its
client's, and what is left when the drain timeout passes is ended; then
serve exits 0. SIGINT (Ctrl-C) ends every connection at once.

options:
  --listen HOST:PORT      where to listen (required; loopback unless you mean it)
  --token TOKEN           require `Authorization: Bearer TOKEN` (401 otherwise, before any
                          agent starts); or set ACP_ENGINE_TOKEN
  --path PATH             the endpoint (default /acp; other paths get 404)
  --health-path PATH      liveness: a GET here answers 200 while serve runs, with its status
                          (ok, full, draining) and the connections open; no token needed
                          (default /healthz; an empty PATH for none)
  --ready-path PATH       readiness, for a load balancer: the same answer, 503 when full or
                          draining (default /readyz; an empty PATH for none)
  --metrics-path PATH     Prometheus metrics (connections, sessions, messages and bytes each
                          way, refusals, resumes, requests in flight, held output); the token
                          is needed if set (default /metrics; an empty PATH for none)
  --drain-timeout-ms N    on SIGTERM, end what is still busy after N ms (default 30000)
  --log-json              log on stderr as JSON lines: {\"time\":SECONDS,\"event\":NAME,...}
  --max-connections N     connections at once (default 1024; beyond it 503)
  --max-message-size N    the largest message a client may send, in bytes (default 64 MiB)
  --output-stall-timeout-ms N
                          drop a connection whose client reads nothing for N ms while
                          output waits (default 60000; 0: never)
  --max-buffered-bytes N  Streamable HTTP: output held per connection for its client before
                          the agent's output waits (default 64 MiB)
  --idle-timeout-ms N     end a Streamable HTTP connection with no event stream open and
                          nothing sent, or a resumable WebSocket whose socket broke, after
                          N ms (default 60000; 0: never); until then a client that lost
                          its network can come back to the same agent
  --max-replay-bytes N    output kept per connection after it was sent, for a client that
                          comes back with Last-Event-ID (Streamable HTTP, resumable
                          WebSocket; default 4 MiB; a resume needing more gets 410)
  --max-id-length N       Streamable HTTP: the longest session or request id a client may
                          send, in bytes (default 1024; longer gets 400)
  --max-buffered-session-streams N
                          Streamable HTTP: sessions of a connection holding output no client
                          reads (default 1024; one more ends the connection)
  --tls-cert PEM --tls-key PEM
                          serve wss:// and https:// with this certificate chain and key
  --keep-alive-ms N       ping each WebSocket and comment on each idle event stream every N ms
                          (default 15000; 0: never); a WebSocket silent for three intervals
                          is taken as broken (a network that drops traffic)
  --attach                let several clients share a session: a session/load of a session
                          live on another connection attaches as an observer (its history,
                          every update, permission requests: first answer wins; it may not
                          prompt). docs/session-attach.md
  -h, --help              this text
";

/// How long an agent may take to exit after its stdin closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// After an agent's grace: SIGTERM, and SIGKILL this long after.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// The agents running, so that serve outlives their stopping.
#[derive(Default)]
struct Agents {
    running: std::sync::atomic::AtomicUsize,
    stopped: tokio::sync::Notify,
}

impl Agents {
    async fn all_stopped(&self) {
        loop {
            let stopped = self.stopped.notified();
            tokio::pin!(stopped);
            stopped.as_mut().enable();
            if self.running.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return;
            }
            stopped.await;
        }
    }
}

/// One agent running, until dropped.
struct Running(Arc<Agents>);

impl Running {
    fn new(agents: &Arc<Agents>) -> Self {
        agents.running.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(agents.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.0.stopped.notify_waiters();
    }
}

/// How long SIGTERM's drain waits for busy connections, by default.
const DRAIN_TIMEOUT_MS: usize = 30_000;

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let args = Args::parse_with_flags(
        argv,
        &[
            "listen",
            "token",
            "path",
            "health-path",
            "ready-path",
            "metrics-path",
            "drain-timeout-ms",
            "max-connections",
            "max-message-size",
            "output-stall-timeout-ms",
            "max-buffered-bytes",
            "idle-timeout-ms",
            "max-replay-bytes",
            "max-id-length",
            "max-buffered-session-streams",
            "keep-alive-ms",
            "tls-cert",
            "tls-key",
        ],
        &["log-json", "attach"],
    )?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    if args.flag("log-json") {
        log::use_json();
    }
    let listen = args
        .value("listen")
        .ok_or_else(|| Failure::Usage("serve needs --listen HOST:PORT".to_owned()))?
        .to_owned();
    if args.rest.is_empty() {
        return Err(Failure::Usage(
            "serve needs the agent's command after --".to_owned(),
        ));
    }
    let mut options = ServeOptions {
        bearer_token: args::token(&args),
        // Refused before any agent starts: said, so an operator sees why a
        // client gets nowhere.
        on_refused: Some(OnRefused(Arc::new(|refusal: &Refusal| {
            log::event(
                "refused",
                json!({"peer": refusal.address.to_string(), "status": refusal.status, "reason": refusal.reason}),
                || {
                    format!(
                        "{} refused: {} ({})",
                        refusal.address, refusal.status, refusal.reason
                    )
                },
            )
        }))),
        ..ServeOptions::default()
    };
    if let Some(path) = args.value("path") {
        options.path = path.to_owned();
    }
    if let Some(path) = args.value("health-path") {
        options.health_path = (!path.is_empty()).then(|| path.to_owned());
    }
    if let Some(path) = args.value("ready-path") {
        options.ready_path = (!path.is_empty()).then(|| path.to_owned());
    }
    if let Some(path) = args.value("metrics-path") {
        options.metrics_path = (!path.is_empty()).then(|| path.to_owned());
    }
    let drain_timeout =
        Duration::from_millis(args.number("drain-timeout-ms")?.unwrap_or(DRAIN_TIMEOUT_MS) as u64);
    if let Some(max) = args.number("max-connections")? {
        options.max_connections = max;
    }
    if let Some(max) = args.number("max-message-size")? {
        options.max_message_size = max;
    }
    if let Some(ms) = args.number("output-stall-timeout-ms")? {
        options.output_stall_timeout = (ms > 0).then(|| Duration::from_millis(ms as u64));
    }
    if let Some(max) = args.number("max-buffered-bytes")? {
        options.max_buffered_bytes = max;
    }
    if let Some(ms) = args.number("idle-timeout-ms")? {
        options.idle_timeout = (ms > 0).then(|| Duration::from_millis(ms as u64));
    }
    if let Some(max) = args.number("max-replay-bytes")? {
        options.max_replay_bytes = max;
    }
    if let Some(max) = args.number("max-id-length")? {
        options.max_id_length = max;
    }
    if let Some(max) = args.number("max-buffered-session-streams")? {
        options.max_buffered_session_streams = max;
    }
    if let Some(ms) = args.number("keep-alive-ms")? {
        options.keep_alive_interval = (ms > 0).then(|| Duration::from_millis(ms as u64));
    }
    options.attach = args.flag("attach");
    match (args.value("tls-cert"), args.value("tls-key")) {
        (Some(cert), Some(key)) => {
            let tls =
                ServerTls::from_pem_files(cert, key).map_err(|error| Failure::Run(error.to_string()))?;
            options.tls = Some(tls);
        }
        (None, None) => {}
        _ => return Err(Failure::Usage("--tls-cert and --tls-key go together".to_owned())),
    }
    crate::agent_command::require(&args.rest)?;
    let agent = args.rest.clone();
    crate::runtime()?.block_on(async move {
        let agents = Arc::new(Agents::default());
        let counted = agents.clone();
        let server = Server::bind(&listen, options, move |lines, peer| {
            let running = Running::new(&counted);
            let agent = agent.clone();
            tokio::spawn(async move {
                run_agent(agent, lines, peer).await;
                drop(running);
            });
        })
        .await
        .map_err(|error| Failure::Run(format!("cannot listen on {listen}: {error}")))?;
        // Whoever started serve may stop reading its output once it has the
        // URLs: that must not end the server.
        let _ = writeln!(std::io::stdout(), "{}\n{}", server.websocket_url(), server.http_url());
        let mut server = server;
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|error| Failure::Run(error.to_string()))?;
        let (served, drain) = tokio::select! {
            served = server.wait() => (served.map_err(|error| Failure::Run(format!("serving failed: {error}"))), false),
            _ = tokio::signal::ctrl_c() => (Ok(()), false),
            _ = terminate.recv() => (Ok(()), true),
        };
        // Every connection ends, so every agent's stdin closes; dropping the
        // runtime then kills any agent still running.
        if drain {
            let timeout_ms = drain_timeout.as_millis() as u64;
            log::event("draining", json!({ "timeout_ms": timeout_ms }), || {
                format!("draining (up to {timeout_ms} ms)")
            });
            server.drain(drain_timeout).await;
        } else {
            server.shutdown().await;
        }
        // Each agent has its grace to exit before serve does (a runtime
        // dropped under it would kill it at once).
        let _ = tokio::time::timeout(EXIT_GRACE + STOP_GRACE, agents.all_stopped()).await;
        served
    })
}

/// One connection: start the agent and move bytes until either side ends;
/// then the agent (and everything it started) gets its grace to exit and
/// is stopped: an agent that ignores the end of its input is not left
/// running after its client left.
async fn run_agent(command: Vec<String>, lines: Lines, peer: Peer) {
    let mut spawn = Command::new(&command[0]);
    spawn
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut agent = match ProcessTree::spawn(&mut spawn) {
        Ok(agent) => agent,
        Err(error) => {
            log::event(
                "agent_failed",
                json!({"peer": peer.address.to_string(), "command": command[0], "error": error.to_string()}),
                || format!("{}: cannot start {:?}: {error}", peer.address, command[0]),
            );
            return;
        }
    };
    let (transport, transport_name) = match peer.transport {
        PeerTransport::WebSocket => ("WebSocket", "websocket"),
        PeerTransport::StreamableHttp => ("Streamable HTTP", "streamable_http"),
    };
    let pid = agent.id().unwrap_or(0);
    log::event(
        "connected",
        json!({"peer": peer.address.to_string(), "transport": transport_name, "agent_pid": pid}),
        || format!("{} connected over {transport} (agent pid {pid})", peer.address),
    );
    let child = agent.child_mut();
    let (mut stdin, mut stdout) = (
        child.stdin.take().expect("piped"),
        child.stdout.take().expect("piped"),
    );
    let (mut from_client, mut to_client) = tokio::io::split(lines);
    let up = async move {
        let _ = tokio::io::copy(&mut from_client, &mut stdin).await;
    };
    let down = async move {
        match tokio::io::copy(&mut stdout, &mut to_client).await {
            Ok(_) => {
                let _ = to_client.shutdown().await;
                "the agent closed its output".to_owned()
            }
            // Reading a pipe hardly fails: this is the client's side
            // (gone, or dropped for not reading).
            Err(error) => format!("the client took no more output ({error})"),
        }
    };
    // Whichever ends first ends the relay; dropping the other closes the
    // agent's stdin (and our end of its stdout).
    let ended = tokio::select! {
        _ = up => "the client left".to_owned(),
        ended = down => ended,
    };
    let status = agent.stop(EXIT_GRACE).await;
    let agent_status = status.map_or_else(|| "gone".to_owned(), |status| status.to_string());
    log::event(
        "disconnected",
        json!({"peer": peer.address.to_string(), "agent_pid": pid, "reason": ended, "agent_status": agent_status}),
        || format!("{} disconnected: {ended}; agent {agent_status}", peer.address),
    );
}
