//! `AgentProtocolRouter`: one agent process that serves v1 clients with a v1
//! [`crate::Agent`] and v2 clients with a v2 [`Agent`], chosen by the
//! client's `initialize` as the official SDKs' routers choose (see
//! [`crate::version`]).

use std::sync::Arc;

use super::agent::AgentSideConnection;
use crate::connection::Connection;
use crate::connection_builder::ConnectionBuilder;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::schema::methods as v1;
use crate::schema::methods_v2::agent::{dispatch_notification, dispatch_request, Agent};
use crate::transport::Transport;
use crate::version::{Negotiation, ProtocolVersions, V2};

/// A connection that speaks v1 and v2: `initialize` asking for 2 or more
/// selects v2 and the v2 agent; asking for 1, v1 and the v1 agent. The
/// other agent hears nothing. Only the agent the client selected is
/// called, but both are made up front. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AgentProtocolRouter {
    connection: Connection,
    negotiation: Arc<Negotiation>,
}

impl AgentProtocolRouter {
    /// Serve v1 clients with `make_v1(connection)` and v2 clients with
    /// `make_v2(connection)` over `transport`.
    pub fn new<A1: crate::Agent, A2: Agent>(
        make_v1: impl FnOnce(crate::AgentSideConnection) -> A1,
        make_v2: impl FnOnce(AgentSideConnection) -> A2,
        transport: Transport,
    ) -> Self {
        Self::with_builder(Connection::builder(), make_v1, make_v2, transport)
    }

    /// Like `new`, with the connection's settings (observer, limits) from
    /// `builder`.
    pub fn with_builder<A1: crate::Agent, A2: Agent>(
        builder: ConnectionBuilder,
        make_v1: impl FnOnce(crate::AgentSideConnection) -> A1,
        make_v2: impl FnOnce(AgentSideConnection) -> A2,
        transport: Transport,
    ) -> Self {
        let negotiation = Arc::new(Negotiation::new(ProtocolVersions::V1_AND_V2));
        let routing = negotiation.clone();
        let connection = builder.connect_with(transport, |connection| {
            let v1_agent = Arc::new(make_v1(crate::AgentSideConnection::from_connection(
                connection.clone(),
            )));
            let v2_agent = Arc::new(make_v2(AgentSideConnection::from_connection(connection.clone())));
            let (v1_notified, v2_notified) = (v1_agent.clone(), v2_agent.clone());
            let notifications = routing.clone();
            let on_request = move |mut request: IncomingRequest| {
                let (v1_agent, v2_agent) = (v1_agent.clone(), v2_agent.clone());
                let version = crate::typed::admit_request(&routing, &mut request);
                async move {
                    match version? {
                        V2 => dispatch_request(&*v2_agent, &request).await,
                        _ => v1::agent::dispatch_request(&*v1_agent, &request).await,
                    }
                }
            };
            let on_notification = move |notification: IncomingNotification| {
                let (v1_agent, v2_agent) = (v1_notified.clone(), v2_notified.clone());
                let version = notifications.peer_sends(&notification.method);
                async move {
                    match version {
                        Ok(V2) => dispatch_notification(&*v2_agent, &notification).await,
                        Ok(_) => v1::agent::dispatch_notification(&*v1_agent, &notification).await,
                        Err(_) => Ok(()), // before initialize: dropped
                    }
                }
            };
            (on_request, on_notification)
        });
        Self {
            connection,
            negotiation,
        }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The version `initialize` selected (1 until it arrives).
    pub fn protocol_version(&self) -> u16 {
        self.negotiation.current()
    }

    /// Close the connection: pending requests fail, handlers are cancelled.
    pub fn close(&self) {
        self.connection.close()
    }

    /// Resolves once the connection is closed and torn down.
    pub async fn closed(&self) {
        self.connection.closed().await
    }
}

/// Run a v1/v2 agent on this process's stdin/stdout until the client hangs up.
pub async fn run_router<A1: crate::Agent, A2: Agent>(
    make_v1: impl FnOnce(crate::AgentSideConnection) -> A1,
    make_v2: impl FnOnce(AgentSideConnection) -> A2,
) {
    let router = AgentProtocolRouter::new(make_v1, make_v2, Transport::stdio());
    router.closed().await;
}
