//! A drained batch (one JSON array text, shapes in [`kind`]) decoded once
//! into events whose strings stay where they lie: the byte after each
//! method, params or result is a delimiter the parse no longer needs, so it
//! becomes a NUL, and a C host reads them without a copy. Strings with
//! escapes are unescaped into the batch.

use std::ffi::CStr;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::RequestError;
use crate::host::kind;

/// The text events point into (never changed once built).
struct Batch {
    text: Vec<u8>,
    unescaped: Vec<String>,
}

/// A string or JSON value inside a batch, valid UTF-8 followed by a NUL.
/// It lives in an [`Item`], which keeps its batch alive: it is neither
/// `Clone` nor movable out of one.
pub struct Text {
    start: *const u8,
    len: usize,
}

// SAFETY: a `Text` points into an immutable `Batch` its `Item` shares.
unsafe impl Send for Text {}
unsafe impl Sync for Text {}

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        // SAFETY: `start..start + len` is UTF-8 inside the item's batch.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.start, self.len)) }
    }

    /// The same bytes with their NUL (no copy).
    pub fn as_c_str(&self) -> &CStr {
        // SAFETY: a NUL follows the text, and none is inside (JSON escapes it).
        unsafe { CStr::from_bytes_with_nul_unchecked(std::slice::from_raw_parts(self.start, self.len + 1)) }
    }

    /// An owned copy with room for a terminator: a C host turns it into a
    /// C string without another copy (`CString::from_vec_unchecked`).
    pub fn to_owned_text(&self) -> String {
        let mut owned = String::with_capacity(self.len + 1);
        owned.push_str(self.as_str());
        owned
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// One host event. `WRITTEN` is not among them: a driven connection's
/// sends block for room instead of parking.
#[derive(Debug)]
pub enum Event {
    /// `REQUEST`: answer `token` with `HostConnection::respond`.
    Request {
        /// The engine's handle of the request.
        token: u64,
        /// The method.
        method: Text,
        /// The params as JSON (None: absent).
        params: Option<Text>,
    },
    /// `NOTIFICATION`.
    Notification {
        /// The method.
        method: Text,
        /// The params as JSON (None: absent).
        params: Option<Text>,
    },
    /// `RESULT` or `ERROR`: the answer to our request `id` (a JSON `null`
    /// result is the text `null`).
    Response {
        /// Our request's id.
        id: i64,
        /// The result as JSON, or the error.
        outcome: Result<Text, RequestError>,
    },
    /// `INVALID_NOTIFICATION`: dropped by the engine, params failed the schema.
    InvalidNotification {
        /// The method.
        method: String,
        /// The -32602 that says what failed.
        error: RequestError,
    },
    /// `CANCELLED`: the answer to inbound request `token` is no longer wanted.
    Cancelled {
        /// The request's token.
        token: u64,
    },
    /// `CLOSED`: the last event.
    Closed {
        /// Why the connection closed.
        reason: String,
    },
}

impl Event {
    /// Notifications run one at a time, in order, and are never handed off.
    pub fn is_notification(&self) -> bool {
        matches!(
            self,
            Event::Notification { .. } | Event::InvalidNotification { .. }
        )
    }
}

/// An event and the batch its texts point into.
pub struct Item {
    event: Event,
    _batch: Arc<Batch>,
}

impl Item {
    /// The event (borrowed: its texts live as long as the item).
    pub fn event(&self) -> &Event {
        &self.event
    }
}

/// The elements of one event array, borrowed from the batch text.
struct RawEvent<'a> {
    kind: u8,
    fields: [Option<&'a RawValue>; 3],
}

impl<'de: 'a, 'a> Deserialize<'de> for RawEvent<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for EventVisitor<'a> {
            type Value = RawEvent<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a host event array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawEvent<'a>, A::Error> {
                let kind: u8 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let mut fields = [None; 3];
                for field in &mut fields {
                    *field = seq.next_element::<&'a RawValue>()?;
                }
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(RawEvent { kind, fields })
            }
        }
        deserializer.deserialize_seq(EventVisitor(std::marker::PhantomData))
    }
}

