//! Running a server for real: `/metrics` (read with a Prometheus text-format
//! parser) counts what the test did, and draining takes no new connection,
//! lets the requests in flight finish, ends each connection once it has
//! none, and ends the rest at its deadline. Over loopback, both transports.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::remote::{self, ConnectOptions, ServeOptions, Server};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::raw_http::get;
use support::scrape::scrape;
use support::PATIENCE;

const TOKEN: &str = "s3cret";

/// What `gated` requests wait for: the test lets them through.
static GATE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// A server whose agents answer `initialize`, open a session named by
/// `open`'s `name`, notify `told` for `tell`, answer `gated` once the test
/// opens the gate, and never answer `hang`. Counts the agents that ended.
async fn server(options: ServeOptions) -> (Server, Arc<AtomicUsize>) {
    let ended = Arc::new(AtomicUsize::new(0));
    let counted = ended.clone();
    let server = Server::bind("127.0.0.1:0", options, move |lines, _| {
        let connection = Connection::builder()
            .on_request(agent_request)
            .connect(Transport::from_stream(lines));
        let counted = counted.clone();
        tokio::spawn(async move {
            connection.closed().await;
            counted.fetch_add(1, Ordering::SeqCst);
        });
    })
    .await
    .unwrap();
    (server, ended)
}

async fn agent_request(request: IncomingRequest) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    let answer = match request.method.as_str() {
        method::INITIALIZE => json!({ "protocolVersion": 1 }),
        "open" => json!({ "sessionId": params["name"] }),
        "tell" => {
            request.connection.send_notification("told", &json!({})).await?;
            json!("told")
        }
        "gated" => {
            GATE.acquire().await.expect("open").forget();
            json!("done")
        }
        "hang" => std::future::pending().await,
        _ => params,
    };
    Ok(acp_engine::to_raw(&answer).unwrap())
}

fn options() -> ConnectOptions {
    ConnectOptions {
        bearer_token: Some(TOKEN.to_owned()),
        ..ConnectOptions::default()
    }
}

async fn call(connection: &Connection, method: &str, params: Value) -> Value {
    tokio::time::timeout(PATIENCE, connection.send_request(method, &params))
        .await
        .expect("no hang")
        .unwrap()
}

async fn initialized(url: &str) -> Connection {
    let (told, mut notified) = tokio::sync::mpsc::unbounded_channel();
    let connection = Connection::builder()
        .on_notification(move |_| {
            let _ = told.send(());
            async { Ok(()) }
        })
        .connect(remote::connect(url, &options()).await.unwrap());
    call(&connection, method::INITIALIZE, json!({ "protocolVersion": 1 })).await;
    // Keep the receiver alive with the connection: its notifications land.
    tokio::spawn(async move { while notified.recv().await.is_some() {} });
    connection
}

