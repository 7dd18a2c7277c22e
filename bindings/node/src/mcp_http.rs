//! The MCP-over-ACP HTTP bridge for the Node package
//! (`acp_engine::mcp::http_bridge::host`): the listener and its rules run in
//! the engine; each admitted HTTP request reaches JavaScript as an event
//! (`{"call"}` or `{"cancel"}`, JSON) to send through the user's caller.

use acp_engine::mcp::http_bridge::host::{self, HostMcpHttpBridge};
use acp_engine::mcp::http_bridge::McpHttpBridgeOptions;
use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::errors;

/// Events for JavaScript; weak: an idle bridge does not keep Node running.
type EventFn = ThreadsafeFunction<String, (), String, Status, false, true>;

/// One ACP connection's loopback MCP endpoint.
#[napi]
pub struct McpHttpBridgeHandle {
    bridge: HostMcpHttpBridge,
}

#[napi]
impl McpHttpBridgeHandle {
    /// Listens on 127.0.0.1; `on_event` gets each event (JSON).
    #[napi(constructor)]
    pub fn new(
        max_active_requests: Option<u32>,
        max_request_body_bytes: Option<f64>,
        max_buffered_response_bytes: Option<f64>,
        on_event: Function<String, ()>,
    ) -> Result<Self> {
        let mut options = McpHttpBridgeOptions::default();
        if let Some(max) = max_active_requests {
            options.max_active_requests = max as usize;
        }
        if let Some(max) = max_request_body_bytes {
            options.max_request_body_bytes = max as usize;
        }
        if let Some(max) = max_buffered_response_bytes {
            options.max_buffered_response_bytes = max as usize;
        }
        let events: EventFn = on_event
            .build_threadsafe_function::<String>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        let bridge = HostMcpHttpBridge::bind(
            options,
            Box::new(move |event| {
                events.call(event, ThreadsafeFunctionCallMode::NonBlocking);
            }),
        )
        .map_err(|error| Error::new(Status::GenericFailure, error.to_string()))?;
        Ok(Self { bridge })
    }

    /// The HTTP declaration (JSON) serving an `"type": "acp"` one (JSON).
    #[napi]
    pub fn to_http(&self, env: Env, server: String) -> Result<String> {
        self.bridge
            .to_http(&server)
            .map_err(|error| errors::request_error(&env, &error))
    }

    /// A notification (JSON) of running call `call`; false once it ended.
    #[napi]
    pub fn notify(&self, call: i64, notification: String) -> bool {
        self.bridge.notify(call as u64, &notification)
    }

    /// Call `call`'s outcome (JSON), or its failure (`{"code", "message", "data"?}`).
    #[napi]
    pub fn finish(&self, call: i64, outcome: Option<String>, failure: Option<String>) -> bool {
        self.bridge
            .finish(call as u64, outcome.as_deref(), failure.as_deref())
    }

    /// The listener's port.
    #[napi]
    pub fn port(&self) -> u32 {
        self.bridge.port().into()
    }

    /// Stops the listener (running calls get `{"cancel"}` events).
    #[napi]
    pub fn close(&self) {
        self.bridge.close();
    }
}

/// A `tools/list` result (JSON) without `x-mcp-header` annotations.
#[napi]
pub fn mcp_strip_header_annotations(env: Env, result: String) -> Result<String> {
    host::strip_header_annotations(&result).map_err(|error| errors::request_error(&env, &error))
}
