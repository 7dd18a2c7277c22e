//! The client's side of ACP v2: `ClientSideConnection`, a client's view of
//! its v2 agent. The `Client` trait, its dispatch and the connection's agent
//! methods come from the generated method table (`methods_v2.rs`).

use std::sync::Arc;

use crate::connection::Connection;
use crate::connection_builder::ConnectionBuilder;
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::RawJson;
use crate::permission_cancel::{is_permission_request, TypedPermissions};
use crate::schema::methods_v2::client::{dispatch_notification, dispatch_request, Client};
use crate::transport::{SpawnOptions, Transport};
use crate::version::{Negotiation, ProtocolVersions};

/// A v2 client's connection to its agent: every v2 agent method, typed.
/// Cheap to clone.
#[derive(Clone)]
pub struct ClientSideConnection {
    connection: Connection,
    permissions: Arc<TypedPermissions>,
    negotiation: Arc<Negotiation>,
}

impl std::fmt::Debug for ClientSideConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSideConnection")
            .field("connection", &self.connection)
            .finish()
    }
}

impl ClientSideConnection {
    /// Talk to a v2 agent over `transport`, serving its requests with
    /// `make_client(connection)`. `initialize` must ask for version 2; an
    /// agent answering another version fails it (-32600).
    pub fn new<C: Client>(make_client: impl FnOnce(ClientSideConnection) -> C, transport: Transport) -> Self {
        Self::with_builder(Connection::builder(), make_client, transport)
    }

    /// Like `new`, with the connection's settings (observer, limits) from
    /// `builder`.
    pub fn with_builder<C: Client>(
        builder: ConnectionBuilder,
        make_client: impl FnOnce(ClientSideConnection) -> C,
        transport: Transport,
    ) -> Self {
        let permissions = Arc::new(TypedPermissions::default());
        let negotiation = Arc::new(Negotiation::new(ProtocolVersions::V2));
        let connection = builder.connect_with(transport, |connection| {
            let client = Arc::new(make_client(Self {
                connection: connection.clone(),
                permissions: permissions.clone(),
                negotiation: negotiation.clone(),
            }));
            let on_notification = client.clone();
            let permissions = permissions.clone();
            let (requests, notifications) = (negotiation.clone(), negotiation.clone());
            let on_request = move |request: IncomingRequest| {
                let client = client.clone();
                let permissions = permissions.clone();
                let admitted = requests.peer_sends(&request.method);
                async move {
                    admitted?;
                    if is_permission_request(&request.method) {
                        return permissions
                            .answer(&request, dispatch_request(&*client, &request))
                            .await;
                    }
                    dispatch_request(&*client, &request).await
                }
            };
            let on_notification = move |notification: IncomingNotification| {
                let client = on_notification.clone();
                let admitted = notifications.peer_sends(&notification.method).is_ok();
                async move {
                    match admitted {
                        true => dispatch_notification(&*client, &notification).await,
                        false => Ok(()), // before initialize: dropped
                    }
                }
            };
            (on_request, on_notification)
        });
        Self {
            connection,
            permissions,
            negotiation,
        }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The version this connection speaks: 2 once `initialize` is on its way.
    pub fn protocol_version(&self) -> u16 {
        self.negotiation.current()
    }

    /// Send a request; `initialize` settles the version by the agent's answer.
    pub(crate) async fn request<P: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, RequestError> {
        if !self.negotiation.client_reads_answer(method) {
            return self.connection.send_request(method, params).await;
        }
        let params = crate::to_raw(params).map_err(RequestError::internal)?;
        self.negotiation.client_sends(method, Some(params.get()));
        let answer: RawJson = self.connection.send_request(method, &params).await?;
        self.negotiation.initialize_answered(answer.get())?;
        serde_json::from_str(answer.get()).map_err(|error| {
            RequestError::internal_error().with_data(
                serde_json::json!({ "message": format!("unexpected result for {method}: {error}") }),
            )
        })
    }

    /// Send a notification; after `session/cancel`, the session's
    /// permission requests still waiting on this client are answered
    /// `cancelled` (see `permission_cancel`).
    pub(crate) async fn notify<P: serde::Serialize>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), RequestError> {
        self.permissions.notify(&self.connection, method, params).await
    }

    crate::typed::connection_methods!();
}

/// Spawn a v2 agent process and connect to it as a v2 client in one call.
pub fn spawn_agent<C: Client>(
    options: SpawnOptions,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> std::io::Result<ClientSideConnection> {
    Ok(ClientSideConnection::new(make_client, Transport::spawn(options)?))
}
