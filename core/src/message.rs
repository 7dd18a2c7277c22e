//! JSON-RPC 2.0 messages: classifying an inbound line and serializing
//! outbound frames. Params and results stay raw JSON text (`RawValue`) so a
//! typed layer or a binding parses them once, straight into its own types.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::RequestError;

/// Raw JSON text: params, results, error data.
pub type RawJson = Box<RawValue>;

/// A JSON-RPC request id (the schema's `RequestId`): ours are numbers; a
/// peer may use strings; `Null` only in an error response to a message
/// whose id could not be read.
pub use crate::schema::RequestId;

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
            RequestId::Null => f.write_str("null"),
        }
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::Str(s.to_owned())
    }
}

/// One line of the wire, classified as the engine's reader does (public
/// for tools that inspect traffic, such as `acp-engine trace`).
#[derive(Debug)]
pub enum Inbound {
    /// A request: it wants a response with the same id.
    Request {
        /// Its id.
        id: RequestId,
        /// The method called.
        method: String,
        /// The params as JSON text, if any.
        params: Option<RawJson>,
    },
    /// A notification: no id, no response.
    Notification {
        /// The method called.
        method: String,
        /// The params as JSON text, if any.
        params: Option<RawJson>,
    },
    /// A response to one of the reader's requests.
    Response {
        /// The id of the request it answers.
        id: RequestId,
        /// Its result as JSON text, or its error.
        outcome: Result<RawJson, RequestError>,
    },
    /// Not a valid message: answer `error` to `id` (null when unreadable).
    Invalid {
        /// The id to answer, when one could be read.
        id: RequestId,
        /// The error the engine answers with.
        error: RequestError,
    },
    /// A response that is not a valid one (both `result` and `error`, or an
    /// `error` without an integer `code`): answer `error` to `id` as for
    /// [`Inbound::Invalid`], and fail our request `id` if it waits for it.
    InvalidResponse {
        /// The id of the request it answers.
        id: RequestId,
        /// The error the engine answers with.
        error: RequestError,
    },
}

/// The fields of any JSON-RPC message, read in one pass. `id` keeps its raw
/// text so "absent" and `null` stay distinguishable.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default)]
    params: Option<RawJson>,
    #[serde(default, deserialize_with = "present_owned")]
    result: Option<RawJson>,
    #[serde(default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// `Some(raw)` for any present value, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn present_owned<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RawJson>, D::Error> {
    RawJson::deserialize(d).map(Some)
}

/// Classify one line (already stripped of its newline). Never fails: what
/// is not a valid message becomes `Inbound::Invalid` with the error to send.
pub fn classify(line: &[u8]) -> Inbound {
    if let Some(envelope) = scanned_envelope(line) {
        return classify_envelope(envelope);
    }
    // serde would also read a struct from an array: only objects qualify.
    let is_object = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    match serde_json::from_slice::<Envelope>(line) {
        Ok(envelope) if is_object => classify_envelope(envelope),
        Ok(_) => classify_unreadable(line, None),
        Err(error) => classify_unreadable(line, Some(error)),
    }
}

/// The envelope as serde_json reads it, found by `json_scan` (the fast
/// path: a large params' strings are skipped 32 bytes per step), when the
/// scan is sure of the line; `None` sends it to serde_json.
fn scanned_envelope(line: &[u8]) -> Option<Envelope<'_>> {
    use crate::valid_raw::{borrowed, owned};
    let fields = crate::json_scan::envelope_fields(line)?;
    // As serde reads `Option`s: `null` is None, but where `present` keeps it.
    let not_null = |text: &&str| *text != "null";
    Some(Envelope {
        jsonrpc: fields.jsonrpc.filter(not_null).map(borrowed),
        id: fields.id.map(borrowed),
        method: fields.method.map(borrowed),
        params: fields.params.filter(not_null).map(|text| owned(text.into())),
        result: fields.result.map(|text| owned(text.into())),
        error: fields.error.map(borrowed),
    })
}

