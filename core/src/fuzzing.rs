//! Entry points for the cargo-fuzz targets in `fuzz/`. Not part of the
//! public API: hidden from the docs and free to change.

use crate::error::RequestError;
use crate::message::{classify, frame, Inbound, RequestId};

/// What the classifier made of one line, reduced to what a fuzz target can
/// check.
#[derive(Debug)]
pub enum Classified {
    Request {
        id: RequestId,
        method: String,
        params: Option<String>,
    },
    Notification {
        method: String,
        params: Option<String>,
    },
    Response {
        id: RequestId,
        outcome: Result<String, RequestError>,
    },
    /// Not a valid message; `reply` is the exact frame the engine would
    /// send back (with its trailing newline).
    Invalid {
        id: RequestId,
        error: RequestError,
        reply: Vec<u8>,
    },
}

/// Classify one inbound line (without its newline) the way the reader does.
pub fn classify_line(line: &[u8]) -> Classified {
    match classify(line) {
        Inbound::Request { id, method, params } => Classified::Request {
            id,
            method,
            params: params.map(|p| p.get().to_owned()),
        },
        Inbound::Notification { method, params } => Classified::Notification {
            method,
            params: params.map(|p| p.get().to_owned()),
        },
        Inbound::Response { id, outcome } => Classified::Response {
            id,
            outcome: outcome.map(|r| r.get().to_owned()),
        },
        Inbound::Invalid { id, error } | Inbound::InvalidResponse { id, error } => {
            let reply = frame::response(&id, &Err(error.clone()));
            Classified::Invalid { id, error, reply }
        }
    }
}

/// Whether the reader's fast path (`json_scan`), when it reads `line`'s
/// envelope, finds the fields serde_json finds.
pub fn scan_agrees_with_serde_json(line: &[u8]) -> bool {
    crate::message::scan_agrees_with_serde_json(line)
}

/// Whether the schema check (`schema::check`, which validates without building) and
/// the full parse agree on `text` as the params of `method` (None: not a method either
/// side receives). Disagreeing is a bug: the check must accept exactly what the typed
/// handlers accept.
pub fn check_agrees_with_parse(method: &str, text: &str) -> Option<bool> {
    crate::method_check::check_agrees_with_parse(method, text)
}

/// Whether the engine's JSON writer (`json_writer`) writes `text`, read as
/// a JSON value, byte for byte as serde_json does, both as a line and as raw
/// JSON (None: `text` is not JSON serde_json reads).
pub fn writer_agrees_with_serde_json(text: &[u8]) -> Option<bool> {
    let value = serde_json::from_slice::<serde_json::Value>(text).ok()?;
    Some(crate::json_writer::writes_as_serde_json(&value))
}

/// The server-sent events a Streamable HTTP client reads from `stream`,
/// fed in chunks of the given sizes (cycled; a size of 0 counts as 1), or
/// None once an event is over `max_event` bytes.
#[cfg(feature = "remote")]
pub fn sse_events(stream: &[u8], sizes: &[u8], max_event: usize) -> Option<Vec<Vec<u8>>> {
    crate::remote::fuzzing::sse_events(stream, sizes, max_event)
}
