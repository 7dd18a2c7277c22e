//! The client's side of ACP: `ClientSideConnection`, a client's (an
//! editor's) view of its agent. The `Client` trait a client implements, its
//! dispatch and the connection's agent methods come from the generated
//! method table (`methods.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::connection_builder::ConnectionBuilder;
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::RawJson;
use crate::permission_cancel::{self, OpenPermissions};
use crate::transport::{SpawnOptions, Transport};

pub use crate::schema::methods::client::Client;
use crate::schema::methods::client::{dispatch_notification, dispatch_request};

/// The client's connection to an agent: every agent method, typed.
/// Cheap to clone.
#[derive(Clone)]
pub struct ClientSideConnection {
    connection: Connection,
    permissions: Arc<Permissions>,
}

/// The permission requests waiting on this client, for `session/cancel`.
#[derive(Default)]
struct Permissions {
    open: OpenPermissions<CancellationToken>,
    next_id: AtomicU64,
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
        let permissions = Arc::new(Permissions::default());
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
                    if permission_cancel::is_permission_request(&request.method) {
                        return request_permission(&*client, &permissions, &request).await;
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

    pub(crate) async fn request<P: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, RequestError> {
        self.connection.send_request(method, params).await
    }

    /// Send a notification; after `session/cancel`, the session's
    /// permission requests still waiting on this client are answered
    /// `cancelled` (see `permission_cancel`).
    pub(crate) async fn notify<P: serde::Serialize>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), RequestError> {
        if !permission_cancel::is_session_cancel(method) {
            return self.connection.send_notification(method, params).await;
        }
        let params = crate::to_raw(params).map_err(RequestError::internal)?;
        let sent = self.connection.send_notification(method, &params).await;
        if let Some(session) = permission_cancel::session_of(Some(params.get())) {
            for open in self.permissions.open.withdraw(&session) {
                open.cancel();
            }
        }
        sent
    }

    crate::typed::connection_methods!();
}

/// Run the client's `request_permission`, answering `cancelled` instead if
/// the session's turn is cancelled meanwhile.
async fn request_permission<C: Client>(
    client: &C,
    permissions: &Permissions,
    request: &IncomingRequest,
) -> Result<RawJson, RequestError> {
    let Some(session) = permission_cancel::session_of(request.params.as_deref().map(|raw| raw.get())) else {
        // Malformed: let the typed dispatch produce the -32602.
        return dispatch_request(client, request).await;
    };
    let id = permissions.next_id.fetch_add(1, Ordering::Relaxed);
    let withdrawn = CancellationToken::new();
    permissions.open.open(session.clone(), id, withdrawn.clone());
    let answer = tokio::select! {
        answer = dispatch_request(client, request) => answer,
        _ = withdrawn.cancelled() => RawValue::from_string(permission_cancel::cancelled_answer())
            .map_err(RequestError::internal),
    };
    permissions.open.close(&session, id);
    answer
}

/// Spawn an agent process and connect to it as a client in one call.
pub fn spawn_agent<C: Client>(
    options: SpawnOptions,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> std::io::Result<ClientSideConnection> {
    Ok(ClientSideConnection::new(make_client, Transport::spawn(options)?))
}
