//! Streamable HTTP connections outlive a broken network: every event has an
//! id, a client reopens a broken stream with `Last-Event-ID`, and the
//! server sends again exactly what was lost; a resume that needs what the
//! replay budget no longer holds ends the connection with 410 instead.
//! Over loopback, through a proxy that cuts connections.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::remote::{self, ConnectOptions, ServeOptions, Server};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingNotification, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::cut_proxy::CutProxy;
use support::scrape::scrape;
use support::PATIENCE;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// A server whose agents, asked `stream` with `n` (and maybe a
/// `sessionId`), send `told` notifications 0..n in that session, a
/// millisecond apart, then answer.
async fn streaming_server(options: ServeOptions) -> (Server, Arc<AtomicUsize>) {
    let agents = Arc::new(AtomicUsize::new(0));
    let counted = agents.clone();
    let server = Server::bind("127.0.0.1:0", options, move |lines, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        Connection::builder()
            .on_request(stream_request)
            .connect(Transport::from_stream(lines));
    })
    .await
    .unwrap();
    (server, agents)
}

async fn stream_request(request: IncomingRequest) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    if request.method == method::INITIALIZE {
        return Ok(acp_engine::to_raw(&json!({ "protocolVersion": 1 })).unwrap());
    }
    for i in 0..params["n"].as_u64().unwrap_or(0) {
        let mut told = json!({ "i": i });
        if let Some(session) = params.get("sessionId") {
            told["sessionId"] = session.clone();
        }
        request.connection.send_notification("told", &told).await?;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(acp_engine::to_raw(&json!({ "streamed": params["n"] })).unwrap())
}

