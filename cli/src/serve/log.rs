//! serve's log on stderr: a line of text per event, or with `--log-json`
//! one JSON object per line, `{"time":SECONDS,"event":NAME,...}`, for a
//! log pipeline (the fields are the text's facts, named).

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

static JSON: OnceLock<bool> = OnceLock::new();

/// Log as JSON from now on (before the first event).
pub(crate) fn use_json() {
    let _ = JSON.set(true);
}

/// Log `event` with `fields` (a JSON object), or as the line `text()`.
pub(crate) fn event(event: &str, fields: Value, text: impl FnOnce() -> String) {
    if !JSON.get().copied().unwrap_or(false) {
        errln!("acp-engine: {}", text());
        return;
    }
    let time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64());
    let mut line = Map::new();
    line.insert("time".to_owned(), json!((time * 1000.0).round() / 1000.0));
    line.insert("event".to_owned(), json!(event));
    if let Value::Object(fields) = fields {
        line.extend(fields);
    }
    errln!("{}", Value::Object(line));
}
