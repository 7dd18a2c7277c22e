//! MCP-over-ACP between two engine connections over a real socket pair: an
//! `McpProvider` serving a registered server on one side, an `McpCaller` on
//! the other. (node/test/mcp-over-acp.test.mjs runs the same rules against the
//! official TypeScript SDK's provider and caller.)

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_engine::mcp::{
    McpCaller, McpCallerOptions, McpHandler, McpHandlerError, McpOperation, McpProvider, McpRequestOptions,
    MCP_MESSAGE,
};
use acp_engine::{Connection, RequestError};
use serde_json::{json, Value};
use support::PATIENCE;

struct Pair {
    provider: Arc<McpProvider>,
    caller: Arc<McpCaller>,
    /// The caller's side of the connection.
    calls: Connection,
    /// The provider's side, kept open.
    _serves: Connection,
    /// What the handlers saw: cancellations and client infos.
    seen: Arc<Mutex<Vec<String>>>,
}

fn handler(seen: Arc<Mutex<Vec<String>>>) -> McpHandler {
    Arc::new(move |operation: McpOperation| {
        let seen = seen.clone();
        Box::pin(async move {
            let name = operation
                .params()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if let Some(info) = &operation.meta().client_info {
                seen.lock().unwrap().push(format!("client {}", info["name"]));
            }
            match name.as_str() {
                "echo" => Ok(
                    json!({"result": {"content": [{"type": "text", "text": operation.params().unwrap()["arguments"].to_string()}]}}),
                ),
                "progress" => {
                    for step in 1..=3 {
                        operation
                            .notify("notifications/progress", Some(json!({"progress": step})))
                            .await
                            .unwrap();
                    }
                    Ok(json!({"result": {"steps": 3}, "_meta": {"m": 1}}))
                }
                "refuse" => Err(McpHandlerError::Protocol {
                    code: -32603,
                    message: "no".into(),
                    data: Some(json!(7)),
                }),
                "broken" => Ok(json!({"result": 1, "error": {"code": 1, "message": "both"}})),
                "fail" => Err(McpHandlerError::Failed {
                    details: "disk on fire".into(),
                    code: None,
                }),
                "wait" => {
                    let token = operation.cancellation().clone();
                    let seen = seen.clone();
                    // Work started elsewhere sees the cancellation even when this future is dropped.
                    tokio::spawn(async move {
                        token.cancelled().await;
                        seen.lock().unwrap().push("cancelled".into());
                    });
                    operation.cancellation().cancelled().await;
                    Err(McpHandlerError::Failed {
                        details: "stopped".into(),
                        code: None,
                    })
                }
                _ => Ok(json!({"error": {"code": -32601, "message": "Method not found"}})),
            }
        })
    })
}

fn pair(max_active: Option<usize>) -> Pair {
    let provider = McpProvider::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    provider
        .register("tools", Some("tools-1"), max_active, Some(handler(seen.clone())))
        .unwrap();
    let caller = McpCaller::new(McpCallerOptions {
        client_capabilities: None,
        client_info: Some(json!({"name": "test-agent", "version": "1"})),
    });
    let (serves, calls) = support::mcp::connect(provider.clone(), caller.clone());
    Pair {
        provider,
        caller,
        calls,
        _serves: serves,
        seen,
    }
}

impl Pair {
    async fn call(&self, name: &str, options: McpRequestOptions) -> Result<Value, RequestError> {
        let params = json!({"name": name, "arguments": {"a": 1}});
        let call = self
            .caller
            .request(&self.calls, "tools-1", "tools/call", Some(&params), options);
        tokio::time::timeout(PATIENCE, call).await.expect("answered")
    }

    async fn raw(&self, params: Value) -> Result<Value, RequestError> {
        tokio::time::timeout(PATIENCE, self.calls.send_request(MCP_MESSAGE, &params))
            .await
            .expect("answered")
    }
}

fn with_meta(params: Value) -> Value {
    acp_engine::mcp::binding::with_request_meta(Some(&params), None, None)
}

#[tokio::test]
async fn results_inner_errors_and_notifications_reach_the_caller() {
    let pair = pair(None);
    let echo = pair.call("echo", McpRequestOptions::default()).await.unwrap();
    assert_eq!(
        echo,
        json!({"result": {"content": [{"type": "text", "text": "{\"a\":1}"}]}})
    );
    assert_eq!(
        pair.seen.lock().unwrap()[0],
        "client \"test-agent\"",
        "the caller's meta reached the handler"
    );

    let notes = Arc::new(Mutex::new(Vec::new()));
    let sink = notes.clone();
    let options = McpRequestOptions {
        on_notification: Some(Arc::new(move |note| sink.lock().unwrap().push(note))),
        ..Default::default()
    };
    let progress = pair.call("progress", options).await.unwrap();
    assert_eq!(progress, json!({"result": {"steps": 3}, "_meta": {"m": 1}}));
    let notes = notes.lock().unwrap().clone();
    let steps: Vec<Value> = notes
        .iter()
        .map(|note| note["params"]["progress"].clone())
        .collect();
    assert_eq!(
        steps,
        [json!(1), json!(2), json!(3)],
        "every notification, in order, before the answer: {notes:?}"
    );
    assert_eq!(notes[0]["method"], "notifications/progress");

    // An MCP error is an answer, not an ACP error.
    let refused = pair.call("refuse", McpRequestOptions::default()).await.unwrap();
    assert_eq!(
        refused,
        json!({"error": {"code": -32603, "message": "no", "data": 7}})
    );
    let unknown = pair.call("other", McpRequestOptions::default()).await.unwrap();
    assert_eq!(unknown["error"]["code"], -32601);
}

