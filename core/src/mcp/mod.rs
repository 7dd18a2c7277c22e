//! MCP-over-ACP: MCP servers one side of an ACP connection offers the other
//! over the connection itself (MCP 2026-07-28, the stateless revision). The
//! *provider* (usually the client) lists each in `session/new`'s
//! `mcpServers` as `{"type": "acp", "name", "serverId"}`; the *caller*
//! (usually the agent) sends it `mcp/message` requests (`serverId`,
//! `requestId`, the MCP `method` and `params`); the answer carries the MCP
//! server's `result`, or its `error`, inside a successful ACP response, and
//! the provider may send `mcp/message` notifications (progress,
//! subscription events) for a request while it runs.
//!
//! The binding's rules live here once, for every language:
//! - [`binding`]: the envelope, the per-request `_meta` MCP requires, the
//!   outcome carrier, and how failures map to outer ACP errors;
//! - [`McpProvider`]: a connection's registered servers, their active
//!   requests and limits (the official SDKs' `McpOverAcpProvider`);
//! - [`McpCaller`]: calling a declared server and routing its notifications
//!   to the request that owns them (`McpOverAcpCaller`);
//! - [`McpServers`]: a bridge from `mcp/message` to MCP servers on stdio;
//! - [`http_bridge`]: declared servers re-exported as loopback MCP HTTP
//!   endpoints, for agents whose MCP client only takes URLs;
//! - [`host`]: the same with JSON text in and out, for the bindings.

pub mod binding;
mod caller;
pub mod host;
#[cfg(feature = "remote")]
pub mod http_bridge;
mod provider;
mod stdio_bridge;

pub use binding::{McpHandlerError, RequestMeta};
pub use caller::{McpCaller, McpCallerOptions, McpNotificationListener, McpRequestOptions};
pub use provider::{
    McpHandler, McpOperation, McpProvider, McpRegistration, McpStart, DEFAULT_MAX_ACTIVE_REQUESTS,
};
pub use stdio_bridge::McpServers;

/// MCP's constants: the revision carried and the inner `_meta` keys (generated).
pub use crate::tables::mcp as constants;

/// `mcp/message`, the method MCP-over-ACP travels in (unstable in the
/// schema: here for builds without the `unstable` feature too).
pub const MCP_MESSAGE: &str = crate::schema::v1_unstable::method::MCP_MESSAGE;
