//! Resumes, measured (`bench/resume.py` runs it): over Streamable HTTP and
//! WebSocket, on loopback,
//! - reconnect time: a client (reconnect timeout set) whose connection a
//!   proxy cuts while its agent streams a message a millisecond: the
//!   longest wait between two messages around the cut (the client tries
//!   again at once, then after 25 to 50 ms, doubling, jittered);
//! - replay rate: a client that received `n` messages, dropped its stream or
//!   socket and came back saying it received none: how fast the server sends
//!   them all again, next to how fast they came live.
//!
//! Prints one JSON object: `{"transport": {"reconnect_ms": [...],
//! "live_per_s": R, "replay_per_s": R}, ...}`.
//!
//! `resume --cuts 20 --n 20000`

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_engine::remote::{self, ConnectOptions, ServeOptions, Server};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingNotification, IncomingRequest, RequestError, Transport};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (cuts, n) = (arg("--cuts", 20), arg("--n", 20_000));
    let server = Server::bind("127.0.0.1:0", ServeOptions::default(), |lines, _| {
        Connection::builder()
            .on_request(stream_agent)
            .connect(Transport::from_stream(lines));
    })
    .await
    .expect("a server");
    let mut report = serde_json::Map::new();
    for transport in ["http", "websocket"] {
        let reconnect_ms = reconnect_times(&server, transport, cuts).await;
        let (live, replay) = match transport {
            "http" => replay_http(&server, n).await,
            _ => replay_websocket(&server, n).await,
        };
        report.insert(
            transport.to_owned(),
            json!({ "reconnect_ms": reconnect_ms, "live_per_s": live, "replay_per_s": replay }),
        );
    }
    println!("{}", Value::Object(report));
    server.shutdown().await;
}

/// `stream` with `n` (and a `gap_us` between them): `told` 0..n, then the answer.
async fn stream_agent(request: IncomingRequest) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    if request.method == method::INITIALIZE {
        return Ok(acp_engine::to_raw(&json!({ "protocolVersion": 1 })).unwrap());
    }
    let gap = Duration::from_micros(params["gap_us"].as_u64().unwrap_or(0));
    for i in 0..params["n"].as_u64().unwrap_or(0) {
        request
            .connection
            .send_notification("told", &json!({ "i": i }))
            .await?;
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
    }
    Ok(acp_engine::to_raw(&json!({ "streamed": params["n"] })).unwrap())
}

/// Cut the client's connection `cuts` times while a stream flows: the time
/// from each cut to the next message, in ms.
async fn reconnect_times(server: &Server, transport: &str, cuts: u64) -> Vec<f64> {
    let proxy = CutProxy::start(server.local_addr()).await;
    let scheme = if transport == "http" { "http" } else { "ws" };
    let url = format!("{scheme}://{}/acp", proxy.address);
    let options = ConnectOptions {
        reconnect_timeout: Some(Duration::from_secs(10)),
        ..ConnectOptions::default()
    };
    let (told_tx, mut told) = mpsc::unbounded_channel::<Instant>();
    let client = Connection::builder()
        .on_notification(move |_: IncomingNotification| {
            let _ = told_tx.send(Instant::now());
            async { Ok(()) }
        })
        .connect(remote::connect(&url, &options).await.expect("connected"));
    let _: Value = client
        .send_request(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
        .await
        .expect("initialized");
    // A message every millisecond for as long as the cuts take.
    let stream = {
        let client = client.clone();
        let n = cuts * 2_000 + 1_000;
        tokio::spawn(async move {
            client
                .send_request::<_, Value>("stream", &json!({ "n": n, "gap_us": 1000 }))
                .await
        })
    };
    let mut times = Vec::new();
    let mut arrivals = Vec::new();
    for _ in 0..cuts {
        // Let it flow a while, cut, and give it a second to come back: the
        // outage is the longest wait between two messages around the cut
        // (they come a millisecond apart otherwise; messages the client had
        // already read arrive after the cut too, so "the next one" would not
        // do).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let cut = Instant::now();
        proxy.cut();
        tokio::time::sleep(Duration::from_secs(1)).await;
        while let Ok(at) = told.try_recv() {
            arrivals.push(at);
        }
        let window: Vec<Instant> = arrivals
            .iter()
            .copied()
            .filter(|at| *at + Duration::from_millis(20) > cut)
            .collect();
        let longest = window
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .max()
            .unwrap_or_default();
        times.push(longest.as_secs_f64() * 1000.0);
        arrivals.clear();
    }
    stream.abort();
    client.close();
    times
}

/// Over Streamable HTTP by hand: read `n` events live on the connection's
/// stream, then reopen it with `Last-Event-ID: 0`: (live, replayed) per second.
async fn replay_http(server: &Server, n: u64) -> (f64, f64) {
    let address = server.local_addr();
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let answer = exchange(address, &post(None, initialize)).await;
    let connection = answer
        .lines()
        .find_map(|line| {
            line.strip_prefix("acp-connection-id: ")
                .or_else(|| line.strip_prefix("Acp-Connection-Id: "))
        })
        .expect("a connection id")
        .trim()
        .to_owned();
    let mut live = open_stream(address, &connection, None).await;
    let stream = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"stream","params":{{"n":{n}}}}}"#);
    let started = Instant::now();
    exchange(address, &post(Some(&connection), &stream)).await;
    read_events(&mut live, n + 1).await;
    let live_rate = n as f64 / started.elapsed().as_secs_f64();
    drop(live);
    let started = Instant::now();
    let mut replayed = open_stream(address, &connection, Some(0)).await;
    read_events(&mut replayed, n + 1).await;
    let replay_rate = n as f64 / started.elapsed().as_secs_f64();
    (live_rate, replay_rate)
}

