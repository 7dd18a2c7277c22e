//! Typed ACP over the wire: every method of schema/v1/schema.json in both
//! directions, validation, unknown methods, extension methods, prompt-turn
//! cancellation, ordering, and TerminalHandle. A raw peer plays the other
//! side, and every message either side puts on the wire is checked against
//! the official JSON Schema.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use acp_engine::schema::*;
use acp_engine::{Agent, AgentSideConnection, Client, ClientSideConnection, RequestError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use support::{raw_transport, RawPeer};

/// (method, params the caller sends, result the handler answers)
fn agent_cases() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true},
                   "terminal": true}, "clientInfo": {"name": "test", "version": "1"}}),
            json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true}, "authMethods":
                   [{"id": "key", "name": "API key"}], "agentInfo": {"name": "t", "version": "1"}}),
        ),
        ("authenticate", json!({"methodId": "key"}), json!({})),
        ("logout", json!({}), json!({})),
        (
            "session/new",
            json!({"cwd": "/tmp", "mcpServers": [{"name": "fs", "command": "/bin/mcp", "args": [], "env": []}]}),
            json!({"sessionId": "s-1"}),
        ),
        (
            "session/load",
            json!({"sessionId": "s-1", "cwd": "/tmp", "mcpServers": []}),
            json!({}),
        ),
        (
            "session/list",
            json!({}),
            json!({"sessions": [{"sessionId": "s-1", "cwd": "/tmp"}]}),
        ),
        ("session/delete", json!({"sessionId": "s-1"}), json!({})),
        (
            "session/resume",
            json!({"sessionId": "s-1", "cwd": "/tmp"}),
            json!({}),
        ),
        ("session/close", json!({"sessionId": "s-1"}), json!({})),
        (
            "session/set_mode",
            json!({"sessionId": "s-1", "modeId": "code"}),
            json!({}),
        ),
        (
            "session/set_config_option",
            json!({"sessionId": "s-1", "configId": "model", "value": "fast"}),
            json!({"configOptions": []}),
        ),
        (
            "session/prompt",
            json!({"sessionId": "s-1", "prompt": [{"type": "text", "text": "hi"},
                   {"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs"}]}),
            json!({"stopReason": "end_turn"}),
        ),
    ]
}

