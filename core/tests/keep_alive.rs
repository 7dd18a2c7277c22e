//! A network that drops traffic without closing anything (no reset, no
//! FIN) is found by its silence: both sides ping each WebSocket, the server
//! sends a comment on each idle event stream, and a socket or stream that
//! brings nothing for three keep-alive intervals is taken as broken. A
//! client that resumes comes back and misses nothing; one that does not
//! fails what it waits for; a server ends a silent connection's agent.
//! Over loopback, through a proxy that swallows connections.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::remote::{ConnectOptions, ServeOptions, Server};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::cut_proxy::CutProxy;
use support::{eventually, told_client, within, PATIENCE};

/// Short, so that silence is found in a test's time.
const KEEP_ALIVE: Duration = Duration::from_millis(100);

/// Agents started and ended.
#[derive(Default)]
struct Agents {
    started: AtomicUsize,
    ended: Arc<AtomicUsize>,
}

/// A server whose agents, asked `stream` with `n`, send `told` 0..n a
/// millisecond apart, then answer; and never answer `wait`.
async fn server() -> (Server, Arc<Agents>) {
    let agents = Arc::new(Agents::default());
    let counted = agents.clone();
    let options = ServeOptions {
        keep_alive_interval: Some(KEEP_ALIVE),
        ..ServeOptions::default()
    };
    let server = Server::bind("127.0.0.1:0", options, move |lines, _| {
        counted.started.fetch_add(1, Ordering::SeqCst);
        let connection = Connection::builder()
            .on_request(agent)
            .connect(Transport::from_stream(lines));
        let ended = counted.ended.clone();
        tokio::spawn(async move {
            connection.closed().await;
            ended.fetch_add(1, Ordering::SeqCst);
        });
    })
    .await
    .unwrap();
    (server, agents)
}

async fn agent(request: IncomingRequest) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    let answer = match request.method.as_str() {
        method::INITIALIZE => json!({ "protocolVersion": 1 }),
        "wait" => std::future::pending().await,
        _ => support::stream_told(&request.connection, &params).await?,
    };
    Ok(acp_engine::to_raw(&answer).unwrap())
}

async fn silence_mid_turn_is_resumed(scheme: &str) {
    let (server, agents) = server().await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let options = ConnectOptions {
        reconnect_timeout: Some(Duration::from_secs(5)),
        keep_alive_interval: Some(KEEP_ALIVE),
        ..ConnectOptions::default()
    };
    let url = format!("{scheme}://{}/acp", proxy.address());
    let (client, mut told) = told_client(&url, &options).await;
    const N: u64 = 300;
    let turn = support::start_stream(&client, N);
    let mut seen = Vec::new();
    while seen.len() < N as usize {
        let params = within(told.recv()).await.expect("the client runs");
        seen.push(params["i"].as_u64().unwrap());
        if seen.len() == 100 {
            proxy.swallow();
        }
    }
    let answer = within(turn).await.unwrap().expect("the turn completes");
    assert_eq!(answer, json!({ "streamed": N }));
    assert_eq!(seen, (0..N).collect::<Vec<_>>(), "each once, in order");
    assert_eq!(
        agents.started.load(Ordering::SeqCst),
        1,
        "the same agent throughout"
    );
    assert!(proxy.connections_made() >= 2, "a new connection was made");
    assert!(client.close_reason().is_none());
    client.close();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumable_websocket_gone_silent_mid_turn_resumes_and_misses_nothing() {
    silence_mid_turn_is_resumed("ws").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_gone_silent_mid_turn_is_reopened_and_misses_nothing() {
    silence_mid_turn_is_resumed("http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_websocket_fails_what_its_client_waits_for_and_ends_its_agent() {
    let (server, agents) = server().await;
    let proxy = CutProxy::start(server.local_addr()).await;
    let options = ConnectOptions {
        keep_alive_interval: Some(KEEP_ALIVE),
        ..ConnectOptions::default()
    };
    let (client, _told) = told_client(&format!("ws://{}/acp", proxy.address()), &options).await;
    let waiting = {
        let client = client.clone();
        tokio::spawn(async move { client.send_request::<_, Value>("wait", &json!({})).await })
    };
    tokio::time::sleep(KEEP_ALIVE * 5).await;
    assert!(
        !waiting.is_finished(),
        "pings and pongs keep a quiet connection up"
    );
    proxy.swallow();
    let failed = tokio::time::timeout(PATIENCE, waiting)
        .await
        .expect("the client gives up on a silent network")
        .unwrap();
    assert!(failed.is_err(), "{failed:?}");
    eventually(|| agents.ended.load(Ordering::SeqCst) == 1).await;
    server.shutdown().await;
}
