//! The agent's side of ACP: `AgentSideConnection`, the agent's view of its
//! client. The `Agent` trait an agent implements, its dispatch and the
//! connection's client methods come from the generated method table
//! (`methods.rs`).

use std::sync::Arc;

use crate::connection::Connection;
use crate::connection_builder::ConnectionBuilder;
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::schema::*;
use crate::terminal::TerminalHandle;
use crate::transport::Transport;
use crate::version::{Negotiation, ProtocolVersions};

pub use crate::schema::methods::agent::Agent;
use crate::schema::methods::agent::{dispatch_notification, dispatch_request};

/// The agent's connection to its client: every client method, typed.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct AgentSideConnection {
    connection: Connection,
}

impl AgentSideConnection {
    /// Serve `make_agent(connection)` over `transport`. The agent gets the
    /// connection to call its client back (session updates, permission,
    /// files, terminals).
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
        // v1 alone negotiates nothing; its one rule here: a v2 client's
        // `initialize` reaches the handler in v1's shape (`crate::version`).
        let negotiation = Negotiation::new(ProtocolVersions::V1);
        let connection = builder.connect_with(transport, |connection| {
            let agent = Arc::new(make_agent(Self::from_connection(connection.clone())));
            let on_notification = agent.clone();
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
                async move { dispatch_notification(&*agent, &notification).await }
            };
            (on_request, on_notification)
        });
        Self::from_connection(connection)
    }

    pub(crate) fn from_connection(connection: Connection) -> Self {
        Self { connection }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    crate::typed::plain_sends!();

    /// `terminal/create`, as a handle that releases the terminal when dropped.
    pub(crate) async fn handle(
        &self,
        method: &str,
        params: &CreateTerminalRequest,
    ) -> Result<TerminalHandle, RequestError> {
        let created: CreateTerminalResponse = self.connection.send_request(method, params).await?;
        Ok(TerminalHandle::new(
            created.terminal_id,
            params.session_id.clone(),
            self.connection.clone(),
        ))
    }

    crate::typed::connection_methods!();
}

/// Run an agent on this process's stdin/stdout until the client hangs up.
pub async fn run_agent<A: Agent>(make_agent: impl FnOnce(AgentSideConnection) -> A) {
    let connection = AgentSideConnection::new(make_agent, Transport::stdio());
    connection.closed().await;
}
