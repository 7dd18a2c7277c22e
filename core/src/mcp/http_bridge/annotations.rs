//! `x-mcp-header` annotations tell an MCP HTTP client to mirror a tool
//! parameter into an `Mcp-Param-*` header. The bridge accepts no such
//! headers, so it lists tools without the annotations: removed from every
//! schema position of each tool's `inputSchema`, and only there (property
//! names, defaults, enums and examples are instance data, kept as they are).

use serde_json::Value;

const ANNOTATION: &str = "x-mcp-header";
/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose value is a schema.
const SCHEMA_VALUES: [&str; 11] = [
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "contentSchema",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_ARRAYS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// A `tools/list` result with the annotations removed from each tool's
/// `inputSchema`; anything else as it is.
pub fn strip_header_annotations(result: Value) -> Value {
    let Value::Object(mut result) = result else {
        return result;
    };
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(schema) = tool.get_mut("inputSchema") {
                strip_schema(schema);
            }
        }
    }
    Value::Object(result)
}

fn strip_schema(schema: &mut Value) {
    let Value::Object(schema) = schema else {
        return;
    };
    schema.remove(ANNOTATION);
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(children)) = schema.get_mut(key) {
            children.values_mut().for_each(strip_schema);
        }
    }
    match schema.get_mut("items") {
        // Draft-07 tuples list their schemas here; newer drafts use prefixItems.
        Some(Value::Array(items)) => items.iter_mut().for_each(strip_schema),
        Some(items) => strip_schema(items),
        None => {}
    }
    for key in SCHEMA_VALUES {
        if let Some(value) = schema.get_mut(key) {
            strip_schema(value);
        }
    }
    for key in SCHEMA_ARRAYS {
        if let Some(Value::Array(children)) = schema.get_mut(key) {
            children.iter_mut().for_each(strip_schema);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_schema_positions_only() {
        let listed = json!({"tools": [{
            "name": "t",
            "inputSchema": {
                "type": "object",
                "x-mcp-header": "Root",
                "properties": {
                    "x-mcp-header": {"type": "string", "x-mcp-header": "Name", "default": {"x-mcp-header": 1}},
                    "list": {"type": "array", "items": [{"x-mcp-header": "A"}], "enum": [{"x-mcp-header": 2}]}
                },
                "anyOf": [{"x-mcp-header": "B"}],
                "not": {"x-mcp-header": "C"}
            }
        }, "not a tool"], "nextCursor": "c"});
        let expected = json!({"tools": [{
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "x-mcp-header": {"type": "string", "default": {"x-mcp-header": 1}},
                    "list": {"type": "array", "items": [{}], "enum": [{"x-mcp-header": 2}]}
                },
                "anyOf": [{}],
                "not": {}
            }
        }, "not a tool"], "nextCursor": "c"});
        assert_eq!(strip_header_annotations(listed), expected);
        assert_eq!(strip_header_annotations(json!([1])), json!([1]));
    }
}
