//! Checking that JSON fits a protocol type without building the value: what every
//! message costs when only its validity matters (the engine's checks of inbound messages
//! for Python, Node and C hosts, and of everything they send). Building a
//! `SessionNotification` just to drop it allocated every string and moved the large
//! enums around; a check visits the same input with the same rules and keeps nothing.
//!
//! The rule: `T::check` accepts exactly what `T::deserialize` accepts. Structs, strings,
//! identifiers, enums, options, arrays, maps and tag-first unions have checks of their
//! own (here and in `support::read_struct!`); every other type checks by parsing
//! (`check_by_parse!`). A unit test below and the `schema_check` fuzz target compare the
//! two on many inputs.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::fields::Text;
use super::tagged::{visit_union, TaggedUnion};

/// A protocol type whose validity can be checked without building it.
pub(crate) trait Check {
    /// `Ok` exactly when `Self::deserialize` would succeed on the same input.
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error>;
}

/// Checks a `T` wherever serde wants a `Deserialize` (a property, an item).
pub(crate) struct Checked<T>(PhantomData<T>);

impl<'de, T: Check> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::check(deserializer).map(|()| Checked(PhantomData))
    }
}

/// Checks `T` in JSON text.
pub(crate) fn check_str<T: Check>(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<Checked<T>>(text).map(drop)
}

/// `Check` by parsing, for the types whose reading is not worth a second copy (untagged
/// unions, objects with a union part) and for scalars (nothing to save).
macro_rules! check_by_parse {
    ($($name:ty),* $(,)?) => {
        $(
            impl $crate::schema::support::Check for $name {
                fn check<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
                    <$name as serde::Deserialize>::deserialize(deserializer).map(drop)
                }
            }
        )*
    };
}
pub(crate) use check_by_parse;

check_by_parse!(bool, u16, u32, u64, i32, i64, f64);

/// Accepts any string, borrowed or not, without keeping it.
struct AnyString;

impl Visitor<'_> for AnyString {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

impl Check for String {
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_string(AnyString)
    }
}

/// What `Value::deserialize` accepts: any JSON, read the way `Value` reads it (numbers
/// are converted, so an out-of-range one fails as it does for `Value`).
struct AnyValue;

impl<'de> Visitor<'de> for AnyValue {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(AnyValue)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items.next_element::<Checked<Value>>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<(), A::Error> {
        any_object(access, true)
    }
}

/// An object's properties as `Value` reads them. serde_json's `Value` treats an object
/// whose first key is its raw-value token as a raw value: the property's string is
/// parsed as JSON. Mirrored here, so a check never accepts what a parse refuses.
fn any_object<'de, A: MapAccess<'de>>(mut access: A, raw_first: bool) -> Result<(), A::Error> {
    let mut first = raw_first;
    while let Some(Text(key)) = access.next_key()? {
        if std::mem::take(&mut first) && key == super::fields::RAW_VALUE_TOKEN {
            let text: String = access.next_value()?;
            return check_str::<Value>(&text).map_err(de::Error::custom);
        }
        access.next_value::<Checked<Value>>()?;
    }
    Ok(())
}

impl Check for Value {
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(AnyValue)
    }
}

/// `Map<String, Value>`: an object of anything (its own visitor takes no raw values).
struct AnyObject;

impl<'de> Visitor<'de> for AnyObject {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a map")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<(), A::Error> {
        any_object(access, false)
    }
}

impl Check for Map<String, Value> {
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(AnyObject)
    }
}

struct OptionOf<T>(PhantomData<T>);

impl<'de, T: Check> Visitor<'de> for OptionOf<T> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("option")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::check(deserializer)
    }
}

impl<T: Check> Check for Option<T> {
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(OptionOf::<T>(PhantomData))
    }
}

struct SeqOf<T>(PhantomData<T>);

impl<'de, T: Check> Visitor<'de> for SeqOf<T> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items.next_element::<Checked<T>>()?.is_some() {}
        Ok(())
    }
}

impl<T: Check> Check for Vec<T> {
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(SeqOf::<T>(PhantomData))
    }
}

struct MapOf<V>(PhantomData<V>);

