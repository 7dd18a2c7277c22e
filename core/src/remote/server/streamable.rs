//! The Streamable HTTP server, as the official TypeScript SDK's `AcpServer`
//! speaks it (docs/streamable-http-wire.md): the client POSTs each message;
//! the first, `initialize`, creates the connection (a new agent) and is
//! answered inline with its `Acp-Connection-Id`; everything later is
//! answered 202 and the agent's messages travel on SSE streams: the
//! connection's, and one per session (a message with `params.sessionId`,
//! and the answer to a request that had one). DELETE ends the connection.
//!
//! Every event has an id; a GET with `Last-Event-ID` resumes its stream
//! (mailbox.rs), so a client whose stream broke loses nothing, and the
//! connection, its agent and the agent's work outlive a client that is
//! away for less than `idle_timeout`.
//!
//! The agent's output is read only while the connection holds less than
//! `max_buffered_bytes` for its client, and the client's requests wait for
//! room too, so a client that stops reading bounds what is held for it;
//! one that takes nothing for `output_stall_timeout` meanwhile is dropped.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::mailbox::{Next, Outbox, Refusal as StreamRefusal, StreamKey};
use super::metrics::Tap;
use super::{json, text, Body, Peer, PeerTransport, RefusalBody, Shared, Slot};
use crate::error::{codes, RequestError};
use crate::message::RequestId;
use crate::remote::http_body::{self, BodyError};
use crate::remote::http_client::{CONNECTION_ID, EVENT_STREAM, JSON, LAST_EVENT_ID, SESSION_ID};
use crate::remote::peek::{self, Kind, Peek};
use crate::remote::{one_line, sse, BRIDGE_BUFFER};
use crate::schema::method;

/// The open connections, by id.
#[derive(Default)]
pub(super) struct Registry {
    connections: Mutex<HashMap<String, Arc<Connection>>>,
}

impl Registry {
    fn get(&self, id: &str) -> Option<Arc<Connection>> {
        self.connections.lock().unwrap().get(id).cloned()
    }

    /// Output held for clients and not sent yet, all connections together.
    pub(super) fn held_output_bytes(&self) -> usize {
        let connections: Vec<_> = self.connections.lock().unwrap().values().cloned().collect();
        connections
            .iter()
            .map(|connection| connection.routes.lock().unwrap().outbox.buffered())
            .sum()
    }
}

/// One client's connection to its agent.
struct Connection {
    id: String,
    /// The agent's input; None once the connection ended.
    to_agent: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    routes: Mutex<Routes>,
    /// Woken when output was taken (room for more).
    room: Notify,
    /// Cancelled when the connection ends: streams stop, output is dropped.
    ended: CancellationToken,
    /// When the client last sent something.
    last_post: Mutex<Instant>,
    /// Counts what crosses.
    tap: Tap,
}

struct Routes {
    outbox: Outbox,
    /// Where the answer to each of the client's requests goes.
    client_requests: HashMap<RequestId, StreamKey>,
    /// Where each of the agent's requests went: its answer must say so.
    agent_requests: HashMap<RequestId, StreamKey>,
}

pub(super) async fn handle(
    request: Request<Incoming>,
    address: SocketAddr,
    shared: &Arc<Shared>,
) -> Response<Body> {
    match *request.method() {
        Method::POST => post(request, address, shared).await,
        Method::GET => get(request, shared),
        Method::DELETE => delete(request, shared),
        _ => {
            // RFC 9110: a 405 says which methods the endpoint has.
            let mut refused = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            refused
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            refused
        }
    }
}

pub(super) fn header<'a, B>(request: &'a Request<B>, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|value| value.to_str().ok())
}

/// A request refused: its status and plain-text reason.
struct Refused(StatusCode, String);

impl Refused {
    fn bad(reason: &str) -> Self {
        Self(StatusCode::BAD_REQUEST, reason.to_owned())
    }

    fn response(self) -> Response<Body> {
        text(self.0, &self.1)
    }
}

/// The connection a request names, or why not.
fn connection_of<B>(request: &Request<B>, shared: &Shared) -> Result<Arc<Connection>, Refused> {
    let id = header(request, CONNECTION_ID).ok_or_else(|| Refused::bad("Missing Acp-Connection-Id"))?;
    shared
        .http
        .get(id)
        .ok_or_else(|| Refused(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id".to_owned()))
}

fn json_rpc_error(status: StatusCode, error: RequestError) -> Response<Body> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error});
    json(status, body.to_string())
}

