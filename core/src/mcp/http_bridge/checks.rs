//! What the bridge refuses, and how: everything checked before the body is
//! read (duplicated headers, origin, route, token, method, media types),
//! then the body (one JSON-RPC request of MCP 2026-07-28 whose headers
//! mirror it). Each refusal is an HTTP status with a JSON-RPC error.

use hyper::header::{self, HeaderMap};
use hyper::{Method, StatusCode};
use serde_json::{json, Map, Value};

use super::route::{matches_mirror, parse_server_route, Secret};
use crate::error::codes;
use crate::remote::http_body::media_type;
use crate::tables::{mcp, messages};

/// MCP's HTTP headers the bridge reads.
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";
/// Mirrored tool parameters: not accepted (tools are listed without them).
const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// Headers that must appear at most once.
const SINGLE: [&str; 5] = ["origin", "authorization", PROTOCOL_VERSION, MCP_METHOD, MCP_NAME];

/// MCP methods whose target the `Mcp-Name` header mirrors, and where the body names it.
const NAMED: [(&str, &str); 3] = [
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
];

/// A refused HTTP request: its status, extra headers and JSON-RPC error.
#[derive(Debug)]
pub(super) struct Refusal {
    pub status: StatusCode,
    pub headers: Vec<(header::HeaderName, &'static str)>,
    pub id: Value,
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl Refusal {
    fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            id: Value::Null,
            code,
            message: message.into(),
            data: None,
        }
    }

    fn with_header(mut self, name: header::HeaderName, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }

    /// 400 with MCP's -32020: a header disagrees with the body (`detail` says which).
    fn header_mismatch(detail: &str) -> Self {
        let message = format!("{}: {detail}", messages::MCP_HEADER_MISMATCH);
        Self::new(StatusCode::BAD_REQUEST, codes::MCP_HEADER_MISMATCH, message)
    }

    pub(super) fn too_many_requests() -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            codes::MCP_RESOURCE_LIMIT_EXCEEDED,
            "Too many outstanding MCP responses",
        )
    }

    pub(super) fn body_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::MCP_RESOURCE_LIMIT_EXCEEDED,
            "Request body too large",
        )
    }

    /// The JSON-RPC error message (no `id` when it is null).
    pub(super) fn body(&self) -> Value {
        error_message(&self.id, self.code, &self.message, self.data.as_ref())
    }
}

/// A JSON-RPC error message (without `id` when it is null).
pub(super) fn error_message(id: &Value, code: i64, message: &str, data: Option<&Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data.clone();
    }
    let mut out = json!({"jsonrpc": "2.0"});
    if !id.is_null() {
        out["id"] = id.clone();
    }
    out["error"] = error;
    out
}

/// The server a request is for, when everything before its body passes.
#[allow(clippy::result_large_err)] // once per refused request
pub(super) fn transport(
    method: &Method,
    headers: &HeaderMap,
    path: &str,
    secret: &Secret,
) -> Result<String, Refusal> {
    if SINGLE
        .iter()
        .any(|name| headers.get_all(*name).iter().count() > 1)
    {
        return Err(Refusal::header_mismatch(
            "duplicate routing or authentication header",
        ));
    }
    if !valid_origin(headers) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            codes::INVALID_REQUEST,
            "Invalid Origin",
        ));
    }
    let server_id = parse_server_route(path.strip_prefix('/').unwrap_or(path)).ok_or_else(|| {
        Refusal::new(
            StatusCode::NOT_FOUND,
            codes::METHOD_NOT_FOUND,
            "Unknown MCP route",
        )
    })?;
    if !secret.authorizes(text(headers, header::AUTHORIZATION.as_str()), &server_id) {
        return Err(
            Refusal::new(StatusCode::UNAUTHORIZED, codes::INVALID_REQUEST, "Unauthorized")
                .with_header(header::WWW_AUTHENTICATE, "Bearer"),
        );
    }
    if method != Method::POST {
        return Err(Refusal::new(
            StatusCode::METHOD_NOT_ALLOWED,
            codes::INVALID_REQUEST,
            "Only POST is supported",
        )
        .with_header(header::ALLOW, "POST"));
    }
    if !accepts_json_and_sse(text(headers, header::ACCEPT.as_str()).unwrap_or("")) {
        return Err(Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            codes::INVALID_REQUEST,
            "Accept must include application/json and text/event-stream",
        ));
    }
    if media_type(headers).as_deref() != Some("application/json") {
        return Err(Refusal::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::INVALID_REQUEST,
            "Expected application/json",
        ));
    }
    Ok(server_id)
}