fn client_cases() -> Vec<(&'static str, Value, Value)> {
    let terminal = json!({"sessionId": "s-1", "terminalId": "t-1"});
    vec![
        (
            "session/request_permission",
            json!({"sessionId": "s-1", "toolCall": {"toolCallId": "c-1", "title": "Edit a.rs"},
                   "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}),
            json!({"outcome": {"outcome": "selected", "optionId": "allow"}}),
        ),
        (
            "fs/read_text_file",
            json!({"sessionId": "s-1", "path": "/a.rs", "line": 1, "limit": 2}),
            json!({"content": "fn main() {}\n"}),
        ),
        (
            "fs/write_text_file",
            json!({"sessionId": "s-1", "path": "/a.rs", "content": "x"}),
            json!({}),
        ),
        (
            "terminal/create",
            json!({"sessionId": "s-1", "command": "ls", "args": ["-l"], "env": [{"name": "A", "value": "1"}],
                   "cwd": "/tmp", "outputByteLimit": 1024}),
            json!({"terminalId": "t-1"}),
        ),
        (
            "terminal/output",
            terminal.clone(),
            json!({"output": "hi\n", "truncated": false, "exitStatus": {"exitCode": 0}}),
        ),
        ("terminal/release", terminal.clone(), json!({})),
        ("terminal/wait_for_exit", terminal.clone(), json!({"exitCode": 0})),
        ("terminal/kill", terminal, json!({})),
        (
            "elicitation/create",
            json!({"message": "Sign in", "mode": "url", "elicitationId": "e-1", "url": "https://example.com/login",
                   "sessionId": "s-1"}),
            json!({"action": "cancel"}),
        ),
    ]
}

fn agent_notifications() -> Vec<(&'static str, Value)> {
    vec![("session/cancel", json!({"sessionId": "s-1"}))]
}

fn client_notifications() -> Vec<(&'static str, Value)> {
    vec![
        (
            "session/update",
            json!({"sessionId": "s-1", "update": {"sessionUpdate": "agent_message_chunk",
                   "content": {"type": "text", "text": "hi"}}}),
        ),
        ("elicitation/complete", json!({"elicitationId": "e-1"})),
    ]
}

/// The methods of one side (`x-side`), as the stable schema lists them (`x-method`).
fn schema_methods(side: &str) -> BTreeSet<String> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/v1/schema.json")).unwrap(),
    )
    .unwrap();
    schema["$defs"]
        .as_object()
        .unwrap()
        .values()
        .filter(|def| def["x-side"] == side)
        .filter_map(|def| def["x-method"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_cases_cover_every_method_of_the_schema() {
    let agent: BTreeSet<String> = agent_cases()
        .iter()
        .map(|c| c.0.to_owned())
        .chain(agent_notifications().iter().map(|c| c.0.to_owned()))
        .collect();
    assert_eq!(agent, schema_methods("agent"));
    let client: BTreeSet<String> = client_cases()
        .iter()
        .map(|c| c.0.to_owned())
        .chain(client_notifications().iter().map(|c| c.0.to_owned()))
        .collect();
    assert_eq!(client, schema_methods("client"));
}

/// What a test handler saw: (method, params as they serialize back).
type Calls = Arc<Mutex<Vec<(String, Value)>>>;

/// Record the call and answer the canned result for the method.
fn answer<P: Serialize, R: DeserializeOwned>(
    calls: &Calls,
    cases: &[(&'static str, Value, Value)],
    method: &str,
    params: &P,
) -> Result<R, RequestError> {
    calls
        .lock()
        .unwrap()
        .push((method.to_owned(), serde_json::to_value(params).unwrap()));
    let (_, _, result) = cases
        .iter()
        .find(|c| c.0 == method)
        .expect("a case for the method");
    Ok(serde_json::from_value(result.clone()).expect("the canned result parses"))
}

/// An agent that implements every method and records what it got.
struct RecordingAgent {
    calls: Calls,
}

impl RecordingAgent {
    fn record<P: Serialize, R: DeserializeOwned>(&self, method: &str, params: &P) -> Result<R, RequestError> {
        answer(&self.calls, &agent_cases(), method, params)
    }
}

impl Agent for RecordingAgent {
    async fn initialize(&self, p: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        self.record("initialize", &p)
    }
    async fn authenticate(&self, p: AuthenticateRequest) -> Result<AuthenticateResponse, RequestError> {
        self.record("authenticate", &p)
    }
    async fn logout(&self, p: LogoutRequest) -> Result<LogoutResponse, RequestError> {
        self.record("logout", &p)
    }
    async fn new_session(&self, p: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        self.record("session/new", &p)
    }
    async fn load_session(&self, p: LoadSessionRequest) -> Result<LoadSessionResponse, RequestError> {
        self.record("session/load", &p)
    }
    async fn list_sessions(&self, p: ListSessionsRequest) -> Result<ListSessionsResponse, RequestError> {
        self.record("session/list", &p)
    }
    async fn delete_session(&self, p: DeleteSessionRequest) -> Result<DeleteSessionResponse, RequestError> {
        self.record("session/delete", &p)
    }
    async fn resume_session(&self, p: ResumeSessionRequest) -> Result<ResumeSessionResponse, RequestError> {
        self.record("session/resume", &p)
    }
    async fn close_session(&self, p: CloseSessionRequest) -> Result<CloseSessionResponse, RequestError> {
        self.record("session/close", &p)
    }
    async fn set_session_mode(
        &self,
        p: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, RequestError> {
        self.record("session/set_mode", &p)
    }
    async fn set_session_config_option(
        &self,
        p: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, RequestError> {
        self.record("session/set_config_option", &p)
    }
    async fn prompt(&self, p: PromptRequest) -> Result<PromptResponse, RequestError> {
        self.record("session/prompt", &p)
    }
    async fn cancel(&self, p: CancelNotification) -> Result<(), RequestError> {
        self.calls
            .lock()
            .unwrap()
            .push(("session/cancel".into(), serde_json::to_value(&p).unwrap()));
        Ok(())
    }
    async fn ext_method(&self, method: String, params: Value) -> Result<Value, RequestError> {
        Ok(json!({"ext": method, "params": params}))
    }
    async fn ext_notification(&self, method: String, params: Value) -> Result<(), RequestError> {
        self.calls.lock().unwrap().push((method, params));
        Ok(())
    }
}

/// A client that implements every method and records what it got.
struct RecordingClient {
    calls: Calls,
}

impl RecordingClient {
    fn record<P: Serialize, R: DeserializeOwned>(&self, method: &str, params: &P) -> Result<R, RequestError> {
        answer(&self.calls, &client_cases(), method, params)
    }
}

impl Client for RecordingClient {
    async fn request_permission(
        &self,
        p: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        self.record("session/request_permission", &p)
    }
    async fn session_update(&self, p: SessionNotification) -> Result<(), RequestError> {
        self.calls
            .lock()
            .unwrap()
            .push(("session/update".into(), serde_json::to_value(&p).unwrap()));
        Ok(())
    }
    async fn complete_elicitation(&self, p: CompleteElicitationNotification) -> Result<(), RequestError> {
        self.calls
            .lock()
            .unwrap()
            .push(("elicitation/complete".into(), serde_json::to_value(&p).unwrap()));
        Ok(())
    }
    async fn read_text_file(&self, p: ReadTextFileRequest) -> Result<ReadTextFileResponse, RequestError> {
        self.record("fs/read_text_file", &p)
    }
    async fn write_text_file(&self, p: WriteTextFileRequest) -> Result<WriteTextFileResponse, RequestError> {
        self.record("fs/write_text_file", &p)
    }
    async fn create_terminal(
        &self,
        p: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, RequestError> {
        self.record("terminal/create", &p)
    }
    async fn terminal_output(
        &self,
        p: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, RequestError> {
        self.record("terminal/output", &p)
    }
    async fn release_terminal(
        &self,
        p: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, RequestError> {
        self.record("terminal/release", &p)
    }
    async fn wait_for_terminal_exit(
        &self,
        p: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, RequestError> {
        self.record("terminal/wait_for_exit", &p)
    }
    async fn kill_terminal(&self, p: KillTerminalRequest) -> Result<KillTerminalResponse, RequestError> {
        self.record("terminal/kill", &p)
    }
    async fn create_elicitation(
        &self,
        p: CreateElicitationRequest,
    ) -> Result<CreateElicitationResponse, RequestError> {
        self.record("elicitation/create", &p)
    }
}

fn recording_agent() -> (AgentSideConnection, RawPeer, Calls) {
    let calls = Calls::default();
    let (transport, peer) = raw_transport();
    let handler_calls = calls.clone();
    let conn = AgentSideConnection::new(move |_client| RecordingAgent { calls: handler_calls }, transport);
    (conn, peer.checked(), calls)
}

fn recording_client() -> (ClientSideConnection, RawPeer, Calls) {
    let calls = Calls::default();
    let (transport, peer) = raw_transport();
    let handler_calls = calls.clone();
    let conn = ClientSideConnection::new(move |_agent| RecordingClient { calls: handler_calls }, transport);
    (conn, peer.checked(), calls)
}

/// With an unknown field and `_meta` added at the top level of the params:
/// both must reach the handler.
fn with_extras(params: &Value) -> Value {
    let mut params = params.clone();
    params["x-future-field"] = json!({"kept": true});
    params["_meta"] = json!({"trace": "abc"});
    params
}

#[tokio::test]
async fn every_agent_method_is_served_with_exact_results() {
    let (_conn, mut peer, calls) = recording_agent();
    for (n, (method, params, result)) in agent_cases().into_iter().enumerate() {
        let params = with_extras(&params);
        peer.request(json!(n), method, params.clone()).await;
        let reply = peer.recv().await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": n, "result": result}),
            "{method}"
        );
        let (seen_method, seen_params) = calls.lock().unwrap().pop().unwrap();
        assert_eq!(seen_method, method);
        assert_eq!(
            seen_params, params,
            "{method}: the handler saw every field, unknown ones too"
        );
    }
    for (method, params) in agent_notifications() {
        peer.notify(method, params.clone()).await;
        // A request after it: answered only once the notification ran? No —
        // requests are concurrent; poll for the notification instead.
        support::eventually(|| {
            calls
                .lock()
                .unwrap()
                .iter()
                .any(|(m, p)| m == method && *p == params)
        })
        .await;
    }
}

#[tokio::test]
async fn every_client_method_is_served_with_exact_results() {
    let (_conn, mut peer, calls) = recording_client();
    for (n, (method, params, result)) in client_cases().into_iter().enumerate() {
        let params = with_extras(&params);
        peer.request(json!(format!("req-{n}")), method, params.clone())
            .await;
        let reply = peer.recv().await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": format!("req-{n}"), "result": result}),
            "{method}"
        );
        let (seen_method, seen_params) = calls.lock().unwrap().pop().unwrap();
        assert_eq!(seen_method, method);
        assert_eq!(seen_params, params, "{method}");
    }
    for (method, params) in client_notifications() {
        peer.notify(method, params.clone()).await;
        support::eventually(|| {
            calls
                .lock()
                .unwrap()
                .iter()
                .any(|(m, p)| m == method && *p == params)
        })
        .await;
    }
}

/// Call `method` on the typed connection by name, with the case's params.
async fn call_client_method(conn: &AgentSideConnection, method: &str, params: Value) -> Value {
    fn p<T: DeserializeOwned>(params: Value) -> T {
        serde_json::from_value(params).unwrap()
    }
    fn v<T: Serialize>(result: Result<T, RequestError>) -> Value {
        serde_json::to_value(result.unwrap()).unwrap()
    }
    match method {
        "session/request_permission" => v(conn.request_permission(p(params)).await),
        "fs/read_text_file" => v(conn.read_text_file(p(params)).await),
        "fs/write_text_file" => v(conn.write_text_file(p(params)).await),
        "terminal/create" => {
            let handle = conn.create_terminal(p(params)).await.unwrap();
            let id = json!({"terminalId": handle.id()});
            std::mem::forget(handle); // released by its own test
            id
        }
        "terminal/output" => v(conn.terminal_output(p(params)).await),
        "terminal/release" => v(conn.release_terminal(p(params)).await),
        "terminal/wait_for_exit" => v(conn.wait_for_terminal_exit(p(params)).await),
        "terminal/kill" => v(conn.kill_terminal(p(params)).await),
        "elicitation/create" => v(conn.create_elicitation(p(params)).await),
        "session/update" => v(conn.session_update(p(params)).await),
        "elicitation/complete" => v(conn.complete_elicitation(p(params)).await),
        other => panic!("no client method {other}"),
    }
}

async fn call_agent_method(conn: &ClientSideConnection, method: &str, params: Value) -> Value {
    fn p<T: DeserializeOwned>(params: Value) -> T {
        serde_json::from_value(params).unwrap()
    }
    fn v<T: Serialize>(result: Result<T, RequestError>) -> Value {
        serde_json::to_value(result.unwrap()).unwrap()
    }
    match method {
        "initialize" => v(conn.initialize(p(params)).await),
        "authenticate" => v(conn.authenticate(p(params)).await),
        "logout" => v(conn.logout(p(params)).await),
        "session/new" => v(conn.new_session(p(params)).await),
        "session/load" => v(conn.load_session(p(params)).await),
        "session/list" => v(conn.list_sessions(p(params)).await),
        "session/delete" => v(conn.delete_session(p(params)).await),
        "session/resume" => v(conn.resume_session(p(params)).await),
        "session/close" => v(conn.close_session(p(params)).await),
        "session/set_mode" => v(conn.set_session_mode(p(params)).await),
        "session/set_config_option" => v(conn.set_session_config_option(p(params)).await),
        "session/prompt" => v(conn.prompt(p(params)).await),
        "session/cancel" => v(conn.cancel(p(params)).await),
        other => panic!("no agent method {other}"),
    }
}

#[tokio::test]
async fn the_agent_side_calls_every_client_method_with_exact_wire_messages() {
    let (conn, mut peer, _calls) = recording_agent();
    for (method, params, result) in client_cases() {
        let params = with_extras(&params);
        let call = tokio::spawn({
            let (conn, params) = (conn.clone(), params.clone());
            async move { call_client_method(&conn, method, params).await }
        });
        let request = peer.recv().await;
        assert_eq!(request["method"], method);
        assert_eq!(
            request["params"], params,
            "{method}: sent exactly, extras included"
        );
        peer.reply(&request, result.clone()).await;
        assert_eq!(call.await.unwrap(), result, "{method}");
    }
    for (method, params) in client_notifications() {
        call_client_method(&conn, method, params.clone()).await;
        let notification = peer.recv().await;
        assert_eq!(
            notification,
            json!({"jsonrpc": "2.0", "method": method, "params": params})
        );
    }
}

#[tokio::test]
async fn the_client_side_calls_every_agent_method_with_exact_wire_messages() {
    let (conn, mut peer, _calls) = recording_client();
    for (method, params, result) in agent_cases() {
        let params = with_extras(&params);
        let call = tokio::spawn({
            let (conn, params) = (conn.clone(), params.clone());
            async move { call_agent_method(&conn, method, params).await }
        });
        let request = peer.recv().await;
        assert_eq!(request["method"], method);
        assert_eq!(request["params"], params, "{method}");
        peer.reply(&request, result.clone()).await;
        assert_eq!(call.await.unwrap(), result, "{method}");
    }
    for (method, params) in agent_notifications() {
        call_agent_method(&conn, method, params.clone()).await;
        let notification = peer.recv().await;
        assert_eq!(
            notification,
            json!({"jsonrpc": "2.0", "method": method, "params": params})
        );
    }
}

#[tokio::test]
async fn params_that_do_not_match_the_schema_get_invalid_params_naming_the_field() {
    let (_conn, mut peer, calls) = recording_agent();
    let cases = [
        (json!({"prompt": [{"type": "text", "text": "hi"}]}), "sessionId"),
        (json!({"sessionId": "s-1", "prompt": "not a list"}), "prompt"),
        (
            json!({"sessionId": "s-1", "prompt": [{"type": "text", "text": 42}]}),
            "prompt[0]",
        ),
    ];
    for (n, (params, field)) in cases.into_iter().enumerate() {
        peer.send(
            &json!({"jsonrpc": "2.0", "id": n, "method": "session/prompt", "params": params}).to_string(),
        )
        .await;
        let reply = peer.recv().await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        let data = &reply["error"]["data"];
        assert_eq!(data["method"], "session/prompt");
        let named = data["path"].as_str().unwrap().contains(field)
            || data["message"].as_str().unwrap().contains(field);
        assert!(named, "{field} not named in {data}");
    }
    assert!(
        calls.lock().unwrap().is_empty(),
        "the handler never saw invalid params"
    );
}

#[tokio::test]
async fn methods_outside_the_schema_reach_ext_method_and_are_method_not_found_by_default() {
    // A peer that sends what the schema does not have (not `checked()`).
    let calls = Calls::default();
    let (transport, mut peer) = raw_transport();
    let _conn = AgentSideConnection::new(
        {
            let calls = calls.clone();
            move |_| RecordingAgent { calls }
        },
        transport,
    );
    // The legacy model selection real clients send (outside the schema).
    peer.request(
        json!(1),
        acp_engine::legacy::SESSION_SET_MODEL,
        json!({"sessionId": "s", "modelId": "m"}),
    )
    .await;
    assert_eq!(
        peer.recv().await["result"],
        json!({"ext": "session/set_model", "params": {"sessionId": "s", "modelId": "m"}})
    );
    peer.request(json!(2), "_acme/ping", json!({"n": 1})).await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"ext": "_acme/ping", "params": {"n": 1}}})
    );
    peer.send(r#"{"jsonrpc":"2.0","method":"_acme/note","params":{"x":true}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"session/teleported","params":{"y":1}}"#)
        .await;
    support::eventually(|| {
        let calls = calls.lock().unwrap();
        calls.iter().any(|(m, p)| m == "_acme/note" && p["x"] == true)
            && calls
                .iter()
                .any(|(m, p)| m == "session/teleported" && p["y"] == 1)
    })
    .await;

    // A handler without ext_method: -32601 naming the method; an unknown
    // notification is ignored, nothing is answered.
    let (transport, mut peer) = raw_transport();
    let _minimal = AgentSideConnection::new(|_| MinimalAgent, transport);
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/teleport","params":{}}"#)
        .await;
    let refused = peer.recv().await;
    assert_eq!(refused["error"]["code"], -32601);
    assert_eq!(refused["error"]["data"]["method"], "session/teleport");
    peer.send(r#"{"jsonrpc":"2.0","method":"session/teleported","params":{}}"#)
        .await;
    peer.expect_silence(100).await;
}

/// A client sends a method outside the schema through its connection's
/// generic request (nothing checks what a Rust typed connection sends).
#[tokio::test]
async fn a_typed_client_sends_a_legacy_method_to_a_typed_agent() {
    let (a, b) = acp_engine::Transport::memory_pair();
    let calls = Calls::default();
    let _agent = AgentSideConnection::new(
        {
            let calls = calls.clone();
            move |_| RecordingAgent { calls }
        },
        a,
    );
    let client = ClientSideConnection::new(|_| MinimalClient, b);
    let request = acp_engine::legacy::SetSessionModelRequest {
        session_id: "s-1".into(),
        model_id: "fast".into(),
    };
    let answer: Value = client
        .connection()
        .send_request(acp_engine::legacy::SESSION_SET_MODEL, &request)
        .await
        .unwrap();
    assert_eq!(answer["params"], json!({"sessionId": "s-1", "modelId": "fast"}));
}

/// An agent with only the required methods.
struct MinimalAgent;

impl Agent for MinimalAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        Ok(InitializeResponse::new(1))
    }
    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        Ok(NewSessionResponse::new("s"))
    }
    async fn prompt(&self, _: PromptRequest) -> Result<PromptResponse, RequestError> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
    async fn cancel(&self, _: CancelNotification) -> Result<(), RequestError> {
        Ok(())
    }
}

/// A client with only the required methods: no fs, no terminal.
struct MinimalClient;

impl Client for MinimalClient {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        Ok(RequestPermissionResponse::new(
            RequestPermissionOutcome::Cancelled,
        ))
    }
    async fn session_update(&self, _: SessionNotification) -> Result<(), RequestError> {
        Ok(())
    }
}

#[tokio::test]
async fn methods_a_side_does_not_implement_answer_method_not_found() {
    let (transport, peer) = raw_transport();
    let _agent = AgentSideConnection::new(|_| MinimalAgent, transport);
    let mut peer = peer.checked();
    for (n, (method, params, _)) in agent_cases().into_iter().enumerate() {
        if ["initialize", "session/new", "session/prompt"].contains(&method) {
            continue;
        }
        peer.request(json!(n), method, params).await;
        let reply = peer.recv().await;
        assert_eq!(reply["error"]["code"], -32601, "{method}");
        assert_eq!(reply["error"]["data"]["method"], method);
    }

    let (transport, peer) = raw_transport();
    let _client = ClientSideConnection::new(|_| MinimalClient, transport);
    let mut peer = peer.checked();
    for (n, (method, params, _)) in client_cases().into_iter().enumerate() {
        if method == "session/request_permission" {
            continue;
        }
        peer.request(json!(n), method, params).await;
        assert_eq!(peer.recv().await["error"]["code"], -32601, "{method}");
    }
}

/// A client whose permission prompt never answers (the user walked away).
struct WaitingClient {
    updates: Arc<AtomicUsize>,
}

impl Client for WaitingClient {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        std::future::pending().await
    }
    async fn session_update(&self, _: SessionNotification) -> Result<(), RequestError> {
        tokio::task::yield_now().await;
        self.updates.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn cancelling_a_prompt_turn_answers_pending_permission_requests_cancelled() {
    let (transport, peer) = raw_transport();
    let updates = Arc::new(AtomicUsize::new(0));
    let conn = ClientSideConnection::new(
        {
            let updates = updates.clone();
            move |_| WaitingClient { updates }
        },
        transport,
    );
    let mut agent = peer.checked();
    let turn = tokio::spawn({
        let conn = conn.clone();
        async move {
            let prompt = PromptRequest::new("s-1", vec![ContentBlock::Text(TextContent::new("go"))]);
            conn.prompt(prompt).await
        }
    });
    let prompt = agent.recv().await;
    assert_eq!(prompt["method"], "session/prompt");
    agent
        .request(
            json!(100),
            "session/request_permission",
            json!({"sessionId": "s-1", "toolCall": {"toolCallId": "c-1"},
                   "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]}),
        )
        .await;
    agent.expect_silence(50).await; // the user has not answered
    conn.cancel(CancelNotification::new("s-1")).await.unwrap();
    assert_eq!(
        agent.recv().await,
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}})
    );
    assert_eq!(
        agent.recv().await,
        json!({"jsonrpc": "2.0", "id": 100, "result": {"outcome": {"outcome": "cancelled"}}})
    );
    agent.reply(&prompt, json!({"stopReason": "cancelled"})).await;
    assert_eq!(turn.await.unwrap().unwrap().stop_reason, StopReason::Cancelled);
}

#[tokio::test]
async fn every_update_sent_before_the_prompt_response_is_delivered_before_prompt_resolves() {
    let (transport, peer) = raw_transport();
    let updates = Arc::new(AtomicUsize::new(0));
    let conn = ClientSideConnection::new(
        {
            let updates = updates.clone();
            move |_| WaitingClient { updates }
        },
        transport,
    );
    let mut agent = peer.checked();
    for round in 1..=3 {
        let turn = tokio::spawn({
            let conn = conn.clone();
            async move {
                let prompt = PromptRequest::new("s-1", vec![ContentBlock::Text(TextContent::new("go"))]);
                conn.prompt(prompt).await
            }
        });
        let prompt = agent.recv().await;
        let mut burst = String::new();
        for n in 0..300 {
            let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1",
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": format!("{n}")}}}});
            burst.push_str(&format!("{update}\n"));
        }
        burst.push_str(&format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}})
        ));
        agent.send_bytes(burst.as_bytes()).await;
        assert_eq!(turn.await.unwrap().unwrap().stop_reason, StopReason::EndTurn);
        assert_eq!(updates.load(Ordering::SeqCst), 300 * round);
    }
}

