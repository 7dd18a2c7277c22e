//! The Streamable HTTP client, as the official TypeScript SDK's
//! `createHttpStream` speaks it (docs/streamable-http-wire.md): every
//! message we send is a POST, one at a time; `initialize`'s answer comes in
//! its POST's response with the connection's id, and everything else the
//! agent sends arrives on SSE streams: one for the connection, opened after
//! `initialize`, and one per session, opened when a session id is first
//! seen and awaited before the session's first POST.
//!
//! The engine sees one stream of lines either way. A request whose POST is
//! refused gets a JSON-RPC error answer from here (-32603, with the HTTP
//! status and body as data); a refusal that means the connection is gone
//! (401, 403, 404, 410), a network error, or a refused notification or
//! answer ends the transport with the reason. Cookies the server sets are
//! sent back, for load balancers' affinity.
//!
//! Beyond the official client: an event stream that breaks is reopened
//! with `Last-Event-ID` (the server sends again what the broken one lost),
//! and a POST whose connection cannot be made is retried, both with backoff
//! for up to `reconnect_timeout`; only then does the transport end.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{Notify, OnceCell};
use tokio_util::sync::CancellationToken;

use super::backoff;
use super::cookies::CookieJar;
use super::endpoint::Endpoint;
use super::failing::Failure;
use super::keep_alive::Silence;
use super::peek::{self, Kind};
use super::{net, sse, ConnectOptions, FarEnd};
use crate::error::{codes, RequestError};
use crate::message::RequestId;
use crate::schema::method;

pub(crate) use crate::tables::headers::{CONNECTION_ID, SESSION_ID};
pub(crate) const JSON: &str = "application/json";
pub(crate) const EVENT_STREAM: &str = "text/event-stream";
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";

/// How much of a refusal's body goes into the error (as the official SDK).
const MAX_ERROR_BODY: usize = 8 * 1024;
/// How long closing waits for the server to take the DELETE.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Check that the server is reachable, then run the client for `inner`
/// (the far end of the engine's lines) in the background.
pub(crate) async fn start(
    endpoint: Endpoint,
    options: ConnectOptions,
    inner: &mut FarEnd,
    failure: Failure,
) -> io::Result<()> {
    let headers = super::request_headers(&options)?;
    let client = Arc::new(Client {
        endpoint,
        options,
        headers,
        state: Mutex::default(),
        post: tokio::sync::Mutex::new(None),
        to_engine: tokio::sync::Mutex::new(None),
        failure,
        done: CancellationToken::new(),
        session_readers: AtomicUsize::new(0),
        session_reader_left: Notify::new(),
    });
    *client.post.lock().await = Some(client.handshake_retrying().await?);
    let (from_engine, to_engine) = tokio::io::split(inner.take());
    *client.to_engine.lock().await = Some(to_engine);
    tokio::spawn(client.run(from_engine));
    Ok(())
}

struct Client {
    endpoint: Endpoint,
    options: ConnectOptions,
    headers: Vec<(HeaderName, HeaderValue)>,
    state: Mutex<State>,
    /// The connection POSTs go over, kept alive between them.
    post: tokio::sync::Mutex<Option<SendRequest<Full<Bytes>>>>,
    /// Where messages for the engine go; None once it has ended.
    to_engine: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    failure: Failure,
    /// Cancelled when the transport ends: every stream stops.
    done: CancellationToken,
    /// Session streams being read, and a wake for when one ends.
    session_readers: AtomicUsize,
    session_reader_left: Notify,
}

#[derive(Default)]
struct State {
    connection_id: Option<String>,
    /// Each session's SSE stream, once asked for: opened, or why not.
    sessions: HashMap<String, Arc<OnceCell<Result<(), Refusal>>>>,
    /// The agent's requests that came on a session's stream: their
    /// answers carry that session's header.
    agent_requests: HashMap<RequestId, String>,
    /// Our requests not answered yet, with their session.
    in_flight: HashMap<RequestId, Option<String>>,
    /// The cookies the server set.
    cookies: CookieJar,
}

