//! Which MCP servers an ACP v2 agent accepts from its client (in `session/new`,
//! `session/resume`, `session/fork`): the official SDKs' `assertSupportedMcpServers`,
//! once for every binding. A server is refused (-32602) when its `name` repeats an
//! earlier server's (data `{name}`), or when its `type` is not a transport of v2's
//! `McpCapabilities` that the agent advertised with a non-null value (data `{type}`):
//! v1's `sse`, unknown and `_`-prefixed custom types included.

use serde_json::{json, Value};

use crate::error::RequestError;

/// The transports of v2's `McpCapabilities` (its properties besides `_meta`; a test
/// holds this to the schema).
const TRANSPORTS: [&str; 2] = ["stdio", "http"];

/// Check `servers` (an array of `McpServer`, or null) against the agent's
/// `capabilities` (its advertised `McpCapabilities`, or null).
pub fn check_supported_mcp_servers(servers: &Value, capabilities: &Value) -> Result<(), RequestError> {
    let mut names = std::collections::HashSet::new();
    for server in servers.as_array().into_iter().flatten() {
        if let Some(name) = server.get("name").and_then(Value::as_str) {
            if !names.insert(name) {
                return Err(RequestError::invalid_params()
                    .with_message_detail(format_args!("Duplicate MCP server name {name}"))
                    .with_data(json!({ "name": name })));
            }
        }
        let transport = server.get("type").cloned().unwrap_or(Value::Null);
        let advertised = transport
            .as_str()
            .filter(|transport| TRANSPORTS.contains(transport))
            .and_then(|transport| capabilities.get(transport))
            .is_some_and(|capability| !capability.is_null());
        if !advertised {
            let shown = transport
                .as_str()
                .map_or_else(|| transport.to_string(), str::to_owned);
            return Err(RequestError::invalid_params()
                .with_message_detail(format_args!("Unsupported MCP server transport {shown}"))
                .with_data(json!({ "type": transport })));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transports_are_v2s_mcp_capabilities() {
        let schema: Value = serde_json::from_str(include_str!("../../schema/v2/schema.json")).unwrap();
        let properties = schema["$defs"]["McpCapabilities"]["properties"]
            .as_object()
            .unwrap();
        let mut keys: Vec<&str> = properties
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "_meta")
            .collect();
        keys.sort_unstable();
        let mut ours = TRANSPORTS.to_vec();
        ours.sort_unstable();
        assert_eq!(keys, ours);
    }

    #[test]
    fn servers_need_unique_names_and_an_advertised_transport() {
        let stdio = json!({"stdio": {}});
        let server =
            |name: &str, transport: &str| json!({"name": name, "type": transport, "command": "/bin/s"});
        assert_eq!(
            check_supported_mcp_servers(&json!([server("a", "stdio")]), &stdio),
            Ok(())
        );
        assert_eq!(check_supported_mcp_servers(&Value::Null, &Value::Null), Ok(()));
        let twice = json!([server("a", "stdio"), server("a", "stdio")]);
        let error = check_supported_mcp_servers(&twice, &stdio).unwrap_err();
        assert_eq!((error.code, error.data), (-32602, Some(json!({"name": "a"}))));
        assert_eq!(error.message, "Invalid params: Duplicate MCP server name a");
        for refused in ["http", "sse", "_custom"] {
            let error = check_supported_mcp_servers(&json!([server("a", refused)]), &stdio).unwrap_err();
            assert_eq!(error.data, Some(json!({"type": refused})));
        }
        let null_capability = json!({"stdio": null});
        assert!(check_supported_mcp_servers(&json!([server("a", "stdio")]), &null_capability).is_err());
    }
}
