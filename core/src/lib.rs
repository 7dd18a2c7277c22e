//! acp-engine: one Agent Client Protocol connection engine.
//!
//! [`Connection`] is a bidirectional JSON-RPC 2.0 peer over newline-delimited
//! JSON. It runs on tokio: a reader task frames and classifies lines and
//! starts a task per inbound request, an ordered dispatcher hands
//! notifications to their handler one at a time (and releases a response
//! only after the notifications that arrived before it), and a writer task
//! drains one bounded queue in batches. Nothing is ever printed to stdout.
//!
//! ```no_run
//! use acp_engine::{Connection, IncomingRequest, RequestError, SpawnOptions, Transport};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let transport = Transport::spawn(SpawnOptions::new("my-agent").args(["--stdio"]))?;
//! let connection = Connection::builder()
//!     .on_request(|request: IncomingRequest| async move {
//!         Err::<acp_engine::RawJson, _>(RequestError::method_not_found(&request.method))
//!     })
//!     .connect(transport);
//! let result: serde_json::Value = connection
//!     .send_request("initialize", &serde_json::json!({"protocolVersion": 1}))
//!     .await?;
//! println!("{result}");
//! connection.close();
//! connection.closed().await;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod agent;
mod client;
pub mod conductor;
mod connection;
mod connection_builder;
mod engine;
pub mod error;
mod fed;
pub mod framing;
#[doc(hidden)]
pub mod fuzzing;
mod handler;
pub mod host;
mod json_scan;
mod json_string;
mod json_writer;
pub mod legacy;
pub mod mcp;
pub mod mcp_servers;
pub mod message;
mod method_check;
mod observer;
mod permission_cancel;
pub mod process_tree;
#[cfg(feature = "remote")]
pub mod remote;
pub mod schema;
mod stdio;
mod tables;
mod terminal;
pub mod transport;
mod typed;
pub mod v2;
mod valid_raw;
pub mod version;

pub use agent::{run_agent, Agent, AgentSideConnection};
pub use client::{spawn_agent, Client, ClientSideConnection};
pub use connection::{Connection, PendingRequest};
pub use connection_builder::{ConnectionBuilder, DEFAULT_READ_SPIN, DEFAULT_WRITE_QUEUE_CAPACITY};
pub use engine::{Limits, DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_IN_FLIGHT_REQUESTS};
pub use error::RequestError;
pub use handler::{
    BoxFuture, IncomingNotification, IncomingRequest, NotificationHandler, RequestHandler, RespondError,
    Responder,
};
pub use message::{from_raw, to_raw, RawJson, RequestId};
pub use method_check::{Protocol, UncheckedMethods};
pub use observer::{Direction, Observer};
pub use process_tree::ProcessTree;
pub use tables::defaults;
pub use version::ProtocolVersions;

pub use terminal::TerminalHandle;
pub use tokio_util::sync::CancellationToken;
pub use transport::{SpawnOptions, Transport};

/// Typed validation of inbound messages for bindings whose handlers take
/// JSON text: the checks `Agent` and `Client` dispatch make before a
/// handler runs (-32601 for unknown methods, -32602 for params that do not
/// fit the method's schema type), in the protocol this build's typed API
/// speaks ([`Protocol::COMPILED`]).
pub mod validate {
    use serde_json::value::RawValue;

    use crate::method_check::check;
    pub use crate::method_check::{Protocol, Receiver};
    use crate::RequestError;
    use crate::UncheckedMethods;

    /// Any message `receiver` gets, in either protocol: Ok(true) when its
    /// params were checked against the method's schema type, Ok(false) for
    /// an extension method (`_`-prefixed, not checked), -32601 for a method
    /// the side does not have, -32602 (naming the field) for params that do
    /// not fit. For tools that inspect traffic (`acp-engine trace`).
    pub fn message(
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        receiver: Receiver,
        notification: bool,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<bool, RequestError> {
        message_in(
            crate::version::V1,
            protocol,
            unchecked,
            receiver,
            notification,
            method,
            params,
        )
    }

    /// [`message`] in ACP `version` (1, or 2 for the draft): what a
    /// connection that negotiated that version checks.
    pub fn message_in(
        version: u16,
        protocol: Protocol,
        unchecked: &UncheckedMethods,
        receiver: Receiver,
        notification: bool,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<bool, RequestError> {
        // The protocol's own notification, which both sides take.
        if notification && method == crate::CANCEL_REQUEST_METHOD {
            return crate::from_raw::<crate::schema::CancelRequestNotification>(params)
                .map(|_| true)
                .map_err(RequestError::from);
        }
        check(
            version,
            protocol,
            unchecked,
            receiver,
            notification,
            method,
            params.map(RawValue::get),
        )
    }

    /// A request an agent receives.
    pub fn agent_request(method: &str, params: Option<&RawValue>) -> Result<(), RequestError> {
        check(
            crate::version::V1,
            Protocol::COMPILED,
            &UncheckedMethods::default(),
            Receiver::Agent,
            false,
            method,
            params.map(RawValue::get),
        )
        .map(drop)
    }

    /// A notification an agent receives (an `Err`: drop it).
    pub fn agent_notification(method: &str, params: Option<&RawValue>) -> Result<(), RequestError> {
        check(
            crate::version::V1,
            Protocol::COMPILED,
            &UncheckedMethods::default(),
            Receiver::Agent,
            true,
            method,
            params.map(RawValue::get),
        )
        .map(drop)
    }

    /// A request a client receives.
    pub fn client_request(method: &str, params: Option<&RawValue>) -> Result<(), RequestError> {
        check(
            crate::version::V1,
            Protocol::COMPILED,
            &UncheckedMethods::default(),
            Receiver::Client,
            false,
            method,
            params.map(RawValue::get),
        )
        .map(drop)
    }

    /// A notification a client receives (an `Err`: drop it).
    pub fn client_notification(method: &str, params: Option<&RawValue>) -> Result<(), RequestError> {
        check(
            crate::version::V1,
            Protocol::COMPILED,
            &UncheckedMethods::default(),
            Receiver::Client,
            true,
            method,
            params.map(RawValue::get),
        )
        .map(drop)
    }
}

/// The method name of the protocol-level cancellation notification.
pub const CANCEL_REQUEST_METHOD: &str = schema::v1::method::CANCEL_REQUEST;