/// One MCP request, as the HTTP client sent it.
#[derive(Debug)]
pub(super) struct McpHttpRequest {
    pub id: Value,
    pub method: String,
    pub params: Map<String, Value>,
}

/// The body as one MCP 2026-07-28 request its headers mirror.
#[allow(clippy::result_large_err)] // once per refused request
pub(super) fn request(body: &[u8], headers: &HeaderMap) -> Result<McpHttpRequest, Refusal> {
    let bad = |code: i64, message: &str| Refusal::new(StatusCode::BAD_REQUEST, code, message);
    let value: Value =
        serde_json::from_slice(body).map_err(|_| bad(codes::PARSE_ERROR, messages::PARSE_ERROR))?;
    let object = value.as_object();
    let id = object
        .and_then(|object| object.get("id"))
        .filter(|id| id.is_string() || id.as_i64().is_some_and(|n| n.unsigned_abs() < 1 << 53))
        .cloned()
        .unwrap_or(Value::Null);
    let reject = |code: i64, message: &str| Refusal {
        id: id.clone(),
        ..bad(code, message)
    };
    let mismatch = |detail: &str| Refusal {
        id: id.clone(),
        ..Refusal::header_mismatch(detail)
    };
    let Some(object) = object.filter(|object| {
        object.get("jsonrpc") == Some(&json!("2.0"))
            && !object.contains_key("result")
            && !object.contains_key("error")
            && !id.is_null()
    }) else {
        return Err(reject(
            codes::INVALID_REQUEST,
            "Expected one JSON-RPC request; batches, notifications and client responses are unsupported",
        ));
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Err(reject(codes::INVALID_REQUEST, "Missing method"));
    };
    let params = match object.get("params") {
        None => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => return Err(reject(codes::INVALID_PARAMS, "Parameters must be an object")),
    };
    let meta = params.get("_meta").and_then(Value::as_object);
    let Some(version) = meta
        .and_then(|meta| meta.get(mcp::META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
    else {
        let message = format!(
            "params._meta must contain {} as a string",
            mcp::META_PROTOCOL_VERSION
        );
        return Err(reject(codes::INVALID_PARAMS, &message));
    };
    if text(headers, PROTOCOL_VERSION) != Some(version) {
        return Err(mismatch("MCP-Protocol-Version does not match params._meta"));
    }
    if version != mcp::PROTOCOL_VERSION {
        let mut refusal = reject(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            messages::UNSUPPORTED_PROTOCOL_VERSION,
        );
        refusal.data = Some(json!({"supported": [mcp::PROTOCOL_VERSION], "requested": version}));
        return Err(refusal);
    }
    if !meta
        .and_then(|meta| meta.get(mcp::META_CLIENT_CAPABILITIES))
        .is_some_and(Value::is_object)
    {
        let message = format!(
            "params._meta must contain {} as an object",
            mcp::META_CLIENT_CAPABILITIES
        );
        return Err(reject(codes::INVALID_PARAMS, &message));
    }
    if text(headers, MCP_METHOD) != Some(method) {
        return Err(mismatch("Mcp-Method does not match method"));
    }
    if let Some((_, field)) = NAMED.iter().find(|(named, _)| *named == method) {
        let Some(name) = params.get(*field).and_then(Value::as_str) else {
            return Err(reject(codes::INVALID_PARAMS, "Missing params.name or params.uri"));
        };
        if !matches_mirror(text(headers, MCP_NAME), name) {
            return Err(mismatch("Mcp-Name does not match request"));
        }
    }
    if headers
        .keys()
        .any(|name| name.as_str().starts_with(MCP_PARAM_PREFIX))
    {
        return Err(mismatch("Mcp-Param headers are not supported by this adapter"));
    }
    if method == "initialize" || method.starts_with("notifications/") {
        return Err(Refusal {
            status: StatusCode::NOT_FOUND,
            ..reject(codes::METHOD_NOT_FOUND, messages::METHOD_NOT_FOUND)
        });
    }
    Ok(McpHttpRequest {
        id,
        method: method.to_owned(),
        params,
    })
}

/// A header's value when it appears once, as text.
fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    values.next().is_none().then(|| value.to_str().ok()).flatten()
}

/// Browsers send `Origin`; only the listener's own loopback origin is
/// trusted. Other HTTP clients normally send none.
fn valid_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(host) = text(headers, header::HOST.as_str()) else {
        return false;
    };
    let loopback = host
        .strip_prefix("127.0.0.1:")
        .is_some_and(|port| (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit()));
    loopback && origin.to_str().ok() == Some(&format!("http://{host}"))
}

