//! Several clients on one session (`ServeOptions::attach`): a second
//! client's `session/load` of a session live on another connection attaches
//! it as an observer. It gets the history so far (the controller's prompt
//! included), then the same updates as the controller; a permission request
//! reaches both, the first answer wins and the other client's copy is
//! withdrawn; the observer may not prompt. Over loopback, both transports,
//! with our client.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use acp_engine::remote::{self, ConnectOptions, ServeOptions, Server, ATTACH_META};
use acp_engine::schema::method;
use acp_engine::{Connection, IncomingNotification, IncomingRequest, RequestError, Transport};
use serde_json::{json, Value};
use support::scrape::scrape;
use support::{eventually, PATIENCE};

/// Agent messages per turn before it asks permission.
const CHUNKS: usize = 3;

/// An agent whose turns send CHUNKS updates, ask permission, tell which
/// option was chosen, and end; it counts the permission answers it got.
async fn agent(
    request: IncomingRequest,
    answers: Arc<AtomicUsize>,
) -> Result<acp_engine::RawJson, RequestError> {
    let params: Value = request.params().unwrap_or(json!({}));
    let session = params["sessionId"].clone();
    let update = |text: String| {
        json!({ "sessionId": session, "update": {
            "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } } })
    };
    let answer = match request.method.as_str() {
        method::INITIALIZE => json!({ "protocolVersion": 1, "agentCapabilities": { "loadSession": true } }),
        method::SESSION_NEW => json!({ "sessionId": "shared-1", "modes": {
            "currentModeId": "code", "availableModes": [{ "id": "code", "name": "Code" }] } }),
        method::SESSION_PROMPT => {
            let said = params["prompt"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            for chunk in 0..CHUNKS {
                let text = format!("{said}: chunk {chunk}");
                request
                    .connection
                    .send_notification(method::SESSION_UPDATE, &update(text))
                    .await?;
            }
            let ask = json!({ "sessionId": session, "toolCall": { "toolCallId": format!("{said}-tool") },
                "options": [{ "optionId": "allow", "name": "Allow", "kind": "allow_once" }] });
            let outcome: Value = request
                .connection
                .send_request(method::SESSION_REQUEST_PERMISSION, &ask)
                .await?;
            answers.fetch_add(1, Ordering::SeqCst);
            let chosen = outcome["_meta"]["by"].as_str().unwrap_or("nobody").to_owned();
            let text = format!("{said}: allowed by {chosen}");
            request
                .connection
                .send_notification(method::SESSION_UPDATE, &update(text))
                .await?;
            json!({ "stopReason": "end_turn" })
        }
        _ => return Err(RequestError::method_not_found(&request.method)),
    };
    Ok(acp_engine::to_raw(&answer).unwrap())
}

async fn server() -> (Server, Arc<AtomicUsize>) {
    let answers = Arc::new(AtomicUsize::new(0));
    let counted = answers.clone();
    let options = ServeOptions {
        attach: true,
        ..ServeOptions::default()
    };
    let server = Server::bind("127.0.0.1:0", options, move |lines, _| {
        let answers = counted.clone();
        Connection::builder()
            .on_request(move |request| agent(request, answers.clone()))
            .connect(Transport::from_stream(lines));
    })
    .await
    .unwrap();
    (server, answers)
}

/// A client: what it was told about the session, how many permission
/// requests reached its handler, whether it answers them (as `name`) or
/// waits until they are withdrawn, and how many were withdrawn from it.
struct Client {
    connection: Connection,
    updates: Arc<Mutex<Vec<Value>>>,
    asked: Arc<AtomicUsize>,
    answers: Arc<AtomicBool>,
    withdrawn: Arc<AtomicUsize>,
}

/// Answer only once another client's handler has seen this many
/// permission requests (so that a withdrawal finds its handler running).
type Gate = Option<(Arc<AtomicUsize>, usize)>;

impl Client {
    async fn connect(url: &str, name: &'static str, gate: Gate) -> Self {
        let updates = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(AtomicUsize::new(0));
        let seen = asked.clone();
        let answers = Arc::new(AtomicBool::new(true));
        let withdrawn = Arc::new(AtomicUsize::new(0));
        let (told, answering, counted) = (updates.clone(), answers.clone(), withdrawn.clone());
        let connection = Connection::builder()
            .on_notification(move |notification: IncomingNotification| {
                let told = told.clone();
                async move {
                    if notification.method == method::SESSION_UPDATE {
                        let params: Value = notification.params().unwrap();
                        told.lock().unwrap().push(params["update"].clone());
                    }
                    Ok(())
                }
            })
            .on_request(move |request: IncomingRequest| {
                let (answering, counted, seen, gate) =
                    (answering.clone(), counted.clone(), seen.clone(), gate.clone());
                async move {
                    assert_eq!(request.method, method::SESSION_REQUEST_PERMISSION);
                    seen.fetch_add(1, Ordering::SeqCst);
                    if let Some((other, enough)) = gate {
                        eventually(|| other.load(Ordering::SeqCst) >= enough).await;
                    }
                    if !answering.load(Ordering::SeqCst) {
                        // The engine answers a cancelled request itself
                        // and drops its handler.
                        let withdrawn = request.cancellation.clone();
                        tokio::spawn(async move {
                            withdrawn.cancelled().await;
                            counted.fetch_add(1, Ordering::SeqCst);
                        });
                        std::future::pending::<()>().await;
                    }
                    let outcome = json!({ "outcome": { "outcome": "selected", "optionId": "allow" },
                        "_meta": { "by": name } });
                    Ok(acp_engine::to_raw(&outcome).unwrap())
                }
            })
            .connect(remote::connect(url, &ConnectOptions::default()).await.unwrap());
        let _: Value = connection
            .send_request(method::INITIALIZE, &json!({ "protocolVersion": 1 }))
            .await
            .unwrap();
        Self {
            connection,
            updates,
            asked,
            answers,
            withdrawn,
        }
    }

    fn texts(&self) -> Vec<String> {
        let updates = self.updates.lock().unwrap();
        updates
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn prompt(&self, text: &str) -> Result<Value, RequestError> {
        let prompt = json!({ "sessionId": "shared-1", "prompt": [{ "type": "text", "text": text }] });
        tokio::time::timeout(
            PATIENCE,
            self.connection.send_request(method::SESSION_PROMPT, &prompt),
        )
        .await
        .expect("the prompt is answered")
    }
}

fn turn(said: &str, by: &str) -> Vec<String> {
    let mut texts: Vec<String> = (0..CHUNKS).map(|c| format!("{said}: chunk {c}")).collect();
    texts.push(format!("{said}: allowed by {by}"));
    texts
}

async fn two_clients_share_a_session(url: String, server: &Server, answers: &AtomicUsize) {
    let controller = Client::connect(&url, "controller", None).await;
    let created: Value = controller
        .connection
        .send_request(method::SESSION_NEW, &json!({ "cwd": "/", "mcpServers": [] }))
        .await
        .unwrap();
    assert_eq!(created["sessionId"], "shared-1");
    controller.prompt("first").await.unwrap();
    assert_eq!(controller.texts(), turn("first", "controller"));

    // A late joiner gets the history, the controller's prompt included.
    // It answers the next permission once the controller has it.
    let observer = Client::connect(&url, "observer", Some((controller.asked.clone(), 2))).await;
    let load = json!({ "sessionId": "shared-1", "cwd": "/", "mcpServers": [] });
    let loaded: Value = observer
        .connection
        .send_request(method::SESSION_LOAD, &load)
        .await
        .unwrap();
    assert_eq!(loaded["_meta"][ATTACH_META]["role"], "observer", "{loaded}");
    assert_eq!(loaded["_meta"][ATTACH_META]["dropped"], 0, "{loaded}");
    assert_eq!(
        loaded["modes"]["currentModeId"], "code",
        "the session's snapshot: {loaded}"
    );
    let mut history = vec!["first".to_owned()];
    history.extend(turn("first", "controller"));
    eventually(|| observer.texts().len() == history.len()).await;
    assert_eq!(observer.texts(), history);
    assert_eq!(
        observer.updates.lock().unwrap()[0]["sessionUpdate"],
        "user_message_chunk"
    );
    let metrics = scrape(server.local_addr(), None).await.unwrap();
    assert_eq!(metrics["acp_session_observers"], 1.0);

    // Both see the next turn; its permission goes to both, the observer
    // answers first, and the controller's copy is withdrawn.
    controller.answers.store(false, Ordering::SeqCst);
    controller.prompt("second").await.unwrap();
    assert_eq!(controller.texts()[4..], turn("second", "observer")[..]);
    history.push("second".to_owned());
    history.extend(turn("second", "observer"));
    eventually(|| observer.texts().len() == history.len()).await;
    assert_eq!(observer.texts(), history);
    eventually(|| controller.withdrawn.load(Ordering::SeqCst) == 1).await;
    assert_eq!(observer.withdrawn.load(Ordering::SeqCst), 0);
    assert_eq!(
        answers.load(Ordering::SeqCst),
        2,
        "one answer per permission reached the agent"
    );

    // The observer may not steer the session.
    let refused = observer.prompt("mine").await.unwrap_err();
    assert_eq!(refused.code, -32600);
    assert!(
        format!("{:?}", refused.data).contains("observes session shared-1"),
        "{refused:?}"
    );

    // The controller answers again once the observer has gone.
    observer.connection.close();
    controller.answers.store(true, Ordering::SeqCst);
    let mut gone = false;
    for _ in 0..500 {
        let metrics = scrape(server.local_addr(), None).await.unwrap();
        if metrics["acp_session_observers"] == 0.0 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone, "the observer left the session");
    controller.prompt("third").await.unwrap();
    assert_eq!(controller.texts()[8..], turn("third", "controller")[..]);
    assert_eq!(answers.load(Ordering::SeqCst), 3);
    controller.connection.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_websocket_clients_share_a_session() {
    let (server, answers) = server().await;
    two_clients_share_a_session(server.websocket_url(), &server, &answers).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_streamable_http_clients_share_a_session() {
    let (server, answers) = server().await;
    two_clients_share_a_session(server.http_url(), &server, &answers).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_attach_a_load_reaches_the_clients_own_agent() {
    let server = Server::bind("127.0.0.1:0", ServeOptions::default(), |lines, _| {
        let answers = Arc::new(AtomicUsize::new(0));
        Connection::builder()
            .on_request(move |request| agent(request, answers.clone()))
            .connect(Transport::from_stream(lines));
    })
    .await
    .unwrap();
    let url = server.websocket_url();
    let controller = Client::connect(&url, "controller", None).await;
    let _: Value = controller
        .connection
        .send_request(method::SESSION_NEW, &json!({ "cwd": "/", "mcpServers": [] }))
        .await
        .unwrap();
    let other = Client::connect(&url, "other", None).await;
    let load = json!({ "sessionId": "shared-1", "cwd": "/", "mcpServers": [] });
    let refused = other
        .connection
        .send_request::<_, Value>(method::SESSION_LOAD, &load)
        .await;
    assert_eq!(
        refused.unwrap_err().code,
        -32601,
        "its own agent, which cannot load"
    );
    server.shutdown().await;
}
