//! The proxy role: a component of a chain, with a predecessor (toward the
//! editor) and a successor (toward the agent), both reached through its one
//! connection to the conductor.
//!
//! A [`Proxy`] sees every message that crosses it: requests and
//! notifications from the client side (`initialize` included: it arrives as
//! `proxy/initialize` and is handed over as `initialize`) and from the agent
//! side (unwrapped from `proxy/successor`). The engine's split of the
//! conductor's connection ([`super::split`]) does the unwrapping, the same
//! for every language's proxy. Each method's default passes
//! the message on unchanged, so a proxy overrides only what it changes.
//!
//! ```no_run
//! use acp_engine::conductor::proxy::{run_proxy, Proxy, Successor};
//! use acp_engine::{BoxFuture, IncomingRequest, RawJson, RequestError, Transport};
//!
//! struct Logger;
//!
//! impl Proxy for Logger {
//!     fn client_request(&self, request: IncomingRequest, chain: Successor) -> BoxFuture<Result<RawJson, RequestError>> {
//!         eprintln!("-> {}", request.method);
//!         Box::pin(async move { chain.request(&request.method, request.params).await })
//!     }
//! }
//!
//! # async fn demo() {
//! run_proxy(Logger, Transport::stdio()).await;
//! # }
//! ```

use std::sync::Arc;

use tokio::sync::SetOnce;

use crate::connection::Connection;
use crate::error::RequestError;
use crate::handler::{BoxFuture, IncomingNotification, IncomingRequest};
use crate::message::RawJson;
use crate::transport::Transport;

use super::split::split;

/// The way to the agent (its connection: see [`super::split`]).
#[derive(Clone)]
pub struct Successor {
    connection: Connection,
}

impl Successor {
    /// Send a request to the successor; its result or error is returned
    /// unchanged. Dropping the future cancels it.
    pub async fn request(&self, method: &str, params: Option<RawJson>) -> Result<RawJson, RequestError> {
        self.connection.start_request(method, &params).await?.await
    }

    /// Send a notification to the successor.
    pub async fn notify(&self, method: &str, params: Option<RawJson>) -> Result<(), RequestError> {
        self.connection.send_notification(method, &params).await
    }
}

/// The way to the editor (its connection: see [`super::split`]).
#[derive(Clone)]
pub struct Predecessor {
    connection: Connection,
}

impl Predecessor {
    /// Send a request to the predecessor; dropping the future cancels it.
    pub async fn request(&self, method: &str, params: Option<RawJson>) -> Result<RawJson, RequestError> {
        self.connection.start_request(method, &params).await?.await
    }

    /// Send a notification to the predecessor.
    pub async fn notify(&self, method: &str, params: Option<RawJson>) -> Result<(), RequestError> {
        self.connection.send_notification(method, &params).await
    }
}

/// What a proxy does with the messages that cross it. Every method's
/// default passes the message on unchanged; requests run concurrently,
/// notifications one at a time in arrival order (per direction: the
/// engine's rules for one connection).
pub trait Proxy: Send + Sync + 'static {
    /// A request from the client side, on its way to the agent.
    fn client_request(
        &self,
        request: IncomingRequest,
        successor: Successor,
    ) -> BoxFuture<Result<RawJson, RequestError>> {
        Box::pin(async move { successor.request(&request.method, request.params).await })
    }

    /// A notification from the client side, on its way to the agent.
    fn client_notification(
        &self,
        notification: IncomingNotification,
        successor: Successor,
    ) -> BoxFuture<Result<(), RequestError>> {
        Box::pin(async move { successor.notify(&notification.method, notification.params).await })
    }

    /// A request from the agent side (`session/request_permission`,
    /// `fs/*`, ...), on its way to the client.
    fn agent_request(
        &self,
        request: AgentMessage,
        predecessor: Predecessor,
    ) -> BoxFuture<Result<RawJson, RequestError>> {
        Box::pin(async move { predecessor.request(&request.method, request.params).await })
    }

    /// A notification from the agent side (`session/update`, ...), on its
    /// way to the client.
    fn agent_notification(
        &self,
        notification: AgentMessage,
        predecessor: Predecessor,
    ) -> BoxFuture<Result<(), RequestError>> {
        Box::pin(async move {
            predecessor
                .notify(&notification.method, notification.params)
                .await
        })
    }
}

/// A message from the agent side, taken out of its `proxy/successor`.
pub use super::envelope::Message as AgentMessage;

/// Serve `proxy` on `transport` (its connection to the conductor) until
/// the conductor closes it: two connections on the engine's split of it
/// ([`super::split`]), one toward the editor, one toward the agent.
pub async fn run_proxy(proxy: impl Proxy, transport: Transport) {
    let proxy = Arc::new(proxy);
    let halves = split(transport, &tokio::runtime::Handle::current());
    let successor_cell: Arc<SetOnce<Connection>> = Arc::default();
    let (client_requests, client_notifications) = (proxy.clone(), proxy.clone());
    let (to_successor, notify_successor) = (successor_cell.clone(), successor_cell.clone());
    let predecessor = Connection::builder()
        .on_request(move |request: IncomingRequest| {
            let (proxy, successor) = (client_requests.clone(), to_successor.clone());
            async move {
                let connection = successor.wait().await.clone();
                proxy.client_request(request, Successor { connection }).await
            }
        })
        .on_notification(move |notification: IncomingNotification| {
            let (proxy, successor) = (client_notifications.clone(), notify_successor.clone());
            async move {
                let connection = successor.wait().await.clone();
                proxy
                    .client_notification(notification, Successor { connection })
                    .await
            }
        })
        .connect(halves.predecessor);
    let (to_predecessor, notify_predecessor) = (predecessor.clone(), predecessor.clone());
    let agent_notifications = proxy.clone();
    let successor = Connection::builder()
        .on_request(move |request: IncomingRequest| {
            let (proxy, connection) = (proxy.clone(), to_predecessor.clone());
            let message = AgentMessage {
                method: request.method,
                params: request.params,
            };
            async move { proxy.agent_request(message, Predecessor { connection }).await }
        })
        .on_notification(move |notification: IncomingNotification| {
            let (proxy, connection) = (agent_notifications.clone(), notify_predecessor.clone());
            let message = AgentMessage {
                method: notification.method,
                params: notification.params,
            };
            async move {
                proxy
                    .agent_notification(message, Predecessor { connection })
                    .await
            }
        })
        .connect(halves.successor);
    let _ = successor_cell.set(successor.clone());
    halves.reading.start();
    tokio::select! {
        _ = predecessor.closed() => {}
        _ = successor.closed() => {}
    }
    predecessor.close();
    successor.close();
    predecessor.closed().await;
    successor.closed().await;
}
