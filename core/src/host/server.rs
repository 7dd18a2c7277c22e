//! A remote server driven by a host language: the engine accepts
//! connections (WebSocket and Streamable HTTP, [`crate::remote::Server`]) on
//! its runtime and queues them; the first one queued after the host looked
//! calls its `wake`, and the host takes each with [`HostServer::accept`] and
//! starts its agent on it, on its own thread, with its own handlers.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::runtime::Handle;

use crate::remote::{Peer, ServeOptions, Server};
use crate::transport::Transport;

/// A connection the server accepted, for the host to start an agent on.
pub struct Accepted {
    /// Its bytes: make a connection on them (`HostConnection::connect`).
    pub transport: Transport,
    /// Who connected, and how.
    pub peer: Peer,
}

/// A server whose connections a host language takes one by one.
pub struct HostServer {
    runtime: Handle,
    server: Mutex<Option<Server>>,
    accepted: Arc<Mutex<VecDeque<Accepted>>>,
    local_addr: SocketAddr,
    websocket_url: String,
    http_url: String,
}

impl HostServer {
    /// Listen on `address` (`HOST:PORT`; port 0 picks one) on `runtime`.
    /// `wake` is called (on a runtime thread) when a connection arrives to
    /// an empty queue: the host then takes them all with `accept`.
    pub fn bind(
        address: &str,
        options: ServeOptions,
        runtime: &Handle,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let accepted: Arc<Mutex<VecDeque<Accepted>>> = Arc::default();
        let queue = accepted.clone();
        let on_connection = move |lines, peer| {
            let was_empty = {
                let mut queue = queue.lock().unwrap();
                queue.push_back(Accepted {
                    transport: Transport::from_stream(lines),
                    peer,
                });
                queue.len() == 1
            };
            if was_empty {
                wake();
            }
        };
        let server = runtime.block_on(Server::bind(address, options, on_connection))?;
        Ok(Self {
            runtime: runtime.clone(),
            local_addr: server.local_addr(),
            websocket_url: server.websocket_url(),
            http_url: server.http_url(),
            server: Mutex::new(Some(server)),
            accepted,
        })
    }

    /// The next connection accepted and not taken yet.
    pub fn accept(&self) -> Option<Accepted> {
        self.accepted.lock().unwrap().pop_front()
    }

    /// Connections accepted and not taken yet.
    pub fn waiting(&self) -> usize {
        self.accepted.lock().unwrap().len()
    }

    /// The address served (with port 0, the one the system chose).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `ws://` (or `wss://`) URL of the endpoint.
    pub fn websocket_url(&self) -> &str {
        &self.websocket_url
    }

    /// `http://` (or `https://`) URL of the endpoint.
    pub fn http_url(&self) -> &str {
        &self.http_url
    }

    /// Connections open now.
    pub fn connections(&self) -> usize {
        self.server
            .lock()
            .unwrap()
            .as_ref()
            .map_or(0, Server::connections)
    }

    /// Stop accepting and end every connection (each agent's connection
    /// closes, failing what is pending); returns when they ended (a few
    /// seconds at most). Call from a host thread, not a runtime one.
    pub fn shutdown(&self) {
        let server = self.server.lock().unwrap().take();
        if let Some(server) = server {
            self.runtime.block_on(server.shutdown());
        }
        // Accepted and never taken: their clients see the end too.
        self.accepted.lock().unwrap().clear();
    }

    /// Drain, then stop ([`Server::drain`]): no new connection; each ends
    /// once its agent has answered its client's requests, the rest after
    /// `deadline`. Blocks until every connection ended, so call it from a
    /// thread other than the one the agents' handlers run on.
    pub fn drain(&self, deadline: Duration) {
        let server = self.server.lock().unwrap().take();
        if let Some(server) = server {
            self.runtime.block_on(server.drain(deadline));
        }
        self.accepted.lock().unwrap().clear();
    }
}

impl Drop for HostServer {
    fn drop(&mut self) {
        if let Some(server) = self.server.get_mut().unwrap().take() {
            self.runtime.spawn(server.shutdown());
        }
    }
}