async fn post(request: Request<Incoming>, address: SocketAddr, shared: &Arc<Shared>) -> Response<Body> {
    if http_body::media_type(request.headers()).as_deref() != Some(JSON) {
        let refused = text(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
        return super::after_reading(request, refused).await;
    }
    let (parts, body) = request.into_parts();
    let max = shared.options.max_message_size;
    let mut message = match http_body::read_limited(&parts.headers, body, max).await {
        Ok(body) => body.to_vec(),
        Err(BodyError::TooLarge) => {
            return text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("Request body exceeds {max} bytes"),
            )
        }
        Err(BodyError::Unreadable) => {
            return text(StatusCode::BAD_REQUEST, "the request body could not be read")
        }
    };
    let request = Request::from_parts(parts, ());
    if serde_json::from_slice::<serde::de::IgnoredAny>(&message).is_err() {
        return json_rpc_error(
            StatusCode::BAD_REQUEST,
            RequestError::parse_error().with_message_detail("the body is not JSON"),
        );
    }
    let Some(peeked) = peek::peek(&message) else {
        let batch = message.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        if batch && shared.options.refusal_body == RefusalBody::Json {
            return text(StatusCode::NOT_IMPLEMENTED, "JSON-RPC batches are not supported");
        }
        let why = if batch {
            "JSON-RPC batches are not supported"
        } else {
            "a JSON-RPC message is an object"
        };
        return json_rpc_error(
            StatusCode::BAD_REQUEST,
            RequestError::invalid_request().with_message_detail(why),
        );
    };
    one_line(&mut message);
    message.push(b'\n');
    let session_header = header(&request, SESSION_ID);
    if peeked.kind == Kind::Request && peeked.method.as_deref() == Some(method::INITIALIZE) {
        if header(&request, CONNECTION_ID).is_some() {
            return text(
                StatusCode::BAD_REQUEST,
                "Initialize not allowed on existing connection",
            );
        }
        return initialize(message, peeked, address, shared).await;
    }
    let connection = match connection_of(&request, shared) {
        Ok(connection) => connection,
        Err(refused) => return refused.response(),
    };
    *connection.last_post.lock().unwrap() = Instant::now();
    if let Err(refused) = route_inbound(&connection, &peeked, session_header, shared.options.max_id_length) {
        return refused.response();
    }
    if peeked.kind != Kind::Notification && !connection.wait_for_room(shared).await {
        return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
    }
    let tap = &connection.tap;
    tap.traffic
        .to_agent(&tap.metrics, message.len() - 1, Some(&peeked));
    if !connection.to_agent(&message).await {
        return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
    }
    let mut accepted = Response::new(Body::default());
    *accepted.status_mut() = StatusCode::ACCEPTED;
    accepted
}

/// Check a client message's session against its header and note where its
/// answer goes.
fn route_inbound(
    connection: &Connection,
    peeked: &Peek,
    session_header: Option<&str>,
    max_id_length: usize,
) -> Result<(), Refused> {
    let too_long = |what: &str| Refused::bad(&format!("{what} exceeds maxIdLength ({max_id_length})"));
    let long_session = session_header.is_some_and(|s| s.len() > max_id_length)
        || peeked.session.as_ref().is_some_and(|s| s.len() > max_id_length);
    if long_session {
        return Err(too_long("Session ID"));
    }
    if matches!(&peeked.id, Some(RequestId::Str(id)) if id.len() > max_id_length) {
        return Err(too_long("Request ID"));
    }
    let mut routes = connection.routes.lock().unwrap();
    match peeked.kind {
        Kind::Response => {
            let Some(id) = &peeked.id else { return Ok(()) };
            if let Some(Some(session)) = routes.agent_requests.get(id) {
                match session_header {
                    None => return Err(Refused::bad("Missing Acp-Session-Id")),
                    Some(given) if given != session => return Err(Refused::bad("Mismatched Acp-Session-Id")),
                    Some(_) => {}
                }
            }
            routes.agent_requests.remove(id);
        }
        Kind::Request | Kind::Notification | Kind::Other => {
            let route = match (session_header, peeked.session.as_deref()) {
                (Some(given), Some(named)) if given != named => {
                    return Err(Refused::bad("Mismatched Acp-Session-Id"))
                }
                (None, Some(_)) => return Err(Refused::bad("Missing Acp-Session-Id")),
                (given, named) => given.or(named).map(str::to_owned),
            };
            if let (Kind::Request, Some(id)) = (peeked.kind, &peeked.id) {
                // session/load's answer too goes to the session's stream, after the
                // history the agent replays there (the official server sends it on
                // the connection's stream, so a client may see it before the history).
                routes.client_requests.insert(id.clone(), route);
            }
        }
    }
    Ok(())
}

