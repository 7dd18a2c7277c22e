//! The agent's side of ACP v2: `AgentSideConnection`, an agent's view of
//! its v2 client. The `Agent` trait, its dispatch and the connection's client
//! methods come from the generated method table (`methods_v2.rs`).

use std::sync::Arc;

use crate::connection::Connection;
use crate::connection_builder::ConnectionBuilder;
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::schema::methods_v2::agent::{dispatch_notification, dispatch_request, Agent};
use crate::transport::Transport;
use crate::version::{Negotiation, ProtocolVersions};

/// A v2 agent's connection to its client: every v2 client method, typed.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct AgentSideConnection {
    connection: Connection,
}

impl AgentSideConnection {
    /// Serve `make_agent(connection)` over `transport`, speaking v2 only: a
    /// client asking for v1 gets -32022 (Unsupported protocol version).
    pub fn new<A: Agent>(make_agent: impl FnOnce(AgentSideConnection) -> A, transport: Transport) -> Self {
        Self::with_builder(Connection::builder(), make_agent, transport)
    }

    /// Like `new`, with the connection's settings (observer, limits) from
    /// `builder`.
    pub fn with_builder<A: Agent>(
        builder: ConnectionBuilder,
        make_agent: impl FnOnce(AgentSideConnection) -> A,
        transport: Transport,
    ) -> Self {
        let negotiation = Arc::new(Negotiation::new(ProtocolVersions::V2));
        let connection = builder.connect_with(transport, |connection| {
            let agent = Arc::new(make_agent(Self::from_connection(connection.clone())));
            let on_notification = agent.clone();
            let notifications = negotiation.clone();
            let on_request = move |mut request: IncomingRequest| {
                let agent = agent.clone();
                let admitted = crate::typed::admit_request(&negotiation, &mut request);
                async move {
                    admitted?;
                    dispatch_request(&*agent, &request).await
                }
            };
            let on_notification = move |notification: IncomingNotification| {
                let agent = on_notification.clone();
                let admitted = notifications.peer_sends(&notification.method).is_ok();
                async move {
                    match admitted {
                        true => dispatch_notification(&*agent, &notification).await,
                        false => Ok(()), // before initialize: dropped
                    }
                }
            };
            (on_request, on_notification)
        });
        Self::from_connection(connection)
    }

    pub(super) fn from_connection(connection: Connection) -> Self {
        Self { connection }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    crate::typed::plain_sends!();

    crate::typed::connection_methods!();
}

/// Run a v2 agent on this process's stdin/stdout until the client hangs up.
pub async fn run_agent<A: Agent>(make_agent: impl FnOnce(AgentSideConnection) -> A) {
    let connection = AgentSideConnection::new(make_agent, Transport::stdio());
    connection.closed().await;
}