/// Why a stream or a POST was refused.
#[derive(Debug, Clone)]
enum Refusal {
    /// 409: the server no longer holds this session for us.
    Detached,
    /// The connection is unusable: end the transport with this reason.
    Fatal(String),
    /// The server could not be reached (or a proxy said it is down): worth
    /// another try while reconnecting.
    Unreachable(String),
}

/// How reading an event stream ended.
enum StreamEnd {
    /// The server ended it, or it failed in a way reconnecting cannot mend.
    Ended(Result<(), String>),
    /// The connection under it broke.
    Broken(String),
    /// The transport ended.
    Done,
}

impl Client {
    /// Move the engine's messages out until it closes or the transport ends.
    async fn run(self: Arc<Self>, from_engine: ReadHalf<DuplexStream>) {
        let mut lines = BufReader::new(from_engine);
        let mut line = Vec::new();
        let ended = loop {
            line.clear();
            let read = tokio::select! {
                read = lines.read_until(b'\n', &mut line) => read,
                _ = self.done.cancelled() => break Ok(()),
            };
            match read {
                Ok(0) | Err(_) => break Ok(()),
                Ok(_) => {}
            }
            let message = line.strip_suffix(b"\n").unwrap_or(&line);
            if message.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let sent = tokio::select! {
                sent = self.send(message) => sent,
                _ = self.done.cancelled() => break Ok(()),
            };
            if let Err(reason) = sent {
                break Err(reason);
            }
        };
        match ended {
            Ok(()) => self.end(None).await,
            Err(reason) => self.end(Some(reason)).await,
        }
    }

    /// Send one message the engine wrote.
    async fn send(self: &Arc<Self>, message: &[u8]) -> Result<(), String> {
        let peeked = peek::peek(message);
        let connected = self.state.lock().unwrap().connection_id.is_some();
        if !connected {
            return self.initialize(message, peeked).await;
        }
        let Some(peeked) = peeked else {
            // Not an object: the server answers it (400, a JSON-RPC error
            // with id null), which ends nothing. That answer goes to the
            // engine, as the agent's would over a pipe.
            let response = self.post(message, None).await?;
            if let Ok(body) = read_body(response.into_body(), MAX_ERROR_BODY).await {
                if peek::peek(&body).is_some_and(|answer| answer.kind == Kind::Response) {
                    self.deliver(body).await;
                }
            }
            return Ok(());
        };
        let session = match peeked.kind {
            Kind::Response => peeked
                .id
                .as_ref()
                .and_then(|id| self.state.lock().unwrap().agent_requests.remove(id)),
            _ => peeked.session.clone(),
        };
        if let Some(session) = &session {
            match self.session_stream(session).await {
                Ok(()) => {}
                Err(Refusal::Detached) => return self.refused_in_session(&peeked, session),
                Err(Refusal::Fatal(reason) | Refusal::Unreachable(reason)) => return Err(reason),
            }
        }
        let request_id = match (peeked.kind, &peeked.id) {
            (Kind::Request, Some(id)) => {
                let mut state = self.state.lock().unwrap();
                state.in_flight.insert(id.clone(), session.clone());
                Some(id.clone())
            }
            _ => None,
        };
        let response = self.post(message, session.as_deref()).await?;
        let status = response.status();
        if status.is_success() {
            // Read to its end (202s are empty), so the connection is kept.
            let _ = read_body(response.into_body(), MAX_ERROR_BODY).await;
            return Ok(());
        }
        let body = error_body(response).await;
        if status == StatusCode::CONFLICT {
            if let Some(session) = &session {
                return self.refused_in_session(&peeked, session);
            }
        }
        let fatal = format!(
            "HTTP {status}{}",
            if body.is_empty() {
                String::new()
            } else {
                format!(": {body}")
            }
        );
        if matches!(status.as_u16(), 401 | 403 | 404 | 410) {
            return Err(fatal);
        }
        match request_id {
            // Only this request fails; the connection carries on.
            Some(id) => {
                self.state.lock().unwrap().in_flight.remove(&id);
                let data = json!({
                    "status": status.as_u16(),
                    "body": serde_json::from_str::<serde_json::Value>(&body).unwrap_or(json!(body)),
                });
                self.answer_error(&id, &format!("ACP POST failed: {fatal}"), Some(data))
                    .await;
                Ok(())
            }
            None => Err(format!("the server refused a message: {fatal}")),
        }
    }

