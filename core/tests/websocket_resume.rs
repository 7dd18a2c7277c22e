//! WebSocket connections outlive a broken socket when the client asks for it
//! (a reconnect timeout): the client dials again with the connection's id
//! and how many messages it received, the server answers how many it did,
//! and each side sends again what the other lacks, exactly once, in order.
//! Over loopback, through a proxy that cuts connections.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::remote::{self, ConnectOptions, ServeOptions, Server};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::cut_proxy::CutProxy;
use support::scrape::scrape;
use support::PATIENCE;
use tokio::sync::mpsc;

/// What the agents of a server did: how many started, and how many `echo`
/// requests reached them.
#[derive(Default)]
struct Seen {
    agents: AtomicUsize,
    echoes: AtomicUsize,
}

/// A server whose agents, asked `stream` with `n`, send `told` 0..n a
/// millisecond apart, then answer; and answer `echo` with its params.
async fn server(options: ServeOptions) -> (Server, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    let server = Server::bind("127.0.0.1:0", options, move |lines, _| {
        counted.agents.fetch_add(1, Ordering::SeqCst);
        let seen = counted.clone();
        Connection::builder()
            .on_request(move |request: IncomingRequest| {
                let seen = seen.clone();
                async move { agent(request, &seen).await }
            })
            .connect(Transport::from_stream(lines));
    })
    .await
    .unwrap();
    (server, seen)
}

async fn agent(request: IncomingRequest, seen: &Seen) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    let answer = match request.method.as_str() {
        method::INITIALIZE => json!({ "protocolVersion": 1 }),
        "echo" => {
            seen.echoes.fetch_add(1, Ordering::SeqCst);
            params
        }
        _ => support::stream_told(&request.connection, &params).await?,
    };
    Ok(acp_engine::to_raw(&answer).unwrap())
}

