//! Shared test helpers: a raw peer that speaks bytes to a `Connection` over
//! a real socket pair, and paths to the example binaries.
#![allow(dead_code)]

pub mod cut_proxy;
pub mod mcp;
pub mod raw_http;
pub mod schema;
pub mod scrape;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use acp_engine::{Connection, ConnectionBuilder, Transport};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

/// Generous bound for "this must happen": a hang guard, not a speed test.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The test's side of the wire: raw lines in, raw lines out.
pub struct RawPeer {
    lines: BufReader<OwnedReadHalf>,
    writer: Option<OwnedWriteHalf>,
    /// Check every message both ways against the ACP schema.
    checked: bool,
    /// Methods of the requests this peer sent, by id (to check results).
    sent: HashMap<String, String>,
}

/// A transport for the engine and the raw peer on its other end.
pub fn raw_transport() -> (Transport, RawPeer) {
    let (ours, peer) = raw_socket();
    (Transport::from_stream(ours), peer)
}

/// One end of a socket pair, and the raw peer on its other end.
pub fn raw_socket() -> (UnixStream, RawPeer) {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    let (read, write) = theirs.into_split();
    let peer = RawPeer {
        lines: BufReader::new(read),
        writer: Some(write),
        checked: false,
        sent: HashMap::new(),
    };
    (ours, peer)
}

/// `raw_transport`, with the engine's end as a plain file descriptor (what
/// `Transport::from_fds` takes: the host can read it on its own thread).
pub fn raw_fd_transport() -> (Transport, RawPeer) {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socketpair");
    theirs.set_nonblocking(true).expect("non-blocking");
    let (read, write) = UnixStream::from_std(theirs).expect("register").into_split();
    let peer = RawPeer {
        lines: BufReader::new(read),
        writer: Some(write),
        checked: false,
        sent: HashMap::new(),
    };
    let ours = std::os::fd::OwnedFd::from(ours);
    let write = ours.try_clone().expect("dup");
    (Transport::from_fds(ours, write), peer)
}

/// Start `builder` on one end of a Unix socket pair and return the raw
/// other end.
pub fn connect_raw(builder: ConnectionBuilder) -> (Connection, RawPeer) {
    let (transport, peer) = raw_transport();
    (builder.connect(transport), peer)
}

impl RawPeer {
    /// Write bytes as they are (add the newline yourself).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.writer
            .as_mut()
            .expect("writer open")
            .write_all(bytes)
            .await
            .expect("write");
    }

    /// Write one line.
    pub async fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes()).await;
    }

    /// Read the next line as raw text.
    pub async fn recv_line(&mut self) -> String {
        let mut line = String::new();
        let read = tokio::time::timeout(PATIENCE, self.lines.read_line(&mut line))
            .await
            .expect("a line within the patience bound")
            .expect("read");
        assert!(read > 0, "stream ended while a line was expected");
        assert!(line.ends_with('\n'), "every frame ends with a newline: {line:?}");
        line.trim_end().to_owned()
    }

    /// Read the next line as JSON (schema-checked in checked mode).
    pub async fn recv(&mut self) -> Value {
        let line = self.recv_line().await;
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("invalid JSON from the engine: {e}: {line}"));
        if self.checked {
            let method = message
                .get("id")
                .and_then(|id| self.sent.get(&id.to_string()))
                .cloned();
            schema::checker().check_message(&message, method.as_deref());
        }
        message
    }

    /// Check every message both ways against the ACP schema from now on.
    pub fn checked(mut self) -> Self {
        self.checked = true;
        self
    }

    /// Send a request (schema-checked) and remember its method.
    pub async fn request(&mut self, id: Value, method: &str, params: Value) {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.checked {
            schema::checker().check_message(&message, None);
        }
        self.sent.insert(id.to_string(), method.to_owned());
        self.send(&message.to_string()).await;
    }

    /// Send a notification (schema-checked).
    pub async fn notify(&mut self, method: &str, params: Value) {
        let message = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params});
        if self.checked {
            schema::checker().check_message(&message, None);
        }
        self.send(&message.to_string()).await;
    }

    /// Answer a request the engine sent (the result is schema-checked
    /// against that request's method).
    pub async fn reply(&mut self, request: &Value, result: Value) {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        if self.checked {
            schema::checker().check_message(&message, request["method"].as_str());
        }
        self.send(&message.to_string()).await;
    }

    /// Assert nothing arrives for `ms` milliseconds.
    pub async fn expect_silence(&mut self, ms: u64) {
        let mut line = String::new();
        if let Ok(read) =
            tokio::time::timeout(Duration::from_millis(ms), self.lines.read_line(&mut line)).await
        {
            panic!("expected silence, got {read:?}: {line:?}");
        }
    }

    /// Expect the stream to end (the engine shut its side).
    pub async fn expect_eof(&mut self) {
        let mut line = String::new();
        let read = tokio::time::timeout(PATIENCE, self.lines.read_line(&mut line))
            .await
            .expect("EOF within the patience bound")
            .expect("read");
        assert_eq!(read, 0, "expected EOF, got {line:?}");
    }

    /// Close our writing side: the engine sees EOF.
    pub fn hang_up(&mut self) {
        self.writer = None;
    }
}

