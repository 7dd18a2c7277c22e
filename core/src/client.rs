//! The client's side of ACP: `ClientSideConnection`, a client's (an
//! editor's) view of its agent. The `Client` trait a client implements, its
//! dispatch and the connection's agent methods come from the generated
//! method table (`methods.rs`).

use std::sync::Arc;

use crate::connection::Connection;
use crate::connection_builder::ConnectionBuilder;
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::permission_cancel::{is_permission_request, TypedPermissions};
use crate::transport::{SpawnOptions, Transport};

pub use crate::schema::methods::client::Client;
use crate::schema::methods::client::{dispatch_notification, dispatch_request};

/// The client's connection to an agent: every agent method, typed.
/// Cheap to clone.
#[derive(Clone)]
pub struct ClientSideConnection {
    connection: Connection,
    permissions: Arc<TypedPermissions>,
}

impl std::fmt::Debug for ClientSideConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSideConnection")
            .field("connection", &self.connection)
            .finish()
    }
}

impl ClientSideConnection {
    /// Talk to an agent over `transport`, serving its requests with
    /// `make_client(connection)`.
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
        let connection = builder.connect_with(transport, |connection| {
            let this = Self {
                connection: connection.clone(),
                permissions: permissions.clone(),
            };
            let client = Arc::new(make_client(this));
            let on_notification = client.clone();
            let permissions = permissions.clone();
            let on_request = move |request: IncomingRequest| {
                let client = client.clone();
                let permissions = permissions.clone();
                async move {
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
                async move { dispatch_notification(&*client, &notification).await }
            };
            (on_request, on_notification)
        });
        Self {
            connection,
            permissions,
        }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    crate::typed::plain_request!();

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

/// Spawn an agent process and connect to it as a client in one call.
pub fn spawn_agent<C: Client>(
    options: SpawnOptions,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> std::io::Result<ClientSideConnection> {
    Ok(ClientSideConnection::new(make_client, Transport::spawn(options)?))
}
