//! `acp_engine::mcp::McpServers` against an MCP server process on stdio (a
//! small scripted one here; interop/mcp.sh runs the official MCP SDK's).

use acp_engine::mcp::McpServers;
use acp_engine::{RawJson, SpawnOptions};
use serde_json::{json, Value};

/// An MCP server in a few lines: the handshake, `tools/call` echoing its
/// arguments, -32601 for anything else; "exit" ends it, "slow" is never
/// answered, "cancelled" answers the request ids MCP cancelled.
const SERVER: &str = r#"
import json, sys
cancelled = []
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "notifications/cancelled":
        cancelled.append(m["params"]["requestId"])
    if "id" not in m:
        continue
    if m["method"] == "tools/call" and m["params"]["name"] == "slow":
        continue
    if m["method"] == "tools/call" and m["params"]["name"] == "cancelled":
        m["params"]["arguments"] = cancelled
    if m["method"] == "initialize":
        r = {"result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "1"}}}
    elif m["method"] == "tools/call" and m["params"]["name"] == "exit":
        sys.exit(0)
    elif m["method"] == "tools/call":
        r = {"result": {"content": [{"type": "text", "text": json.dumps(m["params"]["arguments"])}]}}
    else:
        r = {"error": {"code": -32601, "message": "Method not found", "data": m["method"]}}
    r["jsonrpc"], r["id"] = "2.0", m["id"]
    print(json.dumps(r), flush=True)
"#;

fn raw(value: Value) -> RawJson {
    acp_engine::to_raw(&value).unwrap()
}

fn message(server: &Value, method: &str, params: Value) -> RawJson {
    raw(json!({"serverId": server["serverId"], "requestId": "r1", "method": method, "params": params}))
}

#[tokio::test]
async fn mcp_message_reaches_the_server_and_its_answer_comes_back_inside_the_result() {
    let servers = McpServers::new();
    let entry = servers
        .spawn("calc", SpawnOptions::new("python3").args(["-c", SERVER]))
        .await
        .unwrap();
    assert_eq!(entry["type"], "acp");
    assert_eq!(entry["name"], "calc");

    let answer = servers
        .message(Some(&message(
            &entry,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2}}),
        )))
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(answer.get()).unwrap();
    assert_eq!(
        answer,
        json!({"result": {"content": [{"type": "text", "text": "{\"a\": 2}"}]}})
    );

    // The MCP server's own error is an answer, not an ACP error.
    let answer = servers
        .message(Some(&message(&entry, "nope/nope", json!({}))))
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(answer.get()).unwrap();
    assert_eq!(
        answer,
        json!({"error": {"code": -32601, "message": "Method not found", "data": "nope/nope"}})
    );

    // An agent that does MCP's handshake itself gets the server's answer to the bridge's.
    let answer = servers
        .message(Some(&message(&entry, "initialize", json!({}))))
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(answer.get()).unwrap();
    assert_eq!(answer["result"]["serverInfo"]["name"], "scripted");

    // A server not offered here, or params that are not an mcp/message: -32602.
    let unknown = json!({"serverId": "elsewhere"});
    let error = servers
        .message(Some(&message(&unknown, "tools/list", json!({}))))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32602, "{error:?}");
    let error = servers
        .message(Some(&raw(json!({"method": 1}))))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32602, "{error:?}");

    // The agent cancelling its mcp/message (the future dropped) cancels the
    // MCP request in MCP's words.
    let slow = message(&entry, "tools/call", json!({"name": "slow", "arguments": {}}));
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        servers.message(Some(&slow)),
    )
    .await;
    assert!(gave_up.is_err(), "the slow call was answered");
    let mut seen = Value::Null;
    for _ in 0..50 {
        let answer = servers
            .message(Some(&message(
                &entry,
                "tools/call",
                json!({"name": "cancelled", "arguments": {}}),
            )))
            .await
            .unwrap();
        let answer: Value = serde_json::from_str(answer.get()).unwrap();
        seen = answer["result"]["content"][0]["text"].clone();
        if seen != "[]" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The bridge's fourth request (ids from 0): initialize, add, nope/nope, slow.
    assert_eq!(seen, "[3]");

    // A server that went away fails the request (the bridge failed) at once.
    let error = servers
        .message(Some(&message(
            &entry,
            "tools/call",
            json!({"name": "exit", "arguments": {}}),
        )))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32099, "{error:?}");
}
