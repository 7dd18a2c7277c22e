//! A remote client gives a server `connect_timeout` to take its connection:
//! one that accepts the TCP connection and then says nothing (a stuck
//! server, a balancer with no backend) fails it with the reason instead of
//! leaving it, and what was sent on it, waiting for ever.

#![cfg(feature = "remote")]

use std::time::{Duration, Instant};

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::{Connection, RequestError};

/// A listener that never accepts: the kernel completes the TCP handshake
/// (its backlog), and nothing ever answers.
fn silent_server() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn quick() -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Some(Duration::from_millis(300)),
        ..ConnectOptions::default()
    }
}

#[test]
fn a_client_waits_ten_seconds_unless_told_otherwise() {
    // As the bindings pass it: absent, the default; 0, for ever.
    let millis = ConnectOptions::connect_timeout_millis;
    assert_eq!(millis(None), Some(Duration::from_secs(10)));
    assert_eq!(millis(Some(0)), None);
    assert_eq!(millis(Some(300)), Some(Duration::from_millis(300)));
    assert_eq!(
        ConnectOptions::default().connect_timeout,
        Some(Duration::from_secs(10))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrade_nobody_answers_fails_in_time() {
    let (_listener, port) = silent_server();
    let started = Instant::now();
    let (url, options) = (format!("ws://127.0.0.1:{port}/acp"), quick());
    let connecting = remote::connect(&url, &options);
    let connected = tokio::time::timeout(Duration::from_secs(10), connecting)
        .await
        .expect("the connect ends instead of waiting for ever");
    let Err(error) = connected else {
        panic!("a server that never answers cannot be connected to");
    };
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
    assert!(error.to_string().contains("within 300 ms"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_sent_while_dialling_fails_with_the_reason() {
    let (_listener, port) = silent_server();
    let url = format!("ws://127.0.0.1:{port}/acp");
    let connection = Connection::builder().connect(remote::dial(&url, &quick()));
    let started = Instant::now();
    let params = serde_json::json!({"protocolVersion": 1});
    let sent = connection.send_request::<_, serde_json::Value>("initialize", &params);
    let error: RequestError = tokio::time::timeout(Duration::from_secs(10), sent)
        .await
        .expect("the request fails instead of waiting for ever")
        .unwrap_err();
    assert!(error.to_string().contains("within 300 ms"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
