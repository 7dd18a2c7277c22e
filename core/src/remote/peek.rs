//! What Streamable HTTP needs to know of a message to route it: its kind,
//! its id, its method, and the session it belongs to (`params.sessionId`,
//! or a response's `result.sessionId`). Read in one pass over borrowed
//! text; the engine itself validates the message.

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::message::RequestId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Request,
    Notification,
    Response,
    /// An object that is none of the above (the engine answers it).
    Other,
}

#[derive(Debug)]
pub(crate) struct Peek {
    pub(crate) kind: Kind,
    /// The id, when it is a valid one.
    pub(crate) id: Option<RequestId>,
    pub(crate) method: Option<String>,
    /// A request's or notification's `params.sessionId`.
    pub(crate) session: Option<String>,
    /// A successful response's `result.sessionId`.
    pub(crate) result_session: Option<String>,
    /// A response with an error.
    pub(crate) failed: bool,
}

#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SessionField {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// `Some(raw)` for any present value, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// `None` when `text` is not a JSON object.
pub(crate) fn peek(text: &[u8]) -> Option<Peek> {
    if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let fields: Fields = serde_json::from_slice(text).ok()?;
    let id = fields
        .id
        .and_then(|id| serde_json::from_str::<RequestId>(id.get()).ok());
    let method = fields
        .method
        .and_then(|method| serde_json::from_str::<String>(method.get()).ok());
    let session_of = |raw: Option<&RawValue>| {
        raw.and_then(|raw| serde_json::from_str::<SessionField>(raw.get()).ok())
            .map(|field| field.session_id)
    };
    let kind = match (&method, fields.id.is_some()) {
        (Some(_), true) => Kind::Request,
        (Some(_), false) => Kind::Notification,
        (None, true) if fields.result.is_some() != fields.error.is_some() => Kind::Response,
        _ => Kind::Other,
    };
    let (session, result_session) = match kind {
        Kind::Request | Kind::Notification => (session_of(fields.params), None),
        Kind::Response => (None, session_of(fields.result)),
        Kind::Other => (None, None),
    };
    Some(Peek {
        kind,
        id,
        method,
        session,
        result_session,
        failed: kind == Kind::Response && fields.error.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_read_for_routing() {
        let request =
            peek(br#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"sessionId":"s1","x":[1]}}"#).unwrap();
        assert_eq!(request.kind, Kind::Request);
        assert_eq!(request.id, Some(RequestId::Number(3)));
        assert_eq!(
            (request.method.as_deref(), request.session.as_deref()),
            (Some("m"), Some("s1"))
        );
        let notification = peek(br#"{"jsonrpc":"2.0","method":"n","params":{"sessionId":7}}"#).unwrap();
        assert_eq!(
            (notification.kind, notification.session),
            (Kind::Notification, None)
        );
        let response = peek(br#"{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s2"}}"#).unwrap();
        assert_eq!(response.kind, Kind::Response);
        assert_eq!(response.id, Some(RequestId::Str("a".into())));
        assert_eq!(response.result_session.as_deref(), Some("s2"));
        let null_result = peek(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert_eq!(null_result.kind, Kind::Response);
        let both = peek(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#).unwrap();
        assert_eq!(both.kind, Kind::Other);
        assert!(peek(b"[1]").is_none());
        assert!(peek(b"{oops").is_none());
    }
}