/// Whether the fast path, when it reads `line`, reads it as serde_json does
/// (the fuzzer's and the tests' comparison; `true` when it leaves the line
/// to serde_json).
pub(crate) fn scan_agrees_with_serde_json(line: &[u8]) -> bool {
    let Some(scanned) = scanned_envelope(line) else {
        return true;
    };
    let Ok(read) = serde_json::from_slice::<Envelope>(line) else {
        return false;
    };
    let text = |raw: Option<&RawValue>| raw.map(|raw| raw.get().to_owned());
    let fields = |e: &Envelope| {
        [
            text(e.jsonrpc),
            text(e.id),
            text(e.method),
            text(e.params.as_deref()),
            text(e.result.as_deref()),
            text(e.error),
        ]
    };
    fields(&scanned) == fields(&read)
}

fn classify_envelope(envelope: Envelope) -> Inbound {
    let id = match envelope.id.map(parse_id).transpose() {
        Ok(id) => id,
        Err(message) => return invalid(RequestId::Null, message),
    };
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return invalid(id.unwrap_or(RequestId::Null), "\"jsonrpc\" must be \"2.0\"");
    }
    if let Some(method) = envelope.method {
        let Ok(method) = serde_json::from_str::<String>(method.get()) else {
            return invalid(id.unwrap_or(RequestId::Null), "\"method\" must be a string");
        };
        if envelope.result.is_some() || envelope.error.is_some() {
            return invalid(
                id.unwrap_or(RequestId::Null),
                "a request has no \"result\" or \"error\"",
            );
        }
        if let Some(params) = &envelope.params {
            if !matches!(params.get().as_bytes().first(), Some(b'{' | b'[')) {
                return invalid(
                    id.unwrap_or(RequestId::Null),
                    "\"params\" must be an object or an array",
                );
            }
        }
        return match id {
            Some(id) => Inbound::Request {
                id,
                method,
                params: envelope.params,
            },
            None => Inbound::Notification {
                method,
                params: envelope.params,
            },
        };
    }
    let Some(id) = id else {
        return invalid(RequestId::Null, "a message needs a \"method\" or an \"id\"");
    };
    let outcome = match (envelope.result, envelope.error) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => match read_error(error) {
            Some(error) => Err(error),
            None => return invalid_response(id, "\"error\" must be {code, message, data?}"),
        },
        _ => return invalid_response(id, "a response has exactly one of \"result\" and \"error\""),
    };
    Inbound::Response { id, outcome }
}

/// A response's error object. One without a `message` (or with a null one)
/// is still read, as the official Python SDK reads it: its code is what a caller
/// acts on, and the request it answers must not wait for ever.
fn read_error(error: &RawValue) -> Option<RequestError> {
    if let Ok(error) = serde_json::from_str::<RequestError>(error.get()) {
        return Some(error);
    }
    #[derive(Deserialize)]
    struct WithoutMessage {
        code: i64,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        data: Option<Value>,
    }
    let error = serde_json::from_str::<WithoutMessage>(error.get()).ok()?;
    Some(RequestError {
        code: error.code,
        message: error
            .message
            .unwrap_or_else(|| format!("error {} (the response had no message)", error.code)),
        data: error.data,
    })
}

/// A line that did not fit the envelope: find out whether it is JSON at all
/// (-32700), a batch or a non-object (-32600), or an object with a bad field.
fn classify_unreadable(line: &[u8], envelope_error: Option<serde_json::Error>) -> Inbound {
    match serde_json::from_slice::<Value>(line) {
        Err(error) => Inbound::Invalid {
            id: RequestId::Null,
            error: RequestError::parse_error().with_data(json!({ "message": error.to_string() })),
        },
        Ok(Value::Array(_)) => invalid(RequestId::Null, "batch requests are not supported"),
        Ok(Value::Object(object)) => {
            let id = object
                .get("id")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
                .unwrap_or(RequestId::Null);
            let reason =
                envelope_error.map_or_else(|| "not a JSON-RPC message".to_owned(), |e| e.to_string());
            invalid(id, reason)
        }
        Ok(_) => invalid(RequestId::Null, "a message must be a JSON object"),
    }
}

fn parse_id(raw: &RawValue) -> Result<RequestId, String> {
    // Ids are almost always non-negative integers: read them directly, since
    // the untagged enum's derive first tries `null` and formats that
    // failure's message, on every message. (serde_json reads `-0` as a float.)
    let text = raw.get();
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        if let Ok(number) = text.parse::<i64>() {
            return Ok(RequestId::Number(number));
        }
    }
    serde_json::from_str::<RequestId>(text)
        .map_err(|_| format!("\"id\" must be an integer or a string, not {}", raw.get()))
}