/// The first POST: a new agent, its answer to `initialize` inline.
async fn initialize(
    message: Vec<u8>,
    peeked: Peek,
    address: SocketAddr,
    shared: &Arc<Shared>,
) -> Response<Body> {
    let Some(request_id) = peeked.id.clone().filter(|id| *id != RequestId::Null) else {
        return text(StatusCode::BAD_REQUEST, "Initialize request must include an ID");
    };
    let slot = match super::take_slot(shared, address, PeerTransport::StreamableHttp) {
        Ok(slot) => slot,
        Err(refused) => return *refused,
    };
    let tap = slot.tap();
    tap.traffic
        .to_agent(&tap.metrics, message.len() - 1, Some(&peeked));
    let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
    shared.hand_over(
        lines,
        Peer {
            address,
            transport: PeerTransport::StreamableHttp,
        },
    );
    let (from_agent, mut to_agent) = tokio::io::split(inner);
    let mut from_agent = BufReader::new(from_agent);
    let failed = |why: &str| {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": request_id, "error": RequestError::new(codes::INTERNAL_ERROR, "Initialize failed").with_data(why)});
        json(StatusCode::INTERNAL_SERVER_ERROR, body.to_string())
    };
    if to_agent.write_all(&message).await.is_err() {
        return failed("the agent did not take the initialize request");
    }
    let mut answer = Vec::new();
    let read = tokio::select! {
        read = from_agent.read_until(b'\n', &mut answer) => read,
        _ = shared.shutdown.cancelled() => return failed("the server is shutting down"),
    };
    if !matches!(read, Ok(n) if n > 0) {
        return failed("the agent ended before answering initialize");
    }
    let answered = peek::peek(&answer)
        .filter(|p| p.kind == Kind::Response)
        .and_then(|p| p.id);
    if answered.as_ref() != Some(&request_id) {
        return failed("Expected initialize response from agent");
    }
    let answer_peeked = peek::peek(&answer);
    let answer_bytes = answer.strip_suffix(b"\n").unwrap_or(&answer).len();
    tap.traffic
        .to_client(&tap.metrics, answer_bytes, answer_peeked.as_ref());
    let id = connection_id();
    let connection = Arc::new(Connection {
        id: id.clone(),
        to_agent: tokio::sync::Mutex::new(Some(to_agent)),
        routes: Mutex::new(Routes {
            outbox: Outbox::new(shared.options.max_replay_bytes),
            client_requests: HashMap::new(),
            agent_requests: HashMap::new(),
        }),
        room: Notify::new(),
        ended: shared.shutdown.child_token(),
        last_post: Mutex::new(Instant::now()),
        tap,
    });
    shared
        .http
        .connections
        .lock()
        .unwrap()
        .insert(id.clone(), connection.clone());
    tokio::spawn(route_outbound(
        connection.clone(),
        from_agent,
        shared.clone(),
        slot,
    ));
    if let Some(idle) = shared.options.idle_timeout {
        tokio::spawn(watch_idle(connection.clone(), idle));
    }
    tokio::spawn(end_input_on_drain(connection));
    let body = answer.strip_suffix(b"\n").unwrap_or(&answer).to_vec();
    let mut response = json(StatusCode::OK, body);
    if let Ok(id) = HeaderValue::try_from(id) {
        response.headers_mut().insert(CONNECTION_ID, id);
    }
    response
}