#[tokio::test]
async fn binding_failures_are_outer_errors() {
    let pair = pair(None);
    let broken = pair
        .call("broken", McpRequestOptions::default())
        .await
        .unwrap_err();
    assert_eq!((broken.code, broken.data.is_none()), (-33002, true), "{broken:?}");
    assert!(broken.message.contains("invalid outcome"), "{broken:?}");
    let failed = pair.call("fail", McpRequestOptions::default()).await.unwrap_err();
    assert_eq!(
        (failed.code, failed.data.clone()),
        (-33002, Some(json!({"details": "disk on fire"})))
    );

    let params = with_meta(json!({"name": "echo"}));
    let unknown = pair
        .raw(json!({"serverId": "elsewhere", "requestId": "r", "method": "tools/call", "params": params}))
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.code, unknown.data),
        (-33001, Some(json!({"serverId": "elsewhere"})))
    );
    let malformed = pair
        .raw(json!({"serverId": "tools-1", "requestId": 5, "method": "tools/call"}))
        .await
        .unwrap_err();
    assert_eq!(malformed.code, -32602, "{malformed:?}");
}

#[tokio::test]
async fn requests_without_the_mcp_meta_get_an_inner_error() {
    let pair = pair(None);
    let bare =
        json!({"serverId": "tools-1", "requestId": "r1", "method": "tools/call", "params": {"name": "echo"}});
    let answer = pair.raw(bare).await.unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion"),
        "{answer}"
    );

    let mut old = with_meta(json!({"name": "echo"}));
    old["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2025-06-18".into();
    let answer = pair
        .raw(json!({"serverId": "tools-1", "requestId": "r2", "method": "tools/call", "params": old}))
        .await
        .unwrap();
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    assert_eq!(
        answer["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-06-18"})
    );
}

#[tokio::test]
async fn active_requests_are_unique_and_bounded() {
    let pair = pair(Some(1));
    let waiting = {
        let params = json!({"serverId": "tools-1", "requestId": "same", "method": "tools/call", "params": with_meta(json!({"name": "wait"}))});
        pair.calls.start_request(MCP_MESSAGE, &params).await.unwrap()
    };
    tokio::time::timeout(PATIENCE, async {
        while pair.provider.active_requests("tools-1") == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    let again = json!({"serverId": "tools-1", "requestId": "same", "method": "tools/call", "params": with_meta(json!({"name": "echo"}))});
    let duplicate = pair.raw(again).await.unwrap_err();
    assert_eq!(
        (duplicate.code, duplicate.data),
        (-32602, Some(json!({"serverId": "tools-1", "requestId": "same"})))
    );
    let over = pair.call("echo", McpRequestOptions::default()).await.unwrap_err();
    assert_eq!(
        (over.code, over.data),
        (-33000, Some(json!({"serverId": "tools-1"})))
    );

    // The caller cancels: the handler's work sees it, the answer is -32800, the slot is free.
    assert!(pair.calls.cancel_pending_request(waiting.id(), None).await);
    let cancelled = tokio::time::timeout(PATIENCE, waiting)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(cancelled.code, -32800, "{cancelled:?}");
    tokio::time::timeout(PATIENCE, async {
        while !pair.seen.lock().unwrap().iter().any(|seen| seen == "cancelled")
            || pair.provider.active_requests("tools-1") > 0
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the handler saw the cancellation and the slot was freed");
    assert!(pair.call("echo", McpRequestOptions::default()).await.is_ok());
}

#[tokio::test]
async fn a_disposed_registration_cancels_its_requests_and_is_never_reused() {
    let pair = pair(None);
    let caller = pair.caller.clone();
    let calls = pair.calls.clone();
    let waiting = tokio::spawn(async move {
        let params = json!({"name": "wait"});
        caller
            .request(
                &calls,
                "tools-1",
                "tools/call",
                Some(&params),
                McpRequestOptions::default(),
            )
            .await
    });
    tokio::time::timeout(PATIENCE, async {
        while pair.provider.active_requests("tools-1") == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    assert!(pair.provider.dispose("tools-1"));
    let cancelled = tokio::time::timeout(PATIENCE, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(cancelled.code, -32800, "{cancelled:?}");
    let gone = pair.call("echo", McpRequestOptions::default()).await.unwrap_err();
    assert_eq!(gone.code, -33001);
    let reused = pair
        .provider
        .register("tools", Some("tools-1"), None, None)
        .unwrap_err();
    assert_eq!(reused.code, -32602);
    assert!(!pair.provider.dispose("tools-1"));
}