    /// A session's stream or POST got 409: its requests fail, and nothing
    /// else is sent for it.
    fn refused_in_session(self: &Arc<Self>, peeked: &peek::Peek, session: &str) -> Result<(), String> {
        if let (Kind::Request, Some(id)) = (peeked.kind, &peeked.id) {
            let client = self.clone();
            let (id, message) = (
                id.clone(),
                format!("ACP session {session} is detached from this connection (HTTP 409)"),
            );
            // Forget the stream so that session/load or resume can open it again.
            self.state.lock().unwrap().sessions.remove(session);
            tokio::spawn(async move { client.answer_error(&id, &message, None).await });
        }
        Ok(())
    }

    /// The first message: `initialize`, whose answer opens the connection.
    async fn initialize(self: &Arc<Self>, message: &[u8], peeked: Option<peek::Peek>) -> Result<(), String> {
        let request_id = peeked
            .filter(|p| p.kind == Kind::Request && p.method.as_deref() == Some(method::INITIALIZE))
            .and_then(|p| p.id)
            .ok_or("the first message over Streamable HTTP must be an initialize request")?;
        let response = self.post_initialize(message).await?;
        let status = response.status();
        if !status.is_success() {
            let body = error_body(response).await;
            let body = if body.is_empty() {
                String::new()
            } else {
                format!(": {body}")
            };
            return Err(format!("initialize was refused: HTTP {status}{body}"));
        }
        let connection_id = response
            .headers()
            .get(CONNECTION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .ok_or("the initialize response has no Acp-Connection-Id")?;
        let body = read_body(response.into_body(), self.options.max_message_size)
            .await
            .map_err(|error| format!("reading the initialize response: {error}"))?;
        let answered = peek::peek(&body)
            .filter(|p| p.kind == Kind::Response)
            .and_then(|p| p.id);
        self.state.lock().unwrap().connection_id = Some(connection_id);
        if answered.as_ref() != Some(&request_id) {
            return Err("the initialize response does not answer the initialize request".to_owned());
        }
        self.deliver(body).await;
        let client = self.clone();
        tokio::spawn(async move {
            match client.open_stream(None, None).await {
                Ok(body) => client.read_stream(body, None).await,
                Err(Refusal::Fatal(reason) | Refusal::Unreachable(reason)) => client.end(Some(reason)).await,
                Err(Refusal::Detached) => {
                    client
                        .end(Some("the connection stream was refused (409)".into()))
                        .await
                }
            }
        });
        Ok(())
    }

    /// The initialize POST. With `reconnect_timeout`, an answer of 502 to
    /// 504 (a proxy with no backend up; a server draining or full) is tried
    /// again, with backoff: no agent took the message.
    async fn post_initialize(&self, message: &[u8]) -> Result<Response<Incoming>, String> {
        let Some(budget) = self.options.reconnect_timeout else {
            return self.post(message, None).await;
        };
        let attempt = || async {
            match self.post(message, None).await {
                Ok(response) if matches!(response.status().as_u16(), 502..=504) => Err(Ok(response)),
                Ok(response) => Ok(response),
                Err(failed) => Err(Err(failed)),
            }
        };
        let busy = |answer: &Result<Response<Incoming>, String>| answer.is_ok();
        match backoff::keep_trying(budget, &self.done, attempt, busy).await {
            Ok(response) | Err(Some(Ok(response))) => Ok(response),
            Err(Some(Err(failed))) => Err(failed),
            Err(None) => Err("the connection was closed".to_owned()),
        }
    }

    /// Open `session`'s stream unless it is open; wait for its headers.
    async fn session_stream(self: &Arc<Self>, session: &str) -> Result<(), Refusal> {
        let cell = self
            .state
            .lock()
            .unwrap()
            .sessions
            .entry(session.to_owned())
            .or_default()
            .clone();
        cell.get_or_init(|| async {
            let body = self.open_stream(Some(session), None).await?;
            let client = self.clone();
            let session = session.to_owned();
            tokio::spawn(client.read_stream(body, Some(session)));
            Ok(())
        })
        .await
        .clone()
    }

    /// GET an SSE stream, on a connection of its own; with `last_event_id`,
    /// resume it after that event.
    async fn open_stream(
        &self,
        session: Option<&str>,
        last_event_id: Option<&str>,
    ) -> Result<Incoming, Refusal> {
        let unreachable =
            |error: io::Error| Refusal::Unreachable(format!("opening an event stream: {error}"));
        let mut sender = self.handshake().await.map_err(unreachable)?;
        let mut request = self.request(Method::GET, session, Full::default());
        let headers = request.headers_mut();
        headers.insert(header::ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        if let Some(id) = last_event_id.and_then(|id| HeaderValue::try_from(id).ok()) {
            headers.insert(LAST_EVENT_ID, id);
        }
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| unreachable(io::Error::other(e)))?;
        self.keep_cookies(&response);
        match response.status() {
            StatusCode::OK => Ok(response.into_body()),
            StatusCode::CONFLICT if session.is_some() => Err(Refusal::Detached),
            status => {
                let body = error_body(response).await;
                let why = format!("the event stream was refused: HTTP {status}: {body}");
                // A proxy's answers while the server behind it is away.
                let away = matches!(status.as_u16(), 502..=504);
                Err(if away {
                    Refusal::Unreachable(why)
                } else {
                    Refusal::Fatal(why)
                })
            }
        }
    }

    /// Deliver a stream's events until it ends, reopening it where it broke
    /// while `reconnect_timeout` allows. The connection's stream ending
    /// ends the transport; a session's fails the session's requests.
    /// (Boxed: reading a stream may open another, which reads in turn.)
    fn read_stream(self: Arc<Self>, mut body: Incoming, session: Option<String>) -> crate::BoxFuture<()> {
        Box::pin(async move {
            let _reading = session.as_ref().map(|_| SessionReader::new(&self));
            // Ids start at 1: "0" asks for everything the server kept.
            let mut last_event_id = "0".to_owned();
            let ended = loop {
                let broken = match self
                    .read_events(&mut body, session.as_deref(), &mut last_event_id)
                    .await
                {
                    StreamEnd::Done => return,
                    StreamEnd::Ended(ended) => break ended,
                    StreamEnd::Broken(why) => why,
                };
                match self.reopen(session.as_deref(), &last_event_id, broken).await {
                    Ok(reopened) => body = reopened,
                    Err(Refusal::Fatal(reason)) if session.is_some() => return self.end(Some(reason)).await,
                    Err(Refusal::Detached) => break Err("the session was detached (HTTP 409)".to_owned()),
                    Err(Refusal::Fatal(reason) | Refusal::Unreachable(reason)) => break Err(reason),
                }
            };
            match session {
                None => {
                    if ended.is_ok() {
                        self.session_streams_ended().await;
                    }
                    self.end(ended.err()).await
                }
                Some(session) => self.session_stream_ended(&session, ended.err()).await,
            }
        })
    }

    /// The server ended the connection's stream, and ends the sessions'
    /// with it: their last events (the answer to a turn, say) travel on
    /// other sockets and may come a moment later, so wait for them (a
    /// little while at most) before the transport ends.
    async fn session_streams_ended(&self) {
        let all_ended = async {
            loop {
                let left = self.session_reader_left.notified();
                tokio::pin!(left);
                left.as_mut().enable();
                if self.session_readers.load(Ordering::SeqCst) == 0 {
                    return;
                }
                left.await;
            }
        };
        let _ = tokio::time::timeout(CLOSE_GRACE, all_ended).await;
    }

    /// Read one response's events, noting the id of each one delivered.
    async fn read_events(
        self: &Arc<Self>,
        body: &mut Incoming,
        session: Option<&str>,
        last_event_id: &mut String,
    ) -> StreamEnd {
        let mut parser = sse::Parser::new(self.options.max_message_size);
        let mut events = Vec::new();
        // The server's keep-alive comes each interval on an idle stream.
        let mut silence = Silence::new(self.options.keep_alive_interval);
        loop {
            let frame = tokio::select! {
                biased;
                _ = self.done.cancelled() => return StreamEnd::Done,
                frame = body.frame() => frame,
                why = silence.silent() => return StreamEnd::Broken(format!("the event stream: {why}")),
            };
            silence.heard();
            let chunk = match frame {
                None => {
                    let finished = parser.finish(&mut events).map_err(|_| too_large());
                    for event in events.drain(..) {
                        self.receive(event, session).await;
                    }
                    return StreamEnd::Ended(finished);
                }
                Some(Err(error)) => return StreamEnd::Broken(format!("the event stream failed: {error}")),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(chunk) => chunk,
                    Err(_) => continue,
                },
            };
            let fed = parser.feed(&chunk, &mut events);
            for event in events.drain(..) {
                self.receive(event, session).await;
            }
            if let Some(id) = parser.last_event_id() {
                *last_event_id = String::from_utf8_lossy(id).into_owned();
            }
            if fed.is_err() {
                return StreamEnd::Ended(Err(too_large()));
            }
        }
    }

