//! A drained batch of the engine's host events (one JSON array text, see
//! `acp_engine::host::kind`) turned into events C can read without copies:
//! the text is parsed once, and the method names, params and results are
//! NUL-terminated where they lie (the byte after each is a delimiter the
//! parse no longer needs). C strings point into the batch, which lives as
//! long as any event taken from it.

use std::ffi::{c_char, CString};
use std::fmt;
use std::ptr;
use std::sync::Arc;

use acp_engine::host::kind;
use acp_engine::RequestError;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::ffi::c_string;

/// The text events point into, and strings that had to be unescaped.
pub(crate) struct Batch {
    text: Vec<u8>,
    unescaped: Vec<CString>,
}

// The raw pointers events hold point into `Batch`, which is immutable once
// built and shared through `Arc`.
unsafe impl Send for Batch {}
unsafe impl Sync for Batch {}

/// A NUL-terminated string inside a batch (NULL: absent).
#[derive(Clone, Copy)]
pub(crate) struct Text(pub *const c_char);

unsafe impl Send for Text {}

/// One host event.
pub(crate) enum Event {
    Request {
        token: u64,
        method: Text,
        params: Text,
    },
    Notification {
        method: Text,
        params: Text,
    },
    Response {
        id: i64,
        outcome: Result<Text, RequestError>,
    },
    /// A notification whose params fail the schema (dropped by the engine).
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

/// An event and the batch its strings point into.
pub(crate) struct Item {
    pub batch: Arc<Batch>,
    pub event: Event,
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

/// The error object of an `ERROR` or `INVALID_NOTIFICATION` event.
#[derive(Deserialize)]
struct ErrorObject {
    code: i64,
    message: String,
    data: Option<serde_json::Value>,
}

/// The error of an `ERROR` or `INVALID_NOTIFICATION` event (-32603 if it
/// is not an error object).
fn error_object(raw: Option<&RawValue>) -> RequestError {
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

/// Where a patch goes: a NUL at `at`.
enum Span {
    /// A string without escapes: the text starts at `start`, its closing
    /// quote (at `end`) becomes the NUL.
    Plain {
        start: usize,
        end: usize,
    },
    /// A string with escapes: unescaped into `Batch::unescaped[index]`.
    Unescaped(usize),
    /// Raw JSON at `start`; the delimiter after it (at `end`) becomes the NUL.
    Json {
        start: usize,
        end: usize,
    },
    /// A JSON `null` result: a "null" of the batch's own.
    Null,
    Absent,
}

enum Parsed {
    Request { token: u64, method: Span, params: Span },
    Notification { method: Span, params: Span },
    Result { id: i64, result: Span },
    Error { id: i64, error: RequestError },
    InvalidNotification { method: String, error: RequestError },
    Cancelled { token: u64 },
    Closed { reason: String },
}

/// Parse a drained batch into its events, in order. Events the C side does
/// not see (`WRITTEN`: C's sends block instead of parking; kinds newer than
/// this binding) are skipped.
pub(crate) fn parse(text: String) -> Vec<Item> {
    let mut text = text.into_bytes();
    let mut unescaped = Vec::new();
    let parsed = {
        let events: Vec<RawEvent<'_>> = serde_json::from_slice(&text).expect("the engine's events are JSON");
        let base = text.as_ptr() as usize;
        let offset = |raw: &RawValue| raw.get().as_ptr() as usize - base;
        let mut string = |raw: Option<&RawValue>| -> Span {
            let Some(raw) = raw else { return Span::Absent };
            let json = raw.get();
            if json == "null" {
                Span::Absent
            } else if !json.contains('\\') {
                let start = offset(raw) + 1;
                Span::Plain {
                    start,
                    end: start + json.len() - 2,
                }
            } else {
                let value: String = serde_json::from_str(json).unwrap_or_default();
                unescaped.push(c_string(&value));
                Span::Unescaped(unescaped.len() - 1)
            }
        };
        let json = |raw: Option<&RawValue>| -> Span {
            match raw {
                Some(raw) if raw.get() != "null" => {
                    let start = offset(raw);
                    Span::Json {
                        start,
                        end: start + raw.get().len(),
                    }
                }
                _ => Span::Absent,
            }
        };
        let number = |raw: Option<&RawValue>| -> i64 { raw.and_then(|r| r.get().parse().ok()).unwrap_or(0) };
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
                    result: match json(b) {
                        Span::Absent => Span::Null,
                        span => span,
                    },
                },
                kind::ERROR => Parsed::Error {
                    id: number(a),
                    error: error_object(b),
                },
                kind::INVALID_NOTIFICATION => Parsed::InvalidNotification {
                    method: a
                        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
                        .unwrap_or_default(),
                    error: error_object(b),
                },
                kind::CANCELLED => Parsed::Cancelled {
                    token: number(a) as u64,
                },
                kind::CLOSED => Parsed::Closed {
                    reason: b
                        .or(a)
                        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
                        .unwrap_or_default(),
                },
                _ => continue,
            });
        }
        parsed
    };
    // A result of JSON `null` has no text to point at: it points at a
    // "null" of its own.
    let null_at = text.len();
    text.extend_from_slice(b"null\0");
    for item in &parsed {
        let spans: &[&Span] = match item {
            Parsed::Request { method, params, .. } | Parsed::Notification { method, params } => {
                &[method, params]
            }
            Parsed::Result { result, .. } => &[result],
            _ => &[],
        };
        for span in spans {
            match span {
                Span::Plain { end, .. } | Span::Json { end, .. } => text[*end] = 0,
                _ => {}
            }
        }
    }
    let batch = Arc::new(Batch { text, unescaped });
    let pointer = |span: &Span| -> Text {
        Text(match *span {
            Span::Plain { start, .. } => batch.text[start..].as_ptr().cast(),
            Span::Null => batch.text[null_at..].as_ptr().cast(),
            Span::Json { start, .. } => batch.text[start..].as_ptr().cast(),
            Span::Unescaped(index) => batch.unescaped[index].as_ptr(),
            Span::Absent => ptr::null(),
        })
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
                    method: pointer(&method),
                    params: pointer(&params),
                },
                Parsed::Notification { method, params } => Event::Notification {
                    method: pointer(&method),
                    params: pointer(&params),
                },
                Parsed::Result { id, result } => Event::Response {
                    id,
                    outcome: Ok(pointer(&result)),
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
                batch: batch.clone(),
                event,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(t: Text) -> Option<String> {
        (!t.0.is_null()).then(|| unsafe { CStr::from_ptr(t.0) }.to_str().unwrap().to_owned())
    }

    #[test]
    fn strings_end_where_they_lie() {
        let items = parse(
            r#"[[0,7,"work/start",{"a":[1,2]}],[1,"n\"x",null],[2,3,{"ok":true}],[2,4,null],[3,5,{"code":-32800,"message":"Request cancelled"}],[4,7],[5,1,true],[7,"x/update",{"code":-32602,"message":"Invalid params","data":{"path":"used"}}],[6,"peer closed"]]"#
                .to_owned(),
        );
        assert_eq!(items.len(), 8, "WRITTEN is skipped");
        match &items[0].event {
            Event::Request {
                token,
                method,
                params,
            } => {
                assert_eq!(*token, 7);
                assert_eq!(text(*method).unwrap(), "work/start");
                assert_eq!(text(*params).unwrap(), r#"{"a":[1,2]}"#);
            }
            _ => panic!("a request"),
        }
        match &items[1].event {
            Event::Notification { method, params } => {
                assert_eq!(text(*method).unwrap(), "n\"x");
                assert!(params.0.is_null());
            }
            _ => panic!("a notification"),
        }
        match &items[2].event {
            Event::Response {
                id: 3,
                outcome: Ok(result),
            } => assert_eq!(text(*result).unwrap(), r#"{"ok":true}"#),
            _ => panic!("a result"),
        }
        match &items[3].event {
            Event::Response {
                id: 4,
                outcome: Ok(result),
            } => assert_eq!(text(*result).unwrap(), "null"),
            _ => panic!("a null result"),
        }
        match &items[4].event {
            Event::Response {
                id: 5,
                outcome: Err(error),
            } => assert_eq!(error.code, -32800),
            _ => panic!("an error"),
        }
        assert!(matches!(items[5].event, Event::Cancelled { token: 7 }));
        match &items[6].event {
            Event::InvalidNotification { method, error } => {
                assert_eq!(method, "x/update");
                assert_eq!(error.code, -32602);
                assert_eq!(error.data.as_ref().unwrap()["path"], "used");
            }
            _ => panic!("an invalid notification"),
        }
        assert!(matches!(&items[7].event, Event::Closed { reason } if reason == "peer closed"));
    }
}
