//! What a server counts, for `/metrics` (the Prometheus text format), and
//! what it knows of each open connection's traffic: the client's requests
//! the agent has not answered yet (a draining server ends a connection once
//! it has none) and the sessions the agent opened on it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::PeerTransport;
use crate::message::RequestId;
use crate::remote::peek::{Kind, Peek};

type Labels = [(&'static str, &'static str); 1];
type TwoLabels = [(&'static str, &'static str); 2];

/// Requests tracked per connection at most: a client that keeps more
/// unanswered is taken as busy until it ends (memory stays bounded).
const MAX_TRACKED_REQUESTS: usize = 65_536;

pub(crate) struct Metrics {
    registry: Registry,
    connections_opened: Family<Labels, Counter>,
    connections_open: Family<Labels, Gauge>,
    messages: Family<Labels, Counter>,
    message_bytes: Family<Labels, Counter>,
    refusals: Family<TwoLabels, Counter>,
    stream_resumes: Family<Labels, Counter>,
    replayed_events: Counter,
    sessions: Gauge,
    requests_in_flight: Gauge,
    held_output_bytes: Gauge,
    session_observers: Gauge,
    draining: Gauge,
    /// Each open connection's traffic.
    open: Mutex<Vec<Arc<Traffic>>>,
}

/// The direction a message crossed the server in.
#[derive(Clone, Copy)]
pub(crate) enum Direction {
    ToAgent,
    ToClient,
}

impl Direction {
    fn label(self) -> Labels {
        [(
            "direction",
            match self {
                Self::ToAgent => "to_agent",
                Self::ToClient => "to_client",
            },
        )]
    }
}

fn transport_label(transport: PeerTransport) -> Labels {
    [(
        "transport",
        match transport {
            PeerTransport::WebSocket => "websocket",
            PeerTransport::StreamableHttp => "streamable_http",
        },
    )]
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut metrics = Self {
            registry: Registry::with_prefix("acp"),
            connections_opened: Family::default(),
            connections_open: Family::default(),
            messages: Family::default(),
            message_bytes: Family::default(),
            refusals: Family::default(),
            stream_resumes: Family::default(),
            replayed_events: Counter::default(),
            sessions: Gauge::default(),
            requests_in_flight: Gauge::default(),
            held_output_bytes: Gauge::default(),
            session_observers: Gauge::default(),
            draining: Gauge::default(),
            open: Mutex::new(Vec::new()),
        };
        let registry = &mut metrics.registry;
        registry.register(
            "connections_opened",
            "Connections opened (each with its own agent), by transport",
            metrics.connections_opened.clone(),
        );
        registry.register(
            "connections_open",
            "Connections open now, by transport",
            metrics.connections_open.clone(),
        );
        registry.register(
            "messages",
            "JSON-RPC messages relayed, by direction",
            metrics.messages.clone(),
        );
        registry.register(
            "message_bytes",
            "Bytes of JSON-RPC messages relayed, by direction",
            metrics.message_bytes.clone(),
        );
        registry.register(
            "refusals",
            "Requests refused before reaching an agent, by HTTP status and reason",
            metrics.refusals.clone(),
        );
        registry.register(
            "stream_resumes",
            "Streamable HTTP event streams reopened with Last-Event-ID, by outcome",
            metrics.stream_resumes.clone(),
        );
        registry.register(
            "replayed_events",
            "Events sent again to clients that resumed a broken stream",
            metrics.replayed_events.clone(),
        );
        registry.register(
            "sessions",
            "Sessions agents opened on the connections open now",
            metrics.sessions.clone(),
        );
        registry.register(
            "requests_in_flight",
            "Client requests the agents have not answered yet",
            metrics.requests_in_flight.clone(),
        );
        registry.register(
            "held_output_bytes",
            "Streamable HTTP output held for clients and not sent yet",
            metrics.held_output_bytes.clone(),
        );
        registry.register(
            "session_observers",
            "Clients attached to another connection's session as observers",
            metrics.session_observers.clone(),
        );
        registry.register(
            "draining",
            "1 while the server drains (takes no new connection)",
            metrics.draining.clone(),
        );
        metrics
    }

    /// A connection opened: its traffic, counted until [`Metrics::closed`].
    pub(crate) fn opened(&self, transport: PeerTransport) -> Arc<Traffic> {
        let label = transport_label(transport);
        self.connections_opened.get_or_create(&label).inc();
        self.connections_open.get_or_create(&label).inc();
        let traffic = Arc::new(Traffic {
            transport,
            state: Mutex::default(),
            idle: Notify::new(),
            drain: CancellationToken::new(),
            closed: CancellationToken::new(),
        });
        self.open.lock().unwrap().push(traffic.clone());
        traffic
    }

    pub(crate) fn closed(&self, traffic: &Traffic) {
        traffic.closed.cancel();
        self.connections_open
            .get_or_create(&transport_label(traffic.transport))
            .dec();
        self.open
            .lock()
            .unwrap()
            .retain(|open| !std::ptr::eq(&**open, traffic));
    }

    pub(crate) fn relayed(&self, direction: Direction, bytes: usize) {
        let label = direction.label();
        self.messages.get_or_create(&label).inc();
        self.message_bytes.get_or_create(&label).inc_by(bytes as u64);
    }

    pub(crate) fn refused(&self, status: u16, reason: &'static str) {
        let status = match status {
            401 => "401",
            403 => "403",
            404 => "404",
            410 => "410",
            503 => "503",
            _ => "other",
        };
        self.refusals
            .get_or_create(&[("status", status), ("reason", reason)])
            .inc();
    }

    /// A stream resume: `replayed` events sent again, or refused.
    pub(crate) fn resumed(&self, replayed: Option<usize>) {
        let outcome = if replayed.is_some() { "resumed" } else { "refused" };
        self.stream_resumes.get_or_create(&[("outcome", outcome)]).inc();
        self.replayed_events.inc_by(replayed.unwrap_or(0) as u64);
    }

    /// Every open connection's traffic.
    pub(crate) fn open_connections(&self) -> Vec<Arc<Traffic>> {
        self.open.lock().unwrap().clone()
    }

    /// The text of `/metrics`, with the gauges read now.
    pub(crate) fn encode(&self, held: Held, draining: bool) -> String {
        let (mut sessions, mut in_flight) = (0, 0);
        for traffic in self.open_connections() {
            let state = traffic.state.lock().unwrap();
            sessions += state.sessions.len();
            in_flight += state.in_flight.len();
        }
        self.sessions.set(sessions as i64);
        self.requests_in_flight.set(in_flight as i64);
        self.held_output_bytes.set(held.output_bytes as i64);
        self.session_observers.set(held.observers as i64);
        self.draining.set(i64::from(draining));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).expect("writing to a String");
        text
    }
}

