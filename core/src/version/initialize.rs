//! The `initialize` params an agent's handler gets for the version its
//! connection selected: the official protocol router's rewrite (TypeScript
//! `AgentProtocolRouter`), once for every binding.
//!
//! - v2 selected for a newer version: `protocolVersion` becomes 2, and a
//!   missing or malformed `info` becomes `{"name": "unknown", "version":
//!   "unknown"}` (v2 requires it).
//! - v1 selected for a v2 `initialize`: v1's shape (`clientInfo` from
//!   `info`, v1's `clientCapabilities` from v2's `capabilities`: v1's file
//!   system and terminal off, since v2 has neither; `auth.terminal`,
//!   `elicitation` and `_meta` carried over), `protocolVersion` 1.
//! - A legacy string `protocolVersion` (v1 alone): the number it stands for
//!   (`legacy_as_number`).
//! - Otherwise the params stay as they are.

use serde_json::{json, Map, Value};

use super::{V1, V2};

const PROTOCOL_VERSION: &str = "protocolVersion";
const META: &str = "_meta";

/// The params to hand the agent instead of `params` (JSON text), if any:
/// `requested` is the version the client asked for, `selected` the one its
/// connection speaks. `v2_shaped_only`: rewrite a v2 `initialize` for v1
/// only when it has v2's shape and none of v1's (a connection that does not
/// negotiate, where a v1 client may ask for a newer version in v1's shape).
pub(super) fn for_selected(
    params: &str,
    requested: u16,
    selected: u16,
    v2_shaped_only: bool,
) -> Option<String> {
    let as_v2 = selected == V2 && requested > V2;
    let as_v1 = selected == V1 && requested >= V2;
    if !as_v2 && !as_v1 {
        return None; // the common case: no parse
    }
    let Ok(Value::Object(params)) = serde_json::from_str::<Value>(params) else {
        return None;
    };
    let rewritten = if as_v2 {
        newer_as_v2(params)
    } else if v2_shaped_only && !v2_shaped(&params) {
        return None;
    } else {
        v2_as_v1(params)
    };
    Some(Value::Object(rewritten).to_string())
}

/// `initialize` params whose `protocolVersion` is a string, with the
/// version it stands for in its place (JSON text), and that version: the
/// number the string spells, else 1 (see the module docs of `version`).
/// None when it is not a string.
pub(super) fn legacy_as_number(params: &str) -> Option<(String, u16)> {
    let Ok(Value::Object(mut params)) = serde_json::from_str::<Value>(params) else {
        return None;
    };
    let Some(Value::String(legacy)) = params.get(PROTOCOL_VERSION) else {
        return None;
    };
    let version = legacy.trim().parse::<u16>().unwrap_or(V1);
    params.insert(PROTOCOL_VERSION.into(), json!(version));
    Some((Value::Object(params).to_string(), version))
}

/// Whether `initialize` params are v2's (`info`, `capabilities`) and not v1's.
fn v2_shaped(params: &Map<String, Value>) -> bool {
    let has = |name: &str| params.contains_key(name);
    (has("info") || has("capabilities")) && !has("clientInfo") && !has("clientCapabilities")
}

fn is_implementation(info: Option<&Value>) -> bool {
    let text = |info: &Value, name: &str| info.get(name).is_some_and(Value::is_string);
    info.is_some_and(|info| text(info, "name") && text(info, "version"))
}

fn newer_as_v2(mut params: Map<String, Value>) -> Map<String, Value> {
    params.insert(PROTOCOL_VERSION.into(), json!(V2));
    if !is_implementation(params.get("info")) {
        params.insert("info".into(), json!({"name": "unknown", "version": "unknown"}));
    }
    params
}

fn v2_as_v1(params: Map<String, Value>) -> Map<String, Value> {
    let capabilities = params.get("capabilities").and_then(Value::as_object);
    let auth = capabilities
        .and_then(|c| c.get("auth"))
        .and_then(Value::as_object);
    let mut v1_auth = Map::new();
    v1_auth.insert(
        "terminal".into(),
        json!(auth.is_some_and(|auth| auth.get("terminal").is_some_and(|t| !t.is_null()))),
    );
    copy_present(auth, &mut v1_auth, META);
    let mut v1_capabilities = Map::new();
    v1_capabilities.insert(
        "fs".into(),
        json!({"readTextFile": false, "writeTextFile": false}),
    );
    v1_capabilities.insert("terminal".into(), json!(false));
    v1_capabilities.insert("auth".into(), Value::Object(v1_auth));
    copy_present(capabilities, &mut v1_capabilities, "elicitation");
    copy_present(capabilities, &mut v1_capabilities, META);
    let mut v1 = Map::new();
    v1.insert(PROTOCOL_VERSION.into(), json!(V1));
    v1.insert("clientCapabilities".into(), Value::Object(v1_capabilities));
    if is_implementation(params.get("info")) {
        v1.insert("clientInfo".into(), params["info"].clone());
    }
    copy_present(Some(&params), &mut v1, META);
    v1
}

/// Copy `name` from `from` when it is there and not null.
fn copy_present(from: Option<&Map<String, Value>>, to: &mut Map<String, Value>, name: &str) {
    if let Some(value) = from
        .and_then(|from| from.get(name))
        .filter(|value| !value.is_null())
    {
        to.insert(name.into(), value.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(params: Value, requested: u16, selected: u16, v2_shaped_only: bool) -> Option<Value> {
        for_selected(&params.to_string(), requested, selected, v2_shaped_only)
            .map(|text| serde_json::from_str(&text).unwrap())
    }

    #[test]
    fn a_v2_initialize_reaches_a_v1_agent_in_v1_s_shape() {
        let v2 = json!({
            "protocolVersion": 2,
            "info": {"name": "v2-client", "version": "2.0.0"},
            "capabilities": {"auth": {"terminal": {}}, "elicitation": {"form": {}}},
            "_meta": {"trace": "t"}
        });
        let v1 = rewrite(v2.clone(), 2, V1, false).unwrap();
        assert_eq!(
            v1,
            json!({
                "protocolVersion": 1,
                "clientInfo": {"name": "v2-client", "version": "2.0.0"},
                "clientCapabilities": {
                    "fs": {"readTextFile": false, "writeTextFile": false},
                    "terminal": false,
                    "auth": {"terminal": true},
                    "elicitation": {"form": {}}
                },
                "_meta": {"trace": "t"}
            })
        );
        // A connection that does not negotiate rewrites only v2's shape.
        assert_eq!(rewrite(v2, 2, V1, true), Some(v1));
        let v1_shaped = json!({"protocolVersion": 2, "clientCapabilities": {"terminal": true}});
        assert_eq!(rewrite(v1_shaped, 2, V1, true), None);
    }

    #[test]
    fn a_newer_initialize_reaches_a_v2_agent_as_v2() {
        let newer = json!({"protocolVersion": 3, "capabilities": {}});
        assert_eq!(
            rewrite(newer, 3, V2, false).unwrap(),
            json!({"protocolVersion": 2, "capabilities": {}, "info": {"name": "unknown", "version": "unknown"}})
        );
        let v2 = json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"}});
        assert_eq!(rewrite(v2, 2, V2, false), None);
        assert_eq!(rewrite(json!({"protocolVersion": 1}), 1, V1, false), None);
    }
}