    /// Reopen a broken stream after `last_event_id`, trying again with
    /// backoff while the server cannot be reached, up to `reconnect_timeout`.
    async fn reopen(
        &self,
        session: Option<&str>,
        last_event_id: &str,
        broken: String,
    ) -> Result<Incoming, Refusal> {
        let Some(budget) = self.options.reconnect_timeout else {
            return Err(Refusal::Fatal(broken));
        };
        let unreachable = |refusal: &Refusal| matches!(refusal, Refusal::Unreachable(_));
        let opened = backoff::keep_trying(
            budget,
            &self.done,
            || self.open_stream(session, Some(last_event_id)),
            unreachable,
        )
        .await;
        match opened {
            Ok(body) => Ok(body),
            Err(Some(Refusal::Unreachable(why))) => Err(Refusal::Unreachable(format!(
                "{broken}; not reopened within {} ms: {why}",
                budget.as_millis()
            ))),
            Err(Some(refusal)) => Err(refusal),
            Err(None) => Err(Refusal::Fatal(broken)),
        }
    }

    /// One event from the agent: note what routing needs, then hand it on.
    async fn receive(self: &Arc<Self>, mut message: Vec<u8>, stream_session: Option<&str>) {
        if let Some(peeked) = peek::peek(&message) {
            match peeked.kind {
                Kind::Response => {
                    if let Some(id) = &peeked.id {
                        self.state.lock().unwrap().in_flight.remove(id);
                    }
                    if let Some(session) = peeked.result_session {
                        // Open the new session's stream now; its first POST waits for it.
                        let client = self.clone();
                        tokio::spawn(async move {
                            if let Err(Refusal::Fatal(reason) | Refusal::Unreachable(reason)) =
                                client.session_stream(&session).await
                            {
                                client.end(Some(reason)).await;
                            }
                        });
                    }
                }
                Kind::Request => {
                    if let (Some(id), Some(session)) = (peeked.id, stream_session) {
                        self.state
                            .lock()
                            .unwrap()
                            .agent_requests
                            .insert(id, session.to_owned());
                    }
                }
                _ => {}
            }
        }
        super::one_line(&mut message);
        self.deliver(message).await;
    }

