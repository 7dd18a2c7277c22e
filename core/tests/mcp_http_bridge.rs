//! The MCP-over-ACP HTTP bridge over real sockets: an `McpProvider` serves
//! a registered server on one side of an ACP connection; on the other, the
//! bridge re-exports it as a loopback MCP HTTP endpoint, driven here by raw
//! HTTP/1.1 requests. (node/test/mcp-http-bridge.test.mjs drives the same
//! endpoint with the official MCP client and compares its refusals with
//! the official TypeScript bridge's.)

mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use acp_engine::mcp::http_bridge::{McpHttpBridge, McpHttpBridgeOptions};
use acp_engine::mcp::{McpCaller, McpCallerOptions, McpHandler, McpOperation, McpProvider};
use acp_engine::Connection;
use serde_json::{json, Value};
use support::raw_http::exchange;
use support::{eventually, within};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const VERSION: &str = "2026-07-28";

fn handler(seen: Arc<Mutex<Vec<String>>>) -> McpHandler {
    Arc::new(move |operation: McpOperation| {
        let seen = seen.clone();
        Box::pin(async move {
            if operation.method() == "tools/list" {
                let schema = json!({"type": "object", "properties": {"path": {"type": "string", "x-mcp-header": "Path"}}});
                return Ok(json!({"result": {"tools": [{"name": "echo", "inputSchema": schema}]}}));
            }
            let params = operation.params().cloned().unwrap_or_default();
            match params.get("name").and_then(Value::as_str).unwrap_or("") {
                "echo" => Ok(
                    json!({"result": {"content": [{"type": "text", "text": params.get("arguments").unwrap_or(&Value::Null).to_string()}]}}),
                ),
                "progress" => {
                    for step in 1..=3 {
                        let meta = json!({"io.modelcontextprotocol/subscriptionId": operation.request_id()});
                        operation
                            .notify(
                                "notifications/progress",
                                Some(json!({"progress": step, "_meta": meta})),
                            )
                            .await
                            .unwrap();
                    }
                    let meta = json!({"io.modelcontextprotocol/subscriptionId": operation.request_id()});
                    Ok(json!({"result": {"steps": 3, "_meta": meta}}))
                }
                "flood" => {
                    let blob = "x".repeat(16 * 1024);
                    for _ in 0..2000 {
                        if operation.cancellation().is_cancelled() {
                            break;
                        }
                        let _ = operation
                            .notify("notifications/message", Some(json!({"data": blob})))
                            .await;
                    }
                    seen.lock().unwrap().push("flood ended".into());
                    Ok(json!({"result": {}}))
                }
                "wait" => {
                    let token = operation.cancellation().clone();
                    let seen = seen.clone();
                    tokio::spawn(async move {
                        token.cancelled().await;
                        seen.lock().unwrap().push("cancelled".into());
                    });
                    operation.cancellation().cancelled().await;
                    Ok(json!({"result": {}}))
                }
                _ => Ok(json!({"error": {"code": -32602, "message": "Unknown tool"}})),
            }
        })
    })
}

struct Bridged {
    bridge: McpHttpBridge,
    address: SocketAddr,
    /// The caller's side of the ACP connection.
    calls: Connection,
    _serves: Connection,
    seen: Arc<Mutex<Vec<String>>>,
}

fn bridged(options: McpHttpBridgeOptions) -> Bridged {
    let provider = McpProvider::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    for id in ["tools-1", "other"] {
        provider
            .register(id, Some(id), None, Some(handler(seen.clone())))
            .unwrap();
    }
    let caller = McpCaller::new(McpCallerOptions::default());
    let (serves, calls) = support::mcp::connect(provider, caller.clone());
    let bridge = McpHttpBridge::over_caller(caller, &calls, options).unwrap();
    let address = SocketAddr::from(([127, 0, 0, 1], bridge.port()));
    Bridged {
        bridge,
        address,
        calls,
        _serves: serves,
        seen,
    }
}

/// An HTTP request to the bridge, built like an MCP client's, then edited.
struct Post {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Bridged {
    fn declaration(&self, server_id: &str) -> Value {
        self.bridge
            .to_http(&json!({"type": "acp", "name": "tools", "serverId": server_id, "_meta": {"k": 1}}))
    }

    /// A valid `method` request for `tools-1` (`params` without `_meta`).
    fn post(&self, method: &str, params: Value) -> Post {
        let declaration = self.declaration("tools-1");
        let url = declaration["url"].as_str().unwrap();
        let path = url[url.find("/mcp-").unwrap()..].to_owned();
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let mut headers = vec![
            (
                "Authorization".to_owned(),
                declaration["headers"][0]["value"].as_str().unwrap().to_owned(),
            ),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("MCP-Protocol-Version".to_owned(), VERSION.to_owned()),
            ("Mcp-Method".to_owned(), method.to_owned()),
        ];
        if let Some(name) = params.get("name").and_then(Value::as_str) {
            headers.push(("Mcp-Name".to_owned(), name.to_owned()));
        }
        Post {
            method: "POST",
            path,
            headers,
            body: json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string(),
        }
    }

