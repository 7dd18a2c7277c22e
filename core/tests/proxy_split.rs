//! A proxy's connection to its conductor split in two
//! (`conductor::split`), under a pass-through `run_proxy`, with a raw peer
//! playing the conductor over a socket pair. Initialize,
//! both directions, id spaces, a malformed envelope, and a cancellation
//! crossing the proxy. Real conductors drive proxies built on it in
//! interop/conductor.sh.

mod support;

use acp_engine::conductor::proxy::{run_proxy, Proxy};
use acp_engine::conductor::split::SUCCESSOR_IDS;
use serde_json::{json, Value};
use support::{raw_transport, RawPeer, PATIENCE};

/// A proxy that passes everything on (every method's default).
struct PassThrough;

impl Proxy for PassThrough {}

fn pass_through(conductor: acp_engine::Transport) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run_proxy(PassThrough, conductor))
}

async fn recv(peer: &mut RawPeer) -> Value {
    tokio::time::timeout(PATIENCE, peer.recv())
        .await
        .expect("a message")
}

#[tokio::test]
async fn messages_cross_the_proxy_both_ways_in_their_envelopes() {
    let (transport, mut conductor) = raw_transport();
    let _proxy = pass_through(transport);

    conductor
        .request(json!(1), "proxy/initialize", json!({"protocolVersion": 1}))
        .await;
    let initialize = recv(&mut conductor).await;
    assert_eq!(initialize["method"], "proxy/successor", "{initialize}");
    assert_eq!(
        initialize["params"],
        json!({"method": "initialize", "params": {"protocolVersion": 1}})
    );
    let id = initialize["id"].as_i64().unwrap();
    assert!(id >= SUCCESSOR_IDS, "{initialize}");
    conductor
        .send(&json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": 1}}).to_string())
        .await;
    assert_eq!(
        recv(&mut conductor).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}})
    );

    // From the agent side: unwrapped toward the client, plain.
    let update = json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}});
    conductor
        .notify(
            "proxy/successor",
            json!({"method": "session/update", "params": update}),
        )
        .await;
    let plain = recv(&mut conductor).await;
    assert_eq!(
        (plain["method"].clone(), plain["params"].clone()),
        (json!("session/update"), update)
    );

    conductor
        .request(
            json!("r1"),
            "proxy/successor",
            json!({"method": "fs/read_text_file", "params": {"path": "/a"}}),
        )
        .await;
    let asked = recv(&mut conductor).await;
    assert_eq!(asked["method"], "fs/read_text_file", "{asked}");
    assert!(asked["id"].as_i64().unwrap() < SUCCESSOR_IDS);
    conductor.reply(&asked, json!({"content": "x"})).await;
    assert_eq!(
        recv(&mut conductor).await,
        json!({"jsonrpc": "2.0", "id": "r1", "result": {"content": "x"}})
    );

    // Not an envelope: answered here, and the proxy goes on.
    conductor
        .request(json!(2), "proxy/successor", json!({"params": {}}))
        .await;
    let refused = recv(&mut conductor).await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(2), json!(-32602))
    );
}

#[tokio::test]
async fn a_cancellation_crosses_the_proxy_to_the_request_it_became() {
    let (transport, mut conductor) = raw_transport();
    let _proxy = pass_through(transport);
    conductor
        .request(
            json!(7),
            "session/prompt",
            json!({"sessionId": "s", "prompt": []}),
        )
        .await;
    let forwarded = recv(&mut conductor).await;
    assert_eq!(forwarded["params"]["method"], "session/prompt", "{forwarded}");
    conductor
        .notify("$/cancel_request", json!({"requestId": 7}))
        .await;
    // The predecessor's handler is dropped, and with it the successor's
    // request: its cancellation names the id it went out as.
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(recv(&mut conductor).await);
    }
    let cancel = seen
        .iter()
        .find(|m| m["method"] == "$/cancel_request")
        .expect("a cancellation");
    assert_eq!(cancel["params"], json!({"requestId": forwarded["id"]}));
    let answer = seen.iter().find(|m| m["id"] == 7).expect("an answer");
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
}

#[tokio::test]
async fn the_proxy_ends_with_its_conductor() {
    let (transport, mut conductor) = raw_transport();
    let proxy = pass_through(transport);
    conductor.hang_up();
    tokio::time::timeout(PATIENCE, proxy)
        .await
        .expect("run_proxy returns")
        .unwrap();
    conductor.expect_eof().await;
}
