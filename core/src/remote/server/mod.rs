//! One server for both remote transports on one endpoint: a WebSocket
//! upgrade there is a WebSocket connection, and POST, GET and DELETE there
//! are Streamable HTTP (streamable.rs). Before anything reaches an agent the
//! path (404), the bearer token (401) and, for a new connection, a free
//! slot (503, also while draining) are checked. TLS, when configured, is
//! terminated here. Beside the endpoint: a liveness check, a readiness
//! check and Prometheus metrics (metrics.rs), for operators.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::{resumable, websocket, Lines, ServerTls, BRIDGE_BUFFER};
use crate::framing::DEFAULT_MAX_MESSAGE_SIZE;

mod attach;
mod mailbox;
pub(crate) mod metrics;
mod refusal_body;
mod streamable;
mod websocket_resume;

pub use refusal_body::RefusalBody;

pub use attach::ATTACH_META;
use metrics::{Metrics, Tap, Traffic};

/// The path served by default (the official SDK's examples use it too).
pub const DEFAULT_PATH: &str = "/acp";

/// The liveness check's path by default ([`ServeOptions::health_path`]).
pub const DEFAULT_HEALTH_PATH: &str = "/healthz";

/// The readiness check's path by default ([`ServeOptions::ready_path`]).
pub const DEFAULT_READY_PATH: &str = "/readyz";

/// The metrics' path by default ([`ServeOptions::metrics_path`]).
pub const DEFAULT_METRICS_PATH: &str = "/metrics";

/// Default for [`ServeOptions::output_stall_timeout`] (the tables' `defaults`).
pub const DEFAULT_SERVER_STALL_TIMEOUT: Duration = crate::tables::defaults::SERVER_OUTPUT_STALL_TIMEOUT;