    async fn send(&self, post: &Post) -> Answer {
        let (status, text) = exchange(self.address, &post.text()).await;
        Answer::parse(status, &text)
    }

    /// `post`, sent again (for a second at most) until it is answered with `status`: the last answer.
    async fn send_until(&self, post: &Post, status: u16) -> Answer {
        let mut answer = self.send(post).await;
        for _ in 0..100 {
            if answer.status == status {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            answer = self.send(post).await;
        }
        answer
    }
}

impl Post {
    fn set(mut self, name: &str, value: Option<&str>) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if let Some(value) = value {
            self.headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    fn add(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    fn text(&self) -> String {
        let mut text = format!(
            "{} {} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
            self.method, self.path
        );
        for (name, value) in &self.headers {
            text += &format!("{name}: {value}\r\n");
        }
        text + &format!("Content-Length: {}\r\n\r\n{}", self.body.len(), self.body)
    }
}

/// A response: its status, content type, and JSON messages (the body, or
/// each SSE event's data).
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: String,
    messages: Vec<Value>,
}

impl Answer {
    fn parse(status: u16, text: &str) -> Self {
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let content_type = head
            .lines()
            .find_map(|line| {
                line.to_ascii_lowercase()
                    .strip_prefix("content-type: ")
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        let messages = if content_type == "text/event-stream" {
            body.lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .map(|data| serde_json::from_str(data).unwrap())
                .collect()
        } else if body.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_str(body).unwrap()]
        };
        Self {
            status,
            content_type,
            messages,
        }
    }

    fn error_code(&self) -> i64 {
        self.messages.last().unwrap()["error"]["code"].as_i64().unwrap()
    }
}

#[tokio::test]
async fn a_declared_server_is_served_over_http() {
    let bridged = bridged(McpHttpBridgeOptions::default());
    let declaration = bridged.declaration("tools-1");
    assert_eq!(declaration["type"], "http");
    assert_eq!(declaration["name"], "tools");
    assert_eq!(declaration["_meta"], json!({"k": 1}));
    assert!(declaration["url"]
        .as_str()
        .unwrap()
        .starts_with(&format!("http://127.0.0.1:{}/mcp-", bridged.bridge.port())));
    assert_eq!(
        bridged.bridge.adapt_servers(&[
            json!({"type": "stdio", "name": "s"}),
            json!({"type": "acp", "name": "tools", "serverId": "tools-1"})
        ])[0],
        json!({"type": "stdio", "name": "s"}),
        "other declarations are kept"
    );

    let echo = bridged
        .send(&bridged.post("tools/call", json!({"name": "echo", "arguments": {"a": 1}})))
        .await;
    assert_eq!(
        (echo.status, echo.content_type.as_str()),
        (200, "application/json")
    );
    assert_eq!(
        echo.messages,
        [json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "{\"a\":1}"}]}})]
    );

    let listed = bridged.send(&bridged.post("tools/list", json!({}))).await;
    assert_eq!(
        listed.messages[0]["result"]["tools"][0]["inputSchema"]["properties"]["path"],
        json!({"type": "string"}),
        "x-mcp-header annotations are stripped"
    );

    // An MCP error is the answer, with the status MCP gives it.
    let unknown = bridged
        .send(&bridged.post("tools/call", json!({"name": "nope"})))
        .await;
    assert_eq!((unknown.status, unknown.error_code()), (400, -32602));
}