#[tokio::test]
async fn a_terminal_handle_runs_its_lifecycle_and_releases_once() {
    let (conn, mut client, _calls) = recording_agent();
    let create = tokio::spawn({
        let conn = conn.clone();
        async move {
            let mut request = CreateTerminalRequest::new("s-1", "make");
            request.args = Some(vec!["test".into()]);
            conn.create_terminal(request).await
        }
    });
    let request = client.recv().await;
    assert_eq!(
        request["params"],
        json!({"sessionId": "s-1", "command": "make", "args": ["test"]})
    );
    client.reply(&request, json!({"terminalId": "t-9"})).await;
    let terminal = Arc::new(create.await.unwrap().unwrap());
    assert_eq!(terminal.id().as_ref(), "t-9");

    let steps: [(&str, Value); 3] = [
        ("terminal/output", json!({"output": "ok\n", "truncated": false})),
        ("terminal/wait_for_exit", json!({"exitCode": 0})),
        ("terminal/kill", json!({})),
    ];
    for (method, result) in steps {
        let call = tokio::spawn({
            let terminal = terminal.clone();
            async move {
                match method {
                    "terminal/output" => {
                        serde_json::to_value(terminal.current_output().await.unwrap()).unwrap()
                    }
                    "terminal/wait_for_exit" => {
                        serde_json::to_value(terminal.wait_for_exit().await.unwrap()).unwrap()
                    }
                    _ => serde_json::to_value(terminal.kill().await.unwrap()).unwrap(),
                }
            }
        });
        let request = client.recv().await;
        assert_eq!(request["method"], method);
        assert_eq!(
            request["params"],
            json!({"sessionId": "s-1", "terminalId": "t-9"})
        );
        client.reply(&request, result.clone()).await;
        assert_eq!(call.await.unwrap(), result);
    }

    let release = tokio::spawn({
        let terminal = terminal.clone();
        async move { terminal.release().await }
    });
    let request = client.recv().await;
    assert_eq!(request["method"], "terminal/release");
    client.reply(&request, json!({})).await;
    release.await.unwrap().unwrap();
    // Releasing again, or dropping the released handle, sends nothing.
    terminal.release().await.unwrap();
    drop(terminal);
    client.expect_silence(100).await;
}

