//! Typed ACP v2 (`acp_engine::v2`) over a real socket pair, a raw peer on
//! the other side: the version rules a v2 connection keeps (nothing before
//! `initialize`, -32022 for a v1 client, a v2 client failing a v1 answer),
//! the v1/v2 router choosing the agent by `initialize`, a v1 agent hearing a
//! v2 client's `initialize` in v1's shape, schema validation
//! and the `session/cancel` rule for permission requests, in v2's shapes.
//! The official SDKs' v2 peers drive the examples in interop/v2.sh.

mod support;

use std::sync::Arc;

use acp_engine::v2::schema::*;
use acp_engine::v2::{AgentProtocolRouter, AgentSideConnection, ClientSideConnection};
use acp_engine::RequestError;
use serde_json::{json, Value};
use support::{raw_transport, RawPeer, PATIENCE};
use tokio::sync::Notify;

/// A v2 agent that answers everything with fixed shapes.
struct V2Agent;

impl acp_engine::v2::Agent for V2Agent {
    async fn initialize(&self, request: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        assert_eq!(request.protocol_version, 2);
        Ok(InitializeResponse::new(2, Implementation::new("v2", "1")))
    }
    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        Ok(NewSessionResponse::new("s-2"))
    }
    async fn prompt(&self, _: PromptRequest) -> Result<PromptResponse, RequestError> {
        Ok(PromptResponse::new("m-1"))
    }
}

fn v2_initialize() -> Value {
    json!({"protocolVersion": 2, "info": {"name": "client", "version": "1"}, "capabilities": {}})
}

async fn answer(peer: &mut RawPeer, id: i64) -> Value {
    let message = tokio::time::timeout(PATIENCE, peer.recv())
        .await
        .expect("an answer");
    assert_eq!(message["id"], id, "{message}");
    message
}

#[tokio::test]
async fn a_v2_agent_keeps_the_version_rules_and_the_connection() {
    let (transport, mut client) = raw_transport();
    let _agent = AgentSideConnection::new(|_| V2Agent, transport);

    client
        .request(json!(1), "session/new", json!({"cwd": "/tmp"}))
        .await;
    let early = answer(&mut client, 1).await;
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'session/new'"),
        "{early}"
    );

    client
        .request(json!(2), "initialize", json!({"protocolVersion": 1}))
        .await;
    let v1 = answer(&mut client, 2).await;
    assert_eq!(v1["error"]["code"], -32022, "{v1}");
    assert_eq!(v1["error"]["data"], json!({"requested": 1, "supported": [2]}));

    client.request(json!(3), "initialize", v2_initialize()).await;
    assert_eq!(answer(&mut client, 3).await["result"]["protocolVersion"], 2);

    // v2's shapes now: a prompt without a session is -32602 naming the field.
    client
        .request(json!(4), "session/prompt", json!({"prompt": []}))
        .await;
    let invalid = answer(&mut client, 4).await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    client
        .request(
            json!(5),
            "session/prompt",
            json!({"sessionId": "s-2", "prompt": []}),
        )
        .await;
    assert_eq!(
        answer(&mut client, 5).await["result"],
        json!({"messageId": "m-1"})
    );
    // A repeated initialize asking for less than v2 is refused.
    client
        .request(json!(6), "initialize", json!({"protocolVersion": 1}))
        .await;
    assert_eq!(answer(&mut client, 6).await["error"]["code"], -32600);
}

#[tokio::test]
async fn the_router_serves_each_client_the_version_it_asks_for() {
    for (asked, expected) in [(1, 1), (2, 2), (5, 2)] {
        let (transport, mut client) = raw_transport();
        let router = AgentProtocolRouter::new(|_| RecordingV1Agent(Heard::default()), |_| V2Agent, transport);
        let params = match asked {
            1 => json!({"protocolVersion": 1, "clientCapabilities": {}}),
            _ => json!({"protocolVersion": asked, "info": {"name": "client", "version": "1"}}),
        };
        client.request(json!(1), "initialize", params).await;
        assert_eq!(
            answer(&mut client, 1).await["result"]["protocolVersion"],
            expected
        );
        assert_eq!(router.protocol_version(), expected);
        client
            .request(json!(2), "session/new", json!({"cwd": "/tmp", "mcpServers": []}))
            .await;
        let session = if expected == 1 { "s-1" } else { "s-2" };
        assert_eq!(answer(&mut client, 2).await["result"]["sessionId"], session);
    }
}

/// A v1 agent (the router's for v1 clients) that keeps the `initialize`
/// params its handler got.
struct RecordingV1Agent(Heard);

type Heard = Arc<std::sync::Mutex<Option<acp_engine::schema::InitializeRequest>>>;

