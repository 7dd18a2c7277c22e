//! `RequestError`: the JSON-RPC error object, with the factories of the ACP
//! SDKs, so every language raises and recognises the same errors.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use crate::tables::codes;
/// The message each error is made with (generated with the codes).
pub use crate::tables::messages;

/// An error in ACP / JSON-RPC communication: what a request handler returns
/// to answer with an error, and what an outbound request fails with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestError {
    /// The JSON-RPC error code (see [`codes`]).
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Details about the error, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RequestError {
    /// An error with this code and message, and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attach (or replace) the error's `data`.
    pub fn with_data(mut self, data: impl Into<Value>) -> Self {
        self.data = Some(data.into());
        self
    }

    /// Append detail to the message: `"Invalid params: sessionId is missing"`.
    pub fn with_message_detail(mut self, detail: impl fmt::Display) -> Self {
        self.message = format!("{}: {detail}", self.message);
        self
    }

    /// Invalid JSON was received (-32700).
    pub fn parse_error() -> Self {
        Self::new(codes::PARSE_ERROR, messages::PARSE_ERROR)
    }

    /// The JSON is not a valid request object (-32600).
    pub fn invalid_request() -> Self {
        Self::new(codes::INVALID_REQUEST, messages::INVALID_REQUEST)
    }

    /// The method does not exist or is not offered (-32601, `data.method`).
    pub fn method_not_found(method: &str) -> Self {
        Self::new(codes::METHOD_NOT_FOUND, messages::METHOD_NOT_FOUND).with_data(json!({ "method": method }))
    }

    /// The params do not fit the method (-32602).
    pub fn invalid_params() -> Self {
        Self::new(codes::INVALID_PARAMS, messages::INVALID_PARAMS)
    }

    /// Something failed while handling the request (-32603).
    pub fn internal_error() -> Self {
        Self::new(codes::INTERNAL_ERROR, messages::INTERNAL_ERROR)
    }

    /// ACP: authenticate first (-32000).
    pub fn auth_required() -> Self {
        Self::new(codes::AUTH_REQUIRED, messages::AUTH_REQUIRED)
    }

    /// ACP: a resource, such as a file, was not found (-32002, `data.uri`).
    pub fn resource_not_found(uri: Option<&str>) -> Self {
        let error = Self::new(codes::RESOURCE_NOT_FOUND, messages::RESOURCE_NOT_FOUND);
        match uri {
            Some(uri) => error.with_data(json!({ "uri": uri })),
            None => error,
        }
    }

    /// The request was cancelled (-32800): what a cancelled request is answered.
    pub fn request_cancelled() -> Self {
        Self::new(codes::REQUEST_CANCELLED, messages::REQUEST_CANCELLED)
    }

    /// ACP: the session is unknown (-32002 with `data.sessionId`).
    pub fn session_not_found(session_id: &str) -> Self {
        Self::new(codes::RESOURCE_NOT_FOUND, messages::SESSION_NOT_FOUND)
            .with_data(json!({ "sessionId": session_id }))
    }

    /// ACP: `initialize` asked for a protocol version this side does not speak
    /// (-32022 with the requested and the supported versions).
    pub fn unsupported_protocol_version(requested: u16, supported: &[u16]) -> Self {
        Self::new(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            messages::UNSUPPORTED_PROTOCOL_VERSION,
        )
        .with_data(json!({ "requested": requested, "supported": supported }))
    }

    /// What every pending and later request fails with once the connection
    /// is closed; `reason` says why (peer EOF, write error, `close()`).
    pub fn connection_closed(reason: &str) -> Self {
        Self::new(codes::CONNECTION_CLOSED, messages::CONNECTION_CLOSED)
            .with_data(json!({ "reason": reason }))
    }

    /// Whether this is the error calls fail with once the connection closed (by its code).
    pub fn is_connection_closed(&self) -> bool {
        self.code == codes::CONNECTION_CLOSED
    }

    /// Turn a failure whose text must not reach the peer (paths, secrets,
    /// stack traces) into a plain -32603: the detail goes to `tracing` only.
    pub fn internal(detail: impl fmt::Display) -> Self {
        tracing::warn!(%detail, "request handler failed; answering -32603");
        Self::internal_error()
    }

    /// The JSON-RPC error object: `{"code", "message", "data"?}` (Python
    /// `to_error_response`, Node `toErrorResponse`).
    pub fn to_error_response(&self) -> Value {
        serde_json::to_value(self).expect("a RequestError always serializes")
    }

    /// The JSON-RPC `Result` shape: `{"error": {...}}`.
    pub fn to_result(&self) -> Value {
        json!({ "error": self.to_error_response() })
    }

    /// A complete JSON-RPC error response for the request `id`.
    pub fn to_response(&self, id: &crate::RequestId) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "error": self.to_error_response() })
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)?;
        if let Some(data) = &self.data {
            write!(f, ": {data}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RequestError {}

impl From<serde_json::Error> for RequestError {
    /// Params or results that do not deserialize are invalid params.
    fn from(error: serde_json::Error) -> Self {
        Self::invalid_params().with_data(json!({ "message": error.to_string() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factories_carry_the_documented_codes() {
        assert_eq!(RequestError::parse_error().code, -32700);
        assert_eq!(RequestError::invalid_request().code, -32600);
        assert_eq!(RequestError::method_not_found("x").code, -32601);
        assert_eq!(RequestError::invalid_params().code, -32602);
        assert_eq!(RequestError::internal_error().code, -32603);
        assert_eq!(RequestError::auth_required().code, -32000);
        assert_eq!(RequestError::resource_not_found(None).code, -32002);
        assert_eq!(RequestError::request_cancelled().code, -32800);
    }

    #[test]
    fn error_object_omits_absent_data() {
        let plain = RequestError::internal_error().to_error_response();
        assert_eq!(plain, json!({"code": -32603, "message": "Internal error"}));
        let with_data = RequestError::resource_not_found(Some("file:///a")).to_result();
        assert_eq!(
            with_data,
            json!({"error": {"code": -32002, "message": "Resource not found", "data": {"uri": "file:///a"}}})
        );
    }

    #[test]
    fn response_echoes_the_id() {
        let response = RequestError::method_not_found("nope").to_response(&crate::RequestId::Number(7));
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found", "data": {"method": "nope"}}})
        );
    }

    #[test]
    fn internal_hides_the_detail() {
        let error = RequestError::internal("password=hunter2 at /secret/path");
        assert_eq!(error, RequestError::internal_error());
        assert!(!error.to_string().contains("hunter2"));
    }

    #[test]
    fn connection_closed_is_recognisable() {
        assert!(RequestError::connection_closed("peer EOF").is_connection_closed());
        assert!(!RequestError::internal_error().is_connection_closed());
    }
}