#[tokio::test]
async fn a_dropped_terminal_handle_is_released() {
    let (conn, mut client, _calls) = recording_agent();
    let create = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.create_terminal(CreateTerminalRequest::new("s-1", "sleep"))
                .await
        }
    });
    let request = client.recv().await;
    client.reply(&request, json!({"terminalId": "t-1"})).await;
    let terminal = create.await.unwrap().unwrap();
    drop(terminal);
    let release = client.recv().await;
    assert_eq!(release["method"], "terminal/release");
    assert_eq!(
        release["params"],
        json!({"sessionId": "s-1", "terminalId": "t-1"})
    );
}

#[tokio::test]
async fn a_typed_agent_and_client_talk_in_memory() {
    let (a, b) = acp_engine::Transport::memory_pair();
    let _agent = AgentSideConnection::new(|_| MinimalAgent, a);
    let updates = Arc::new(AtomicUsize::new(0));
    let client = ClientSideConnection::new(
        {
            let updates = updates.clone();
            move |_| WaitingClient { updates }
        },
        b,
    );
    let init = client.initialize(InitializeRequest::new(1)).await.unwrap();
    assert_eq!(init.protocol_version, 1);
    let session = client
        .new_session(NewSessionRequest::new("/tmp", vec![]))
        .await
        .unwrap();
    let turn = client
        .prompt(PromptRequest::new(
            session.session_id,
            vec![ContentBlock::Text(TextContent::new("x"))],
        ))
        .await
        .unwrap();
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    let error = client
        .authenticate(AuthenticateRequest::new("k"))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32601);
}

