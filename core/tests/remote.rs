//! The remote transports in process, each test over both WebSocket and
//! Streamable HTTP: a server whose connections are engine connections, a
//! client that calls them both ways, the checks made before anything
//! reaches an agent, limits, TLS, shutdown, and the HTTP wire's refusals.

#![cfg(feature = "remote")]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::remote::{
    self, AuthRequest, Authorize, ConnectOptions, PeerTransport, RefusalBody, ServeOptions, Server, ServerTls,
};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingNotification, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::PATIENCE;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

#[derive(Clone, Copy, Debug)]
enum Via {
    WebSocket,
    Http,
}

const BOTH: [Via; 2] = [Via::WebSocket, Via::Http];

fn url(server: &Server, via: Via) -> String {
    match via {
        Via::WebSocket => server.websocket_url(),
        Via::Http => server.http_url(),
    }
}

/// What the test server's agents saw.
#[derive(Default)]
struct Seen {
    opened: AtomicUsize,
    closed: AtomicUsize,
}

/// A server whose agents answer `initialize`, echo what else they are
/// asked, call their client back for `ask` and notify it for `tell` (both
/// in the params' session), and never answer `hang`.
async fn agent_server(options: ServeOptions) -> (Server, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    let server = Server::bind("127.0.0.1:0", options, move |lines, peer| {
        assert!(matches!(
            peer.transport,
            PeerTransport::WebSocket | PeerTransport::StreamableHttp
        ));
        counted.opened.fetch_add(1, Ordering::SeqCst);
        let connection = Connection::builder()
            .on_request(agent_request)
            .connect(Transport::from_stream(lines));
        let counted = counted.clone();
        tokio::spawn(async move {
            connection.closed().await;
            counted.closed.fetch_add(1, Ordering::SeqCst);
        });
    })
    .await
    .unwrap();
    (server, seen)
}

async fn agent_request(request: IncomingRequest) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    let answer = match request.method.as_str() {
        method::INITIALIZE => json!({ "protocolVersion": 1 }),
        "ask" => {
            let answer: Value = request
                .connection
                .send_request("question", &json!({ "sessionId": params["sessionId"] }))
                .await?;
            json!({ "client said": answer })
        }
        "tell" => {
            let told = json!({ "sessionId": params["sessionId"], "n": params["n"] });
            request.connection.send_notification("told", &told).await?;
            json!("told")
        }
        "hang" => std::future::pending().await,
        _ => params,
    };
    Ok(acp_engine::to_raw(&answer).unwrap())
}

/// A client connection that answers `question` and reports `told`.
fn client(transport: Transport) -> (Connection, mpsc::UnboundedReceiver<Value>) {
    let (told, notifications) = mpsc::unbounded_channel();
    let connection = Connection::builder()
        .on_request(|request: IncomingRequest| async move {
            let params: Value = request.params()?;
            Ok(acp_engine::to_raw(&json!({ "answer": 42, "in": params["sessionId"] })).unwrap())
        })
        .on_notification(move |notification: IncomingNotification| {
            let told = told.clone();
            async move {
                let _ = told.send(notification.params::<Value>()?);
                Ok(())
            }
        })
        .connect(transport);
    (connection, notifications)
}

async fn call(connection: &Connection, method: &str, params: Value) -> Result<Value, RequestError> {
    tokio::time::timeout(PATIENCE, connection.send_request(method, &params))
        .await
        .expect("no hang")
}

async fn initialized(url: &str, options: &ConnectOptions) -> (Connection, mpsc::UnboundedReceiver<Value>) {
    let (connection, told) = client(remote::connect(url, options).await.unwrap());
    let answer = call(&connection, method::INITIALIZE, json!({ "protocolVersion": 1 }))
        .await
        .unwrap();
    assert_eq!(answer, json!({ "protocolVersion": 1 }));
    (connection, told)
}

