//! The proxy role: a component of a chain, with a predecessor (toward the
//! editor) and a successor (toward the agent), both reached through its one
//! connection to the conductor.
//!
//! A [`Proxy`] sees every message that crosses it: requests and
//! notifications from the client side (`initialize` included: it arrives as
//! `proxy/initialize` and is handed over as `initialize`) and from the agent
//! side (unwrapped from `proxy/successor`). Each method's default passes
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

use crate::connection::Connection;
use crate::error::RequestError;
use crate::handler::{BoxFuture, IncomingNotification, IncomingRequest};
use crate::message::RawJson;
use crate::schema::v1::method::INITIALIZE;
use crate::schema::v1_unstable::method::{PROXY_INITIALIZE, PROXY_SUCCESSOR};
use crate::transport::Transport;

use super::envelope;

/// The way to the agent: sends wrap the message in `proxy/successor`.
#[derive(Clone)]
pub struct Successor {
    connection: Connection,
}

impl Successor {
    /// Send a request to the successor; its result or error is returned
    /// unchanged. Dropping the future cancels it.
    pub async fn request(&self, method: &str, params: Option<RawJson>) -> Result<RawJson, RequestError> {
        let envelope = envelope::wrap(method, params.as_ref());
        self.connection
            .start_request(PROXY_SUCCESSOR, &envelope)
            .await?
            .await
    }

    /// Send a notification to the successor.
    pub async fn notify(&self, method: &str, params: Option<RawJson>) -> Result<(), RequestError> {
        let envelope = envelope::wrap(method, params.as_ref());
        self.connection
            .send_notification(PROXY_SUCCESSOR, &envelope)
            .await
    }
}

/// The way to the editor: messages go plain.
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

/// The message from the agent side in a `proxy/successor`, or None for a
/// message from the client side.
fn from_successor(method: &str, params: Option<&RawJson>) -> Result<Option<AgentMessage>, RequestError> {
    if method != PROXY_SUCCESSOR {
        return Ok(None);
    }
    envelope::unwrap(params).map(Some)
}

/// Serve `proxy` on `transport` (its connection to the conductor) until
/// the conductor closes it.
pub async fn run_proxy(proxy: impl Proxy, transport: Transport) {
    let proxy = Arc::new(proxy);
    let requests = proxy.clone();
    let notifications = proxy;
    let connection = Connection::builder()
        .on_request(move |mut request: IncomingRequest| {
            let proxy = requests.clone();
            async move {
                let connection = request.connection.clone();
                if let Some(message) = from_successor(&request.method, request.params.as_ref())? {
                    return proxy.agent_request(message, Predecessor { connection }).await;
                }
                if request.method == PROXY_INITIALIZE {
                    request.method = INITIALIZE.to_owned();
                }
                proxy.client_request(request, Successor { connection }).await
            }
        })
        .on_notification(move |notification: IncomingNotification| {
            let proxy = notifications.clone();
            async move {
                let connection = notification.connection.clone();
                if notification.method == PROXY_SUCCESSOR {
                    let inner = envelope::unwrap(notification.params.as_ref())?;
                    let message = AgentMessage {
                        method: inner.method,
                        params: inner.params,
                    };
                    return proxy
                        .agent_notification(message, Predecessor { connection })
                        .await;
                }
                proxy
                    .client_notification(notification, Successor { connection })
                    .await
            }
        })
        .connect(transport);
    connection.closed().await;
}