/// How long a TLS handshake or a request's headers may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`Server::shutdown`] waits for connections to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Settings for [`Server`] and [`serve`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The endpoint (default [`DEFAULT_PATH`]); other paths get 404.
    pub path: String,
    /// Required as `Authorization: Bearer <token>`; otherwise 401, and
    /// nothing reaches the agent.
    pub bearer_token: Option<String>,
    /// Connections open at once, both transports together; beyond it 503
    /// (default 1024).
    pub max_connections: usize,
    /// The largest message a client may send (default 64 MiB): a larger
    /// WebSocket frame closes its socket (1009), a larger POST gets 413.
    pub max_message_size: usize,
    /// Drop a connection whose client takes nothing for this long while
    /// output waits for it (default 60 s, as the official TypeScript
    /// server's `maxOutputStallMs`; None: wait for ever).
    pub output_stall_timeout: Option<Duration>,
    /// Streamable HTTP: output held for one connection's client, in bytes,
    /// before the agent's output is no longer read and its requests wait
    /// (default 64 MiB, as the official server's `maxBufferedBytes`).
    pub max_buffered_bytes: usize,
    /// Streamable HTTP: the longest session id (its header, or a
    /// message's `sessionId`) or string request id a client may send, in
    /// bytes; a longer one is answered 400 (default 1024, as the official
    /// server's `maxIdLength`).
    pub max_id_length: usize,
    /// Streamable HTTP: sessions of one connection whose output waits for
    /// a client to read it (a session stream never opened, or left with
    /// output queued); one more ends the connection (default 1024, as the
    /// official server's `maxBufferedSessionStreams`). Open streams are not
    /// counted: each is a request the client holds.
    pub max_buffered_session_streams: usize,
    /// Output kept per connection after it was sent (default 4 MiB): the
    /// events of a Streamable HTTP connection and the messages of a
    /// resumable WebSocket, so that a client whose stream or socket broke
    /// and that comes back with `Last-Event-ID` gets what it lost; a resume
    /// needing more than was kept is answered 410 and ends the connection.
    pub max_replay_bytes: usize,
    /// End a Streamable HTTP connection whose client has had no event
    /// stream open and sent nothing for this long, and a resumable
    /// WebSocket connection whose socket broke and was not resumed this
    /// long (default 60 s; None: keep it until DELETE, or the server
    /// stops). A WebSocket the client did not ask to resume ends with its
    /// socket (docs/websocket-resume.md).
    pub idle_timeout: Option<Duration>,
    /// Serve `wss://` and `https://` with this certificate.
    pub tls: Option<ServerTls>,
    /// A check of the caller's own, after the token's: a request it refuses
    /// gets 403 and reaches no agent (every request of a connection is
    /// checked, the WebSocket upgrade and each HTTP request alike).
    pub authorize: Option<Authorize>,
    /// Told of every request refused before it reached an agent (404, 401,
    /// 403, 503), for a server's log.
    pub on_refused: Option<OnRefused>,
    /// A `GET` here says the server is alive, for a liveness probe
    /// (default [`DEFAULT_HEALTH_PATH`]; None: none): always 200, with
    /// `{"status":S,"connections":N,"maxConnections":M}`, S being `"ok"`,
    /// `"full"` (every slot taken) or `"draining"`. It needs no token
    /// (probes carry none) and tells nothing but those counts; the ACP path
    /// wins if both are the same.
    pub health_path: Option<String>,
    /// A `GET` here says whether the server takes new connections, for a
    /// load balancer's health check or a readiness probe (default
    /// [`DEFAULT_READY_PATH`]; None: none): the same body as the liveness
    /// check's, 200 when `"ok"` and 503 when `"full"` or `"draining"`.
    pub ready_path: Option<String>,
    /// A `GET` here answers the server's metrics in the Prometheus text
    /// format (default [`DEFAULT_METRICS_PATH`]; None: none): connections,
    /// sessions, messages and bytes each way, refusals by reason, stream
    /// resumes and replayed events, requests in flight, held output. With
    /// a `bearer_token`, it is required here too.
    pub metrics_path: Option<String>,
    /// Let several clients share a session (default false): a client whose
    /// `session/load` names a session live on another connection of this
    /// server is attached to it as an observer, with its history so far
    /// (a connection's sessions keep `max_replay_bytes` of it together),
    /// every later update,
    /// and a copy of each permission request (the first answer wins); it
    /// may not prompt. docs/session-attach.md. Every message then passes
    /// one more task, so it is off unless asked for.
    pub attach: bool,
    /// While a connection has nothing to say, send a comment on each idle
    /// Streamable HTTP event stream and a ping on each WebSocket this often
    /// (default 15 s, as the official server's keep-alive; None: never). A
    /// WebSocket from which nothing (a pong included) came for three
    /// intervals is taken as broken: a resumable one waits for its client
    /// (`idle_timeout`), another ends, and its agent with it.
    pub keep_alive_interval: Option<Duration>,
    /// How refusals (400 and up) read: plain text (the default, as the
    /// official TypeScript server's), or `{"error": reason}` as the official
    /// Python server's (which also answers a JSON-RPC batch 501, not 400).
    /// A JSON-RPC error answer is JSON either way.
    pub refusal_body: RefusalBody,
}

/// A request [`Server`] refused, as [`ServeOptions::on_refused`] hears of it.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The client's address.
    pub address: SocketAddr,
    /// The HTTP status it was answered with.
    pub status: u16,
    /// Why, in the words of the response's body.
    pub reason: &'static str,
}

/// A refusal listener. See [`ServeOptions::on_refused`].
#[derive(Clone)]
pub struct OnRefused(pub Arc<dyn Fn(&Refusal) + Send + Sync>);

impl std::fmt::Debug for OnRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnRefused(..)")
    }
}

/// What [`ServeOptions::authorize`] sees of a request.
#[derive(Debug)]
pub struct AuthRequest<'a> {
    /// The client's address.
    pub address: SocketAddr,
    /// The request's headers (`Authorization`, cookies, ...).
    pub headers: &'a hyper::HeaderMap,
}

/// A request check: true lets the request through. See
/// [`ServeOptions::authorize`].
#[derive(Clone)]
pub struct Authorize(pub Arc<dyn Fn(&AuthRequest<'_>) -> bool + Send + Sync>);

impl std::fmt::Debug for Authorize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorize(..)")
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.to_owned(),
            bearer_token: None,
            max_connections: crate::tables::defaults::MAX_CONNECTIONS,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            output_stall_timeout: Some(DEFAULT_SERVER_STALL_TIMEOUT),
            max_buffered_bytes: crate::DEFAULT_MAX_BUFFERED_BYTES,
            max_replay_bytes: crate::tables::defaults::MAX_REPLAY_BYTES,
            max_id_length: crate::tables::defaults::MAX_ID_LENGTH,
            max_buffered_session_streams: crate::tables::defaults::MAX_BUFFERED_SESSION_STREAMS,
            idle_timeout: Some(crate::tables::defaults::IDLE_TIMEOUT),
            tls: None,
            authorize: None,
            on_refused: None,
            health_path: Some(DEFAULT_HEALTH_PATH.to_owned()),
            ready_path: Some(DEFAULT_READY_PATH.to_owned()),
            metrics_path: Some(DEFAULT_METRICS_PATH.to_owned()),
            attach: false,
            keep_alive_interval: Some(crate::tables::defaults::KEEP_ALIVE_INTERVAL),
            refusal_body: RefusalBody::Text,
        }
    }
}

