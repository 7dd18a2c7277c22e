//! A Streamable HTTP `session/load` answers after the history it replays:
//! the server sends the answer on the session's event stream, behind the
//! replayed updates, so a client never sees the load done before its
//! history (the official server sends it on the connection's stream,
//! racing the history). Over loopback, with our client.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use acp_engine::remote::{self, ConnectOptions, ServeOptions, Server};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingNotification, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::PATIENCE;

/// Updates an agent replays on each `session/load`.
const HISTORY: usize = 300;

async fn replaying_agent(request: IncomingRequest) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    let answer = match request.method.as_str() {
        method::INITIALIZE => json!({ "protocolVersion": 1, "agentCapabilities": { "loadSession": true } }),
        method::SESSION_LOAD => {
            for turn in 0..HISTORY {
                let update = json!({ "sessionId": params["sessionId"], "turn": turn });
                request.connection.send_notification("replayed", &update).await?;
            }
            json!({})
        }
        _ => return Err(RequestError::method_not_found(&request.method)),
    };
    Ok(acp_engine::to_raw(&answer).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_load_returns_after_every_replayed_update() {
    let server = Server::bind("127.0.0.1:0", ServeOptions::default(), |lines, _| {
        Connection::builder()
            .on_request(replaying_agent)
            .connect(Transport::from_stream(lines));
    })
    .await
    .unwrap();
    let url = server.http_url();
    let replayed = Arc::new(AtomicUsize::new(0));
    let counted = replayed.clone();
    let client = Connection::builder()
        .on_notification(move |_: IncomingNotification| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(()) }
        })
        .connect(remote::connect(&url, &ConnectOptions::default()).await.unwrap());
    let _: Value = client
        .send_request(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
        .await
        .unwrap();
    for session in 1..=20 {
        let before = replayed.load(Ordering::SeqCst);
        let load = json!({ "sessionId": format!("s{session}"), "cwd": "/", "mcpServers": [] });
        let _: Value = tokio::time::timeout(PATIENCE, client.send_request(method::SESSION_LOAD, &load))
            .await
            .expect("session/load answers")
            .unwrap();
        let seen = replayed.load(Ordering::SeqCst) - before;
        assert_eq!(
            seen, HISTORY,
            "session s{session}: load answered after {seen} of its {HISTORY} updates"
        );
    }
    client.close();
    server.shutdown().await;
}