/// Why a client that dials `url` and sends `initialize` is closed.
async fn refusal(url: &str, options: &ConnectOptions) -> String {
    let connection = Connection::builder().connect(remote::dial(url, options));
    let _ = call(&connection, method::INITIALIZE, json!({ "protocolVersion": 1 })).await;
    tokio::time::timeout(PATIENCE, connection.closed()).await.unwrap();
    connection.close_reason().unwrap_or_default()
}

async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_go_both_ways_in_order_over_each_transport() {
    let (server, seen) = agent_server(ServeOptions::default()).await;
    for via in BOTH {
        let (client, mut told) = initialized(&url(&server, via), &ConnectOptions::default()).await;
        for i in 0..50 {
            assert_eq!(
                call(&client, "echo", json!({ "i": i })).await.unwrap(),
                json!({ "i": i })
            );
            let in_session = json!({ "sessionId": "s1", "i": i });
            assert_eq!(
                call(&client, "echo", in_session.clone()).await.unwrap(),
                in_session
            );
        }
        // The agent's request to its client, in a session and outside one.
        for session in [json!("s1"), json!("s2"), Value::Null] {
            let answer = call(&client, "ask", json!({ "sessionId": session }))
                .await
                .unwrap();
            assert_eq!(
                answer,
                json!({ "client said": { "answer": 42, "in": session } }),
                "{via:?}"
            );
        }
        // A notification sent before the answer is handled before it.
        for n in 0..20 {
            assert_eq!(
                call(&client, "tell", json!({ "sessionId": "s1", "n": n }))
                    .await
                    .unwrap(),
                json!("told")
            );
            let notification = told
                .try_recv()
                .expect("the notification before its turn's answer");
            assert_eq!(notification["n"], json!(n), "{via:?}");
        }
        client.close();
        tokio::time::timeout(PATIENCE, client.closed()).await.unwrap();
    }
    eventually("both agents see their connection end", || {
        seen.closed.load(Ordering::SeqCst) == 2
    })
    .await;
    assert_eq!(seen.opened.load(Ordering::SeqCst), 2);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_and_the_path_are_checked_before_anything_reaches_an_agent() {
    let (server, seen) = agent_server(ServeOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ServeOptions::default()
    })
    .await;
    let right = ConnectOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ConnectOptions::default()
    };
    let wrong = ConnectOptions {
        bearer_token: Some("guess".to_owned()),
        ..ConnectOptions::default()
    };
    for via in BOTH {
        for (options, path, status) in [
            (ConnectOptions::default(), "/acp", "401"),
            (wrong.clone(), "/acp", "401"),
            (right.clone(), "/other", "404"),
        ] {
            let url = url(&server, via).replace("/acp", path);
            let connection = Connection::builder().connect(remote::dial(&url, &options));
            let error = call(&connection, method::INITIALIZE, json!({ "protocolVersion": 1 }))
                .await
                .unwrap_err();
            assert!(error.is_connection_closed(), "{error}");
            tokio::time::timeout(PATIENCE, connection.closed()).await.unwrap();
            let reason = connection.close_reason().unwrap_or_default();
            assert!(reason.contains(status), "{via:?} {path}: {reason}");
        }
        assert_eq!(seen.opened.load(Ordering::SeqCst), 0, "no agent started");
    }
    for via in BOTH {
        let (client, _) = initialized(&url(&server, via), &right).await;
        assert_eq!(call(&client, "echo", json!([1])).await.unwrap(), json!([1]));
    }
    assert_eq!(seen.opened.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorize_hook_refuses_with_403_before_anything_reaches_an_agent() {
    let authorize = Authorize(Arc::new(|request: &AuthRequest<'_>| {
        assert!(request.address.ip().is_loopback());
        request.headers.get("x-team").is_some_and(|team| team == "acp")
    }));
    let (server, seen) = agent_server(ServeOptions {
        authorize: Some(authorize),
        ..ServeOptions::default()
    })
    .await;
    let member = ConnectOptions {
        headers: vec![("X-Team".to_owned(), "acp".to_owned())],
        ..ConnectOptions::default()
    };
    for via in BOTH {
        let reason = refusal(&url(&server, via), &ConnectOptions::default()).await;
        assert!(reason.contains("403"), "{via:?}: {reason}");
        assert_eq!(seen.opened.load(Ordering::SeqCst), 0);
        // The caller's headers reach every request (the SSE streams' too).
        let (client, _) = initialized(&url(&server, via), &member).await;
        let params = json!({ "sessionId": "s", "n": 1 });
        assert_eq!(call(&client, "echo", params.clone()).await.unwrap(), params);
        client.close();
        seen.opened.store(0, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_limit() {
    let (server, _) = agent_server(ServeOptions {
        max_message_size: 4096,
        ..ServeOptions::default()
    })
    .await;
    let big = json!({ "big": "x".repeat(10_000) });
    // WebSocket: the frame closes the socket, failing what is pending.
    let (client, _) = initialized(&server.websocket_url(), &ConnectOptions::default()).await;
    let error = call(&client, "echo", big.clone()).await.unwrap_err();
    assert!(error.is_connection_closed(), "{error}");
    // Streamable HTTP: that POST is refused (413) and only its request fails.
    let (client, _) = initialized(&server.http_url(), &ConnectOptions::default()).await;
    let error = call(&client, "echo", big).await.unwrap_err();
    assert_eq!(error.code, -32603, "{error}");
    assert!(error.message.contains("413"), "{error}");
    assert_eq!(
        call(&client, "echo", json!({ "after": 1 })).await.unwrap(),
        json!({ "after": 1 })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_connection_and_fails_what_is_pending_at_once() {
    let (server, seen) = agent_server(ServeOptions::default()).await;
    let mut clients = Vec::new();
    for via in BOTH {
        let (client, _) = initialized(&url(&server, via), &ConnectOptions::default()).await;
        let pending = {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .send_request::<_, Value>("hang", &json!({ "sessionId": "s" }))
                    .await
            })
        };
        clients.push((via, client, pending));
    }
    eventually("both agents run", || seen.opened.load(Ordering::SeqCst) == 2).await;
    assert_eq!(server.connections(), 2);
    tokio::time::sleep(Duration::from_millis(50)).await;
    tokio::time::timeout(PATIENCE, server.shutdown())
        .await
        .expect("shutdown returns");
    for (via, client, pending) in clients {
        let error = tokio::time::timeout(PATIENCE, pending)
            .await
            .expect("no hang")
            .unwrap()
            .unwrap_err();
        // Over HTTP a request in a session may fail first as its session's
        // stream ends (-32603, as the official client does), or with the
        // connection's.
        let session_ended = error.code == -32603 && error.message.contains("SSE stream closed");
        assert!(error.is_connection_closed() || session_ended, "{via:?}: {error}");
        tokio::time::timeout(PATIENCE, client.closed()).await.unwrap();
    }
    eventually("both agents see the end", || {
        seen.closed.load(Ordering::SeqCst) == 2
    })
    .await;
}

#[test]
fn a_server_killed_mid_request_fails_what_is_pending() {
    // The server on a runtime of its own, dropped under it: as abrupt as a
    // killed process (interop/remote.sh kills `acp-engine serve` itself).
    let client_runtime = tokio::runtime::Runtime::new().unwrap();
    for via in BOTH {
        let server_runtime = tokio::runtime::Runtime::new().unwrap();
        let (server, _) = server_runtime.block_on(agent_server(ServeOptions::default()));
        let url = url(&server, via);
        client_runtime.block_on(async {
            let (client, _) = initialized(&url, &ConnectOptions::default()).await;
            let pending = {
                let client = client.clone();
                tokio::spawn(async move { client.send_request::<_, Value>("hang", &json!({})).await })
            };
            tokio::time::sleep(Duration::from_millis(50)).await;
            // And one in a session: over HTTP it waits on the session's stream.
            let in_session = {
                let client = client.clone();
                tokio::spawn(async move {
                    client
                        .send_request::<_, Value>("hang", &json!({ "sessionId": "s" }))
                        .await
                })
            };
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(server);
            server_runtime.shutdown_background();
            for pending in [pending, in_session] {
                let error = tokio::time::timeout(PATIENCE, pending)
                    .await
                    .expect("no hang")
                    .unwrap()
                    .unwrap_err();
                assert!(error.is_connection_closed(), "{via:?}: {error}");
            }
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_connections_at_once_over_both_transports() {
    let (server, seen) = agent_server(ServeOptions::default()).await;
    let mut runs = Vec::new();
    for i in 0..200 {
        let url = url(&server, BOTH[i % 2]);
        runs.push(tokio::spawn(async move {
            let (client, _) = initialized(&url, &ConnectOptions::default()).await;
            for n in 0..10 {
                let params = json!({ "sessionId": format!("s{i}"), "n": n });
                assert_eq!(call(&client, "echo", params.clone()).await.unwrap(), params);
            }
            client.close();
            client.closed().await;
        }));
    }
    for run in runs {
        tokio::time::timeout(PATIENCE * 3, run)
            .await
            .expect("no hang")
            .unwrap();
    }
    assert_eq!(seen.opened.load(Ordering::SeqCst), 200);
    eventually("every agent sees its end", || {
        seen.closed.load(Ordering::SeqCst) == 200
    })
    .await;
    eventually("every slot is free", || server.connections() == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_limit_refuses_with_503() {
    let (server, seen) = agent_server(ServeOptions {
        max_connections: 1,
        ..ServeOptions::default()
    })
    .await;
    let (first, _) = initialized(&server.websocket_url(), &ConnectOptions::default()).await;
    for via in BOTH {
        let reason = refusal(&url(&server, via), &ConnectOptions::default()).await;
        assert!(reason.contains("503"), "{via:?}: {reason}");
    }
    assert_eq!(seen.opened.load(Ordering::SeqCst), 1);
    first.close();
    eventually("the slot is free", || server.connections() == 0).await;
    initialized(&server.http_url(), &ConnectOptions::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_liveness_and_readiness_checks_count_connections_need_no_token_and_say_full() {
    let (server, seen) = agent_server(ServeOptions {
        max_connections: 1,
        bearer_token: Some("secret".to_owned()),
        ..ServeOptions::default()
    })
    .await;
    let live = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let ready = "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let ok = r#"{"status":"ok","connections":0,"maxConnections":1}"#.to_owned();
    assert_eq!(raw(&server, live).await, (200, ok.clone()));
    assert_eq!(raw(&server, ready).await, (200, ok));
    let with_token = ConnectOptions {
        bearer_token: Some("secret".to_owned()),
        ..ConnectOptions::default()
    };
    let (first, _) = initialized(&server.websocket_url(), &with_token).await;
    // Every slot taken: alive, but a load balancer should send the next
    // client elsewhere.
    let full = r#"{"status":"full","connections":1,"maxConnections":1}"#.to_owned();
    assert_eq!(raw(&server, live).await, (200, full.clone()));
    assert_eq!(raw(&server, ready).await, (503, full));
    first.close();
    eventually("the slot is free", || server.connections() == 0).await;
    assert_eq!(raw(&server, ready).await.0, 200);
    // Only GET, only its path; nothing reached an agent but the one client.
    let post = "POST /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(raw(&server, post).await.0, 404);
    assert_eq!(seen.opened.load(Ordering::SeqCst), 1);

    let (without, _) = agent_server(ServeOptions {
        health_path: None,
        ready_path: None,
        ..ServeOptions::default()
    })
    .await;
    assert_eq!(raw(&without, live).await.0, 404);
    assert_eq!(raw(&without, ready).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_wss_and_https_to_clients_that_trust_its_ca() {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let certificate = params.self_signed(&key).unwrap();
    let dir = std::env::temp_dir().join(format!("acp-remote-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, certificate.pem()).unwrap();
    let tls = ServerTls::from_pem(certificate.pem().as_bytes(), key.serialize_pem().as_bytes()).unwrap();
    let (server, _) = agent_server(ServeOptions {
        tls: Some(tls),
        ..ServeOptions::default()
    })
    .await;
    assert!(server.websocket_url().starts_with("wss://") && server.http_url().starts_with("https://"));
    let trusting = ConnectOptions {
        ca_file: Some(ca_file),
        ..ConnectOptions::default()
    };
    for via in BOTH {
        let (client, _) = initialized(&url(&server, via), &trusting).await;
        let params = json!({ "sessionId": "s", "secret": true });
        assert_eq!(call(&client, "echo", params.clone()).await.unwrap(), params);
        // Without the CA the certificate is not trusted.
        let refused = remote::connect(&url(&server, via), &ConnectOptions::default()).await;
        assert!(refused.is_err(), "{via:?}: a self-signed certificate was trusted");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One raw HTTP/1.1 exchange (`Connection: close`): status and body.
async fn raw(server: &Server, request: &str) -> (u16, String) {
    let (status, response) = support::raw_http::exchange(server.local_addr(), request).await;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn post(connection: Option<&str>, extra: &str, body: &str) -> String {
    let connection = connection
        .map(|id| format!("Acp-Connection-Id: {id}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n{connection}{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Open a connection by hand: its id.
async fn raw_initialize(server: &Server) -> String {
    let mut stream = tokio::net::TcpStream::connect(server.local_addr()).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    stream.write_all(post(None, "", body).as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.ends_with(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#),
        "{response}"
    );
    let header = response
        .lines()
        .find(|line| line.to_ascii_lowercase().starts_with("acp-connection-id:"))
        .expect("Acp-Connection-Id");
    header.split_once(':').unwrap().1.trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_read_as_the_official_python_servers_when_asked() {
    let (server, _) = agent_server(ServeOptions {
        refusal_body: RefusalBody::Json,
        bearer_token: Some("secret".to_owned()),
        ..ServeOptions::default()
    })
    .await;
    let token = "Authorization: Bearer secret\r\n";
    let id = {
        let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
        let (status, response) =
            support::raw_http::exchange(server.local_addr(), &post(None, token, body)).await;
        assert_eq!(status, 200, "{response}");
        let header = response
            .lines()
            .find(|line| line.to_ascii_lowercase().starts_with("acp-connection-id:"))
            .expect("Acp-Connection-Id");
        header.split_once(':').unwrap().1.trim().to_owned()
    };
    let echo = r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#;
    let cases = [
        (
            post(Some(&id), token, "[]"),
            501,
            r#"{"error":"JSON-RPC batches are not supported"}"#,
        ),
        (
            post(None, token, echo),
            400,
            r#"{"error":"Missing Acp-Connection-Id"}"#,
        ),
        (
            post(Some("nope"), token, echo),
            404,
            r#"{"error":"Unknown Acp-Connection-Id"}"#,
        ),
        (
            post(Some(&id), token, echo).replace("application/json", "text/plain"),
            415,
            r#"{"error":"Unsupported Media Type"}"#,
        ),
        (
            format!(
                "GET /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{token}Acp-Connection-Id: {id}\r\n\r\n"
            ),
            406,
            r#"{"error":"Not Acceptable"}"#,
        ),
        (
            post(Some(&id), "", echo),
            401,
            r#"{"error":"a valid bearer token is required"}"#,
        ),
    ];
    for (request, status, body) in cases {
        let (got, response) = support::raw_http::exchange(server.local_addr(), &request).await;
        assert_eq!(got, status, "{request}\n-> {response}");
        assert!(
            response.ends_with(&format!("\r\n\r\n{body}")),
            "{request}\n-> {response}"
        );
        assert!(
            response
                .to_ascii_lowercase()
                .contains("\r\ncontent-type: application/json\r\n"),
            "{response}"
        );
    }
    // A JSON-RPC error answer is one either way; what is not refused is untouched.
    let (got, text) = raw(&server, &post(Some(&id), token, "{not json")).await;
    assert_eq!(got, 400);
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (&answer["jsonrpc"], &answer["error"]["code"]),
        (&json!("2.0"), &json!(-32700)),
        "{text}"
    );
    assert_eq!(
        raw(&server, &post(Some(&id), token, echo)).await,
        (202, String::new())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_wire_refuses_what_the_official_server_refuses() {
    let (server, seen) = agent_server(ServeOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..ServeOptions::default()
    })
    .await;
    let id = raw_initialize(&server).await;
    let echo = r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#;
    let cases = [
        (post(Some(&id), "", "[]"), 400, Some(r#""code":-32600"#)),
        (post(Some(&id), "", "{not json"), 400, Some(r#""code":-32700"#)),
        (post(Some(&id), "", "42"), 400, Some(r#""code":-32600"#)),
        (post(None, "", echo), 400, Some("Missing Acp-Connection-Id")),
        (
            post(Some("nope"), "", echo),
            404,
            Some("Unknown Acp-Connection-Id"),
        ),
        (
            post(
                Some(&id),
                "",
                r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"sessionId":"s"}}"#,
            ),
            400,
            Some("Missing Acp-Session-Id"),
        ),
        (
            post(
                Some(&id),
                "Acp-Session-Id: t\r\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"sessionId":"s"}}"#,
            ),
            400,
            Some("Mismatched Acp-Session-Id"),
        ),
        (
            post(
                Some(&id),
                "",
                r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#,
            ),
            400,
            Some("Initialize not allowed"),
        ),
        (
            post(Some(&id), "", echo).replace("application/json", "text/plain"),
            415,
            None,
        ),
        (post(Some(&id), "", echo), 202, None),
        (
            "PUT /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_owned(),
            405,
            None,
        ),
        (
            format!("GET /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAcp-Connection-Id: {id}\r\n\r\n"),
            406,
            None,
        ),
        (
            "GET /elsewhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_owned(),
            404,
            None,
        ),
    ];
    for (request, status, body) in cases {
        let (got, text) = raw(&server, &request).await;
        assert_eq!(got, status, "{request}\n-> {text}");
        if let Some(body) = body {
            assert!(text.contains(body), "{request}\n-> {text}");
        }
    }
    // A 405 names the methods the endpoint has (RFC 9110).
    let (_, refused) = support::raw_http::exchange(
        server.local_addr(),
        "OPTIONS /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(
        refused
            .to_ascii_lowercase()
            .contains("\r\nallow: get, post, delete\r\n"),
        "{refused}"
    );
    // One reader per stream: a second GET gets 409.
    let get = format!(
        "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {id}\r\n\r\n"
    );
    let mut first = tokio::net::TcpStream::connect(server.local_addr()).await.unwrap();
    first.write_all(get.as_bytes()).await.unwrap();
    let mut head = vec![0; 12];
    first.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let (status, _) = raw(&server, &get.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")).await;
    assert_eq!(status, 409);
    // The earlier echo's answer is on the connection's stream.
    let mut events = Vec::new();
    while !String::from_utf8_lossy(&events).contains(r#""id":1,"result":{}"#) {
        let mut chunk = [0; 1024];
        let n = tokio::time::timeout(PATIENCE, first.read(&mut chunk))
            .await
            .expect("the answer")
            .unwrap();
        assert!(n > 0, "the stream ended early");
        events.extend_from_slice(&chunk[..n]);
    }
    assert!(
        String::from_utf8_lossy(&events).contains("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
    );
    drop(first);
    // DELETE ends it; then the id is unknown.
    let delete =
        format!("DELETE /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAcp-Connection-Id: {id}\r\n\r\n");
    assert_eq!(raw(&server, &delete).await.0, 202);
    assert_eq!(raw(&server, &delete).await.0, 404);
    eventually("the agent sees DELETE", || {
        seen.closed.load(Ordering::SeqCst) == 1
    })
    .await;
    // A client that vanishes without DELETE: ended after the idle timeout.
    let _vanished = raw_initialize(&server).await;
    eventually("the idle connection ends", || {
        seen.closed.load(Ordering::SeqCst) == 2
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_id_length_and_unread_session_limits_are_the_servers_to_set() {
    let (server, seen) = agent_server(ServeOptions {
        max_id_length: 8,
        max_buffered_session_streams: 2,
        ..ServeOptions::default()
    })
    .await;
    let id = raw_initialize(&server).await;
    let in_session = |session: &str, request_id: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{request_id},"method":"echo","params":{{"sessionId":"{session}"}}}}"#
        );
        post(Some(&id), &format!("Acp-Session-Id: {session}\r\n"), &body)
    };
    // Eight bytes pass; nine are refused, in a session id or a request id.
    assert_eq!(raw(&server, &in_session("abcdefgh", "1")).await.0, 202);
    let (status, text) = raw(&server, &in_session("abcdefghi", "2")).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("Session ID exceeds maxIdLength (8)"), "{text}");
    let (status, text) = raw(&server, &in_session("s2", r#""request-9""#)).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("Request ID exceeds maxIdLength (8)"), "{text}");
    let get = format!(
        "GET /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {id}\r\nAcp-Session-Id: abcdefghi\r\n\r\n"
    );
    let (status, text) = raw(&server, &get).await;
    assert_eq!(
        (status, text.contains("Session ID exceeds maxIdLength (8)")),
        (400, true),
        "{text}"
    );
    // Answers wait in two sessions no client reads; a third such session ends the connection.
    assert_eq!(raw(&server, &in_session("s2", "3")).await.0, 202);
    assert_eq!(raw(&server, &in_session("s3", "4")).await.0, 202);
    eventually("a third session of unread output ends the connection", || {
        seen.closed.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(raw(&server, &in_session("s4", "5")).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialled_transport_closes_with_the_reason_it_could_not_connect() {
    // Nothing listens there: the port is bound but not listening, so no
    // other test's server can take it meanwhile (a freed port could be).
    let reserved = tokio::net::TcpSocket::new_v4().unwrap();
    reserved.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = reserved.local_addr().unwrap();
    for url in [
        format!("ws://{address}/acp"),
        format!("http://{address}/acp"),
        "ftp://x/".to_owned(),
    ] {
        let reason = refusal(&url, &ConnectOptions::default()).await;
        // The reason itself, not dressed as a failed read of a stream.
        assert!(reason.starts_with("cannot connect to "), "{url}: {reason}");
    }
    let reason = refusal("ws://127.0.0.1:99999/acp", &ConnectOptions::default()).await;
    assert!(reason.contains("99999 is not a port"), "{reason}");
    assert!(remote::is_url("HTTPS://h/acp") && remote::is_url("ws://h") && !remote::is_url("my-agent"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_that_are_not_utf8_cross_a_websocket_and_get_the_engines_parse_error() {
    use tokio::io::AsyncBufReadExt;
    let (server, _) = agent_server(ServeOptions::default()).await;
    let (reader, mut writer) = remote::connect(&server.websocket_url(), &ConnectOptions::default())
        .await
        .unwrap()
        .into_streams();
    let mut lines = tokio::io::BufReader::new(reader).lines();
    // Not UTF-8: a binary frame, which the server takes as a line (-32700).
    writer.write_all(b"\xff\xfe not JSON\n").await.unwrap();
    let answer = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{answer}"
    );
    // And the connection answers on.
    writer
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        )
        .await
        .unwrap();
    let answer = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(answer.contains("\"result\":{\"protocolVersion\":1}"), "{answer}");
}
