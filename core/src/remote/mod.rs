//! Remote agents: WebSocket and Streamable HTTP, clients and a server,
//! over TCP or TLS.
//!
//! Every remote transport becomes a byte stream of newline-delimited JSON
//! (the engine's framing), so every engine rule (ordering, cancellation,
//! validation, limits, close failing what is pending) holds over a socket
//! as over a pipe.
//!
//! - [`connect`] opens a client transport to `ws://`, `wss://`, `http://`
//!   or `https://` (Streamable HTTP, as the official TypeScript SDK's
//!   `createHttpStream` speaks it: POST for what the client sends, SSE
//!   streams for what the agent sends); [`dial`] is the same at once, the
//!   connection made in the background, for constructors that do not wait.
//! - [`Server`] serves both transports on one endpoint (default `/acp`):
//!   the path (404), the bearer token (401) and the connection limit (503)
//!   are checked before anything reaches an agent, and each connection is
//!   handed to a callback as a [`Lines`] stream, to wrap in
//!   `Transport::from_stream` for an agent connection or to copy to a
//!   process's stdio.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use hyper::header::{self, HeaderName, HeaderValue};
use tokio::io::DuplexStream;

use crate::framing::DEFAULT_MAX_MESSAGE_SIZE;
use crate::transport::Transport;

mod answer_wait;
mod backoff;
mod cookies;
mod endpoint;
mod failing;
pub(crate) mod http_body;
mod http_client;
mod keep_alive;
mod net;
mod peek;
mod resumable;
mod server;
mod sse;
mod tls;
mod websocket;
mod websocket_client;

#[doc(hidden)]
pub(crate) mod fuzzing {
    /// See `crate::fuzzing::sse_events`.
    pub fn sse_events(stream: &[u8], sizes: &[u8], max_event: usize) -> Option<Vec<Vec<u8>>> {
        let mut parser = super::sse::Parser::new(max_event);
        let mut events = Vec::new();
        let (mut at, mut next) = (0, 0);
        while at < stream.len() {
            let size = sizes
                .get(next % sizes.len().max(1))
                .map_or(stream.len(), |&s| usize::from(s).max(1));
            next += 1;
            let end = (at + size).min(stream.len());
            parser.feed(&stream[at..end], &mut events).ok()?;
            at = end;
        }
        parser.finish(&mut events).ok()?;
        Some(events)
    }
}

pub use server::{
    serve, AuthRequest, Authorize, OnRefused, Peer, PeerTransport, Refusal, RefusalBody, ServeOptions,
    Server, ATTACH_META, DEFAULT_HEALTH_PATH, DEFAULT_METRICS_PATH, DEFAULT_PATH, DEFAULT_READY_PATH,
    DEFAULT_SERVER_STALL_TIMEOUT,
};
pub use tls::ServerTls;

/// A remote connection as newline-delimited JSON: what the peer sends is
/// read as lines, and each line written goes to the peer as one message.
/// Shutting down the write half ends the connection; the read half ends
/// when the connection does.
pub type Lines = DuplexStream;

/// Buffer between a socket and the engine: the socket's backpressure
/// reaches the engine through it.
const BRIDGE_BUFFER: usize = 64 * 1024;

/// Settings for [`connect`] and [`dial`].
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Sent as `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// More headers for the WebSocket handshake or every HTTP request (an
    /// API gateway's key, say).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server (default 64 MiB).
    pub max_message_size: usize,
    /// Drop the connection when the server reads nothing for this long
    /// while we send (default None: wait).
    pub output_stall_timeout: Option<Duration>,
    /// A PEM file of certificates to trust besides the system's, for
    /// `wss://` and `https://` servers with a private CA.
    pub ca_file: Option<PathBuf>,
    /// When a Streamable HTTP event stream breaks, reopen it after the
    /// last event received (`Last-Event-ID`; the server sends what was
    /// lost, once), and resume a broken WebSocket likewise
    /// (docs/websocket-resume.md: the connection is asked to be resumable
    /// when this is set); retry a POST that could not reach the server (or an
    /// `initialize` a proxy or a draining server answered 502 to 504), with
    /// backoff and jitter, for this long before the connection ends with
    /// the reason. None (the default) ends it at the first break, so that a
    /// dead server fails what is pending at once; a gateway's clients set
    /// it (10 s, say).
    pub reconnect_timeout: Option<Duration>,
    /// Ping a WebSocket this often while nothing is sent (default 15 s;
    /// None: never), and take a WebSocket or Streamable HTTP event stream
    /// that brought nothing (a pong, or the server's keep-alive, included)
    /// for three intervals as broken: a network that drops traffic without
    /// closing the connection. It is then resumed (`reconnect_timeout`), or
    /// the connection ends with the reason, failing what is pending.
    pub keep_alive_interval: Option<Duration>,
    /// How long the server has to take the connection: the TCP connect,
    /// the TLS handshake and the WebSocket upgrade (for Streamable HTTP,
    /// those of each connection its requests go over); default 10 s, None:
    /// wait for ever. One that has not answered by then fails the
    /// connection with the reason, as one that refuses does.
    pub connect_timeout: Option<Duration>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            bearer_token: None,
            headers: Vec::new(),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            output_stall_timeout: None,
            ca_file: None,
            reconnect_timeout: None,
            keep_alive_interval: Some(crate::tables::defaults::KEEP_ALIVE_INTERVAL),
            connect_timeout: Some(crate::tables::defaults::CONNECT_TIMEOUT),
        }
    }
}