fn post(connection: Option<&str>, body: &str) -> String {
    let connection = connection
        .map(|id| format!("Acp-Connection-Id: {id}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{connection}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

async fn exchange(address: SocketAddr, request: &str) -> String {
    let mut socket = TcpStream::connect(address).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).await.unwrap();
    response
}

async fn open_stream(address: SocketAddr, connection: &str, last_event_id: Option<u64>) -> TcpStream {
    let mut socket = TcpStream::connect(address).await.unwrap();
    let resume = last_event_id
        .map(|id| format!("Last-Event-ID: {id}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n{resume}\r\n"
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    socket
}

/// Read until `count` SSE events (`data:` lines) arrived.
async fn read_events(socket: &mut TcpStream, count: u64) {
    let mut buffer = vec![0u8; 1 << 16];
    let (mut seen, mut tail) = (0u64, Vec::new());
    while seen < count {
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0, "the stream ended after {seen} of {count} events");
        tail.extend_from_slice(&buffer[..read]);
        seen += tail.windows(6).filter(|w| w == b"\ndata:").count() as u64;
        // Keep the last bytes, in case a marker is split across reads.
        let keep = tail.len().min(5);
        tail.drain(..tail.len() - keep);
    }
}

/// Over a resumable WebSocket by hand: (live, replayed) per second.
async fn replay_websocket(server: &Server, n: u64) -> (f64, f64) {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let dial = |resume: Vec<(&'static str, String)>| async move {
        let stream = TcpStream::connect(server.local_addr()).await.unwrap();
        let mut request = server.websocket_url().into_client_request().unwrap();
        for (name, value) in resume {
            request.headers_mut().insert(name, value.parse().unwrap());
        }
        tokio_tungstenite::client_async(request, stream).await.unwrap()
    };
    let (mut live, answer) = dial(vec![("last-event-id", "0".into())]).await;
    let id = answer.headers()["acp-connection-id"].to_str().unwrap().to_owned();
    let started = Instant::now();
    let stream = json!({ "jsonrpc": "2.0", "id": 1, "method": "stream", "params": { "n": n } });
    live.send(stream.to_string().into()).await.unwrap();
    for _ in 0..=n {
        live.next().await.unwrap().unwrap();
    }
    let live_rate = n as f64 / started.elapsed().as_secs_f64();
    drop(live);
    let started = Instant::now();
    let (mut replayed, _) = dial(vec![("acp-connection-id", id), ("last-event-id", "0".into())]).await;
    for _ in 0..=n {
        replayed.next().await.unwrap().unwrap();
    }
    let replay_rate = n as f64 / started.elapsed().as_secs_f64();
    (live_rate, replay_rate)
}

/// A TCP proxy whose carried connections `cut` ends at once.
struct CutProxy {
    address: SocketAddr,
    carried: Arc<Mutex<CancellationToken>>,
}

impl CutProxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let carried = Arc::new(Mutex::new(CancellationToken::new()));
        let cuts = carried.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let cut = cuts.lock().unwrap().clone();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.cancelled() => {}
                    }
                });
            }
        });
        Self { address, carried }
    }

    fn cut(&self) {
        std::mem::take(&mut *self.carried.lock().unwrap()).cancel();
    }
}
