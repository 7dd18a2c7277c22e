//! The hops of a chain and how a message crosses them.
//!
//! Hop 0 is the editor's connection; hops 1..=n the components, the last
//! the agent, the others proxies. The conductor is every component's
//! client:
//! - toward the agent, a message reaches the next component plain, except
//!   that `initialize` reaches a proxy as `proxy/initialize`; a proxy sends
//!   it on wrapped in `proxy/successor`;
//! - toward the editor, a message from a component's successor reaches that
//!   component wrapped in `proxy/successor`, and the editor plain; a proxy
//!   sends it on plain.
//!
//! A conductor that is itself a proxy (nested in another chain) has a
//! successor beyond its last component: hop 0 is then its own conductor,
//! which initializes it with `proxy/initialize` and brings what comes from
//! beyond wrapped in `proxy/successor`; every component is a proxy, and
//! what the last one sends its successor goes out to hop 0 still wrapped.
//!
//! Every hop has its own request ids (the engine's); results and errors
//! pass unchanged. Cancellation is per hop: `$/cancel_request` for a
//! request cancels its handler here, which drops the request it forwarded,
//! which sends `$/cancel_request` on the next hop with that hop's id.

use std::sync::{Arc, OnceLock};

use crate::connection::Connection;
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::RawJson;
use crate::schema::v1::method::INITIALIZE;
use crate::schema::v1_unstable::method::{PROXY_INITIALIZE, PROXY_SUCCESSOR};

use super::envelope;

/// Every hop's connection, set once each is connected (handlers need the
/// others before they exist).
pub struct Chain {
    hops: Vec<OnceLock<Connection>>,
    /// This conductor is a proxy itself: there is a successor beyond the
    /// last component, reached through hop 0.
    nested: bool,
}

impl Chain {
    /// A chain of the editor (or, `nested`, this conductor's own
    /// conductor) and `components` components.
    pub fn new(components: usize, nested: bool) -> Arc<Self> {
        Arc::new(Chain {
            hops: (0..=components).map(|_| OnceLock::new()).collect(),
            nested,
        })
    }

    pub fn set(&self, hop: usize, connection: Connection) {
        let _ = self.hops[hop].set(connection);
    }

    pub fn hop(&self, hop: usize) -> Option<&Connection> {
        self.hops[hop].get()
    }

    fn last(&self) -> usize {
        self.hops.len() - 1
    }

    fn is_proxy(&self, hop: usize) -> bool {
        hop >= 1 && (hop < self.last() || self.nested)
    }

    fn connection(&self, hop: usize) -> Result<&Connection, RequestError> {
        self.hop(hop)
            .ok_or_else(|| RequestError::connection_closed("the chain is still starting"))
    }

    /// Where a message that arrived on `hop` goes, and as what.
    fn route(&self, hop: usize, method: &str, params: Option<RawJson>) -> Result<Route, RequestError> {
        let misplaced = |what: &str| {
            RequestError::invalid_request().with_data(serde_json::json!({
                "error": format!("{what} is only exchanged between the conductor and the proxies it initialized")
            }))
        };
        if self.nested && hop == 0 {
            // From this conductor's own conductor.
            if method == PROXY_INITIALIZE {
                return Ok(self.toward_agent(1, INITIALIZE.to_owned(), params));
            }
            if method == INITIALIZE {
                return Err(RequestError::invalid_request().with_data(serde_json::json!({
                    "error": "a conductor that is a proxy is initialized with `proxy/initialize`"
                })));
            }
            if method == PROXY_SUCCESSOR {
                // From beyond, for the last component, wrapped as it came.
                let last = self.last();
                return Ok(Route {
                    to: last,
                    method: PROXY_SUCCESSOR.to_owned(),
                    params,
                });
            }
        }
        if method == PROXY_INITIALIZE {
            return Err(misplaced("`proxy/initialize`"));
        }
        if method == PROXY_SUCCESSOR {
            if !self.is_proxy(hop) {
                return Err(misplaced("`proxy/successor`"));
            }
            if self.nested && hop == self.last() {
                // For the successor beyond: out through this conductor's own.
                return Ok(Route {
                    to: 0,
                    method: PROXY_SUCCESSOR.to_owned(),
                    params,
                });
            }
            let inner = envelope::unwrap(params.as_deref())?;
            if inner.method == PROXY_SUCCESSOR || inner.method == PROXY_INITIALIZE {
                return Err(misplaced("a wrapped proxy message"));
            }
            return Ok(self.toward_agent(hop + 1, inner.method, inner.params));
        }
        if hop == 0 {
            return Ok(self.toward_agent(1, method.to_owned(), params));
        }
        Ok(self.toward_editor(hop - 1, method, params))
    }

    /// A message for component `to`, coming from its predecessor.
    fn toward_agent(&self, to: usize, method: String, params: Option<RawJson>) -> Route {
        let method = if method == INITIALIZE && self.is_proxy(to) {
            PROXY_INITIALIZE.to_owned()
        } else {
            method
        };
        Route { to, method, params }
    }

    /// A message for hop `to`, coming from its successor.
    fn toward_editor(&self, to: usize, method: &str, params: Option<RawJson>) -> Route {
        if to == 0 {
            return Route {
                to,
                method: method.to_owned(),
                params,
            };
        }
        Route {
            to,
            method: PROXY_SUCCESSOR.to_owned(),
            params: Some(envelope::wrap(method, params.as_deref())),
        }
    }

    /// Forward a request that arrived on `hop`; its answer is the answer.
    pub async fn request(
        self: Arc<Self>,
        hop: usize,
        request: IncomingRequest,
    ) -> Result<RawJson, RequestError> {
        let route = self.route(hop, &request.method, request.params)?;
        // Dropping this future (the requester cancelled) drops the pending
        // request, which cancels it on the next hop.
        self.connection(route.to)?
            .start_request(&route.method, &route.params)
            .await?
            .await
    }

    /// Forward a notification that arrived on `hop`, in order; one that
    /// cannot be routed is dropped (the engine logs the error: notifications
    /// get no answer).
    pub async fn notification(
        self: Arc<Self>,
        hop: usize,
        notification: IncomingNotification,
    ) -> Result<(), RequestError> {
        let route = self.route(hop, &notification.method, notification.params)?;
        self.connection(route.to)?
            .send_notification(&route.method, &route.params)
            .await
    }
}

struct Route {
    to: usize,
    method: String,
    params: Option<RawJson>,
}