/// The error object of an `ERROR` or `INVALID_NOTIFICATION` event (-32603
/// if it is not one).
fn error_object(raw: Option<&RawValue>) -> RequestError {
    #[derive(Deserialize)]
    struct ErrorObject {
        code: i64,
        message: String,
        data: Option<serde_json::Value>,
    }
    raw.and_then(|raw| serde_json::from_str::<ErrorObject>(raw.get()).ok())
        .map(|e| {
            let error = RequestError::new(e.code, e.message);
            match e.data {
                Some(data) => error.with_data(data),
                None => error,
            }
        })
        .unwrap_or_else(RequestError::internal_error)
}

/// Where a text lies, before the NULs are written.
#[derive(Clone, Copy)]
enum Span {
    /// In the batch text at `start`, `len` bytes; the byte after becomes the NUL.
    Inline { start: usize, len: usize },
    /// A string with escapes, unescaped into `Batch::unescaped[index]`.
    Unescaped(usize),
}

enum Parsed {
    Request {
        token: u64,
        method: Span,
        params: Option<Span>,
    },
    Notification {
        method: Span,
        params: Option<Span>,
    },
    Result {
        id: i64,
        result: Option<Span>,
    },
    Error {
        id: i64,
        error: RequestError,
    },
    InvalidNotification {
        method: String,
        error: RequestError,
    },
    Cancelled {
        token: u64,
    },
    Closed {
        reason: String,
    },
}

/// Decode a drained batch into its events, in order (kinds a driven host
/// does not see are skipped).
pub fn decode(text: String) -> Vec<Item> {
    let mut text = text.into_bytes();
    let mut unescaped = Vec::new();
    let parsed = {
        let events: Vec<RawEvent<'_>> = serde_json::from_slice(&text).expect("the engine's events are JSON");
        let base = text.as_ptr() as usize;
        let offset = |raw: &RawValue| raw.get().as_ptr() as usize - base;
        let mut string = |raw: Option<&RawValue>| -> Span {
            let json = raw.map_or("null", RawValue::get);
            if json == "null" {
                Span::Unescaped(push_unescaped(&mut unescaped, ""))
            } else if !json.contains('\\') {
                Span::Inline {
                    start: offset(raw.expect("not null")) + 1,
                    len: json.len() - 2,
                }
            } else {
                let value: String = serde_json::from_str(json).unwrap_or_default();
                Span::Unescaped(push_unescaped(&mut unescaped, &value.replace('\0', "\\u0000")))
            }
        };
        let json = |raw: Option<&RawValue>| -> Option<Span> {
            raw.filter(|raw| raw.get() != "null").map(|raw| Span::Inline {
                start: offset(raw),
                len: raw.get().len(),
            })
        };
        let number = |raw: Option<&RawValue>| -> i64 { raw.and_then(|r| r.get().parse().ok()).unwrap_or(0) };
        let owned = |raw: Option<&RawValue>| -> String {
            raw.and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
                .unwrap_or_default()
        };
        let mut parsed = Vec::with_capacity(events.len());
        for event in &events {
            let [a, b, c] = event.fields;
            parsed.push(match event.kind {
                kind::REQUEST => Parsed::Request {
                    token: number(a) as u64,
                    method: string(b),
                    params: json(c),
                },
                kind::NOTIFICATION => Parsed::Notification {
                    method: string(a),
                    params: json(b),
                },
                kind::RESULT => Parsed::Result {
                    id: number(a),
                    result: json(b),
                },
                kind::ERROR => Parsed::Error {
                    id: number(a),
                    error: error_object(b),
                },
                kind::INVALID_NOTIFICATION => Parsed::InvalidNotification {
                    method: owned(a),
                    error: error_object(b),
                },
                kind::CANCELLED => Parsed::Cancelled {
                    token: number(a) as u64,
                },
                kind::CLOSED => Parsed::Closed {
                    reason: owned(b.or(a)),
                },
                _ => continue,
            });
        }
        parsed
    };
    // A JSON `null` result has no text to point at: it points at a "null"
    // of the batch's own.
    let null = Span::Inline {
        start: text.len(),
        len: 4,
    };
    text.extend_from_slice(b"null\0");
    for item in &parsed {
        let spans = match item {
            Parsed::Request { method, params, .. } | Parsed::Notification { method, params } => {
                [Some(*method), *params]
            }
            Parsed::Result { result, .. } => [*result, None],
            _ => [None, None],
        };
        for span in spans.into_iter().flatten() {
            if let Span::Inline { start, len } = span {
                text[start + len] = 0;
            }
        }
    }
    let batch = Arc::new(Batch { text, unescaped });
    let at = |span: Span| -> Text {
        match span {
            Span::Inline { start, len } => Text {
                start: batch.text[start..].as_ptr(),
                len,
            },
            Span::Unescaped(index) => Text {
                start: batch.unescaped[index].as_ptr(),
                len: batch.unescaped[index].len() - 1,
            },
        }
    };
    parsed
        .into_iter()
        .map(|item| {
            let event = match item {
                Parsed::Request {
                    token,
                    method,
                    params,
                } => Event::Request {
                    token,
                    method: at(method),
                    params: params.map(at),
                },
                Parsed::Notification { method, params } => Event::Notification {
                    method: at(method),
                    params: params.map(at),
                },
                Parsed::Result { id, result } => Event::Response {
                    id,
                    outcome: Ok(at(result.unwrap_or(null))),
                },
                Parsed::Error { id, error } => Event::Response {
                    id,
                    outcome: Err(error),
                },
                Parsed::InvalidNotification { method, error } => Event::InvalidNotification { method, error },
                Parsed::Cancelled { token } => Event::Cancelled { token },
                Parsed::Closed { reason } => Event::Closed { reason },
            };
            Item {
                event,
                _batch: batch.clone(),
            }
        })
        .collect()
}