impl acp_engine::Agent for RecordingV1Agent {
    async fn initialize(
        &self,
        request: acp_engine::schema::InitializeRequest,
    ) -> Result<acp_engine::schema::InitializeResponse, RequestError> {
        *self.0.lock().unwrap() = Some(request);
        Ok(acp_engine::schema::InitializeResponse::new(1))
    }
    async fn new_session(
        &self,
        _: acp_engine::schema::NewSessionRequest,
    ) -> Result<acp_engine::schema::NewSessionResponse, RequestError> {
        Ok(acp_engine::schema::NewSessionResponse::new("s-1"))
    }
    async fn prompt(
        &self,
        _: acp_engine::schema::PromptRequest,
    ) -> Result<acp_engine::schema::PromptResponse, RequestError> {
        Ok(acp_engine::schema::PromptResponse::new(
            acp_engine::schema::StopReason::EndTurn,
        ))
    }
    async fn cancel(&self, _: acp_engine::schema::CancelNotification) -> Result<(), RequestError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_v1_agent_hears_a_v2_clients_initialize_in_v1s_shape() {
    let (transport, mut client) = raw_transport();
    let seen = Heard::default();
    let recorder = RecordingV1Agent(seen.clone());
    let _agent = acp_engine::AgentSideConnection::new(move |_| recorder, transport);
    let params = json!({"protocolVersion": 2, "info": {"name": "client", "version": "1"},
        "capabilities": {"auth": {"terminal": {}}}});
    client.request(json!(1), "initialize", params).await;
    assert_eq!(answer(&mut client, 1).await["result"]["protocolVersion"], 1);
    let heard = seen.lock().unwrap().take().expect("initialize reached the agent");
    assert_eq!(heard.protocol_version, 1);
    assert_eq!(heard.client_info.expect("clientInfo from info").name, "client");
    let wire = serde_json::to_value(&heard.client_capabilities).unwrap();
    assert_eq!(wire["auth"]["terminal"], true, "{wire}");
    assert_eq!(wire["fs"]["readTextFile"], false, "{wire}");

    // A v1 client's initialize asking for a newer version in v1's shape stays as sent.
    let (transport, mut client) = raw_transport();
    let seen = Heard::default();
    let recorder = RecordingV1Agent(seen.clone());
    let _agent = acp_engine::AgentSideConnection::new(move |_| recorder, transport);
    let params = json!({"protocolVersion": 2, "clientCapabilities": {"terminal": true},
        "clientInfo": {"name": "old", "version": "1"}});
    client.request(json!(1), "initialize", params).await;
    answer(&mut client, 1).await;
    let heard = seen.lock().unwrap().take().unwrap();
    assert_eq!(heard.protocol_version, 2);
    assert_eq!(heard.client_info.unwrap().name, "old");
}

/// A client whose permission handler waits until the test lets it go.
struct WaitingClient {
    release: Arc<Notify>,
}

impl acp_engine::v2::Client for WaitingClient {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        self.release.notified().await;
        let option = request.options[0].option_id.clone();
        Ok(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option)),
        ))
    }
}

/// The client's `initialize` asking for v2, on its own task.
fn initialize_v2(
    client: &ClientSideConnection,
) -> tokio::task::JoinHandle<Result<InitializeResponse, RequestError>> {
    let client = client.clone();
    tokio::spawn(async move {
        client
            .initialize(InitializeRequest::new(2, Implementation::new("c", "1")))
            .await
    })
}

#[tokio::test]
async fn a_v2_client_fails_an_agent_answering_v1() {
    let (transport, mut agent) = raw_transport();
    let release = Arc::new(Notify::new());
    let client = ClientSideConnection::new(|_| WaitingClient { release }, transport);
    let asking = initialize_v2(&client);
    let request = agent.recv().await;
    assert_eq!(request["params"]["protocolVersion"], 2);
    agent
        .reply(&request, json!({"protocolVersion": 1, "agentCapabilities": {}}))
        .await;
    let refused = asking.await.unwrap().unwrap_err();
    assert_eq!(refused.code, -32600);
    assert_eq!(
        refused.data,
        Some(json!({"expectedProtocolVersion": 2, "receivedProtocolVersion": 1}))
    );
}

#[tokio::test]
async fn a_v2_client_refuses_the_agent_before_initialize_and_withdraws_permissions_on_cancel() {
    let (transport, mut agent) = raw_transport();
    let release = Arc::new(Notify::new());
    let client = ClientSideConnection::new(
        |_| WaitingClient {
            release: release.clone(),
        },
        transport,
    );
    let permission = json!({"sessionId": "s", "title": "Write?", "options": [
        {"optionId": "yes", "name": "Yes", "kind": "allow_once"}]});
    agent
        .request(json!(1), "session/request_permission", permission.clone())
        .await;
    let early = answer(&mut agent, 1).await;
    assert_eq!(early["error"]["code"], -32600, "{early}");

    let asking = initialize_v2(&client);
    let request = agent.recv().await;
    agent
        .reply(
            &request,
            json!({"protocolVersion": 2, "info": {"name": "a", "version": "1"}}),
        )
        .await;
    asking.await.unwrap().unwrap();
    assert_eq!(client.protocol_version(), 2);

    // A permission request waits on the client; cancelling the session answers it.
    agent
        .request(json!(2), "session/request_permission", permission)
        .await;
    agent.expect_silence(100).await;
    client
        .cancel_session(CancelSessionNotification::new("s"))
        .await
        .unwrap();
    let cancel = agent.recv().await;
    assert_eq!(cancel["method"], "session/cancel");
    let answered = answer(&mut agent, 2).await;
    assert_eq!(answered["result"], json!({"outcome": {"outcome": "cancelled"}}));
    release.notify_waiters();
}