    /// A session's stream ended: its requests in flight fail; the next
    /// message for the session opens it again.
    async fn session_stream_ended(&self, session: &str, reason: Option<String>) {
        let orphans: Vec<RequestId> = {
            let mut state = self.state.lock().unwrap();
            state.sessions.remove(session);
            let orphans = state
                .in_flight
                .iter()
                .filter(|(_, s)| s.as_deref() == Some(session))
                .map(|(id, _)| id.clone())
                .collect::<Vec<_>>();
            for id in &orphans {
                state.in_flight.remove(id);
            }
            orphans
        };
        // Ended by the server (a clean end of the stream): -32603, as the
        // official client answers. Broken off (the server died, the network
        // failed): the connection's own "closed" error, -32099, which callers
        // check with `is_connection_closed()`.
        let error = match reason {
            Some(reason) => {
                RequestError::connection_closed(&format!("ACP session SSE stream closed: {reason}"))
            }
            None => RequestError::new(codes::INTERNAL_ERROR, "ACP session SSE stream closed"),
        };
        for id in orphans {
            self.answer(&id, &error).await;
        }
    }

    /// POST one message; the response's body is left for the caller.
    async fn post(&self, message: &[u8], session: Option<&str>) -> Result<Response<Incoming>, String> {
        let body = Full::new(Bytes::copy_from_slice(message));
        let mut request = self.request(Method::POST, session, body);
        request
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        let sent = async {
            let mut post = self.post.lock().await;
            // A kept-alive connection the server has closed meanwhile: a new one.
            if post.as_ref().is_none_or(|sender| sender.is_closed()) {
                *post = Some(self.handshake_retrying().await.map_err(|e| e.to_string())?);
            }
            let sender = post.as_mut().expect("connected above");
            let response = match sender.ready().await {
                Ok(()) => sender.try_send_request(request).await,
                // Closed before anything was sent: once more, on a new one.
                Err(_) => return self.send_on_new_connection(&mut post, request).await,
            };
            match response {
                Ok(response) => Ok(response),
                // Not sent: the connection closed first. Once more, on a new one.
                Err(mut error) => match error.take_message() {
                    Some(request) => self.send_on_new_connection(&mut post, request).await,
                    None => Err(error.into_error().to_string()),
                },
            }
        };
        let response = match self.options.output_stall_timeout {
            Some(stall) => tokio::time::timeout(stall, sent).await.unwrap_or_else(|_| {
                Err(format!(
                    "output stalled: the server took nothing for {} ms",
                    stall.as_millis()
                ))
            }),
            None => sent.await,
        }
        .map_err(|error| format!("POST failed: {error}"))?;
        self.keep_cookies(&response);
        Ok(response)
    }