/// Keep `text` NUL-terminated in the batch; its index.
fn push_unescaped(unescaped: &mut Vec<String>, text: &str) -> usize {
    let mut owned = String::with_capacity(text.len() + 1);
    owned.push_str(text);
    owned.push('\0');
    unescaped.push(owned);
    unescaped.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_end_where_they_lie() {
        let items = decode(
            r#"[[0,7,"work/start",{"a":[1,2]}],[1,"n\"x",null],[2,3,{"ok":true}],[2,4,null],[3,5,{"code":-32800,"message":"Request cancelled"}],[4,7],[5,1,true],[7,"x/update",{"code":-32602,"message":"Invalid params","data":{"path":"used"}}],[6,"peer closed"]]"#
                .to_owned(),
        );
        assert_eq!(items.len(), 8, "WRITTEN is skipped");
        match items[0].event() {
            Event::Request {
                token,
                method,
                params: Some(params),
            } => {
                assert_eq!(*token, 7);
                assert_eq!(method.as_c_str().to_str().unwrap(), "work/start");
                assert_eq!(params.as_c_str().to_str().unwrap(), r#"{"a":[1,2]}"#);
            }
            _ => panic!("a request"),
        }
        match items[1].event() {
            Event::Notification { method, params } => {
                assert_eq!(method.as_c_str().to_str().unwrap(), "n\"x");
                assert!(params.is_none());
                assert!(items[1].event().is_notification());
            }
            _ => panic!("a notification"),
        }
        match items[2].event() {
            Event::Response {
                id: 3,
                outcome: Ok(result),
            } => assert_eq!(result.as_c_str().to_str().unwrap(), r#"{"ok":true}"#),
            _ => panic!("a result"),
        }
        match items[3].event() {
            Event::Response {
                id: 4,
                outcome: Ok(result),
            } => assert_eq!(result.as_c_str().to_str().unwrap(), "null"),
            _ => panic!("a null result"),
        }
        match items[4].event() {
            Event::Response {
                id: 5,
                outcome: Err(error),
            } => assert_eq!(error.code, -32800),
            _ => panic!("an error"),
        }
        assert!(matches!(items[5].event(), Event::Cancelled { token: 7 }));
        match items[6].event() {
            Event::InvalidNotification { method, error } => {
                assert_eq!(method, "x/update");
                assert_eq!(error.code, -32602);
                assert_eq!(error.data.as_ref().unwrap()["path"], "used");
            }
            _ => panic!("an invalid notification"),
        }
        assert!(matches!(items[7].event(), Event::Closed { reason } if reason == "peer closed"));
    }

    #[test]
    fn an_owned_answer_has_room_for_its_terminator() {
        let items = decode(r#"[[2,1,{"big":true}]]"#.to_owned());
        let Event::Response {
            outcome: Ok(result), ..
        } = items[0].event()
        else {
            panic!("a result")
        };
        let owned = result.to_owned_text();
        assert_eq!(owned, r#"{"big":true}"#);
        assert!(owned.capacity() > owned.len());
    }
}