/// Read the agent's output onto the streams it belongs on, while there is
/// room; clean up when the agent or the connection ends.
async fn route_outbound(
    connection: Arc<Connection>,
    mut from_agent: BufReader<ReadHalf<DuplexStream>>,
    shared: Arc<Shared>,
    slot: Slot,
) {
    let mut line = Vec::new();
    loop {
        if !connection.wait_for_room(&shared).await {
            break;
        }
        line.clear();
        let read = tokio::select! {
            read = from_agent.read_until(b'\n', &mut line) => read,
            _ = connection.ended.cancelled() => break,
        };
        if !matches!(read, Ok(n) if n > 0) {
            // The agent is done: streams deliver what they hold, then end.
            connection.routes.lock().unwrap().outbox.finish();
            break;
        }
        let message = line.strip_suffix(b"\n").unwrap_or(&line);
        if message.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let peeked = peek::peek(message);
        let tap = &connection.tap;
        tap.traffic
            .to_client(&tap.metrics, message.len(), peeked.as_ref());
        let unread_sessions = {
            let mut routes = connection.routes.lock().unwrap();
            let key = route_of(&mut routes, peeked);
            routes.outbox.push(key, message);
            routes.outbox.unread_sessions()
        };
        let max = shared.options.max_buffered_session_streams;
        if unread_sessions > max {
            tracing::warn!(connection = %connection.id, "more than {max} session streams hold unread output: ending the connection");
            connection.ended.cancel();
            break;
        }
    }
    shared.http.connections.lock().unwrap().remove(&connection.id);
    if let Some(mut to_agent) = connection.to_agent.lock().await.take() {
        let _ = to_agent.shutdown().await;
    }
    // Streams that still deliver keep the connection's slot until they finish.
    if !connection.ended.is_cancelled() {
        let _ = tokio::time::timeout(
            shared.options.output_stall_timeout.unwrap_or(Duration::MAX),
            connection.drained(),
        )
        .await;
    }
    drop(slot);
}

/// Which stream an agent message goes on.
fn route_of(routes: &mut Routes, peeked: Option<Peek>) -> StreamKey {
    let peeked = peeked?;
    match (peeked.kind, peeked.id) {
        (Kind::Response, Some(id)) => routes.client_requests.remove(&id).flatten(),
        (Kind::Request, Some(id)) => {
            routes.agent_requests.insert(id, peeked.session.clone());
            peeked.session
        }
        (Kind::Notification, _) => peeked.session,
        _ => None,
    }
}

/// When a draining server ends the connection: the agent's input ends, and
/// the streams deliver what the agent still sends, then end.
async fn end_input_on_drain(connection: Arc<Connection>) {
    tokio::select! {
        _ = connection.tap.traffic.drain.cancelled() => {}
        _ = connection.ended.cancelled() => return,
    }
    if let Some(mut to_agent) = connection.to_agent.lock().await.take() {
        let _ = to_agent.shutdown().await;
    }
}

/// End a connection whose client has gone quiet: no connection stream and
/// nothing sent for `idle`.
async fn watch_idle(connection: Arc<Connection>, idle: Duration) {
    let check_every = (idle / 4).max(Duration::from_millis(10));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(check_every) => {}
            _ = connection.ended.cancelled() => return,
        }
        let unread_since = connection.routes.lock().unwrap().outbox.unread_since();
        let last_post = *connection.last_post.lock().unwrap();
        if unread_since.is_some_and(|since| since.elapsed() >= idle) && last_post.elapsed() >= idle {
            tracing::debug!(connection = %connection.id, "idle: ending the connection");
            connection.ended.cancel();
            return;
        }
    }
}

impl Connection {
    /// Wait while the output held for the client is at the limit. False
    /// when the connection ended meanwhile (or was ended for stalling).
    async fn wait_for_room(&self, shared: &Shared) -> bool {
        let max = shared.options.max_buffered_bytes.max(1);
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            if self.ended.is_cancelled() {
                return false;
            }
            if self.routes.lock().unwrap().outbox.buffered() < max {
                return true;
            }
            let stall = shared.options.output_stall_timeout.unwrap_or(Duration::MAX);
            tokio::select! {
                _ = room => {}
                _ = self.ended.cancelled() => return false,
                _ = tokio::time::sleep(stall) => {
                    tracing::warn!(connection = %self.id, "output stalled: the client took nothing for {} ms", stall.as_millis());
                    self.ended.cancel();
                    return false;
                }
            }
        }
    }

    /// Hand a client message to the agent. False when the connection ended.
    async fn to_agent(&self, message: &[u8]) -> bool {
        let mut to_agent = self.to_agent.lock().await;
        let Some(writer) = to_agent.as_mut() else {
            return false;
        };
        tokio::select! {
            written = writer.write_all(message) => written.is_ok(),
            _ = self.ended.cancelled() => false,
        }
    }

    /// Until every stream has delivered what it holds.
    async fn drained(&self) {
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            if self.routes.lock().unwrap().outbox.buffered() == 0 {
                return;
            }
            tokio::select! {
                _ = room => {}
                _ = self.ended.cancelled() => return,
            }
        }
    }
}