/// Who connected, for the callback of [`Server`].
#[derive(Debug, Clone)]
pub struct Peer {
    /// The client's address.
    pub address: SocketAddr,
    /// Which transport it connected with.
    pub transport: PeerTransport,
}

/// The transport of a served connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerTransport {
    /// WebSocket (`ws://` or `wss://`).
    WebSocket,
    /// Streamable HTTP (`http://` or `https://`).
    StreamableHttp,
}

type OnConnection = Arc<dyn Fn(Lines, Peer) + Send + Sync>;

/// What every request of a server shares.
struct Shared {
    options: ServeOptions,
    on_connection: OnConnection,
    /// One permit per open connection, both transports.
    slots: Arc<Semaphore>,
    shutdown: CancellationToken,
    /// Cancelled when draining starts: no new connection is taken.
    draining: CancellationToken,
    http: streamable::Registry,
    /// Resumable WebSocket connections, by id.
    websockets: Arc<websocket_resume::Registry>,
    metrics: Arc<Metrics>,
    /// Live sessions and their clients, with [`ServeOptions::attach`].
    board: Option<Arc<attach::Board>>,
}

impl Shared {
    /// Hand a new connection's lines to the callback (through a relay
    /// when sessions may be shared).
    fn hand_over(&self, lines: Lines, peer: Peer) {
        let lines = match &self.board {
            Some(board) => attach::relay(board.clone(), lines),
            None => lines,
        };
        (self.on_connection)(lines, peer);
    }
}

/// A connection's hold on the server: its slot, and its traffic, counted
/// until the hold is dropped (when the connection has ended).
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
    tap: Tap,
}

impl Slot {
    fn tap(&self) -> Tap {
        self.tap.clone()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.tap.metrics.closed(&self.tap.traffic);
    }
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A running server. Dropping it leaves it running; [`Server::shutdown`]
/// stops it.
pub struct Server {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    accepting: tokio::task::JoinHandle<io::Result<()>>,
}

impl Server {
    /// Listen on `address` and serve: each connection is handed to
    /// `on_connection` (on a runtime task: it must not block) as a
    /// [`Lines`] stream, to wrap in `Transport::from_stream`.
    pub async fn bind<F>(
        address: impl ToSocketAddrs,
        options: ServeOptions,
        on_connection: F,
    ) -> io::Result<Self>
    where
        F: Fn(Lines, Peer) + Send + Sync + 'static,
    {
        Self::from_listener(TcpListener::bind(address).await?, options, on_connection)
    }

    /// Serve on a listener of the caller's (call within a tokio runtime).
    pub fn from_listener<F>(
        listener: TcpListener,
        options: ServeOptions,
        on_connection: F,
    ) -> io::Result<Self>
    where
        F: Fn(Lines, Peer) + Send + Sync + 'static,
    {
        let local_addr = listener.local_addr()?;
        let board = options
            .attach
            .then(|| Arc::new(attach::Board::new(options.max_replay_bytes)));
        let shared = Arc::new(Shared {
            board,
            slots: Arc::new(Semaphore::new(options.max_connections.max(1))),
            options,
            on_connection: Arc::new(on_connection),
            shutdown: CancellationToken::new(),
            draining: CancellationToken::new(),
            http: streamable::Registry::default(),
            websockets: Arc::default(),
            metrics: Arc::new(Metrics::new()),
        });
        let accepting = tokio::spawn(accept(listener, shared.clone()));
        Ok(Self {
            local_addr,
            shared,
            accepting,
        })
    }

    /// The address served (with port 0, the port the system chose).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The WebSocket URL of the endpoint (`ws://` or `wss://`).
    pub fn websocket_url(&self) -> String {
        self.url("ws")
    }

