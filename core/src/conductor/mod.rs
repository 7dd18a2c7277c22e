//! A conductor: runs a proxy chain, `editor -> conductor -> proxy 1 -> ...
//! -> proxy n -> agent`, each component a process on stdio, and speaks for
//! the whole chain to the editor as one agent (the ACP proxy-chain
//! protocol: `proxy/initialize`, `proxy/successor`; wire-compatible with
//! the official Rust SDK's conductor, `agent-client-protocol-conductor`).
//!
//! ```no_run
//! use acp_engine::conductor::Conductor;
//! use acp_engine::{SpawnOptions, Transport};
//!
//! # async fn demo() -> std::io::Result<()> {
//! let outcome = Conductor::new()
//!     .proxy(SpawnOptions::new("my-filter"))
//!     .agent(SpawnOptions::new("my-agent"))
//!     .run(Transport::stdio())
//!     .await?;
//! eprintln!("{outcome}");
//! # Ok(()) }
//! ```
//!
//! The chain lives as long as both ends: the editor closing its side stops
//! every component, and a component that exits ends the chain (its pending
//! requests fail at once with its close reason, then the editor's
//! connection closes), so no process outlives the conductor.
//!
//! [`proxy`] is the other side: the API a proxy is written on.

mod chain;
mod envelope;
pub mod proxy;
pub mod split;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::connection::Connection;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::transport::{SpawnOptions, Transport};

use chain::Chain;

/// How long the editor's pending requests get to be answered (with the
/// failure) after a component exits, before its connection closes.
const DRAIN: Duration = Duration::from_secs(1);

/// Builds and runs a chain: proxies in order, then the agent.
#[derive(Default)]
pub struct Conductor {
    proxies: Vec<SpawnOptions>,
    agent: Option<SpawnOptions>,
}

/// A chain of proxies only, run as one proxy inside another conductor's
/// chain (its predecessor initializes it with `proxy/initialize`, and what
/// its last proxy sends on goes to that conductor's next component).
#[derive(Default)]
pub struct NestedConductor {
    proxies: Vec<SpawnOptions>,
}

impl NestedConductor {
    /// An empty chain: add its proxies.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a proxy after the ones added before.
    pub fn proxy(mut self, proxy: SpawnOptions) -> Self {
        self.proxies.push(proxy);
        self
    }

    /// Start every proxy, then relay between `conductor` (this chain's
    /// own conductor) and them until one end closes.
    pub async fn run(self, conductor: Transport) -> std::io::Result<ChainEnd> {
        if self.proxies.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a nested chain needs a proxy",
            ));
        }
        relay(self.proxies, true, conductor).await
    }
}

/// How a chain ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainEnd {
    /// The editor closed its side (the normal end).
    EditorClosed,
    /// A component's connection closed first (it exited, or broke the
    /// protocol).
    ComponentClosed {
        /// Its place in the chain, from 0 (the agent is last).
        index: usize,
        /// The program it ran.
        program: String,
        /// Why its connection closed.
        reason: String,
    },
}

impl fmt::Display for ChainEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainEnd::EditorClosed => f.write_str("the editor closed the connection"),
            ChainEnd::ComponentClosed {
                index,
                program,
                reason,
            } => write!(f, "component {} ({program}) closed: {reason}", index + 1),
        }
    }
}

impl Conductor {
    /// An empty chain: add proxies, then the agent.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a proxy after the ones added before.
    pub fn proxy(mut self, proxy: SpawnOptions) -> Self {
        self.proxies.push(proxy);
        self
    }

    /// The agent, the chain's last component.
    pub fn agent(mut self, agent: SpawnOptions) -> Self {
        self.agent = Some(agent);
        self
    }

    /// Start every component, then relay between `editor` and the chain
    /// until one end closes. Fails when a component cannot be started (the
    /// ones started already are stopped).
    pub async fn run(self, editor: Transport) -> std::io::Result<ChainEnd> {
        let agent = self
            .agent
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a chain needs an agent"))?;
        relay(self.proxies.into_iter().chain([agent]).collect(), false, editor).await
    }
}

/// Start `components`, then relay between `editor` (hop 0) and them until
/// one end closes.
async fn relay(components: Vec<SpawnOptions>, nested: bool, editor: Transport) -> std::io::Result<ChainEnd> {
    let programs: Vec<String> = components
        .iter()
        .map(|options| options.command.to_string_lossy().into_owned())
        .collect();
    let chain = Chain::new(components.len(), nested);
    let mut connections = Vec::with_capacity(components.len());
    for (index, options) in components.into_iter().enumerate() {
        match Transport::spawn(options) {
            Ok(transport) => {
                let connection = hop(&chain, index + 1).connect(transport);
                chain.set(index + 1, connection.clone());
                connections.push(connection);
            }
            Err(error) => {
                stop(&connections).await;
                return Err(std::io::Error::new(
                    error.kind(),
                    format!("cannot start {:?}: {error}", programs[index]),
                ));
            }
        }
    }
    let editor = hop(&chain, 0).connect(editor);
    chain.set(0, editor.clone());

    let first_component_closed =
        futures_util::future::select_all(connections.iter().map(|connection| Box::pin(connection.closed())));
    let end = tokio::select! {
        _ = editor.closed() => ChainEnd::EditorClosed,
        (_, index, _) = first_component_closed => {
            let reason = connections[index].close_reason().unwrap_or_else(|| "closed".to_owned());
            ChainEnd::ComponentClosed { index, program: programs[index].clone(), reason }
        }
    };
    if end != ChainEnd::EditorClosed {
        // The editor's requests waiting on the chain failed when the
        // component closed; let their answers go out first.
        let deadline = tokio::time::Instant::now() + DRAIN;
        while editor.running_requests() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        editor.close();
        editor.closed().await;
    }
    stop(&connections).await;
    Ok(end)
}

/// A hop's connection: every request and notification it receives is
/// forwarded along the chain.
fn hop(chain: &Arc<Chain>, hop: usize) -> crate::connection_builder::ConnectionBuilder {
    let requests = chain.clone();
    let notifications = chain.clone();
    Connection::builder()
        .on_request(move |request: IncomingRequest| requests.clone().request(hop, request))
        .on_notification(move |notification: IncomingNotification| {
            notifications.clone().notification(hop, notification)
        })
}

async fn stop(connections: &[Connection]) {
    for connection in connections {
        connection.close();
    }
    for connection in connections {
        connection.closed().await;
    }
}
