//! The message classifier on one arbitrary line (what the reader hands it:
//! no '\n'), through `acp_engine::fuzzing::classify_line`.
//!
//! Checks: no panic; the reader's fast path (`json_scan`), where it reads
//! the line, finds the envelope fields serde_json finds; a valid message is
//! consistent with the JSON it came from; an invalid one is answered -32700
//! (unparseable) or -32600, and the reply the engine would send is one line
//! of valid JSON-RPC carrying the same id.

#![no_main]

use acp_engine::fuzzing::{classify_line, Classified};
use acp_engine::RequestId;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn id_json(id: &RequestId) -> Value {
    serde_json::to_value(id).expect("ids serialize")
}

fuzz_target!(|data: &[u8]| {
    if data.contains(&b'\n') {
        return; // the framing never hands out such a line
    }
    assert!(
        acp_engine::fuzzing::scan_agrees_with_serde_json(data),
        "the reader's fast path and serde_json read {:?} differently",
        String::from_utf8_lossy(data)
    );
    let parsed = serde_json::from_slice::<Value>(data).ok();
    let classified = classify_line(data);
    if parsed.is_none() && !matches!(classified, Classified::Invalid { .. }) {
        // Valid envelope, but `Value` gave up: params or a result nested
        // deeper than serde_json's recursion limit (the envelope keeps them
        // raw, so that is fine). Nothing to compare against.
        return;
    }
    match classified {
        Classified::Request { id, method, params } => {
            let object = parsed
                .as_ref()
                .and_then(Value::as_object)
                .expect("a request is a JSON object");
            assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")));
            assert_eq!(object.get("method"), Some(&Value::from(method.as_str())));
            assert_eq!(object.get("id"), Some(&id_json(&id)));
            assert_ne!(id, RequestId::Null, "a request with a null id");
            if let Some(params) = params {
                assert!(params.starts_with('{') || params.starts_with('['));
            }
        }
        Classified::Notification { method, params } => {
            let object = parsed
                .as_ref()
                .and_then(Value::as_object)
                .expect("a notification is a JSON object");
            assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")));
            assert_eq!(object.get("method"), Some(&Value::from(method.as_str())));
            assert!(!object.contains_key("id"), "a notification with an id");
            if let Some(params) = params {
                assert!(params.starts_with('{') || params.starts_with('['));
            }
        }
        Classified::Response { id, outcome } => {
            let object = parsed
                .as_ref()
                .and_then(Value::as_object)
                .expect("a response is a JSON object");
            assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")));
            assert!(!object.contains_key("method"));
            assert_eq!(object.get("id"), Some(&id_json(&id)));
            if let Ok(result) = outcome {
                serde_json::from_str::<Box<serde_json::value::RawValue>>(&result).expect("a result is JSON");
            }
        }
        Classified::Invalid { id, error, reply } => {
            match error.code {
                -32700 => assert!(parsed.is_none(), "parse error on valid JSON"),
                -32600 => {}
                code => panic!("invalid input answered with code {code}"),
            }
            assert_eq!(reply.last(), Some(&b'\n'), "reply without its newline");
            let body = &reply[..reply.len() - 1];
            assert!(!body.contains(&b'\n'), "reply spans lines");
            let reply: Value = serde_json::from_slice(body).expect("the reply is JSON");
            assert_eq!(reply["jsonrpc"], "2.0");
            assert_eq!(reply["id"], id_json(&id));
            assert_eq!(reply["error"]["code"], error.code);
        }
    }
});
