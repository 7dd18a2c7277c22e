//! MCP-over-ACP's wire rules, as the official SDKs apply them: the
//! `mcp/message` envelope, the per-request MCP `_meta`, the outcome carrier
//! (exactly one of `result` or `error`), and the outer ACP errors reserved for
//! the binding itself. An inner MCP error is never an outer one: it travels in
//! a successful response's `error` carrier.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Map, Value};

use crate::error::RequestError;
use crate::tables::{codes, mcp, messages};

/// The params of an `mcp/message` request or notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The declared server the message is about.
    pub server_id: String,
    /// The caller's id of the inner MCP request (also the inner JSON-RPC id).
    pub request_id: String,
    /// The inner MCP method.
    pub method: String,
    /// The inner MCP params (`null` and omission are both `None`).
    pub params: Option<Map<String, Value>>,
    /// The outer ACP `_meta` of the envelope (`null` or not an object: `None`).
    pub meta: Option<Map<String, Value>>,
}

impl Envelope {
    /// Read an envelope; a malformed one is -32602 with the reason.
    pub fn parse(params: &Value) -> Result<Self, RequestError> {
        let text = |key: &str| -> Result<String, RequestError> {
            params
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    RequestError::invalid_params()
                        .with_message_detail(format_args!("`{key}` must be a string"))
                })
        };
        let inner = match params.get("params") {
            None | Some(Value::Null) => None,
            Some(Value::Object(inner)) => Some(inner.clone()),
            Some(_) => {
                return Err(
                    RequestError::invalid_params().with_message_detail("`params` must be an object or null")
                )
            }
        };
        Ok(Self {
            server_id: text("serverId")?,
            request_id: text("requestId")?,
            method: text("method")?,
            params: inner,
            meta: params.get("_meta").and_then(Value::as_object).cloned(),
        })
    }

    /// The envelope as wire params (absent parts omitted).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("serverId".into(), self.server_id.clone().into());
        out.insert("requestId".into(), self.request_id.clone().into());
        out.insert("method".into(), self.method.clone().into());
        if let Some(params) = &self.params {
            out.insert("params".into(), Value::Object(params.clone()));
        }
        if let Some(meta) = &self.meta {
            out.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(out)
    }
}

/// What MCP 2026-07-28 requires in each request's inner `params._meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`: always [`mcp::PROTOCOL_VERSION`] once checked.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: Map<String, Value>,
    /// `io.modelcontextprotocol/clientInfo`, if the caller sent it.
    pub client_info: Option<Value>,
}

impl RequestMeta {
    /// Read and check a request's inner meta. A request without it, or for
    /// another MCP revision, is answered with an inner MCP error (the outcome
    /// returned as `Err`), as an MCP server would answer it.
    pub fn check(params: Option<&Map<String, Value>>) -> Result<Self, Value> {
        let meta = params
            .and_then(|params| params.get("_meta"))
            .and_then(Value::as_object);
        let field = |key: &str| meta.and_then(|meta| meta.get(key));
        let Some(version) = field(mcp::META_PROTOCOL_VERSION).and_then(Value::as_str) else {
            return Err(invalid_inner_params(mcp::META_PROTOCOL_VERSION));
        };
        if version != mcp::PROTOCOL_VERSION {
            return Err(json!({"error": {
                "code": codes::UNSUPPORTED_PROTOCOL_VERSION,
                "message": messages::UNSUPPORTED_PROTOCOL_VERSION,
                "data": {"supported": [mcp::PROTOCOL_VERSION], "requested": version},
            }}));
        }
        let Some(capabilities) = field(mcp::META_CLIENT_CAPABILITIES).and_then(Value::as_object) else {
            return Err(invalid_inner_params(mcp::META_CLIENT_CAPABILITIES));
        };
        Ok(Self {
            protocol_version: version.to_owned(),
            client_capabilities: capabilities.clone(),
            client_info: field(mcp::META_CLIENT_INFO).cloned(),
        })
    }
}

fn invalid_inner_params(missing: &str) -> Value {
    json!({"error": {
        "code": codes::INVALID_PARAMS,
        "message": format!("{}: missing {missing} in params._meta", messages::INVALID_PARAMS),
    }})
}

