//! ACP version 2 (the draft), typed: the [`Agent`] and [`Client`] traits of
//! its method table, [`AgentSideConnection`] and [`ClientSideConnection`]
//! that speak v2 only, and [`AgentProtocolRouter`], one agent serving v1
//! clients with a v1 [`crate::Agent`] and v2 clients with a v2 [`Agent`]
//! (the official TypeScript SDK's `agentProtocolRouter`). The same names as
//! v1's, as the official Rust SDK's `v1` and `v2` modules have; the
//! messages are in [`schema`] (as the official SDK's `v2::schema`).
//!
//! Negotiation follows [`crate::version`] (the rule every binding uses): a
//! v2 connection admits nothing from its peer before `initialize`, an agent
//! answers a client asking for v1 with -32022, a v2 client fails an agent
//! answering another version. Everything else is the engine's, as in v1:
//! params that do not fit the schema are -32602 before a handler runs,
//! requests run concurrently, notifications in order.
//!
//! ```no_run
//! use acp_engine::v2::schema::*;
//! use acp_engine::v2::{run_agent, Agent, AgentSideConnection};
//! use acp_engine::RequestError;
//!
//! struct Echo(AgentSideConnection);
//!
//! impl Agent for Echo {
//!     async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
//!         Ok(InitializeResponse::new(2, Implementation::new("echo", "1.0.0")))
//!     }
//!     async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
//!         Ok(NewSessionResponse::new("s-1"))
//!     }
//!     async fn prompt(&self, _: PromptRequest) -> Result<PromptResponse, RequestError> {
//!         // v2 acknowledges the prompt; the turn is told in session updates.
//!         Ok(PromptResponse::new("m-1"))
//!     }
//! }
//!
//! # async fn run() {
//! run_agent(Echo).await;
//! # }
//! ```

mod agent;
mod client;
mod router;

pub use agent::{run_agent, AgentSideConnection};
pub use client::{spawn_agent, ClientSideConnection};
pub use router::{run_router, AgentProtocolRouter};

/// v2's message types as this build's traits take them: [`crate::schema::v2`],
/// or with the `unstable` cargo feature `schema::v2_unstable` (its
/// unstable additions layered on).
#[cfg(not(feature = "unstable"))]
pub use crate::schema::v2 as schema;
#[cfg(feature = "unstable")]
pub use crate::schema::v2_unstable as schema;

pub use crate::schema::methods_v2::agent::Agent;
pub use crate::schema::methods_v2::client::Client;