/// Whether `Accept` takes both JSON and SSE (a malformed quality refuses).
fn accepts_json_and_sse(accept: &str) -> bool {
    let (mut json, mut sse) = (false, false);
    for item in accept.split(',') {
        let mut parts = item.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let mut quality = None;
        for parameter in parts {
            let (key, value) = parameter.split_once('=').unwrap_or((parameter, ""));
            if !key.trim().eq_ignore_ascii_case("q") {
                continue;
            }
            match (positive_quality(value.trim()), quality) {
                (Some(positive), None) => quality = Some(positive),
                _ => return false,
            }
        }
        if quality == Some(false) {
            continue;
        }
        json |= media == "application/json";
        sse |= media == "text/event-stream";
    }
    json && sse
}

/// An HTTP qvalue (0..1, at most three decimals): whether it is positive;
/// `None` when malformed.
fn positive_quality(value: &str) -> Option<bool> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match whole {
        "1" => fraction.bytes().all(|b| b == b'0').then_some(true),
        "0" => Some(fraction.bytes().any(|b| b != b'0')),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_needs_both_media_types_with_positive_quality() {
        assert!(accepts_json_and_sse("application/json, text/event-stream"));
        assert!(accepts_json_and_sse(
            "Application/JSON;q=0.5,text/event-stream;q=1.000"
        ));
        assert!(!accepts_json_and_sse("application/json"));
        assert!(!accepts_json_and_sse("application/json, text/event-stream;q=0"));
        assert!(!accepts_json_and_sse("application/json, text/event-stream;q=1.5"));
        assert!(!accepts_json_and_sse(
            "application/json;q=0.5;q=0.5, text/event-stream"
        ));
        assert!(!accepts_json_and_sse(
            "application/json, text/event-stream;q=0.0001"
        ));
    }

    #[test]
    fn origin_must_be_the_listeners_own() {
        let mut headers = HeaderMap::new();
        assert!(valid_origin(&headers));
        headers.insert(header::HOST, "127.0.0.1:4000".parse().unwrap());
        headers.insert(header::ORIGIN, "http://127.0.0.1:4000".parse().unwrap());
        assert!(valid_origin(&headers));
        headers.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(!valid_origin(&headers));
        headers.insert(header::HOST, "localhost:4000".parse().unwrap());
        headers.insert(header::ORIGIN, "http://localhost:4000".parse().unwrap());
        assert!(!valid_origin(&headers));
    }
}