/// `params` with the per-request meta MCP 2026-07-28 requires added to its
/// `_meta`, never replacing what the caller supplied: the protocol version,
/// the client capabilities (`{}` unless given) and, when given, the client info.
pub fn with_request_meta(
    params: Option<&Value>,
    capabilities: Option<&Value>,
    client_info: Option<&Value>,
) -> Value {
    let mut out = params.and_then(Value::as_object).cloned().unwrap_or_default();
    let mut meta = out
        .get("_meta")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    meta.entry(mcp::META_PROTOCOL_VERSION)
        .or_insert_with(|| mcp::PROTOCOL_VERSION.into());
    meta.entry(mcp::META_CLIENT_CAPABILITIES)
        .or_insert_with(|| capabilities.cloned().unwrap_or_else(|| json!({})));
    if let Some(info) = client_info {
        meta.entry(mcp::META_CLIENT_INFO).or_insert_with(|| info.clone());
    }
    out.insert("_meta".into(), Value::Object(meta));
    Value::Object(out)
}

fn is_error_object(value: &Value) -> bool {
    value
        .get("code")
        .is_some_and(|code| code.is_i64() || code.is_u64())
        && value.get("message").is_some_and(Value::is_string)
        && value.is_object()
}

/// A received carrier as an outcome: `{"result"}` (any JSON, `null` too) or
/// `{"error"}` (an MCP error object), with `_meta` kept when it is an object.
/// `result` wins when both are present; `None` when neither is valid.
pub fn parse_outcome(value: &Value) -> Option<Value> {
    let carrier = value.as_object()?;
    let mut out = Map::new();
    if let Some(result) = carrier.get("result") {
        out.insert("result".into(), result.clone());
    } else if let Some(error) = carrier.get("error").filter(|error| is_error_object(error)) {
        out.insert("error".into(), error.clone());
    } else {
        return None;
    }
    if let Some(meta) = carrier.get("_meta").filter(|meta| meta.is_object()) {
        out.insert("_meta".into(), meta.clone());
    }
    Some(Value::Object(out))
}

/// A provider handler's outcome as the answer to send: exactly one of
/// `result` or a valid `error`, or -33002.
pub fn check_handler_outcome(value: &Value) -> Result<Value, RequestError> {
    let invalid = || RequestError::new(codes::MCP_BACKEND_FAILED, messages::MCP_INVALID_OUTCOME);
    let carrier = value.as_object().ok_or_else(invalid)?;
    let (has_result, has_error) = (carrier.contains_key("result"), carrier.contains_key("error"));
    if has_result == has_error {
        return Err(invalid());
    }
    parse_outcome(value).ok_or_else(invalid)
}

/// A received answer as an outcome, or -33002 saying the carrier is invalid.
pub fn outcome_of_response(response: &Value) -> Result<Value, RequestError> {
    parse_outcome(response).ok_or_else(|| {
        RequestError::new(codes::MCP_BACKEND_FAILED, messages::MCP_INVALID_CARRIER)
            .with_data(json!({ "response": response }))
    })
}

/// How a provider's handler failed.
#[derive(Debug, Clone, PartialEq)]
pub enum McpHandlerError {
    /// An inner MCP error (the official SDKs' `McpProtocolError`): answered
    /// inside a successful response's `error` carrier.
    Protocol {
        /// The MCP error code (never read as an ACP one).
        code: i64,
        /// The MCP error message.
        message: String,
        /// The MCP error data, if any.
        data: Option<Value>,
    },
    /// Anything else: the outer -33002, with `details` (and `code` when the
    /// failure was an ACP error), or -32800 when the request was cancelled.
    Failed {
        /// What failed, for `data.details`.
        details: String,
        /// The ACP error code the failure carried, if it was one.
        code: Option<i64>,
    },
}

impl McpHandlerError {
    /// A failure as a host language hands it over: `{"protocol": {"code",
    /// "message", "data"?}}` for an inner MCP error, else `{"details", "code"?}`.
    pub fn from_host(failure: &Value) -> Self {
        match failure.get("protocol") {
            Some(error) => Self::Protocol {
                code: error["code"].as_i64().unwrap_or_default(),
                message: error["message"].as_str().unwrap_or_default().to_owned(),
                data: error.get("data").cloned(),
            },
            None => Self::Failed {
                details: failure["details"].as_str().unwrap_or_default().to_owned(),
                code: failure["code"].as_i64(),
            },
        }
    }

    /// The answer to send for this failure; `cancelled` when the request was
    /// cancelled (by the caller, the registration's disposal or the connection).
    pub fn into_answer(self, cancelled: bool) -> Result<Value, RequestError> {
        match self {
            Self::Protocol { code, message, data } => {
                let mut error = json!({"code": code, "message": message});
                if let Some(data) = data {
                    error["data"] = data;
                }
                Ok(json!({ "error": error }))
            }
            Self::Failed { code, .. } if cancelled || code == Some(codes::REQUEST_CANCELLED) => {
                Err(RequestError::request_cancelled())
            }
            Self::Failed { details, code } => {
                let mut data = json!({ "details": details });
                if let Some(code) = code {
                    data["code"] = code.into();
                }
                Err(
                    RequestError::new(codes::MCP_BACKEND_FAILED, messages::MCP_BACKEND_FAILED)
                        .with_data(data),
                )
            }
        }
    }
}