/// Every request method of schema.unstable.json is routed to a typed method
/// when the `unstable` feature is on: params of the wrong shape get -32602
/// (they were parsed for that method) rather than -32601 (unknown).
#[cfg(feature = "unstable")]
#[tokio::test]
async fn with_the_unstable_feature_every_unstable_request_is_routed() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../schema/v1/schema.unstable.json"
        ))
        .unwrap(),
    )
    .unwrap();
    // Requests: the methods of a side with a response definition.
    let probe = |side: &str| {
        let defs = schema["$defs"].as_object().unwrap();
        let mut methods: Vec<String> = defs
            .iter()
            .filter(|(name, def)| def["x-side"] == side && name.ends_with("Response"))
            .map(|(_, def)| def["x-method"].as_str().unwrap().to_owned())
            .collect();
        methods.dedup();
        assert!(methods.len() > 5, "{side}: {methods:?}");
        methods
    };
    let (transport, peer) = raw_transport();
    let _agent = AgentSideConnection::new(|_| MinimalAgent, transport);
    let mut peer = peer;
    for (n, method) in probe("agent").into_iter().enumerate() {
        peer.send(&json!({"jsonrpc": "2.0", "id": n, "method": method, "params": [1]}).to_string())
            .await;
        let reply = peer.recv().await;
        assert_eq!(reply["error"]["code"], -32602, "{method}: {reply}");
    }
    let (transport, peer) = raw_transport();
    let _client = ClientSideConnection::new(|_| MinimalClient, transport);
    let mut peer = peer;
    for (n, method) in probe("client").into_iter().enumerate() {
        peer.send(&json!({"jsonrpc": "2.0", "id": n, "method": method, "params": [1]}).to_string())
            .await;
        let reply = peer.recv().await;
        assert_eq!(reply["error"]["code"], -32602, "{method}: {reply}");
    }
}

