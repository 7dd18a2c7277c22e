//! The `proxy/successor` envelope: a message for (or from) a proxy's
//! successor, its `method` and `params` flattened into the envelope's
//! params. Whether the inner message is a request or a notification is the
//! outer message's: the envelope has no id of its own. The envelope's own
//! `_meta` belongs to the hop and is dropped on unwrapping.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::RequestError;
use crate::message::RawJson;

/// A message taken out of a `proxy/successor` envelope.
#[derive(Debug)]
pub struct Message {
    /// The method name.
    pub method: String,
    /// The params as JSON text; None when it had none.
    pub params: Option<RawJson>,
}

#[derive(Deserialize)]
struct Envelope {
    method: String,
    #[serde(default)]
    params: Option<Box<RawValue>>,
}

/// The params of a `proxy/successor` carrying `method` with `params`, built
/// as text so the inner params pass byte for byte.
pub fn wrap(method: &str, params: Option<&RawValue>) -> RawJson {
    RawValue::from_string(text(method, params.map(RawValue::get)))
        .expect("an envelope of valid JSON is valid JSON")
}

/// [`wrap`]'s params as text, for a caller that writes the line itself
/// (`params`: JSON text the engine read).
pub fn text(method: &str, params: Option<&str>) -> String {
    let method = serde_json::to_string(method).expect("a string serializes");
    match params {
        Some(params) => format!("{{\"method\":{method},\"params\":{params}}}"),
        None => format!("{{\"method\":{method}}}"),
    }
}

/// The message in a `proxy/successor`'s params; -32602 naming what is wrong
/// when they are not an envelope.
pub fn unwrap(params: Option<&RawValue>) -> Result<Message, RequestError> {
    let text = params.map_or("null", RawValue::get);
    let envelope: Envelope = serde_json::from_str(text).map_err(|error| {
        RequestError::invalid_params().with_data(serde_json::json!({ "error": error.to_string() }))
    })?;
    // `"params": null` is the same as no params.
    let params = envelope.params.filter(|params| params.get() != "null");
    Ok(Message {
        method: envelope.method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawJson {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn wrapping_keeps_the_params_byte_for_byte() {
        let params = raw(r#"{"sessionId":"s1","n":1.50,"_meta":{"k":[]}}"#);
        let envelope = wrap("x/prompt", Some(&*params));
        assert_eq!(
            envelope.get(),
            r#"{"method":"x/prompt","params":{"sessionId":"s1","n":1.50,"_meta":{"k":[]}}}"#
        );
        let inner = unwrap(Some(&*envelope)).unwrap();
        assert_eq!(inner.method, "x/prompt");
        assert_eq!(inner.params.unwrap().get(), params.get());
        assert_eq!(wrap("a/b", None).get(), r#"{"method":"a/b"}"#);
    }

    #[test]
    fn the_envelopes_meta_stays_with_the_hop_and_null_params_are_none() {
        let inner = unwrap(Some(&*raw(r#"{"method":"x","params":null,"_meta":{"hop":1}}"#))).unwrap();
        assert!(inner.params.is_none());
        let inner = unwrap(Some(&*raw(r#"{"_meta":{"hop":1},"method":"x"}"#))).unwrap();
        assert_eq!(inner.method, "x");
    }

    #[test]
    fn an_envelope_without_a_method_is_invalid_params() {
        let error = unwrap(Some(&*raw(r#"{"params":{}}"#))).unwrap_err();
        assert_eq!(error.code, crate::error::codes::INVALID_PARAMS);
        assert!(error.data.unwrap()["error"].as_str().unwrap().contains("method"));
        assert!(unwrap(None).is_err());
    }
}