fn reconnecting() -> ConnectOptions {
    ConnectOptions {
        reconnect_timeout: Some(Duration::from_secs(5)),
        ..ConnectOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cut_off_mid_turn_resumes_and_misses_nothing() {
    let (server, agents) = streaming_server(ServeOptions::default()).await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let url = format!("http://{}/acp", proxy.address());
    let (told_tx, mut told) = mpsc::unbounded_channel();
    let client = Connection::builder()
        .on_notification(move |notification: IncomingNotification| {
            let told_tx = told_tx.clone();
            async move {
                let _ = told_tx.send(notification.params::<Value>()?);
                Ok(())
            }
        })
        .connect(remote::connect(&url, &reconnecting()).await.unwrap());
    let initialized: Value = client
        .send_request(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
        .await
        .unwrap();
    assert_eq!(initialized["protocolVersion"], 1);

    // One turn on the connection's stream and one on a session's.
    const N: u64 = 300;
    let turns: Vec<_> = [json!({ "n": N }), json!({ "n": N, "sessionId": "s" })]
        .into_iter()
        .map(|params| {
            let client = client.clone();
            tokio::spawn(async move { client.send_request::<_, Value>("stream", &params).await })
        })
        .collect();
    let mut seen: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut received = 0;
    while received < 2 * N {
        let params = support::within(told.recv()).await.expect("the client runs");
        let stream = usize::from(params.get("sessionId").is_some());
        seen[stream].push(params["i"].as_u64().unwrap());
        received += 1;
        // Cut mid-turn: once a plain cut, once with the network down a while.
        if received == 100 {
            proxy.cut_for(Duration::ZERO);
        }
        if received == 350 {
            proxy.cut_for(Duration::from_millis(300));
        }
    }
    for turn in turns {
        let answer = support::within(turn).await.unwrap().expect("the turn completes");
        assert_eq!(answer, json!({ "streamed": N }));
    }
    let expected: Vec<u64> = (0..N).collect();
    assert_eq!(seen[0], expected, "the connection's stream: each once, in order");
    assert_eq!(seen[1], expected, "the session's stream: each once, in order");
    assert_eq!(agents.load(Ordering::SeqCst), 1, "the same agent throughout");
    assert!(proxy.connections_made() > 4, "the streams were reopened");
    assert!(client.close_reason().is_none());
}

/// A client with `options` mid-turn when the network goes down for good:
/// how its turn failed, and why its connection closed.
async fn cut_for_good(options: ConnectOptions) -> (RequestError, String) {
    let (server, _) = streaming_server(ServeOptions::default()).await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let url = format!("http://{}/acp", proxy.address());
    let client = Connection::builder().connect(remote::connect(&url, &options).await.unwrap());
    let _: Value = client
        .send_request(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
        .await
        .unwrap();
    let error = proxy.cut_a_long_turn(&client, Duration::from_secs(60)).await;
    (error, client.close_reason().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_cut_ends_the_connection_with_the_reason() {
    let (error, reason) = cut_for_good(ConnectOptions::default()).await;
    assert!(error.is_connection_closed(), "{error}");
    assert!(reason.contains("event stream failed"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_gives_up_after_its_timeout_with_the_reason() {
    let (error, reason) = cut_for_good(ConnectOptions {
        reconnect_timeout: Some(Duration::from_millis(400)),
        ..ConnectOptions::default()
    })
    .await;
    assert!(error.is_connection_closed(), "{error}");
    assert!(reason.contains("not reopened within 400 ms"), "{reason}");
}

/// The wire by hand: an SSE stream read raw, to see ids and replays exactly.
struct RawStream {
    socket: TcpStream,
    text: String,
}

impl RawStream {
    /// GET the connection's stream, resuming after `last_event_id` if given:
    /// the response's status line and the stream.
    async fn open(server: &Server, connection: &str, last_event_id: Option<u64>) -> (String, Self) {
        let mut socket = TcpStream::connect(server.local_addr()).await.unwrap();
        let resume = last_event_id
            .map(|id| format!("Last-Event-ID: {id}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {connection}\r\n{resume}\r\n"
        );
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut stream = Self {
            socket,
            text: String::new(),
        };
        stream.read_until(|text| text.contains("\r\n\r\n")).await;
        let status = stream.text.lines().next().unwrap().to_owned();
        (status, stream)
    }

    async fn read_until(&mut self, done: impl Fn(&str) -> bool) {
        let mut buffer = [0u8; 65536];
        while !done(&self.text) {
            let read = tokio::time::timeout(PATIENCE, self.socket.read(&mut buffer))
                .await
                .expect("no hang")
                .unwrap();
            if read == 0 {
                break;
            }
            self.text.push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    }

    /// The (id, data) of each event read so far.
    fn events(&self) -> Vec<(u64, String)> {
        let mut events = Vec::new();
        let mut id = None;
        for line in self.text.lines() {
            if let Some(value) = line.strip_prefix("id: ") {
                id = Some(value.parse().unwrap());
            } else if let Some(data) = line.strip_prefix("data: ") {
                events.push((id.take().expect("every event has an id"), data.to_owned()));
            }
        }
        events
    }

    async fn read_events(&mut self, count: usize) -> Vec<(u64, String)> {
        self.read_until(|text| text.matches("\ndata: ").count() >= count)
            .await;
        self.events()
    }
}

/// POST `body` on `connection` by hand: the status.
async fn raw_post(server: &Server, connection: Option<&str>, body: &str) -> (u16, String) {
    let connection = connection
        .map(|id| format!("Acp-Connection-Id: {id}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n{connection}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    support::raw_http::exchange(server.local_addr(), &request).await
}

/// A connection by hand, whose agent has streamed 20 notifications and its
/// answer (21 events) on a stream the test read whole.
async fn streamed_connection(server: &Server) -> (String, RawStream, Vec<(u64, String)>) {
    let (status, response) = raw_post(
        server,
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
    )
    .await;
    assert_eq!(status, 200, "{response}");
    let connection = response
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("acp-connection-id:")
                .map(|_| line[18..].trim().to_owned())
        })
        .expect("Acp-Connection-Id");
    let (status, mut stream) = RawStream::open(server, &connection, None).await;
    assert!(status.contains(" 200 "), "{status}");
    let (status, _) = raw_post(
        server,
        Some(&connection),
        r#"{"jsonrpc":"2.0","id":1,"method":"stream","params":{"n":20}}"#,
    )
    .await;
    assert_eq!(status, 202);
    let events = stream.read_events(21).await;
    assert_eq!(events.len(), 21);
    assert!(events[20].1.contains(r#""streamed":20"#), "{:?}", events[20]);
    (connection, stream, events)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_gets_exactly_the_events_after_its_id_and_takes_the_stream_over() {
    let (server, _) = streaming_server(ServeOptions::default()).await;
    let (connection, mut first, events) = streamed_connection(&server).await;
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "ids grow: {ids:?}");

    // The client says it got the first 10: the other 11 come again, as they were.
    let (status, mut second) = RawStream::open(&server, &connection, Some(ids[9])).await;
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(second.read_events(11).await, events[10..].to_vec());
    // The stream it took over ended.
    first.read_until(|text| text.ends_with("0\r\n\r\n")).await;
    assert!(first.text.ends_with("0\r\n\r\n"), "the first stream ends");
    // A plain second GET is refused while the stream has its reader.
    let (status, _) = RawStream::open(&server, &connection, None).await;
    assert!(status.contains(" 409 "), "{status}");
    let samples = scrape(server.local_addr(), None).await.unwrap();
    assert_eq!(
        samples.get("acp_stream_resumes_total{outcome=\"resumed\"}"),
        Some(&1.0)
    );
    assert_eq!(samples.get("acp_replayed_events_total"), Some(&11.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_past_the_replay_budget_ends_the_connection_with_410() {
    let (server, _) = streaming_server(ServeOptions {
        max_replay_bytes: 256,
        ..ServeOptions::default()
    })
    .await;
    let (connection, _first, events) = streamed_connection(&server).await;
    // Nothing after the last event is missing: that resume is fine.
    let (status, _second) = RawStream::open(&server, &connection, Some(events[20].0)).await;
    assert!(status.contains(" 200 "), "{status}");
    // Events after the first are no longer all kept.
    let (status, mut refused) = RawStream::open(&server, &connection, Some(events[0].0)).await;
    assert!(status.contains(" 410 "), "{status}");
    refused.read_until(|text| text.contains("max_replay_bytes")).await;
    assert!(refused.text.contains("no longer kept"), "{}", refused.text);
    let (status, _) = raw_post(
        &server,
        Some(&connection),
        r#"{"jsonrpc":"2.0","id":2,"method":"stream","params":{"n":1}}"#,
    )
    .await;
    assert_eq!(status, 404, "the connection is ended");
    let samples = scrape(server.local_addr(), None).await.unwrap();
    assert_eq!(
        samples.get("acp_stream_resumes_total{outcome=\"refused\"}"),
        Some(&1.0)
    );
    assert_eq!(
        samples.get("acp_stream_resumes_total{outcome=\"resumed\"}"),
        Some(&1.0)
    );
    assert_eq!(samples.get("acp_replayed_events_total"), Some(&0.0));
}