/// Path of an example binary of this crate, building it if needed.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let target = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    let path = target.join("examples").join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            // `make build`'s command: the same packages resolve the same
            // features, so nothing already built compiles again.
            .args(["build", "-q", "--workspace", "--lib", "--bins", "--examples"])
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building example {name}");
    }
    path
}

/// True once `pid` is gone: exited and reaped (no zombie left either).
pub fn process_gone(pid: u32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// True while `pid` runs (a zombie does not count as running).
pub fn process_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Wait until `done()` holds (bounded by PATIENCE: a hang guard).
pub async fn eventually(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(PATIENCE, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("condition reached within the patience bound");
}

/// A long turn: `told` notifications `{"i": 0..n}` (n from `params`), a
/// millisecond apart; then the answer `{"streamed": n}`.
pub async fn stream_told(connection: &Connection, params: &Value) -> Result<Value, acp_engine::RequestError> {
    for i in 0..params["n"].as_u64().unwrap_or(0) {
        connection
            .send_notification("told", &serde_json::json!({ "i": i }))
            .await?;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(serde_json::json!({ "streamed": params["n"] }))
}

/// `future`'s output, within the patience bound (a hang guard).
pub async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future).await.expect("no hang")
}

/// A client of the agent at `url`, initialized: the params of the
/// notifications it gets arrive on the receiver.
pub async fn told_client(
    url: &str,
    options: &acp_engine::remote::ConnectOptions,
) -> (Connection, tokio::sync::mpsc::UnboundedReceiver<Value>) {
    let (told_tx, told) = tokio::sync::mpsc::unbounded_channel();
    let client = Connection::builder()
        .on_notification(move |notification: acp_engine::IncomingNotification| {
            let told_tx = told_tx.clone();
            async move {
                let _ = told_tx.send(notification.params::<Value>()?);
                Ok(())
            }
        })
        .connect(acp_engine::remote::connect(url, options).await.unwrap());
    let initialize = serde_json::json!({ "protocolVersion": 1 });
    let _: Value = client
        .send_request(acp_engine::schema::method::INITIALIZE, &initialize)
        .await
        .unwrap();
    (client, told)
}

/// Ask `client` for a long turn of `n` `told` notifications (an agent
/// serving it with [`stream_told`]), on a task of its own.
pub fn start_stream(
    client: &Connection,
    n: u64,
) -> tokio::task::JoinHandle<Result<Value, acp_engine::RequestError>> {
    let client = client.clone();
    tokio::spawn(async move {
        client
            .send_request("stream", &serde_json::json!({ "n": n }))
            .await
    })
}
