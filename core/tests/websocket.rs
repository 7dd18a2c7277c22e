//! The WebSocket transports in process: a server whose connections are
//! engine connections, a client that calls them, the token check, and the
//! engine's rules over frames.

#![cfg(feature = "websocket")]

mod support;

use acp_engine::websocket::{self, ConnectOptions, ServeOptions};
use acp_engine::{Connection, Transport};
use serde_json::{json, Value};
use support::PATIENCE;

/// A server on a free loopback port whose connections echo their params.
async fn echo_server(options: ServeOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}{}", listener.local_addr().unwrap(), options.path);
    tokio::spawn(websocket::serve(listener, options, |lines, _peer| {
        let connection = Connection::builder()
            .on_request(|request: acp_engine::IncomingRequest| async move {
                Ok(request
                    .params
                    .unwrap_or_else(|| acp_engine::to_raw(&json!({})).unwrap()))
            })
            .connect(Transport::from_stream(lines));
        // The connection lives until its socket closes.
        tokio::spawn(async move { connection.closed().await });
    }));
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_calls_a_server_over_websocket() {
    let url = echo_server(ServeOptions::default()).await;
    let lines = websocket::connect(&url, &ConnectOptions::default())
        .await
        .unwrap();
    let client = Connection::builder().connect(Transport::from_stream(lines));
    for i in 0..100 {
        let answer: Value = tokio::time::timeout(PATIENCE, client.send_request("echo", &json!({ "i": i })))
            .await
            .expect("no hang")
            .unwrap();
        assert_eq!(answer, json!({ "i": i }));
    }
    client.close();
    tokio::time::timeout(PATIENCE, client.closed()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_and_the_path_are_checked_before_the_upgrade() {
    let url = echo_server(ServeOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ServeOptions::default()
    })
    .await;
    let refused = websocket::connect(&url, &ConnectOptions::default())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("401"), "{refused}");
    let wrong = ConnectOptions {
        bearer_token: Some("guess".to_owned()),
        ..ConnectOptions::default()
    };
    let refused = websocket::connect(&url, &wrong).await.unwrap_err();
    assert!(refused.to_string().contains("401"), "{refused}");
    let elsewhere = url.replace("/acp", "/other");
    let right = ConnectOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ConnectOptions::default()
    };
    let refused = websocket::connect(&elsewhere, &right).await.unwrap_err();
    assert!(refused.to_string().contains("404"), "{refused}");
    let lines = websocket::connect(&url, &right).await.unwrap();
    let client = Connection::builder().connect(Transport::from_stream(lines));
    let answer: Value = client.send_request("echo", &json!([1])).await.unwrap();
    assert_eq!(answer, json!([1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_over_the_limit_closes_the_socket_and_pending_calls_fail() {
    let url = echo_server(ServeOptions {
        max_message_size: 4096,
        ..ServeOptions::default()
    })
    .await;
    let lines = websocket::connect(&url, &ConnectOptions::default())
        .await
        .unwrap();
    let client = Connection::builder().connect(Transport::from_stream(lines));
    let big = "x".repeat(10_000);
    let error = tokio::time::timeout(
        PATIENCE,
        client.send_request::<_, Value>("echo", &json!({ "big": big })),
    )
    .await
    .expect("no hang")
    .unwrap_err();
    assert!(error.is_connection_closed(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialled_transport_connects_in_the_background_or_closes_with_the_reason() {
    let url = echo_server(ServeOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ServeOptions::default()
    })
    .await;
    let right = ConnectOptions {
        bearer_token: Some("s3cret".to_owned()),
        ..ConnectOptions::default()
    };
    let client = Connection::builder().connect(websocket::dial(&url, &right));
    let answer: Value = tokio::time::timeout(PATIENCE, client.send_request("echo", &json!({ "a": 1 })))
        .await
        .expect("no hang")
        .unwrap();
    assert_eq!(answer, json!({ "a": 1 }));

    let refused = Connection::builder().connect(websocket::dial(&url, &ConnectOptions::default()));
    let error = tokio::time::timeout(PATIENCE, refused.send_request::<_, Value>("echo", &json!({})))
        .await
        .expect("no hang")
        .unwrap_err();
    assert!(error.is_connection_closed(), "{error}");
    tokio::time::timeout(PATIENCE, refused.closed()).await.unwrap();
    let reason = refused.close_reason().unwrap();
    assert!(
        reason.contains("cannot connect") && reason.contains("401"),
        "{reason}"
    );
}