/// Scrape until `done` holds of the samples (some counts follow the
/// client's view by a moment), then return them.
async fn scrape_until(server: &Server, done: impl Fn(&HashMap<String, f64>) -> bool) -> HashMap<String, f64> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let samples = scrape(server.local_addr(), Some(TOKEN)).await.unwrap();
        if done(&samples) {
            return samples;
        }
        assert!(tokio::time::Instant::now() < deadline, "never: {samples:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_what_the_server_did() {
    let (server, _) = server(ServeOptions {
        bearer_token: Some(TOKEN.to_owned()),
        ..ServeOptions::default()
    })
    .await;
    assert_eq!(
        scrape(server.local_addr(), None).await.err(),
        Some(401),
        "the token is needed"
    );
    assert_eq!(get(server.local_addr(), "/nowhere", None).await.0, 404);
    let mut clients = Vec::new();
    for (name, url) in [("ws", server.websocket_url()), ("http", server.http_url())] {
        let client = initialized(&url).await;
        call(&client, "open", json!({ "name": name })).await;
        call(&client, "tell", json!({})).await;
        let pending = client.clone();
        tokio::spawn(async move { pending.send_request::<_, Value>("hang", &json!({})).await });
        clients.push(client);
    }
    let refused = Connection::builder().connect(remote::dial(&server.http_url(), &ConnectOptions::default()));
    let _ = refused
        .send_request::<_, Value>(method::INITIALIZE, &json!({}))
        .await;

    let samples = scrape_until(&server, |samples| {
        samples.get("acp_requests_in_flight") == Some(&2.0)
    })
    .await;
    let expected = [
        ("acp_connections_opened_total{transport=\"websocket\"}", 1.0),
        ("acp_connections_opened_total{transport=\"streamable_http\"}", 1.0),
        ("acp_connections_open{transport=\"websocket\"}", 1.0),
        ("acp_connections_open{transport=\"streamable_http\"}", 1.0),
        // initialize, open, tell and hang from each client; three answers
        // and a notification to each.
        ("acp_messages_total{direction=\"to_agent\"}", 8.0),
        ("acp_messages_total{direction=\"to_client\"}", 8.0),
        ("acp_sessions", 2.0),
        ("acp_requests_in_flight", 2.0),
        ("acp_draining", 0.0),
        // The scrape without the token and the client without it.
        (
            "acp_refusals_total{reason=\"a valid bearer token is required\",status=\"401\"}",
            2.0,
        ),
        (
            "acp_refusals_total{reason=\"no ACP endpoint here\",status=\"404\"}",
            1.0,
        ),
    ];
    for (name, value) in expected {
        assert_eq!(samples.get(name), Some(&value), "{name} in {samples:#?}");
    }
    assert!(samples["acp_message_bytes_total{direction=\"to_agent\"}"] > 8.0 * 30.0);
    assert!(samples.contains_key("acp_held_output_bytes"));

    for client in &clients {
        client.close();
    }
    scrape_until(&server, |samples| {
        samples.get("acp_connections_open{transport=\"websocket\"}") == Some(&0.0)
            && samples.get("acp_connections_open{transport=\"streamable_http\"}") == Some(&0.0)
            && samples.get("acp_sessions") == Some(&0.0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draining_lets_requests_in_flight_finish_and_takes_no_new_connection() {
    let (server, ended) = server(ServeOptions {
        bearer_token: Some(TOKEN.to_owned()),
        ..ServeOptions::default()
    })
    .await;
    let (ws_url, http_url, address) = (server.websocket_url(), server.http_url(), server.local_addr());
    let mut busy = Vec::new();
    for url in [&ws_url, &http_url] {
        let client = initialized(url).await;
        let gated = {
            let client = client.clone();
            tokio::spawn(async move { client.send_request::<_, Value>("gated", &json!({})).await })
        };
        busy.push((client, gated));
    }
    let idle = initialized(&ws_url).await;
    scrape_until(&server, |samples| {
        samples.get("acp_requests_in_flight") == Some(&2.0)
    })
    .await;

    // A deadline far off: returning sooner means connections ended as they went idle.
    let draining = tokio::spawn(server.drain(Duration::from_secs(600)));
    tokio::time::timeout(PATIENCE, idle.closed())
        .await
        .expect("the idle connection ends");
    let (ready, body) = get(address, "/readyz", None).await;
    assert_eq!(ready, 503, "{body}");
    assert!(body.contains(r#""status":"draining""#), "{body}");
    assert_eq!(
        get(address, "/healthz", None).await.0,
        200,
        "alive while draining"
    );
    for url in [&ws_url, &http_url] {
        let refused = Connection::builder().connect(remote::dial(url, &options()));
        let _ = refused
            .send_request::<_, Value>(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
            .await;
        tokio::time::timeout(PATIENCE, refused.closed()).await.unwrap();
        let reason = refused.close_reason().unwrap_or_default();
        assert!(reason.contains("503"), "{url}: {reason}");
    }
    GATE.add_permits(2);
    for (client, gated) in busy {
        let answer = tokio::time::timeout(PATIENCE, gated)
            .await
            .expect("no hang")
            .unwrap();
        assert_eq!(answer.expect("the request in flight finishes"), json!("done"));
        tokio::time::timeout(PATIENCE, client.closed())
            .await
            .expect("then it ends");
    }
    tokio::time::timeout(PATIENCE, draining)
        .await
        .expect("drain returns")
        .unwrap();
    assert_eq!(ended.load(Ordering::SeqCst), 3, "every agent ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draining_ends_what_is_left_at_its_deadline() {
    let (server, ended) = server(ServeOptions::default()).await;
    let mut pending = Vec::new();
    for url in [server.websocket_url(), server.http_url()] {
        let client =
            Connection::builder().connect(remote::connect(&url, &ConnectOptions::default()).await.unwrap());
        call(&client, method::INITIALIZE, json!({ "protocolVersion": 1 })).await;
        let hang = {
            let client = client.clone();
            tokio::spawn(async move { client.send_request::<_, Value>("hang", &json!({})).await })
        };
        pending.push(hang);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::time::timeout(PATIENCE, server.drain(Duration::from_millis(300)))
        .await
        .expect("drain returns after its deadline");
    for hang in pending {
        let error = tokio::time::timeout(PATIENCE, hang)
            .await
            .expect("no hang")
            .unwrap()
            .unwrap_err();
        assert!(error.is_connection_closed(), "{error}");
    }
    support::eventually(|| ended.load(Ordering::SeqCst) == 2).await;
}