fn invalid(id: RequestId, reason: impl Into<String>) -> Inbound {
    Inbound::Invalid {
        id,
        error: RequestError::invalid_request().with_data(json!({ "reason": reason.into() })),
    }
}

fn invalid_response(id: RequestId, reason: impl Into<String>) -> Inbound {
    Inbound::InvalidResponse {
        id,
        error: RequestError::invalid_request().with_data(json!({ "reason": reason.into() })),
    }
}

/// Outbound frames, serialized straight to bytes with their newline.
pub(crate) mod frame {
    use super::*;

    #[derive(Serialize)]
    struct Request<'a, P: Serialize + ?Sized> {
        jsonrpc: &'static str,
        id: i64,
        method: &'a str,
        params: &'a P,
    }

    #[derive(Serialize)]
    struct Notification<'a, P: Serialize + ?Sized> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a P,
    }

    #[derive(Serialize)]
    struct Failure<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        error: &'a RequestError,
    }

    fn to_line(value: &impl Serialize) -> Result<Vec<u8>, RequestError> {
        let mut bytes = Vec::with_capacity(160);
        crate::json_writer::write(&mut bytes, value).map_err(|error| {
            RequestError::invalid_params().with_data(json!({ "message": error.to_string() }))
        })?;
        one_line(&mut bytes);
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Raw JSON from a host (C, Python, Node) goes out as given, and may be
    /// pretty-printed. A line break in valid JSON can only be whitespace
    /// between tokens (inside strings it must be escaped), so it becomes a
    /// space rather than ending the frame early.
    fn one_line(bytes: &mut [u8]) {
        if memchr::memchr2(b'\n', b'\r', bytes).is_some() {
            for byte in bytes.iter_mut().filter(|byte| matches!(byte, b'\n' | b'\r')) {
                *byte = b' ';
            }
        }
    }

    /// JSON-RPC wants params structured or absent: drop a trailing null.
    fn without_null_params(mut line: Vec<u8>) -> Vec<u8> {
        const NULL_PARAMS: &[u8] = b",\"params\":null}\n";
        if line.ends_with(NULL_PARAMS) {
            line.truncate(line.len() - NULL_PARAMS.len());
            line.extend_from_slice(b"}\n");
        }
        line
    }

    pub(crate) fn request<P: Serialize + ?Sized>(
        id: i64,
        method: &str,
        params: &P,
    ) -> Result<Vec<u8>, RequestError> {
        to_line(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map(without_null_params)
    }

    pub(crate) fn notification<P: Serialize + ?Sized>(
        method: &str,
        params: &P,
    ) -> Result<Vec<u8>, RequestError> {
        to_line(&Notification {
            jsonrpc: "2.0",
            method,
            params,
        })
        .map(without_null_params)
    }

    // Frames around JSON text a host checked (`host::HostConnection`), written by hand
    // into the caller's buffer: no serializer, no intermediate `Vec` per message.

    /// Appends `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}\n`.
    pub(crate) fn write_request(out: &mut Vec<u8>, id: i64, method: &str, params: Option<&str>) {
        reserve(out, method.len() + params.map_or(0, str::len));
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
        write_call(out, method, params);
    }

    /// `write_request` with an id already JSON text (a peer's id, passed on as it came).
    pub(crate) fn write_request_with_id_text(
        out: &mut Vec<u8>,
        id: &str,
        method: &str,
        params: Option<&str>,
    ) {
        reserve(out, id.len() + method.len() + params.map_or(0, str::len));
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(id.as_bytes());
        write_call(out, method, params);
    }

    /// Appends `{"jsonrpc":"2.0","method":<method>,"params":<params>}\n`.
    pub(crate) fn write_notification(out: &mut Vec<u8>, method: &str, params: Option<&str>) {
        reserve(out, method.len() + params.map_or(0, str::len));
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\"");
        write_call(out, method, params);
    }

    /// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}\n`.
    pub(crate) fn write_success(out: &mut Vec<u8>, id: &RequestId, result: &str) {
        reserve(out, result.len());
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        serde_json::to_writer(&mut *out, id).expect("ids always serialize");
        out.extend_from_slice(b",\"result\":");
        write_json_text(out, result);
        out.extend_from_slice(b"}\n");
    }

    /// Room for a frame around `text` bytes of method and params or result
    /// (an unescaped method, a short id), so a large frame is written into
    /// one allocation instead of a series of growing copies.
    fn reserve(out: &mut Vec<u8>, text: usize) {
        const ENVELOPE: usize = 64;
        out.reserve(text + ENVELOPE);
    }

    fn write_call(out: &mut Vec<u8>, method: &str, params: Option<&str>) {
        out.extend_from_slice(b",\"method\":");
        write_string(out, method);
        // As `without_null_params`: JSON-RPC wants params structured or absent.
        if let Some(params) = params.filter(|params| params.trim() != "null") {
            out.extend_from_slice(b",\"params\":");
            write_json_text(out, params);
        }
        out.extend_from_slice(b"}\n");
    }

    use crate::json_string::write_string;

    /// Valid JSON text, kept on one line (see `one_line`).
    fn write_json_text(out: &mut Vec<u8>, text: &str) {
        let start = out.len();
        out.extend_from_slice(text.as_bytes());
        one_line(&mut out[start..]);
    }

    pub(crate) fn response(id: &RequestId, outcome: &Result<RawJson, RequestError>) -> Vec<u8> {
        match outcome {
            // Sized once around the result: a large one is copied once, not
            // through a series of growing buffers.
            Ok(result) => {
                let mut line = Vec::new();
                write_success(&mut line, id, result.get());
                line
            }
            Err(error) => to_line(&Failure {
                jsonrpc: "2.0",
                id,
                error,
            })
            .expect("responses always serialize"),
        }
    }
}