    /// Send `request` on a new POST connection, kept for the next ones.
    async fn send_on_new_connection(
        &self,
        post: &mut Option<SendRequest<Full<Bytes>>>,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, String> {
        let mut sender = self.handshake_retrying().await.map_err(|e| e.to_string())?;
        let response = sender.send_request(request).await.map_err(|e| e.to_string());
        *post = Some(sender);
        response
    }

    fn request(&self, method: Method, session: Option<&str>, body: Full<Bytes>) -> Request<Full<Bytes>> {
        let mut request = Request::builder()
            .method(method)
            .uri(self.endpoint.target.as_str())
            .body(body)
            .expect("a valid request");
        let headers = request.headers_mut();
        if let Ok(host) = HeaderValue::try_from(self.endpoint.authority.as_str()) {
            headers.insert(header::HOST, host);
        }
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        let state = self.state.lock().unwrap();
        if let Some(id) = state
            .connection_id
            .as_deref()
            .and_then(|id| HeaderValue::try_from(id).ok())
        {
            headers.insert(CONNECTION_ID, id);
        }
        if let Some(session) = session.and_then(|s| HeaderValue::try_from(s).ok()) {
            headers.insert(SESSION_ID, session);
        }
        state.cookies.apply(headers);
        request
    }

    /// Remember the cookies the server set (for affinity).
    fn keep_cookies(&self, response: &Response<Incoming>) {
        self.state.lock().unwrap().cookies.keep(response.headers());
    }

    async fn handshake(&self) -> io::Result<SendRequest<Full<Bytes>>> {
        let stream = net::open(&self.endpoint, &self.options).await?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(io::Error::other)?;
        let done = self.done.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                _ = done.cancelled() => {}
            }
        });
        Ok(sender)
    }

    /// A connection for POSTs: nothing was sent yet, so a failure to make
    /// one is tried again, with backoff, for up to `reconnect_timeout`.
    async fn handshake_retrying(&self) -> io::Result<SendRequest<Full<Bytes>>> {
        let Some(budget) = self.options.reconnect_timeout else {
            return self.handshake().await;
        };
        backoff::keep_trying(budget, &self.done, || self.handshake(), |_| true)
            .await
            .map_err(|error| match error {
                Some(error) => io::Error::new(
                    error.kind(),
                    format!("{error} (tried for {} ms)", budget.as_millis()),
                ),
                None => io::Error::other("the connection was closed"),
            })
    }

    /// Hand a message to the engine (waits while the engine is full).
    async fn deliver(&self, mut message: Vec<u8>) {
        message.push(b'\n');
        let mut to_engine = self.to_engine.lock().await;
        if let Some(writer) = to_engine.as_mut() {
            if writer.write_all(&message).await.is_err() {
                *to_engine = None;
            }
        }
    }

    /// Answer one of our requests with an error, on the agent's behalf.
    /// Answer request `id` with `error`, as if the agent had.
    async fn answer(&self, id: &RequestId, error: &RequestError) {
        let answer = json!({ "jsonrpc": "2.0", "id": id, "error": error });
        self.deliver(answer.to_string().into_bytes()).await;
    }

    async fn answer_error(&self, id: &RequestId, message: &str, data: Option<serde_json::Value>) {
        let mut error = json!({ "code": codes::INTERNAL_ERROR, "message": message });
        if let Some(data) = data {
            error["data"] = data;
        }
        let answer = json!({ "jsonrpc": "2.0", "id": id, "error": error });
        self.deliver(answer.to_string().into_bytes()).await;
    }

    /// End the transport: streams stop, the server is told (DELETE), and
    /// the engine reads the end (with `reason` when it failed).
    async fn end(&self, reason: Option<String>) {
        // The first end is the one: a stream failing as the transport
        // closes is not a failure.
        if self.done.is_cancelled() {
            return;
        }
        if let Some(reason) = reason {
            let _ = self.failure.set(reason);
        }
        self.done.cancel();
        let connected = self.state.lock().unwrap().connection_id.is_some();
        if connected {
            let delete = async {
                let mut sender = self.handshake_for_close().await.ok()?;
                let request = self.request(Method::DELETE, None, Full::default());
                sender.send_request(request).await.ok()
            };
            let _ = tokio::time::timeout(CLOSE_GRACE, delete).await;
        }
        if let Some(mut writer) = self.to_engine.lock().await.take() {
            let _ = writer.shutdown().await;
        }
    }

    /// A connection for the DELETE, whose driver outlives `done`.
    async fn handshake_for_close(&self) -> io::Result<SendRequest<Full<Bytes>>> {
        let stream = net::open(&self.endpoint, &self.options).await?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(io::Error::other)?;
        tokio::spawn(async move {
            let _ = tokio::time::timeout(CLOSE_GRACE, connection).await;
        });
        Ok(sender)
    }
}