impl ConnectOptions {
    /// `connect_timeout` as the bindings take it: None, the default; 0,
    /// wait for ever; else that many milliseconds.
    pub fn connect_timeout_millis(millis: Option<u64>) -> Option<Duration> {
        match millis {
            None => Some(crate::tables::defaults::CONNECT_TIMEOUT),
            Some(0) => None,
            Some(millis) => Some(Duration::from_millis(millis)),
        }
    }
}

/// Whether `text` names a remote agent (a `ws://`, `wss://`, `http://` or
/// `https://` URL) rather than a command to run.
pub fn is_url(text: &str) -> bool {
    ["ws://", "wss://", "http://", "https://"]
        .iter()
        .any(|scheme| text.len() > scheme.len() && text[..scheme.len()].eq_ignore_ascii_case(scheme))
}

/// Connect to a remote agent (`ws://`, `wss://`, `http://` or `https://`):
/// returns once the WebSocket handshake is done (for Streamable HTTP, once
/// the server is reachable; `initialize` opens the connection). A failure
/// later ends the transport with its reason.
pub async fn connect(url: &str, options: &ConnectOptions) -> io::Result<Transport> {
    Ok(connect_for_cookies(url, options).await?.transport)
}

/// A remote connection [`connect_for_cookies`] made.
pub struct Connected {
    /// The connection's lines, for a connection to run on.
    pub transport: Transport,
    /// The `Set-Cookie` values of the WebSocket handshake's answer, for a
    /// caller's cookie store (the transport keeps them itself, for its
    /// reconnects). Empty for Streamable HTTP, whose cookies come later.
    pub set_cookies: Vec<String>,
}

/// [`connect`], telling what cookies the server set on the way.
pub async fn connect_for_cookies(url: &str, options: &ConnectOptions) -> io::Result<Connected> {
    let endpoint = endpoint::Endpoint::parse(url)?;
    let failure = failing::Failure::default();
    let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
    let set_cookies = attach(
        endpoint,
        options.clone(),
        &mut FarEnd(Some(inner)),
        failure.clone(),
    )
    .await?;
    Ok(Connected {
        transport: failing::transport(lines, failure),
        set_cookies,
    })
}

/// A transport to a remote agent, at once: the connection is made in the
/// background (call from within a tokio runtime), and a failure to connect
/// ends the transport with that reason ("cannot connect to ...: HTTP 401"),
/// failing what was sent meanwhile.
pub fn dial(url: &str, options: &ConnectOptions) -> Transport {
    dial_for_cookies(url, options, |_| {})
}

/// [`dial`], telling `on_cookies` what cookies the server set once it
/// connected (as [`Connected::set_cookies`]; not called if it failed).
pub fn dial_for_cookies(
    url: &str,
    options: &ConnectOptions,
    on_cookies: impl FnOnce(Vec<String>) + Send + 'static,
) -> Transport {
    let failure = failing::Failure::default();
    let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
    let (url, options, failed) = (url.to_owned(), options.clone(), failure.clone());
    tokio::spawn(async move {
        let mut far_end = FarEnd(Some(inner));
        let attached = match endpoint::Endpoint::parse(&url) {
            Ok(endpoint) => attach(endpoint, options, &mut far_end, failed.clone()).await,
            Err(error) => Err(error),
        };
        match attached {
            Ok(set_cookies) => on_cookies(set_cookies),
            // The far end is still here: the reason is set before it goes,
            // so the stream ends with it, not as a bare end of stream.
            Err(error) => {
                let _ = failed.set(format!("cannot connect to {url}: {error}"));
            }
        }
        drop(far_end);
    });
    failing::transport(lines, failure)
}

/// The far end of a transport's lines, taken by the connection once it is
/// made. A failure to connect leaves it with the caller, which ends the
/// stream only after setting the reason.
pub(crate) struct FarEnd(Option<DuplexStream>);

impl FarEnd {
    /// The lines, for the connection just made (once).
    pub(crate) fn take(&mut self) -> DuplexStream {
        self.0.take().expect("a transport's far end is taken once")
    }
}

/// Connect `inner` to `endpoint`; the cookies the server set on the way.
async fn attach(
    endpoint: endpoint::Endpoint,
    options: ConnectOptions,
    inner: &mut FarEnd,
    failure: failing::Failure,
) -> io::Result<Vec<String>> {
    use endpoint::Scheme;
    match endpoint.scheme {
        Scheme::WebSocket | Scheme::SecureWebSocket => {
            websocket_client::attach(endpoint, options, inner, failure).await
        }
        Scheme::Http | Scheme::Https => {
            http_client::start(endpoint, options, inner, failure).await?;
            Ok(Vec::new())
        }
    }
}

/// The headers every client request carries: the token and the caller's.
fn request_headers(options: &ConnectOptions) -> io::Result<Vec<(HeaderName, HeaderValue)>> {
    let invalid = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} is not a valid header"),
        )
    };
    let mut headers = Vec::with_capacity(options.headers.len() + 1);
    for (name, value) in &options.headers {
        let name = HeaderName::try_from(name.as_str()).map_err(|_| invalid(name))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|_| invalid(name.as_str()))?;
        headers.push((name, value));
    }
    if let Some(token) = &options.bearer_token {
        let value = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| invalid("the token"))?;
        headers.push((header::AUTHORIZATION, value));
    }
    Ok(headers)
}

/// A JSON message as one line: raw newlines can only be whitespace between
/// tokens in valid JSON (inside a string they are invalid either way).
fn one_line(message: &mut [u8]) {
    for byte in message {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
}

/// Sleep for `duration`, or for ever when None (a timer that is off).
pub(crate) async fn sleep_or_never(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}
