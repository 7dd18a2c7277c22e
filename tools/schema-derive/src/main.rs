//! Writes the JSON Schema of the ACP v1 wire format, derived with schemars
//! from `agent-client-protocol-schema`, and the method-name tables beside it.
//!
//! The settings follow the official generator (the `schema-generator` of
//! github.com/agentclientprotocol/agent-client-protocol): JSON Schema draft
//! 2020-12, titles on untagged enum variants, `$ref` siblings removed, boolean
//! schemas replaced except `additionalProperties`, and as root an untagged
//! enum of every message each side can send. The `x-method` / `x-side`
//! annotations come from the crate's own `schemars(extend(...))` attributes;
//! the meta file is the crate's `AGENT_METHOD_NAMES`, `CLIENT_METHOD_NAMES`
//! and `PROTOCOL_LEVEL_METHOD_NAMES`.
//!
//! With `unstable`, the root also has the official bundle's `Proxy` variant
//! (proxy chains) and the meta file a `proxyMethods` table.
//!
//! Without the `unstable` feature it writes `schema.json` and `meta.json`,
//! with it `schema.unstable.json` and `meta.unstable.json`, into the
//! directory given as the only argument.

use agent_client_protocol_schema::v1::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, JsonRpcMessage, Notification, ProtocolLevelNotification, Request, Response,
    AGENT_METHOD_NAMES, CLIENT_METHOD_NAMES, PROTOCOL_LEVEL_METHOD_NAMES,
};
use agent_client_protocol_schema::ProtocolVersion;
use schemars::generate::SchemaSettings;
use schemars::transform::{RemoveRefSiblings, ReplaceBoolSchemas};
use schemars::JsonSchema;
use std::path::PathBuf;

/// All messages that an agent can send to a client.
#[allow(dead_code, clippy::large_enum_variant)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
enum FromAgent {
    Request(Request<AgentRequest>),
    Response(Response<AgentResponse>),
    Notification(Notification<AgentNotification>),
}

/// All messages that a client can send to an agent.
#[allow(dead_code, clippy::large_enum_variant)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
enum FromClient {
    Request(Request<ClientRequest>),
    Response(Response<ClientResponse>),
    Notification(Notification<ClientNotification>),
}

// The root: the variant names and the title are the official schema's (a doc
// comment here would become the root's description).
#[allow(dead_code, clippy::large_enum_variant)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(title = "Agent Client Protocol")]
enum AcpTypes {
    Agent(JsonRpcMessage<FromAgent>),
    Client(JsonRpcMessage<FromClient>),
    ProtocolLevel(JsonRpcMessage<Notification<ProtocolLevelNotification>>),
    // Proxy chains (unstable): the official bundles since they exist carry this
    // root variant, so that `ProxyRequest` & co. and their `x-side: proxy`
    // methods are definitions.
    #[cfg(feature = "unstable")]
    Proxy(JsonRpcMessage<FromProxy>),
}

/// Messages exchanged between a conductor and its proxies.
#[cfg(feature = "unstable")]
#[allow(dead_code, clippy::large_enum_variant)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
enum FromProxy {
    Request(Request<unstable::ProxyRequest>),
    Response(Response<unstable::ProxyResponse>),
    Notification(Notification<unstable::ProxyNotification>),
}

#[cfg(feature = "unstable")]
mod unstable {
    pub use agent_client_protocol_schema::v1::{
        ProxyNotification, ProxyRequest, ProxyResponse, PROXY_METHOD_NAMES,
    };
}

fn main() {
    let out: PathBuf = std::env::args_os()
        .nth(1)
        .expect("usage: acp-schema-derive OUT_DIR")
        .into();
    std::fs::create_dir_all(&out).expect("create the output directory");

    let mut settings = SchemaSettings::draft2020_12();
    settings.untagged_enum_variant_titles = true;
    let mut bools = ReplaceBoolSchemas::default();
    bools.skip_additional_properties = true;
    let settings = settings
        .with_transform(RemoveRefSiblings::default())
        .with_transform(bools);
    let schema = settings.into_generator().into_root_schema_for::<AcpTypes>();

    #[allow(unused_mut)]
    let mut meta = serde_json::json!({
        "version": ProtocolVersion::V1,
        "agentMethods": AGENT_METHOD_NAMES,
        "clientMethods": CLIENT_METHOD_NAMES,
        "protocolMethods": PROTOCOL_LEVEL_METHOD_NAMES,
    });
    // Not in the official meta files (which predate or omit proxy chains): the
    // crate's table of the proxy methods, so every x-method has its table.
    #[cfg(feature = "unstable")]
    {
        meta["proxyMethods"] = serde_json::to_value(unstable::PROXY_METHOD_NAMES).expect("proxy");
    }

    let suffix = if cfg!(feature = "unstable") { ".unstable" } else { "" };
    let write = |name: String, value: &serde_json::Value| {
        let text = serde_json::to_string_pretty(value).expect("serialize") + "\n";
        std::fs::write(out.join(&name), text).unwrap_or_else(|e| panic!("write {name}: {e}"));
    };
    write(format!("schema{suffix}.json"), &serde_json::to_value(&schema).expect("schema"));
    write(format!("meta{suffix}.json"), &meta);
}