#[tokio::test]
async fn notifications_turn_the_answer_into_an_event_stream() {
    let bridged = bridged(McpHttpBridgeOptions::default());
    let answer = bridged
        .send(&bridged.post("tools/call", json!({"name": "progress"})))
        .await;
    assert_eq!(
        (answer.status, answer.content_type.as_str()),
        (200, "text/event-stream")
    );
    let steps: Vec<Value> = answer.messages[..3]
        .iter()
        .map(|message| message["params"]["progress"].clone())
        .collect();
    assert_eq!(steps, [json!(1), json!(2), json!(3)], "{:?}", answer.messages);
    assert_eq!(answer.messages[0]["method"], "notifications/progress");
    assert_eq!(
        answer.messages[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7,
        "the subscription id is the HTTP client's request id"
    );
    let last = &answer.messages[3];
    assert_eq!(
        (last["id"].clone(), last["result"]["steps"].clone()),
        (json!(7), json!(3))
    );
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
}

#[tokio::test]
async fn refusals_carry_their_status_and_code() {
    let bridged = bridged(McpHttpBridgeOptions::default());
    let call = || bridged.post("tools/call", json!({"name": "echo"}));
    let other_token = bridged.declaration("other")["headers"][0]["value"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut get = call();
    get.method = "GET";
    let mut unrouted = call();
    unrouted.path = "/mcp-nope".into();
    let with_body = |body: &str| {
        let mut post = call();
        post.body = body.to_owned();
        post
    };
    let old = call().set("MCP-Protocol-Version", Some("2025-06-18"));
    let old =
        with_body(&old.body.replace(VERSION, "2025-06-18")).set("MCP-Protocol-Version", Some("2025-06-18"));
    let cases: Vec<(&str, Post, u16, i64)> = vec![
        ("no token", call().set("Authorization", None), 401, -32600),
        (
            "another server's token",
            call().set("Authorization", Some(&other_token)),
            401,
            -32600,
        ),
        ("an unknown route", unrouted, 404, -32601),
        ("GET", get, 405, -32600),
        (
            "JSON only accepted",
            call().set("Accept", Some("application/json")),
            406,
            -32600,
        ),
        (
            "a text body",
            call().set("Content-Type", Some("text/plain")),
            415,
            -32600,
        ),
        (
            "a foreign origin",
            call().set("Origin", Some("http://evil.example")),
            403,
            -32600,
        ),
        (
            "a duplicated header",
            call().add("Mcp-Method", "tools/call"),
            400,
            -32020,
        ),
        (
            "the method header differs",
            call().set("Mcp-Method", Some("tools/list")),
            400,
            -32020,
        ),
        (
            "the name header differs",
            call().set("Mcp-Name", Some("other")),
            400,
            -32020,
        ),
        (
            "a base64 name header",
            call().set("Mcp-Name", Some("=?base64?ZWNobw==?=")),
            200,
            0,
        ),
        (
            "the version header differs",
            call().set("MCP-Protocol-Version", Some("2025-06-18")),
            400,
            -32020,
        ),
        ("another revision", old, 400, -32022),
        (
            "a mirrored parameter",
            call().add("Mcp-Param-Path", "x"),
            400,
            -32020,
        ),
        ("not JSON", with_body("{"), 400, -32700),
        ("a batch", with_body("[]"), 400, -32600),
        (
            "a notification",
            with_body(r#"{"jsonrpc":"2.0","method":"tools/call"}"#),
            400,
            -32600,
        ),
        (
            "no client capabilities",
            with_body(&{
                let mut body: Value = serde_json::from_str(&call().body).unwrap();
                body["params"]["_meta"]
                    .as_object_mut()
                    .unwrap()
                    .remove("io.modelcontextprotocol/clientCapabilities");
                body.to_string()
            }),
            400,
            -32602,
        ),
        ("initialize", bridged.post("initialize", json!({})), 404, -32601),
    ];
    for (case, post, status, code) in cases {
        let answer = bridged.send(&post).await;
        assert_eq!(answer.status, status, "{case}: {answer:?}");
        if code != 0 {
            assert_eq!(answer.error_code(), code, "{case}: {answer:?}");
        }
    }
    let unauthorized = exchange(bridged.address, &call().set("Authorization", None).text())
        .await
        .1;
    assert!(
        unauthorized
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{unauthorized}"
    );
}

#[tokio::test]
async fn limits_bound_requests_bodies_and_buffered_events() {
    let bridged = bridged(McpHttpBridgeOptions {
        max_active_requests: 1,
        max_request_body_bytes: 4096,
        max_buffered_response_bytes: 64 * 1024,
    });
    let large = bridged.post(
        "tools/call",
        json!({"name": "echo", "arguments": {"blob": "x".repeat(5000)}}),
    );
    let too_large = bridged.send(&large).await;
    assert_eq!((too_large.status, too_large.error_code()), (413, -33000));

    // One request waits; a second is refused until the first ends.
    let waiting = bridged.post("tools/call", json!({"name": "wait"}));
    let mut first = tokio::net::TcpStream::connect(bridged.address).await.unwrap();
    first.write_all(waiting.text().as_bytes()).await.unwrap();
    let echo = bridged.post("tools/call", json!({"name": "echo"}));
    let refused = bridged.send_until(&echo, 429).await;
    assert_eq!((refused.status, refused.error_code()), (429, -33000));

    // The client that left cancelled its request, and freed its admission.
    drop(first);
    eventually(|| bridged.seen.lock().unwrap().contains(&"cancelled".to_owned())).await;
    let answered = bridged.send_until(&echo, 200).await;
    assert_eq!(answered.status, 200, "{answered:?}");

    // A client that does not read: its events pile up past the bound, the
    // request is cancelled, and the stream ends with -33000.
    let flood = bridged.post("tools/call", json!({"name": "flood"}));
    let mut slow = tokio::net::TcpStream::connect(bridged.address).await.unwrap();
    slow.write_all(flood.text().as_bytes()).await.unwrap();
    eventually(|| bridged.seen.lock().unwrap().contains(&"flood ended".to_owned())).await;
    let mut text = Vec::new();
    within(slow.read_to_end(&mut text)).await.unwrap();
    let answer = Answer::parse(200, &String::from_utf8_lossy(&text));
    assert!(answer.messages.len() < 2000, "the flood was cut short");
    assert_eq!(answer.error_code(), -33000, "{:?}", answer.messages.last());
}

#[tokio::test]
async fn the_listener_closes_with_its_connection() {
    let bridged = bridged(McpHttpBridgeOptions::default());
    let answer = bridged
        .send(&bridged.post("tools/call", json!({"name": "echo"})))
        .await;
    assert_eq!(answer.status, 200);
    bridged.calls.close();
    eventually(|| bridged.bridge.is_closed()).await;
    let address = bridged.address;
    let mut refused = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(address).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(refused, "nothing listens once the connection closed");
}