impl<'de, V: Check> Visitor<'de> for MapOf<V> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        while access.next_entry::<Checked<String>, Checked<V>>()?.is_some() {}
        Ok(())
    }
}

impl<V: Check> Check for BTreeMap<String, V> {
    fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(MapOf::<V>(PhantomData))
    }
}

// ---------------------------------------------------------------------------------------
// Tag-first unions (see `tagged.rs`): the variant's payload checks the rest of the object.

/// `Check` for a [`TaggedUnion`]: one pass when the tag comes first, as
/// `tagged::deserialize` reads it; the buffered path parses.
pub(crate) fn check_tagged<'de, T: TaggedUnion, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<(), D::Error> {
    deserializer.deserialize_map(UnionCheck::<T>(PhantomData))
}

struct UnionCheck<T>(PhantomData<T>);

impl<'de, T: TaggedUnion> Visitor<'de> for UnionCheck<T> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<(), A::Error> {
        visit_union(access, T::TAG, T::check_variant, |fields| {
            T::from_fields(fields).map(drop)
        })
    }
}

/// Checks a variant's payload against the rest of the object.
pub(crate) fn check_rest<'de, T: Check, A: MapAccess<'de>>(rest: A) -> Result<(), A::Error> {
    T::check(MapAccessDeserializer::new(rest))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::schema::method;

    use crate::fuzzing::check_agrees_with_parse;

    fn agrees(method: &str, text: &str) -> bool {
        check_agrees_with_parse(method, text).unwrap_or_else(|| panic!("{method} is not a method"))
    }

    /// Valid params for every method either side receives, rich in unions and options.
    fn seeds() -> Vec<(&'static str, Value)> {
        let tool_call = json!({
            "toolCallId": "call-1", "title": "Edit", "kind": "edit", "status": "in_progress",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}}},
                {"type": "diff", "path": "/a", "oldText": null, "newText": "b"},
                {"type": "terminal", "terminalId": "t1"}
            ],
            "locations": [{"path": "/a", "line": 3}],
            "rawInput": {"x": [1, 2.5, null]}
        });
        let prompt = json!([
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a", "name": "a", "size": 12},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "x", "mimeType": "text/plain"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA"}}
        ]);
        let mcp = json!([
            {"name": "s", "command": "/bin/s", "args": ["-x"], "env": [{"name": "A", "value": "1"}]},
            {"type": "http", "name": "h", "url": "http://x", "headers": [{"name": "H", "value": "v"}]},
            {"type": "sse", "name": "e", "url": "http://y", "headers": []}
        ]);
        vec![
            (
                method::INITIALIZE,
                json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true}, "clientInfo": {"name": "c", "version": "1"}}),
            ),
            (method::AUTHENTICATE, json!({"methodId": "m"})),
            (method::SESSION_NEW, json!({"cwd": "/tmp", "mcpServers": mcp})),
            (
                method::SESSION_LOAD,
                json!({"sessionId": "s", "cwd": "/tmp", "mcpServers": []}),
            ),
            (
                method::SESSION_SET_MODE,
                json!({"sessionId": "s", "modeId": "ask"}),
            ),
            (
                method::SESSION_SET_CONFIG_OPTION,
                json!({"sessionId": "s", "configId": "c", "value": "v"}),
            ),
            (
                method::SESSION_PROMPT,
                json!({"sessionId": "s", "prompt": prompt}),
            ),
            (method::SESSION_CANCEL, json!({"sessionId": "s"})),
            (method::SESSION_LIST, json!({"cwd": "/tmp", "cursor": "c"})),
            (method::SESSION_RESUME, json!({"sessionId": "s", "cwd": "/tmp"})),
            (method::SESSION_CLOSE, json!({"sessionId": "s"})),
            (method::LOGOUT, json!({})),
            (
                method::SESSION_REQUEST_PERMISSION,
                json!({"sessionId": "s", "toolCall": tool_call, "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}),
            ),
            (
                method::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "chunk"}}}),
            ),
            (
                method::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "content": tool_call["content"].clone()}}),
            ),
            (
                method::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}}),
            ),
            (
                method::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]}}),
            ),
            (
                method::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "c", "description": "d", "input": {"hint": "h"}}]}}),
            ),
            (
                method::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}}),
            ),
            (
                method::FS_WRITE_TEXT_FILE,
                json!({"sessionId": "s", "path": "/a", "content": "x"}),
            ),
            (
                method::FS_READ_TEXT_FILE,
                json!({"sessionId": "s", "path": "/a", "line": 1, "limit": 10}),
            ),
            (
                method::TERMINAL_CREATE,
                json!({"sessionId": "s", "command": "ls", "args": ["-l"], "env": [{"name": "A", "value": "1"}], "cwd": "/", "outputByteLimit": 100}),
            ),
            (
                method::TERMINAL_OUTPUT,
                json!({"sessionId": "s", "terminalId": "t"}),
            ),
            (
                method::TERMINAL_RELEASE,
                json!({"sessionId": "s", "terminalId": "t"}),
            ),
            (
                method::TERMINAL_WAIT_FOR_EXIT,
                json!({"sessionId": "s", "terminalId": "t"}),
            ),
            (
                method::TERMINAL_KILL,
                json!({"sessionId": "s", "terminalId": "t"}),
            ),
        ]
    }

    /// Values put in place of each part of a seed. `BIG` stands for `1e400` (valid JSON,
    /// no `f64`), `RAW` for an object that `Value` reads as a raw value.
    fn replacements() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(0),
            json!(-1),
            json!(70000),
            json!(1.5),
            json!("BIG"),
            json!("x"),
            json!("agent_message_chunk"),
            json!("text"),
            json!([]),
            json!([null]),
            json!({}),
            json!({"type": "text"}),
            json!("RAW"),
        ]
    }

    /// Writes JSON text with object keys in the given order: sorted, or tags first (as
    /// peers write them), or tags first with `_` escaped in strings (a tag read the slow way).
    fn write(value: &Value, order: u8, out: &mut String) {
        match value {
            Value::String(s) if s == "BIG" => out.push_str("1e400"),
            Value::String(s) if s == "RAW" => out.push_str(r#"{"$serde_json::private::RawValue":"[1,"}"#),
            Value::String(s) => {
                let text = serde_json::to_string(s).unwrap();
                out.push_str(&if order == 2 {
                    text.replace('_', "\\u005f")
                } else {
                    text
                });
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, order, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                const TAGS: &[&str] = &["sessionUpdate", "type", "outcome", "kind"];
                let mut keys: Vec<&String> = map.keys().collect();
                if order > 0 {
                    keys.sort_by_key(|key| !TAGS.contains(&key.as_str()));
                }
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(key).unwrap());
                    out.push(':');
                    write(&map[key], order, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    /// Every seed with one part replaced, removed or duplicated.
    fn mutations(seed: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        mutate(seed, &mut |v| out.push(v), &mut |v| v.clone());
        out
    }

    fn mutate(node: &Value, emit: &mut dyn FnMut(Value), rebuild: &mut dyn FnMut(&Value) -> Value) {
        for replacement in replacements() {
            emit(rebuild(&replacement));
        }
        match node {
            Value::Object(map) => {
                for key in map.keys() {
                    let mut without = map.clone();
                    without.remove(key);
                    emit(rebuild(&Value::Object(without)));
                    let mut with_extra = map.clone();
                    with_extra.insert("zzUnknown".into(), json!("BIG"));
                    emit(rebuild(&Value::Object(with_extra)));
                    let child = map[key].clone();
                    mutate(&child, emit, &mut |v| {
                        let mut changed = map.clone();
                        changed.insert(key.clone(), v.clone());
                        rebuild(&Value::Object(changed))
                    });
                }
            }
            Value::Array(items) => {
                for i in 0..items.len() {
                    mutate(&items[i].clone(), emit, &mut |v| {
                        let mut changed = items.clone();
                        changed[i] = v.clone();
                        rebuild(&Value::Array(changed))
                    });
                }
            }
            _ => {}
        }
    }

    /// Messages of the version 2 draft, where it differs from v1.
    fn v2_seeds() -> Vec<(&'static str, Value)> {
        use crate::schema::v2::method as v2;
        let tool_call = json!({"toolCallId": "call-1", "title": "Edit", "kind": "edit", "status": "pending"});
        let text = json!([{"type": "text", "text": "hi"}]);
        vec![
            (
                v2::INITIALIZE,
                json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}),
            ),
            (
                v2::SESSION_NEW,
                json!({"cwd": "/tmp", "additionalDirectories": ["/a"]}),
            ),
            (v2::SESSION_PROMPT, json!({"sessionId": "s", "prompt": text})),
            (
                v2::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "running"}}),
            ),
            (
                v2::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle",
                    "stopReason": "end_turn", "background": []}}),
            ),
            (
                v2::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "user_message", "messageId": "m", "content": text}}),
            ),
            (
                v2::SESSION_REQUEST_PERMISSION,
                json!({"sessionId": "s", "title": "Edit?", "subject": {"type": "tool_call", "toolCall": tool_call},
                    "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}]}),
            ),
            (
                v2::TOOL_CALL_CANCEL,
                json!({"sessionId": "s", "toolCallId": "call-1"}),
            ),
            // Catch-all variants with required properties of their own.
            (
                v2::SESSION_UPDATE,
                json!({"sessionId": "s", "update": {"sessionUpdate": "available_commands_update", "availableCommands": [
                    {"type": "_vendor", "name": "deploy", "description": "Ship it"}]}}),
            ),
            (
                v2::SESSION_SET_CONFIG_OPTION,
                json!({"sessionId": "s", "configId": "c", "type": "_vendor", "value": {"level": 2}}),
            ),
        ]
    }

    #[test]
    fn v2_seeds_are_valid_v2_params() {
        use crate::method_check::{check, Protocol, Receiver};
        for (method, seed) in v2_seeds() {
            let text = seed.to_string();
            let valid = [
                (Receiver::Agent, false),
                (Receiver::Client, false),
                (Receiver::Client, true),
                (Receiver::Agent, true),
            ]
            .into_iter()
            .any(|(receiver, notification)| {
                let none = crate::UncheckedMethods::default();
                check(
                    crate::version::V2,
                    Protocol::Stable,
                    &none,
                    receiver,
                    notification,
                    method,
                    Some(&text),
                ) == Ok(true)
            });
            assert!(valid, "{method}: {seed}");
        }
    }

    #[test]
    fn seeds_are_valid_params() {
        for (method, seed) in seeds() {
            let text = seed.to_string();
            let raw = serde_json::value::RawValue::from_string(text).unwrap();
            let valid = [
                crate::validate::agent_request(method, Some(&raw)),
                crate::validate::agent_notification(method, Some(&raw)),
                crate::validate::client_request(method, Some(&raw)),
                crate::validate::client_notification(method, Some(&raw)),
            ]
            .iter()
            .any(Result::is_ok);
            assert!(valid, "{method}: {seed}");
        }
    }

    #[test]
    fn checking_accepts_exactly_what_parsing_accepts() {
        let mut compared = 0;
        for (method, seed) in seeds().into_iter().chain(v2_seeds()) {
            for mutated in mutations(&seed) {
                for order in 0..3 {
                    let mut text = String::new();
                    write(&mutated, order, &mut text);
                    assert!(
                        agrees(method, &text),
                        "{method}: check and parse disagree on {text}"
                    );
                    compared += 1;
                }
            }
            // Text-level cases: a duplicated property, trailing garbage, not an object.
            let mut text = String::new();
            write(&seed, 1, &mut text);
            let duplicated = match text.find(':') {
                Some(end) => format!("{{{}:1,{}", &text[1..end], &text[1..]),
                None => text.clone(),
            };
            for case in [
                duplicated,
                format!("{text} x"),
                format!("{text}]"),
                format!("[{text}]"),
                "null".to_owned(),
                String::new(),
            ] {
                assert!(
                    agrees(method, &case),
                    "{method}: check and parse disagree on {case}"
                );
            }
        }
        assert!(compared > 10_000, "only {compared} cases");
    }
}