    /// The Streamable HTTP URL of the endpoint (`http://` or `https://`).
    pub fn http_url(&self) -> String {
        self.url("http")
    }

    /// `scheme://address/path`, the scheme's secure form (`wss`, `https`)
    /// with TLS.
    fn url(&self, scheme: &str) -> String {
        let secure = if self.shared.options.tls.is_some() {
            "s"
        } else {
            ""
        };
        format!(
            "{scheme}{secure}://{}{}",
            self.local_addr, self.shared.options.path
        )
    }

    /// Connections open now.
    pub fn connections(&self) -> usize {
        self.shared.options.max_connections.max(1) - self.shared.slots.available_permits()
    }

    /// Until accepting fails (the listener's error).
    pub async fn wait(&mut self) -> io::Result<()> {
        match (&mut self.accepting).await {
            Ok(result) => result,
            Err(_) => Ok(()),
        }
    }

    /// Drain, then stop: take no new connection (503, and the readiness
    /// check says `"draining"`), end each connection once its agent has
    /// answered every request of its client's (its input ends; a WebSocket
    /// then closes with 1001), and after `deadline` end what is left as
    /// [`Server::shutdown`] does. Returns when every connection has ended.
    pub async fn drain(self, deadline: Duration) {
        self.shared.draining.cancel();
        for traffic in self.shared.metrics.open_connections() {
            end_when_idle(traffic);
        }
        self.connections_ended(deadline).await;
        self.shutdown().await;
    }

    /// Stop: accept nothing more, end every connection (a WebSocket closes
    /// with 1001, Streamable HTTP streams end), and so every agent's input;
    /// returns when they are done (at most a few seconds).
    pub async fn shutdown(self) {
        self.shared.shutdown.cancel();
        self.accepting.abort();
        self.connections_ended(SHUTDOWN_GRACE).await;
    }

    /// Until every connection has ended (every slot is free), `within` at most.
    async fn connections_ended(&self, within: Duration) {
        let all = self.shared.options.max_connections.max(1) as u32;
        // The permits are let go at once: this only waits for them.
        let _ = tokio::time::timeout(within, self.shared.slots.acquire_many(all)).await;
    }
}

/// Serve on `listener` until it fails; each connection is handed to
/// `on_connection` (see [`Server::bind`]).
pub async fn serve<F>(listener: TcpListener, options: ServeOptions, on_connection: F) -> io::Result<()>
where
    F: Fn(Lines, Peer) + Send + Sync + 'static,
{
    Server::from_listener(listener, options, on_connection)?
        .wait()
        .await
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) -> io::Result<()> {
    loop {
        let (tcp, address) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            match shared.options.tls.clone() {
                None => serve_connection(tcp, address, shared).await,
                Some(tls) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(tls.config);
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => serve_connection(stream, address, shared).await,
                        Ok(Err(error)) => tracing::debug!(%address, %error, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%address, "TLS handshake timed out"),
                    }
                }
            }
        });
    }
}

/// HTTP/1.1 on one accepted stream, until it closes or the server stops.
async fn serve_connection<S>(stream: S, address: SocketAddr, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let shutdown = shared.shutdown.clone();
    let service = hyper::service::service_fn(move |request| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(request, address, shared).await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = shutdown.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
}

async fn handle(request: Request<Incoming>, address: SocketAddr, shared: Arc<Shared>) -> Response<Body> {
    let style = shared.options.refusal_body;
    refusal_body::styled(route(request, address, shared).await, style).await
}

/// `refused`, once what `request` sent was read: a POST refused before its
/// body was read would otherwise be reset under the answer.
pub(super) async fn after_reading(request: Request<Incoming>, refused: Response<Body>) -> Response<Body> {
    super::http_body::discard(request.into_body()).await;
    refused
}

async fn route(request: Request<Incoming>, address: SocketAddr, shared: Arc<Shared>) -> Response<Body> {
    let path = request.uri().path();
    if path != shared.options.path {
        let is = |wanted: &Option<String>| wanted.as_deref() == Some(path);
        if request.method() == hyper::Method::GET {
            if is(&shared.options.health_path) {
                return health(&shared, false);
            }
            if is(&shared.options.ready_path) {
                return health(&shared, true);
            }
            if is(&shared.options.metrics_path) {
                return check_token(&request, address, &shared).unwrap_or_else(|| metrics(&shared));
            }
        }
        let refused = refuse(&shared, address, StatusCode::NOT_FOUND, "no ACP endpoint here");
        return after_reading(request, refused).await;
    }
    if let Some(refused) = check_token(&request, address, &shared) {
        return after_reading(request, refused).await;
    }
    if let Some(authorize) = &shared.options.authorize {
        let check = AuthRequest {
            address,
            headers: request.headers(),
        };
        if !(authorize.0)(&check) {
            let refused = refuse(&shared, address, StatusCode::FORBIDDEN, "forbidden");
            return after_reading(request, refused).await;
        }
    }
    if websocket::is_upgrade(&request) {
        return upgrade(request, address, &shared).await;
    }
    streamable::handle(request, address, &shared).await
}

/// The 401 for a request without the server's bearer token, if it has one.
fn check_token<B>(request: &Request<B>, address: SocketAddr, shared: &Shared) -> Option<Response<Body>> {
    let token = shared.options.bearer_token.as_ref()?;
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    if given.is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes())) {
        return None;
    }
    let mut refused = refuse(
        shared,
        address,
        StatusCode::UNAUTHORIZED,
        "a valid bearer token is required",
    );
    refused
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    Some(refused)
}