/// A session stream being read, counted while it is.
struct SessionReader<'a>(&'a Client);

impl<'a> SessionReader<'a> {
    fn new(client: &'a Client) -> Self {
        client.session_readers.fetch_add(1, Ordering::SeqCst);
        Self(client)
    }
}

impl Drop for SessionReader<'_> {
    fn drop(&mut self) {
        self.0.session_readers.fetch_sub(1, Ordering::SeqCst);
        self.0.session_reader_left.notify_waiters();
    }
}

fn too_large() -> String {
    "a message from the server is over the size limit".to_owned()
}

/// A whole body, refused beyond `max` bytes.
async fn read_body(mut body: Incoming, max: usize) -> io::Result<Vec<u8>> {
    let mut all = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(chunk) = frame.map_err(io::Error::other)?.into_data() {
            if all.len() + chunk.len() > max {
                return Err(io::Error::new(io::ErrorKind::InvalidData, too_large()));
            }
            all.extend_from_slice(&chunk);
        }
    }
    Ok(all)
}

/// The start of a refusal's body, as text.
async fn error_body(response: Response<Incoming>) -> String {
    let mut body = response.into_body();
    let mut text = Vec::new();
    while text.len() < MAX_ERROR_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(chunk) = frame.into_data() {
                    text.extend_from_slice(&chunk);
                }
            }
            _ => break,
        }
    }
    text.truncate(MAX_ERROR_BODY);
    String::from_utf8_lossy(&text).trim().to_owned()
}