fn get(request: Request<Incoming>, shared: &Arc<Shared>) -> Response<Body> {
    let accepts = header(&request, header::ACCEPT.as_str())
        .is_some_and(|accept| accept.to_ascii_lowercase().contains(EVENT_STREAM));
    if !accepts {
        return text(StatusCode::NOT_ACCEPTABLE, "Not Acceptable");
    }
    let connection = match connection_of(&request, shared) {
        Ok(connection) => connection,
        Err(refused) => return refused.response(),
    };
    let key: StreamKey = header(&request, SESSION_ID).map(str::to_owned);
    let max_id_length = shared.options.max_id_length;
    if key.as_ref().is_some_and(|s| s.len() > max_id_length) {
        return text(
            StatusCode::BAD_REQUEST,
            &format!("Session ID exceeds maxIdLength ({max_id_length})"),
        );
    }
    let resume = match header(&request, LAST_EVENT_ID).map(|id| id.trim().parse::<u64>()) {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(_)) => return text(StatusCode::BAD_REQUEST, "Last-Event-ID is not an event id"),
    };
    let attached = connection.routes.lock().unwrap().outbox.attach(&key, resume);
    if resume.is_some() {
        let replayed = attached.as_ref().ok().map(|reader| reader.replayed);
        shared.metrics.resumed(replayed);
    }
    let reader = match attached {
        Ok(reader) => reader,
        Err(StreamRefusal::AlreadyAttached) => {
            return text(
                StatusCode::CONFLICT,
                "Outbound stream already has an active receiver",
            )
        }
        Err(StreamRefusal::Forgotten) => {
            // Resuming would lose messages: the connection ends instead.
            tracing::warn!(connection = %connection.id, "a resume asked for events no longer kept: ending the connection");
            shared.http.connections.lock().unwrap().remove(&connection.id);
            connection.ended.cancel();
            return text(
                StatusCode::GONE,
                "The events after Last-Event-ID are no longer kept (max_replay_bytes): the connection is ended",
            );
        }
    };
    let reader = StreamReader {
        connection,
        key,
        number: reader.number,
        wake: reader.wake,
        keep_alive: shared.options.keep_alive_interval,
    };
    let events = futures_util::stream::unfold(reader, |reader| async move {
        let event = reader.next().await?;
        Some((Ok::<_, Infallible>(Frame::data(event)), reader))
    });
    let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(events)));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A GET's hold on its stream: events out, and the stream let go when the
/// response ends or its client leaves.
struct StreamReader {
    connection: Arc<Connection>,
    key: StreamKey,
    number: u64,
    wake: Arc<Notify>,
    /// A comment goes out after this long idle.
    keep_alive: Option<Duration>,
}

impl StreamReader {
    /// The next event, a keep-alive comment when idle, None at the end.
    async fn next(&self) -> Option<Bytes> {
        loop {
            let next = self
                .connection
                .routes
                .lock()
                .unwrap()
                .outbox
                .take(&self.key, self.number);
            match next {
                Next::Event(event) => {
                    self.connection.room.notify_waiters();
                    return Some(event);
                }
                Next::Finished => return None,
                Next::Empty => {}
            }
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = self.connection.ended.cancelled() => return None,
                _ = crate::remote::sleep_or_never(self.keep_alive) => return Some(Bytes::from_static(sse::KEEP_ALIVE)),
            }
        }
    }
}

impl Drop for StreamReader {
    fn drop(&mut self) {
        self.connection
            .routes
            .lock()
            .unwrap()
            .outbox
            .detach(&self.key, self.number);
    }
}

fn delete(request: Request<Incoming>, shared: &Arc<Shared>) -> Response<Body> {
    let connection = match connection_of(&request, shared) {
        Ok(connection) => connection,
        Err(refused) => return refused.response(),
    };
    shared.http.connections.lock().unwrap().remove(&connection.id);
    connection.ended.cancel();
    let mut accepted = Response::new(Body::default());
    *accepted.status_mut() = StatusCode::ACCEPTED;
    accepted
}

/// A random (version 4) UUID, as the official server's ids.
pub(super) fn connection_id() -> String {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: the pointer and length are those of `bytes`' unfilled part.
        let got = unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0) };
        if got > 0 {
            filled += got as usize;
        }
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