/// Deserialize raw JSON (params or a result) into `T`.
pub fn from_raw<T: serde::de::DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, serde_json::Error> {
    match raw {
        Some(raw) => serde_json::from_str(raw.get()),
        None => T::deserialize(serde_json::Value::Null)
            .map_err(|e| serde_json::Error::custom(format!("missing params: {e}"))),
    }
}

/// Serialize `value` to raw JSON text.
pub fn to_raw(value: &impl Serialize) -> Result<RawJson, serde_json::Error> {
    crate::json_writer::to_raw(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path reads every line of the fuzzer's seeds as serde_json
    /// does, and reads the valid ones at all.
    #[test]
    fn the_scan_reads_lines_as_serde_json_does() {
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/classify");
        let mut scanned = 0;
        for entry in std::fs::read_dir(seeds).expect("the classify seeds") {
            let line = std::fs::read(entry.unwrap().path()).unwrap();
            assert!(
                scan_agrees_with_serde_json(&line),
                "{}",
                String::from_utf8_lossy(&line)
            );
            scanned += usize::from(scanned_envelope(&line).is_some());
        }
        assert!(scanned > 20, "the scan read only {scanned} seeds");
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#[..],
            br#"{"jsonrpc":null,"id":null,"result":null}"#,
            br#"{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m","data":[1e5,-0.5]}}"#,
            br#"{"a":{"b":[{"c":"\"\\\/\b\f\n\r\t\u00fF"}]},"jsonrpc":"2.0","method":"n"}"#,
        ] {
            assert!(
                scanned_envelope(line).is_some(),
                "{}",
                String::from_utf8_lossy(line)
            );
            assert!(
                scan_agrees_with_serde_json(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// The integer fast path reads every id as the schema's untagged enum does.
    #[test]
    fn parse_id_agrees_with_the_schema_type() {
        for text in [
            "0",
            "-0",
            "7",
            "-12",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "1.0",
            "1e3",
            "-1.5",
            "null",
            "\"7\"",
            "\"\"",
            "true",
            "[1]",
            "{}",
        ] {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            let expected = serde_json::from_str::<RequestId>(text).ok();
            assert_eq!(parse_id(&raw).ok(), expected, "id {text}");
        }
    }

    fn invalid_code(line: &str) -> (RequestId, i64) {
        match classify(line.as_bytes()) {
            Inbound::Invalid { id, error } | Inbound::InvalidResponse { id, error } => (id, error.code),
            other => panic!("{line} classified as {other:?}"),
        }
    }

    #[test]
    fn answers_that_are_not_valid_are_invalid_responses_and_a_missing_message_is_read() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":7}}"#,
        ] {
            assert!(
                matches!(
                    classify(line.as_bytes()),
                    Inbound::InvalidResponse {
                        id: RequestId::Number(1),
                        ..
                    }
                ),
                "{line}"
            );
        }
        for (line, message) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800}}"#,
                "error -32800 (the response had no message)",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":null}}"#,
                "error 5 (the response had no message)",
            ),
        ] {
            match classify(line.as_bytes()) {
                Inbound::Response {
                    outcome: Err(error), ..
                } => assert_eq!(error.message, message, "{line}"),
                other => panic!("{line} classified as {other:?}"),
            }
        }
    }

    #[test]
    fn requests_notifications_and_responses() {
        match classify(br#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":1}}"#) {
            Inbound::Request { id, method, params } => {
                assert_eq!(id, RequestId::Number(3));
                assert_eq!(method, "m");
                assert_eq!(params.unwrap().get(), r#"{"a":1}"#);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"n"}"#),
            Inbound::Notification { params: None, .. }
        ));
        match classify(br#"{"jsonrpc":"2.0","id":"x","result":null}"#) {
            Inbound::Response { id, outcome } => {
                assert_eq!(id, RequestId::Str("x".into()));
                assert_eq!(outcome.unwrap().get(), "null");
            }
            other => panic!("{other:?}"),
        }
        match classify(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#) {
            Inbound::Response { outcome, .. } => assert_eq!(outcome.unwrap_err().code, -32601),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn invalid_messages_get_the_documented_codes() {
        assert_eq!(invalid_code("{not json"), (RequestId::Null, -32700));
        assert_eq!(invalid_code("[1,2]"), (RequestId::Null, -32600));
        assert_eq!(invalid_code("42"), (RequestId::Null, -32600));
        assert_eq!(
            invalid_code(r#"{"id":1,"method":"m"}"#),
            (RequestId::Number(1), -32600)
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"1.0","id":2,"method":"m"}"#),
            (RequestId::Number(2), -32600)
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":5,"method":7}"#),
            (RequestId::Number(5), -32600)
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#),
            (RequestId::Null, -32600)
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#),
            (RequestId::Null, -32600)
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#),
            (RequestId::Number(1), -32600)
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":1}"#),
            (RequestId::Number(1), -32600)
        );
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0"}"#), (RequestId::Null, -32600));
        // Duplicate keys are not a valid message either.
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).1,
            -32600
        );
    }

    #[test]
    fn deep_nesting_is_a_parse_error_not_a_stack_overflow() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(invalid_code(&deep), (RequestId::Null, -32700));
        // Deep params pass the envelope untouched (raw, no recursion) and
        // fail, bounded, when a handler parses them.
        let deep_params = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let Inbound::Request { params, .. } = classify(deep_params.as_bytes()) else {
            panic!("deep params should still classify as a request");
        };
        assert!(from_raw::<Value>(params.as_deref()).is_err());
    }

    #[test]
    fn frames_are_one_line_each() {
        let request = frame::request(1, "m", &json!({"a": "b\nc"})).unwrap();
        assert_eq!(
            request,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"b\\nc\"}}\n"
        );
        let notification = frame::notification("n", &Value::Null).unwrap();
        assert_eq!(notification, b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
        let failure = frame::response(&RequestId::Null, &Err(RequestError::parse_error()));
        let mut written = Vec::new();
        frame::write_request(&mut written, -3, "a\"b\n", Some("{\"x\":\n[1]}"));
        frame::write_notification(&mut written, "n", None);
        frame::write_success(&mut written, &RequestId::Str("i\u{1}".into()), "\r\n{}");
        frame::write_notification(&mut written, "n", Some(" null"));
        assert_eq!(written.iter().filter(|byte| **byte == b'\n').count(), 4);
        let lines: Vec<Value> = written
            .split(|byte| *byte == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                json!({"jsonrpc": "2.0", "id": -3, "method": "a\"b\n", "params": {"x": [1]}}),
                json!({"jsonrpc": "2.0", "method": "n"}),
                json!({"jsonrpc": "2.0", "id": "i\u{1}", "result": {}}),
                json!({"jsonrpc": "2.0", "method": "n"}),
            ]
        );
        assert_eq!(
            failure,
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"
        );
    }
}