/// A client through `proxy`, reconnecting for `reconnect`: the notifications
/// it gets arrive on the receiver.
async fn client(proxy: &CutProxy, reconnect: Duration) -> (Connection, mpsc::UnboundedReceiver<Value>) {
    let options = ConnectOptions {
        reconnect_timeout: Some(reconnect),
        ..ConnectOptions::default()
    };
    support::told_client(&format!("ws://{}/acp", proxy.address()), &options).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_cut_off_mid_turn_resumes_and_misses_nothing() {
    let (server, seen) = server(ServeOptions::default()).await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let (client, mut told) = client(&proxy, Duration::from_secs(5)).await;
    const N: u64 = 300;
    let turn = support::start_stream(&client, N);
    let mut seen_told = Vec::new();
    let mut echoes = Vec::new();
    while seen_told.len() < N as usize {
        let params = support::within(told.recv()).await.expect("the client runs");
        seen_told.push(params["i"].as_u64().unwrap());
        // Cut mid-turn: once a plain cut, once with the network down a while,
        // sending meanwhile (those messages wait, or are sent again).
        if seen_told.len() == 100 {
            proxy.cut_for(Duration::ZERO);
        }
        if seen_told.len() == 200 {
            proxy.cut_for(Duration::from_millis(300));
            for n in 0..20 {
                let client = client.clone();
                echoes.push(tokio::spawn(async move {
                    client.send_request::<_, Value>("echo", &json!({ "n": n })).await
                }));
            }
        }
    }
    let answer = support::within(turn).await.unwrap().expect("the turn completes");
    assert_eq!(answer, json!({ "streamed": N }));
    for (n, echo) in echoes.into_iter().enumerate() {
        let echoed = tokio::time::timeout(PATIENCE, echo)
            .await
            .expect("no hang")
            .unwrap();
        assert_eq!(echoed.expect("answered"), json!({ "n": n }));
    }
    assert_eq!(seen_told, (0..N).collect::<Vec<_>>(), "each once, in order");
    assert_eq!(
        seen.echoes.load(Ordering::SeqCst),
        20,
        "each request reached the agent once"
    );
    assert_eq!(seen.agents.load(Ordering::SeqCst), 1, "the same agent throughout");
    assert!(proxy.connections_made() >= 3, "the socket was dialled again");
    assert!(client.close_reason().is_none());
    let samples = scrape(server.local_addr(), None).await.unwrap();
    let resumes = samples["acp_stream_resumes_total{outcome=\"resumed\"}"];
    assert!(resumes >= 2.0, "{resumes} resumes counted");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_back_after_the_grace_period_gets_a_clear_error() {
    let options = ServeOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..ServeOptions::default()
    };
    let (server, _) = server(options).await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let (client, _told) = client(&proxy, Duration::from_secs(5)).await;
    let error = proxy.cut_a_long_turn(&client, Duration::from_millis(1000)).await;
    assert!(error.is_connection_closed(), "{error}");
    let reason = client.close_reason().unwrap_or_default();
    assert!(
        reason.contains("could not be resumed") && reason.contains("404"),
        "{reason}"
    );
    // The server gave the connection up after its grace: its agent's ended.
    support::eventually(|| server.connections() == 0).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_that_does_not_ask_is_not_kept() {
    let (server, _) = server(ServeOptions::default()).await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let url = format!("ws://{}/acp", proxy.address());
    let client =
        Connection::builder().connect(remote::connect(&url, &ConnectOptions::default()).await.unwrap());
    let _: Value = client
        .send_request(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
        .await
        .unwrap();
    assert_eq!(server.connections(), 1);
    proxy.cut_for(Duration::from_secs(60));
    // Its agent ends with its socket, as before.
    support::eventually(|| server.connections() == 0).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while server.connections() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.connections(),
        0,
        "its agent ends with its socket, as before"
    );
    server.shutdown().await;
}

/// A resumable WebSocket by hand, to see exactly what a resume sends.
struct RawSocket {
    socket: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    /// The 101's headers.
    headers: tokio_tungstenite::tungstenite::http::HeaderMap,
}

impl RawSocket {
    /// Dial `server` with these resume headers: the socket, or the refusal's status.
    async fn dial(server: &Server, resume: &[(&str, String)]) -> Result<Self, u16> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let stream = tokio::net::TcpStream::connect(server.local_addr()).await.unwrap();
        let mut request = server.websocket_url().into_client_request().unwrap();
        for (name, value) in resume {
            let name: tokio_tungstenite::tungstenite::http::HeaderName = name.parse().unwrap();
            request.headers_mut().insert(name, value.parse().unwrap());
        }
        match tokio_tungstenite::client_async(request, stream).await {
            Ok((socket, response)) => Ok(Self {
                socket,
                headers: response.headers().clone(),
            }),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
            Err(error) => panic!("{error}"),
        }
    }

    fn header(&self, name: &str) -> String {
        self.headers[name].to_str().unwrap().to_owned()
    }

    async fn send(&mut self, message: Value) {
        use futures_util::SinkExt;
        let text = message.to_string();
        self.socket.send(text.into()).await.unwrap();
    }

    async fn receive(&mut self, count: usize) -> Vec<Value> {
        use futures_util::StreamExt;
        let mut received = Vec::new();
        while received.len() < count {
            let frame = tokio::time::timeout(PATIENCE, self.socket.next())
                .await
                .expect("no hang")
                .expect("open")
                .unwrap();
            if let Ok(text) = frame.to_text() {
                received.push(serde_json::from_str(text).unwrap());
            }
        }
        received
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_gets_exactly_what_the_client_lacks_or_a_clear_refusal() {
    let (server, seen) = server(ServeOptions::default()).await;
    let mut first = RawSocket::dial(&server, &[("Last-Event-ID", "0".into())])
        .await
        .unwrap();
    let id = first.header("acp-connection-id");
    first
        .send(
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": 1 } }),
        )
        .await;
    first
        .send(json!({ "jsonrpc": "2.0", "id": 2, "method": "stream", "params": { "n": 5 } }))
        .await;
    // The initialize answer, five notifications, the stream's answer.
    let all = first.receive(7).await;
    assert_eq!(all[6]["result"], json!({ "streamed": 5 }));
    drop(first); // the socket breaks, without a close frame

    // Back, saying only 3 arrived: the other 4 come again, and the server
    // says it has both of the client's messages.
    let resume = |theirs: u64| {
        vec![
            ("Acp-Connection-Id", id.clone()),
            ("Last-Event-ID", theirs.to_string()),
        ]
    };
    let mut second = RawSocket::dial(&server, &resume(3)).await.unwrap();
    assert_eq!(second.header("acp-received"), "2");
    assert_eq!(second.receive(4).await, all[3..].to_vec());
    second
        .send(json!({ "jsonrpc": "2.0", "id": 3, "method": "echo", "params": { "n": 1 } }))
        .await;
    assert_eq!(second.receive(1).await[0]["result"], json!({ "n": 1 }));
    drop(second);

    // More than was ever sent: refused (410), and the connection ends.
    assert_eq!(RawSocket::dial(&server, &resume(99)).await.err(), Some(410));
    assert_eq!(RawSocket::dial(&server, &resume(8)).await.err(), Some(404));
    assert_eq!(seen.agents.load(Ordering::SeqCst), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_needing_what_the_budget_let_go_is_refused() {
    let options = ServeOptions {
        max_replay_bytes: 200,
        ..ServeOptions::default()
    };
    let (server, _) = server(options).await;
    let mut first = RawSocket::dial(&server, &[("Last-Event-ID", "0".into())])
        .await
        .unwrap();
    let id = first.header("acp-connection-id");
    first
        .send(json!({ "jsonrpc": "2.0", "id": 1, "method": "stream", "params": { "n": 20 } }))
        .await;
    first.receive(21).await;
    drop(first);
    let resume = [("Acp-Connection-Id", id), ("Last-Event-ID", "0".to_owned())];
    assert_eq!(RawSocket::dial(&server, &resume).await.err(), Some(410));
    let samples = scrape(server.local_addr(), None).await.unwrap();
    assert_eq!(
        samples.get("acp_stream_resumes_total{outcome=\"refused\"}"),
        Some(&1.0)
    );
    server.shutdown().await;
}
