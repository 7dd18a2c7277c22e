//! The bridge for the bindings, whose callers live in the host language:
//! each HTTP request the bridge admits becomes a JSON event for the host,
//! `{"call": n, "serverId", "requestId", "method", "params"}`, which the
//! host sends through its caller, passing the request's notifications to
//! [`HostMcpHttpBridge::notify`] and its end to [`HostMcpHttpBridge::finish`].
//! A request whose HTTP client left (or whose bridge closed) before the
//! end is `{"cancel": n}`: the host cancels its ACP request.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::{McpHttpBridge, McpHttpBridgeOptions, McpHttpCall, McpHttpForward};
use crate::error::{codes, RequestError};
use crate::host::runtime;
use crate::mcp::{binding, McpNotificationListener};

/// The message of a call that failed without an ACP error (the official bridge's).
const BINDING_FAILURE: &str = "MCP binding failure";

/// Receives the bridge's events (JSON text), on any thread.
pub type HostEvents = Box<dyn Fn(String) + Send + Sync>;

/// A bridge whose requests the host sends.
pub struct HostMcpHttpBridge {
    bridge: McpHttpBridge,
    calls: Arc<Calls>,
}

struct Calls {
    events: HostEvents,
    pending: Mutex<HashMap<u64, Pending>>,
    next: AtomicU64,
}

struct Pending {
    done: oneshot::Sender<Result<Value, RequestError>>,
    notifications: McpNotificationListener,
}

struct HostForward(Arc<Calls>);

impl McpHttpForward for HostForward {
    fn forward(&self, call: McpHttpCall) -> BoxFuture<'static, Result<Value, RequestError>> {
        let calls = self.0.clone();
        let number = calls.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (done, answer) = oneshot::channel();
        calls.pending.lock().expect("not poisoned").insert(
            number,
            Pending {
                done,
                notifications: call.notifications,
            },
        );
        (calls.events)(
            json!({
                "call": number,
                "serverId": call.server_id,
                "requestId": call.request_id,
                "method": call.method,
                "params": call.params,
            })
            .to_string(),
        );
        let unsettled = Unsettled { calls, number };
        Box::pin(async move {
            let result = answer.await;
            drop(unsettled);
            // The sender goes only with the bridge: nothing answers any more.
            result.unwrap_or_else(|_| Err(RequestError::internal_error()))
        })
    }
}

/// Tells the host to cancel a call dropped before its end.
struct Unsettled {
    calls: Arc<Calls>,
    number: u64,
}

impl Drop for Unsettled {
    fn drop(&mut self) {
        let was_pending = self
            .calls
            .pending
            .lock()
            .expect("not poisoned")
            .remove(&self.number);
        if was_pending.is_some() {
            (self.calls.events)(json!({"cancel": self.number}).to_string());
        }
    }
}

impl HostMcpHttpBridge {
    /// Listens on 127.0.0.1, on the engine's runtime.
    pub fn bind(options: McpHttpBridgeOptions, events: HostEvents) -> io::Result<Self> {
        let calls = Arc::new(Calls {
            events,
            pending: Mutex::default(),
            next: AtomicU64::new(0),
        });
        let _entered = runtime().enter();
        let bridge = McpHttpBridge::bind(Arc::new(HostForward(calls.clone())), options)?;
        Ok(Self { bridge, calls })
    }

    /// The HTTP declaration (JSON) serving an `"type": "acp"` one (JSON).
    pub fn to_http(&self, server: &str) -> Result<String, RequestError> {
        let server: Value = serde_json::from_str(server).map_err(|_| RequestError::invalid_params())?;
        if !binding::is_mcp_server_acp(&server) {
            return Err(RequestError::invalid_params().with_message_detail("not an \"acp\" MCP server"));
        }
        Ok(self.bridge.to_http(&server).to_string())
    }

    /// A notification (`{"method", "params"?}`) of a running call; false
    /// once it ended.
    pub fn notify(&self, call: u64, notification: &str) -> bool {
        let listener = self
            .calls
            .pending
            .lock()
            .expect("not poisoned")
            .get(&call)
            .map(|pending| pending.notifications.clone());
        match (listener, serde_json::from_str(notification)) {
            (Some(listener), Ok(notification)) => {
                listener(notification);
                true
            }
            _ => false,
        }
    }

    /// A call's end: its outcome (JSON), or its failure: the outer ACP error
    /// (`{"code", "message", "data"?}`), or neither for a failure that is
    /// no ACP error (answered -33002). False once it ended.
    pub fn finish(&self, call: u64, outcome: Option<&str>, failure: Option<&str>) -> bool {
        let Some(pending) = self.calls.pending.lock().expect("not poisoned").remove(&call) else {
            return false;
        };
        let result = match (outcome, failure) {
            (Some(outcome), None) => {
                serde_json::from_str(outcome).map_err(|_| RequestError::internal_error())
            }
            (_, Some(failure)) => Err(serde_json::from_str::<RequestError>(failure)
                .unwrap_or_else(|_| RequestError::internal_error())),
            (None, None) => Err(RequestError::new(codes::MCP_BACKEND_FAILED, BINDING_FAILURE)),
        };
        pending.done.send(result).is_ok()
    }

    /// Stops the listener; calls still running get `{"cancel"}` events.
    pub fn close(&self) {
        self.bridge.close();
    }

    /// The listener's port.
    pub fn port(&self) -> u16 {
        self.bridge.port()
    }
}

/// A `tools/list` result (JSON) without `x-mcp-header` annotations.
pub fn strip_header_annotations(result: &str) -> Result<String, RequestError> {
    let result: Value = serde_json::from_str(result).map_err(|_| RequestError::invalid_params())?;
    Ok(super::strip_header_annotations(result).to_string())
}