/// -33001: no server is registered under `server_id`.
pub fn server_unavailable(server_id: &str) -> RequestError {
    RequestError::new(codes::MCP_SERVER_UNAVAILABLE, messages::MCP_SERVER_UNAVAILABLE)
        .with_data(json!({ "serverId": server_id }))
}

/// Whether an `mcpServers` entry is a server provided over ACP.
pub fn is_mcp_server_acp(server: &Value) -> bool {
    server.get("type").and_then(Value::as_str) == Some("acp")
        && server.get("name").is_some_and(Value::is_string)
        && server.get("serverId").is_some_and(Value::is_string)
}

/// The declaration a provider publishes in a session's `mcpServers`.
pub fn declaration(name: &str, server_id: &str) -> Value {
    json!({"type": "acp", "name": name, "serverId": server_id})
}

/// A fresh id, `<prefix>:<128 random-ish bits>`: unique per process and
/// unpredictable across processes (not a secret).
pub fn generate_id(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    let state = RandomState::new();
    format!(
        "{prefix}:{:016x}{:016x}",
        state.hash_one(count),
        state.hash_one(!count)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_meta_is_added_without_replacing_the_callers() {
        let params =
            json!({"name": "add", "_meta": {"io.modelcontextprotocol/clientCapabilities": {"x": 1}}});
        let out = with_request_meta(Some(&params), None, Some(&json!({"name": "a", "version": "1"})));
        assert_eq!(out["name"], "add");
        assert_eq!(out["_meta"][mcp::META_PROTOCOL_VERSION], mcp::PROTOCOL_VERSION);
        assert_eq!(out["_meta"][mcp::META_CLIENT_CAPABILITIES], json!({"x": 1}));
        assert_eq!(out["_meta"][mcp::META_CLIENT_INFO]["name"], "a");
        assert_eq!(
            with_request_meta(None, None, None)["_meta"][mcp::META_CLIENT_CAPABILITIES],
            json!({})
        );
    }

    #[test]
    fn request_meta_is_checked_as_an_mcp_server_would() {
        let params = with_request_meta(None, None, None);
        assert!(RequestMeta::check(params.as_object()).is_ok());
        let missing = RequestMeta::check(None).unwrap_err();
        assert_eq!(missing["error"]["code"], -32602);
        let mut old = params.clone();
        old["_meta"][mcp::META_PROTOCOL_VERSION] = "2025-06-18".into();
        let error = RequestMeta::check(old.as_object()).unwrap_err();
        assert_eq!(error["error"]["code"], -32022);
        assert_eq!(error["error"]["data"]["requested"], "2025-06-18");
    }

    #[test]
    fn outcomes_take_exactly_one_carrier() {
        assert_eq!(
            parse_outcome(&json!({"result": null})),
            Some(json!({"result": null}))
        );
        assert_eq!(
            parse_outcome(&json!({"result": 1, "error": {"code": 1, "message": "m"}, "_meta": 3})),
            Some(json!({"result": 1}))
        );
        assert_eq!(
            parse_outcome(&json!({"error": {"code": 1.5, "message": "m"}})),
            None
        );
        assert!(check_handler_outcome(&json!({"result": 1, "error": {"code": 1, "message": "m"}})).is_err());
        assert_eq!(
            check_handler_outcome(&json!({})).unwrap_err().code,
            codes::MCP_BACKEND_FAILED
        );
        assert_eq!(
            outcome_of_response(&json!(7)).unwrap_err().data,
            Some(json!({"response": 7}))
        );
    }

    #[test]
    fn envelopes_are_checked() {
        let envelope =
            Envelope::parse(&json!({"serverId": "s", "requestId": "r", "method": "m", "params": null}))
                .unwrap();
        assert_eq!(envelope.params, None);
        assert_eq!(
            envelope.to_value(),
            json!({"serverId": "s", "requestId": "r", "method": "m"})
        );
        let error = Envelope::parse(&json!({"serverId": "s", "requestId": 1, "method": "m"})).unwrap_err();
        assert_eq!(error.code, codes::INVALID_PARAMS);
        assert!(
            Envelope::parse(&json!({"serverId": "s", "requestId": "r", "method": "m", "params": [1]}))
                .is_err()
        );
    }

    #[test]
    fn ids_differ() {
        assert_ne!(generate_id("a"), generate_id("a"));
        assert!(generate_id("tools").starts_with("tools:"));
    }
}