/// What the server holds besides its connections' traffic, when the
/// metrics are read.
pub(crate) struct Held {
    /// Streamable HTTP output held for clients.
    pub(crate) output_bytes: usize,
    /// Clients observing another connection's session.
    pub(crate) observers: usize,
}

/// One connection's traffic, as the server relays it.
pub(crate) struct Traffic {
    transport: PeerTransport,
    state: Mutex<TrafficState>,
    /// Woken when the last request in flight is answered.
    idle: Notify,
    /// Cancelled when a draining server ends this connection.
    pub(crate) drain: CancellationToken,
    /// Cancelled when the connection has ended.
    pub(crate) closed: CancellationToken,
}

/// What a relay of messages counts them with.
#[derive(Clone)]
pub(crate) struct Tap {
    pub(crate) traffic: Arc<Traffic>,
    pub(crate) metrics: Arc<Metrics>,
}

#[derive(Default)]
struct TrafficState {
    in_flight: HashSet<RequestId>,
    /// More requests than could be tracked: busy until the end.
    untracked: bool,
    sessions: HashSet<String>,
}

impl Traffic {
    /// A message of `bytes` on its way to the agent, as peeked.
    pub(crate) fn to_agent(&self, metrics: &Metrics, bytes: usize, peeked: Option<&Peek>) {
        metrics.relayed(Direction::ToAgent, bytes);
        let Some(peeked) = peeked else { return };
        if let (Kind::Request, Some(id)) = (peeked.kind, &peeked.id) {
            let mut state = self.state.lock().unwrap();
            if state.in_flight.len() < MAX_TRACKED_REQUESTS {
                state.in_flight.insert(id.clone());
            } else {
                state.untracked = true;
            }
        }
    }

    /// A message of `bytes` on its way to the client, as peeked.
    pub(crate) fn to_client(&self, metrics: &Metrics, bytes: usize, peeked: Option<&Peek>) {
        metrics.relayed(Direction::ToClient, bytes);
        let Some(peeked) = peeked else { return };
        if peeked.kind != Kind::Response {
            return;
        }
        let mut state = self.state.lock().unwrap();
        if let Some(id) = &peeked.id {
            if state.in_flight.remove(id) && state.in_flight.is_empty() {
                self.idle.notify_waiters();
            }
        }
        if let Some(session) = &peeked.result_session {
            state.sessions.insert(session.clone());
        }
    }

    /// Until the agent has answered every request of the client's.
    pub(crate) async fn until_idle(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            {
                let state = self.state.lock().unwrap();
                if state.in_flight.is_empty() && !state.untracked {
                    return;
                }
            }
            idle.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::peek::peek;

    fn held(output_bytes: usize) -> Held {
        Held {
            output_bytes,
            observers: 2,
        }
    }

    fn to_agent(metrics: &Metrics, traffic: &Traffic, message: &[u8]) {
        traffic.to_agent(metrics, message.len(), peek(message).as_ref());
    }

    #[test]
    fn traffic_tracks_requests_until_answered_and_the_sessions_opened() {
        let metrics = Metrics::new();
        let traffic = metrics.opened(PeerTransport::WebSocket);
        to_agent(
            &metrics,
            &traffic,
            br#"{"jsonrpc":"2.0","id":1,"method":"open","params":{}}"#,
        );
        to_agent(&metrics, &traffic, br#"{"jsonrpc":"2.0","method":"note"}"#);
        let text = metrics.encode(held(7), false);
        assert!(text.contains("acp_requests_in_flight 1\n"), "{text}");
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#;
        traffic.to_client(&metrics, answer.len(), peek(answer).as_ref());
        metrics.refused(401, "a valid bearer token is required");
        let text = metrics.encode(held(7), true);
        for line in [
            "acp_requests_in_flight 0\n",
            "acp_sessions 1\n",
            "acp_held_output_bytes 7\n",
            "acp_draining 1\n",
            "acp_session_observers 2\n",
            "acp_messages_total{direction=\"to_agent\"} 2\n",
            "acp_messages_total{direction=\"to_client\"} 1\n",
            "acp_connections_open{transport=\"websocket\"} 1\n",
            "acp_refusals_total{status=\"401\",reason=\"a valid bearer token is required\"} 1\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        metrics.closed(&traffic);
        assert!(metrics
            .encode(held(0), false)
            .contains("acp_connections_open{transport=\"websocket\"} 0\n"));
        assert!(metrics.open_connections().is_empty());
    }
}