/// The example agent's whole prompt turn (permission, fs, terminal) against
/// a typed client: every message both ways matches the official schema.
#[tokio::test]
async fn the_example_agents_turn_is_schema_valid_both_ways() {
    let audit = support::schema::WireAudit::default();
    let observer = audit.clone();
    let builder = acp_engine::Connection::builder()
        .observer(move |direction: acp_engine::Direction, line: &[u8]| observer.observe(direction, line));
    let transport =
        acp_engine::Transport::spawn(acp_engine::SpawnOptions::new(support::example("agent"))).unwrap();
    let calls = Calls::default();
    let client_calls = calls.clone();
    let agent = ClientSideConnection::with_builder(
        builder,
        move |_| RecordingClient { calls: client_calls },
        transport,
    );
    let init = InitializeRequest {
        client_capabilities: Some(ClientCapabilities {
            fs: Some(FileSystemCapabilities {
                read_text_file: Some(true),
                write_text_file: Some(true),
                ..Default::default()
            }),
            terminal: Some(true),
            // The turn then has a notice and a context compaction too.
            session: Some(ClientSessionCapabilities {
                notices: Some(NoticeCapabilities::default()),
                compaction: Some(CompactionCapabilities::default()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..InitializeRequest::new(1)
    };
    agent.initialize(init).await.unwrap();
    let session = agent
        .new_session(NewSessionRequest::new("/tmp", vec![]))
        .await
        .unwrap();
    let prompt = PromptRequest::new(
        session.session_id,
        vec![ContentBlock::Text(TextContent::new("Say hello"))],
    );
    assert_eq!(
        agent.prompt(prompt).await.unwrap().stop_reason,
        StopReason::EndTurn
    );
    let served: Vec<String> = calls.lock().unwrap().iter().map(|(m, _)| m.clone()).collect();
    for method in [
        "session/request_permission",
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
    ] {
        assert!(served.contains(&method.to_owned()), "{method} in {served:?}");
    }
    let kinds: Vec<Value> = calls
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == "session/update")
        .map(|(_, p)| p["update"]["sessionUpdate"].clone())
        .filter(|kind| kind != "agent_message_chunk")
        .collect();
    assert_eq!(
        kinds,
        [
            "notice",
            "compaction_update",
            "compaction_summary_chunk",
            "compaction_update"
        ]
    );
    agent.close();
    agent.closed().await;
    let (messages, errors) = audit.report();
    assert!(messages >= 18, "saw only {messages} messages");
    assert!(errors.is_empty(), "{errors:#?}");
}

#[tokio::test]
async fn a_session_update_of_a_kind_from_a_newer_schema_still_reaches_the_client() {
    let (_conn, mut agent, calls) = recording_client();
    let future =
        json!({"sessionId": "s-1", "update": {"sessionUpdate": "hologram_update", "frames": [1, 2]}});
    // Not in this schema, so sent unchecked.
    agent
        .send(&json!({"jsonrpc": "2.0", "method": "session/update", "params": future}).to_string())
        .await;
    support::eventually(|| {
        calls
            .lock()
            .unwrap()
            .iter()
            .any(|(m, p)| m == "session/update" && *p == future)
    })
    .await;
}