/// The liveness check's answer (always 200), or with `ready` the readiness
/// check's (503 unless new connections are taken): connections open, and
/// whether more are taken.
fn health(shared: &Shared, ready: bool) -> Response<Body> {
    // The slots' count (at least 1, as the semaphore was made).
    let max = shared.options.max_connections.max(1);
    let open = max.saturating_sub(shared.slots.available_permits());
    let word = if shared.draining.is_cancelled() || shared.shutdown.is_cancelled() {
        "draining"
    } else if open >= max {
        "full"
    } else {
        "ok"
    };
    let status = if ready && word != "ok" {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let body = format!(r#"{{"status":"{word}","connections":{open},"maxConnections":{max}}}"#);
    let mut response = json(status, body);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The metrics, in the Prometheus text format.
fn metrics(shared: &Shared) -> Response<Body> {
    let draining = shared.draining.is_cancelled() || shared.shutdown.is_cancelled();
    let held = metrics::Held {
        output_bytes: shared.http.held_output_bytes(),
        observers: shared.board.as_ref().map_or(0, |board| board.observers()),
    };
    let text = shared.metrics.encode(held, draining);
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A slot for a new connection over `transport`, or the 503 refusing it
/// (every slot taken, or the server draining).
fn take_slot(
    shared: &Arc<Shared>,
    address: SocketAddr,
    transport: PeerTransport,
) -> Result<Slot, Box<Response<Body>>> {
    let refused = |reason| Box::new(refuse(shared, address, StatusCode::SERVICE_UNAVAILABLE, reason));
    if shared.draining.is_cancelled() {
        return Err(refused("the server is draining"));
    }
    let Ok(permit) = shared.slots.clone().try_acquire_owned() else {
        return Err(refused("too many connections"));
    };
    let traffic = shared.metrics.opened(transport);
    // Draining may have started since the check: this one drains too.
    if shared.draining.is_cancelled() {
        end_when_idle(traffic.clone());
    }
    Ok(Slot {
        _permit: permit,
        tap: Tap {
            traffic,
            metrics: shared.metrics.clone(),
        },
    })
}

/// While draining: end the connection once its agent has answered every
/// request of its client's.
fn end_when_idle(traffic: Arc<Traffic>) {
    tokio::spawn(async move {
        tokio::select! {
            _ = traffic.until_idle() => traffic.drain.cancel(),
            _ = traffic.closed.cancelled() => {}
        }
    });
}

/// Accept a WebSocket upgrade and hand its socket to the callback; or, for
/// a client resuming a connection (`Acp-Connection-Id` and
/// `Last-Event-ID`), carry that connection on over the new socket.
async fn upgrade(
    mut request: Request<Incoming>,
    address: SocketAddr,
    shared: &Arc<Shared>,
) -> Response<Body> {
    let accept = match websocket::accept_key(&request) {
        Ok(accept) => accept,
        Err(why) => return text(StatusCode::BAD_REQUEST, why),
    };
    let header = |name| streamable::header(&request, name);
    let theirs = match header(resumable::LAST_EVENT_ID).map(|n| n.trim().parse::<u64>()) {
        None => None,
        Some(Ok(theirs)) => Some(theirs),
        Some(Err(_)) => return text(StatusCode::BAD_REQUEST, "Last-Event-ID is not a message count"),
    };
    if let Some(id) = header(resumable::CONNECTION_ID) {
        let Some(theirs) = theirs else {
            return text(StatusCode::BAD_REQUEST, "resuming needs Last-Event-ID");
        };
        let id = id.to_owned();
        return resume(request, accept, &id, theirs, shared).await;
    }
    let slot = match take_slot(shared, address, PeerTransport::WebSocket) {
        Ok(slot) => slot,
        Err(refused) => return *refused,
    };
    // A client that sends Last-Event-ID (0) asks for a connection it can
    // come back to: its id goes back in the 101.
    let id = theirs.map(|_| streamable::connection_id());
    let upgrading = hyper::upgrade::on(&mut request);
    let shared_now = shared.clone();
    let resumable = id.clone();
    tokio::spawn(async move {
        let shared = shared_now;
        let upgraded = match upgrading.await {
            Ok(upgraded) => upgraded,
            Err(error) => return tracing::debug!(%address, %error, "WebSocket upgrade failed"),
        };
        let config = websocket::config(shared.options.max_message_size);
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
        let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
        let ending = websocket::Ending {
            keep_alive: shared.options.keep_alive_interval,
            shutdown: Some(shared.shutdown.clone()),
            drain: Some(slot.tap().traffic.drain.clone()),
            tap: Some(slot.tap()),
            release: Some(Box::new(slot)),
        };
        let stall = shared.options.output_stall_timeout;
        match resumable {
            Some(id) => {
                let waiting = shared
                    .websockets
                    .open(id, shared.options.idle_timeout, shared.metrics.clone());
                resumable::run(
                    socket,
                    inner,
                    shared.options.max_replay_bytes,
                    stall,
                    ending,
                    waiting,
                );
            }
            None => websocket::bridge(socket, inner, stall, ending),
        }
        shared.hand_over(
            lines,
            Peer {
                address,
                transport: PeerTransport::WebSocket,
            },
        );
    });
    let mut response = switching_protocols(&accept);
    if let Some(id) = id.and_then(|id| HeaderValue::try_from(id).ok()) {
        response.headers_mut().insert(resumable::CONNECTION_ID, id);
    }
    response
}

/// Carry connection `id` on over the socket of this upgrade, its client
/// having received `theirs` of its messages.
async fn resume(
    mut request: Request<Incoming>,
    accept: String,
    id: &str,
    theirs: u64,
    shared: &Arc<Shared>,
) -> Response<Body> {
    let (received, socket_to) = match shared.websockets.resume(id, theirs).await {
        Ok(resumed) => resumed,
        Err(websocket_resume::Refused::Unknown) => {
            return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id")
        }
        Err(websocket_resume::Refused::Forgotten(why)) => {
            return text(StatusCode::GONE, &format!("the connection ended: {why}"))
        }
    };
    let upgrading = hyper::upgrade::on(&mut request);
    let max_message_size = shared.options.max_message_size;
    tokio::spawn(async move {
        let Ok(upgraded) = upgrading.await else { return };
        let config = websocket::config(max_message_size);
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
        let _ = socket_to.send(socket);
    });
    let mut response = switching_protocols(&accept);
    response
        .headers_mut()
        .insert(resumable::RECEIVED, HeaderValue::from(received));
    response
}

fn switching_protocols(accept: &str) -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) = HeaderValue::try_from(accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

/// Compare secrets in time that does not depend on where they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

fn empty() -> Body {
    Full::new(Bytes::new()).boxed_unsync()
}

/// A plain-text answer (the official server's refusals are text too).
/// Answer `status` with `reason`, and tell [`ServeOptions::on_refused`].
fn refuse(shared: &Shared, address: SocketAddr, status: StatusCode, reason: &'static str) -> Response<Body> {
    shared.metrics.refused(status.as_u16(), reason);
    if let Some(on_refused) = &shared.options.on_refused {
        (on_refused.0)(&Refusal {
            address,
            status: status.as_u16(),
            reason,
        });
    }
    text(status, reason)
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_owned())).boxed_unsync());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// A JSON answer.
fn json(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(super::http_client::JSON),
    );
    response
}
