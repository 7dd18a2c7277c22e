//! ACP v1 and the v2 draft on one host connection (`HostOptions::protocol_versions`):
//! `initialize` selects the version as the official SDKs' routers do, and every
//! message after it is checked against that version's schema, both ways, over a
//! real socket pair.

mod support;

use std::time::Duration;

use acp_engine::host::{kind, HostConnection, HostOptions, Side};
use acp_engine::ProtocolVersions;
use serde_json::{json, Value};
use support::{raw_transport, RawPeer};

fn host(side: Side, versions: ProtocolVersions) -> (HostConnection, RawPeer) {
    let (transport, peer) = raw_transport();
    let options = HostOptions {
        side,
        protocol_versions: versions,
        ..HostOptions::default()
    };
    let connection = HostConnection::connect(transport, options, &tokio::runtime::Handle::current(), || {});
    (connection, peer)
}

async fn next_event(host: &HostConnection) -> Value {
    for _ in 0..1000 {
        if let Some(text) = host.drain() {
            let mut batch: Vec<Value> = serde_json::from_str(&text).unwrap();
            assert_eq!(batch.len(), 1, "{batch:?}");
            return batch.remove(0);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("no event");
}

fn v2_initialize() -> Value {
    json!({"protocolVersion": 2, "info": {"name": "client", "version": "1.0.0"}, "capabilities": {}})
}

const V2_RUNNING: &str = r#"{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_speaking_both_serves_a_v2_client_v2() {
    let (agent, mut client) = host(Side::Agent, ProtocolVersions::V1_AND_V2);
    assert_eq!(agent.protocol_version(), 1);
    client.request(json!(1), "initialize", v2_initialize()).await;
    let event = next_event(&agent).await;
    assert_eq!(
        (event[0].clone(), event[2].clone()),
        (json!(kind::REQUEST), json!("initialize"))
    );
    // The agent handling `initialize` already knows what it speaks.
    assert_eq!(agent.protocol_version(), 2);
    let token = event[1].as_u64().unwrap();
    let answer = r#"{"protocolVersion":2,"info":{"name":"agent","version":"1.0.0"}}"#;
    agent.respond(token, Ok(answer)).unwrap();
    assert_eq!(client.recv().await["result"]["protocolVersion"], 2);

    // v1's methods are gone in v2: session/load is unknown, and the agent
    // cannot call the client's file system.
    client
        .request(
            json!(2),
            "session/load",
            json!({"sessionId": "s", "cwd": "/", "mcpServers": []}),
        )
        .await;
    assert_eq!(client.recv().await["error"]["code"], -32601);
    let read = r#"{"sessionId":"s","path":"/a"}"#;
    assert_eq!(
        agent
            .send_request("fs/read_text_file", Some(read))
            .unwrap_err()
            .code,
        -32601
    );
    // v2's own messages go through both ways.
    client
        .request(
            json!(3),
            "session/prompt",
            json!({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(next_event(&agent).await[2], "session/prompt");
    agent
        .send_notification("session/update", Some(V2_RUNNING))
        .unwrap();
    assert_eq!(client.recv().await["params"]["update"]["state"], "running");
    // A repeated initialize may not ask for less.
    client
        .request(json!(4), "initialize", json!({"protocolVersion": 1}))
        .await;
    assert_eq!(client.recv().await["error"]["code"], -32600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_speaking_both_serves_a_v1_client_v1() {
    let (agent, mut client) = host(Side::Agent, ProtocolVersions::V1_AND_V2);
    client
        .request(json!(1), "initialize", json!({"protocolVersion": 1}))
        .await;
    assert_eq!(next_event(&agent).await[2], "initialize");
    assert_eq!(agent.protocol_version(), 1);
    // v1's methods are there; v2's state updates are not v1 session updates.
    client
        .request(
            json!(2),
            "session/load",
            json!({"sessionId": "s", "cwd": "/", "mcpServers": []}),
        )
        .await;
    assert_eq!(next_event(&agent).await[2], "session/load");
    let read = r#"{"sessionId":"s","path":"/a"}"#;
    agent.send_request("fs/read_text_file", Some(read)).unwrap();
    assert_eq!(client.recv().await["method"], "fs/read_text_file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_agent_refuses_a_v1_client_and_keeps_the_connection() {
    let (agent, mut client) = host(Side::Agent, ProtocolVersions::V2);
    client
        .request(json!(1), "initialize", json!({"protocolVersion": 1}))
        .await;
    let refused = client.recv().await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requested": 1, "supported": [2]})
    );
    client
        .request(json!(2), "initialize", json!({"protocolVersion": "two"}))
        .await;
    assert_eq!(client.recv().await["error"]["code"], -32602);
    assert!(agent.drain().is_none());
    // The client may try again.
    client.request(json!(3), "initialize", v2_initialize()).await;
    assert_eq!(next_event(&agent).await[2], "initialize");
    assert_eq!(agent.protocol_version(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_asking_for_v2_follows_the_agents_answer() {
    let (client, mut agent) = host(Side::Client, ProtocolVersions::V1_AND_V2);
    // v2's initialize needs `info`: what we send is checked as v2.
    assert_eq!(
        client
            .send_request("initialize", Some(r#"{"protocolVersion":2}"#))
            .unwrap_err()
            .code,
        -32602
    );
    let (id, _) = client
        .send_request("initialize", Some(&v2_initialize().to_string()))
        .unwrap();
    let request = agent.recv().await;
    assert_eq!(request["params"]["protocolVersion"], 2);
    // A v1 agent answers with the version it speaks.
    agent
        .reply(&request, json!({"protocolVersion": 1, "agentCapabilities": {}}))
        .await;
    let event = next_event(&client).await;
    assert_eq!(
        (event[0].clone(), event[1].clone()),
        (json!(kind::RESULT), json!(id))
    );
    assert_eq!(client.protocol_version(), 1);
    // Now v1's methods go out, and v1's session updates come in.
    client
        .send_request(
            "session/load",
            Some(r#"{"sessionId":"s","cwd":"/","mcpServers":[]}"#),
        )
        .unwrap();
    assert_eq!(agent.recv().await["method"], "session/load");

    let (client, mut agent) = host(Side::Client, ProtocolVersions::V1_AND_V2);
    client
        .send_request("initialize", Some(&v2_initialize().to_string()))
        .unwrap();
    let request = agent.recv().await;
    agent
        .reply(
            &request,
            json!({"protocolVersion": 2, "info": {"name": "agent", "version": "1"}}),
        )
        .await;
    next_event(&client).await;
    assert_eq!(client.protocol_version(), 2);
    agent
        .notify("session/update", serde_json::from_str(V2_RUNNING).unwrap())
        .await;
    assert_eq!(next_event(&client).await[0], kind::NOTIFICATION);
    assert!(client
        .send_request(
            "session/load",
            Some(r#"{"sessionId":"s","cwd":"/","mcpServers":[]}"#)
        )
        .is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_agent_hears_a_legacy_string_version_as_a_number() {
    // As the official Python SDK: a client from before ACP numbered its
    // versions gets an answer, not -32602.
    let (agent, mut client) = host(Side::Agent, ProtocolVersions::V1);
    client
        .request(json!(1), "initialize", json!({"protocolVersion": "2024-11-05"}))
        .await;
    let event = next_event(&agent).await;
    assert_eq!(event[2], "initialize");
    assert_eq!(event[3], json!({"protocolVersion": 1}));
    let token = event[1].as_u64().unwrap();
    agent
        .respond(token, Ok(r#"{"protocolVersion":1,"agentCapabilities":{}}"#))
        .unwrap();
    let answer = client.recv().await;
    assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
    // Any other type is still refused by the schema check.
    client
        .request(json!(2), "initialize", json!({"protocolVersion": [1]}))
        .await;
    assert_eq!(client.recv().await["error"]["code"], -32602);
}
