//! WebSocket transports, client and server: one JSON-RPC message per text
//! frame, as the official SDKs send them.
//!
//! A WebSocket becomes a byte stream of newline-delimited JSON (the
//! engine's framing), so every rule of the engine holds unchanged over it:
//! a frame that is not JSON gets -32700, a batch -32600, and so on. What
//! only a socket can get wrong ends the socket with a close reason: a
//! binary frame (1003), a frame over the size limit (1009). Raw newlines in
//! a frame (JSON whitespace) become spaces, so a pretty-printed message
//! stays one line.
//!
//! [`connect`] dials `ws://host:port/path` (with an optional bearer token);
//! [`serve`] accepts connections on a listener, checks the path and the
//! token before anything reaches an agent (404 / 401), bounds the number of
//! connections (503 beyond it) and hands each accepted one to a callback.
//! Both give a [`Lines`] stream: wrap it in `Transport::from_stream` for a
//! connection, or copy its bytes (a bridge to a process's stdio). [`dial`]
//! is `connect` as a `Transport` at once, for constructors that do not wait.

use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, Semaphore};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{header, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{client::IntoClientRequest, Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::framing::DEFAULT_MAX_MESSAGE_SIZE;
use crate::transport::Transport;

/// The path `serve` answers by default (and `acp-engine serve` uses).
pub const DEFAULT_PATH: &str = "/acp";

/// Default for [`ServeOptions::output_stall_timeout`].
pub const DEFAULT_SERVER_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A WebSocket as newline-delimited JSON: what the peer sends is read as
/// lines, and each line written goes out as one text frame. Shutting down
/// the write half closes the socket (1000); the read half ends when the
/// socket closes.
pub type Lines = DuplexStream;

/// Buffer between the socket and the engine: the socket's backpressure
/// reaches the engine through it.
const BRIDGE_BUFFER: usize = 64 * 1024;

/// Settings for [`connect`].
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Sent as `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// The largest frame accepted from the server (default 64 MiB).
    pub max_message_size: usize,
    /// Drop the socket when the server reads nothing for this long while
    /// we send (default None: wait).
    pub output_stall_timeout: Option<Duration>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            bearer_token: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            output_stall_timeout: None,
        }
    }
}

/// Connect to a WebSocket agent (`ws://host:port/path`).
pub async fn connect(url: &str, options: &ConnectOptions) -> io::Result<Lines> {
    let socket = open(url, options).await?;
    let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
    bridge(socket, None, inner, options.output_stall_timeout);
    Ok(lines)
}

/// A transport to a WebSocket agent, at once: the connection is made in
/// the background (call from within a tokio runtime), and a failure to
/// connect ends the transport with that reason ("read error: cannot
/// connect to ...: HTTP 401"), failing what was sent meanwhile. For
/// bindings whose stream constructors do not wait.
pub fn dial(url: &str, options: &ConnectOptions) -> Transport {
    let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
    let failure = Arc::new(OnceLock::new());
    let failed = failure.clone();
    let (url, options) = (url.to_owned(), options.clone());
    tokio::spawn(async move {
        match open(&url, &options).await {
            Ok(socket) => bridge(socket, None, inner, options.output_stall_timeout),
            // Dropping `inner` ends the stream, with the reason set first.
            Err(error) => {
                let _ = failed.set(format!("cannot connect to {url}: {error}"));
            }
        }
    });
    let (reader, writer) = tokio::io::split(lines);
    let writer = FailingWriter {
        writer,
        failure: failure.clone(),
    };
    Transport::new(FailingReader { reader, failure }, writer)
}

async fn open(url: &str, options: &ConnectOptions) -> io::Result<WebSocketStream<MaybeTlsStream<TcpStream>>> {
    let mut request = url.into_client_request().map_err(to_io)?;
    if let Some(token) = &options.bearer_token {
        let value = format!("Bearer {token}").parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the token is not a valid header value",
            )
        })?;
        request.headers_mut().insert(header::AUTHORIZATION, value);
    }
    let (socket, _) =
        tokio_tungstenite::connect_async_with_config(request, Some(config(options.max_message_size)), true)
            .await
            .map_err(to_io)?;
    Ok(socket)
}

/// The read half of a dialled transport: its end is an error when the
/// connection could not be made.
struct FailingReader {
    reader: tokio::io::ReadHalf<Lines>,
    failure: Arc<OnceLock<String>>,
}

impl tokio::io::AsyncRead for FailingReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.reader).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &polled {
            if buf.filled().len() == before {
                if let Some(failure) = self.failure.get() {
                    return std::task::Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::ConnectionRefused,
                        failure.clone(),
                    )));
                }
            }
        }
        polled
    }
}

/// The write half of a dialled transport: a write that fails because the
/// connection could not be made says so (not "broken pipe"), whichever
/// half notices first.
struct FailingWriter {
    writer: tokio::io::WriteHalf<Lines>,
    failure: Arc<OnceLock<String>>,
}

impl FailingWriter {
    fn explain<T>(&self, polled: std::task::Poll<io::Result<T>>) -> std::task::Poll<io::Result<T>> {
        match (polled, self.failure.get()) {
            (std::task::Poll::Ready(Err(_)), Some(failure)) => std::task::Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                failure.clone(),
            ))),
            (polled, _) => polled,
        }
    }
}

impl tokio::io::AsyncWrite for FailingWriter {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.writer).poll_write(cx, buf);
        self.explain(polled)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let polled = std::pin::Pin::new(&mut self.writer).poll_flush(cx);
        self.explain(polled)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let polled = std::pin::Pin::new(&mut self.writer).poll_shutdown(cx);
        self.explain(polled)
    }
}

/// Settings for [`serve`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The path that upgrades (default [`DEFAULT_PATH`]); others get 404.
    pub path: String,
    /// Required as `Authorization: Bearer <token>`; otherwise 401, and
    /// nothing reaches the agent.
    pub bearer_token: Option<String>,
    /// Connections open at once; beyond it 503 (default 1024).
    pub max_connections: usize,
    /// The largest frame accepted from a client (default 64 MiB); a larger
    /// one closes its socket (1009).
    pub max_message_size: usize,
    /// Drop a socket whose client reads nothing for this long while we send
    /// (default 60 s, as the official TypeScript server's
    /// `maxOutputStallMs`; None: wait for ever). The engine's own limits
    /// bound what waits behind it meanwhile.
    pub output_stall_timeout: Option<Duration>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.to_owned(),
            bearer_token: None,
            max_connections: 1024,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            output_stall_timeout: Some(DEFAULT_SERVER_STALL_TIMEOUT),
        }
    }
}

/// Who connected, for the callback of [`serve`].
#[derive(Debug, Clone)]
pub struct Peer {
    /// The client's address.
    pub address: std::net::SocketAddr,
}

/// Accept WebSocket connections on `listener` until it fails, calling
/// `on_connection` with each accepted one (on a runtime task: it must not
/// block). Handshakes run concurrently; a client that never finishes its
/// handshake holds nothing but its socket.
// The handshake callback's signature (a large `Err`) is tungstenite's.
#[allow(clippy::result_large_err)]
pub async fn serve<F>(listener: TcpListener, options: ServeOptions, on_connection: F) -> io::Result<()>
where
    F: Fn(Lines, Peer) + Send + Sync + 'static,
{
    let options = Arc::new(options);
    let on_connection = Arc::new(on_connection);
    let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
    loop {
        let (tcp, address) = listener.accept().await?;
        let (options, on_connection, slots) = (options.clone(), on_connection.clone(), slots.clone());
        tokio::spawn(async move {
            let _ = tcp.set_nodelay(true);
            let slot = slots.try_acquire_owned().ok();
            let full = slot.is_none();
            let check = |request: &Request, response: Response| admit(&options, full, request, response);
            match tokio_tungstenite::accept_hdr_async_with_config(
                tcp,
                check,
                Some(config(options.max_message_size)),
            )
            .await
            {
                Ok(socket) => {
                    let (lines, inner) = tokio::io::duplex(BRIDGE_BUFFER);
                    bridge(socket, slot, inner, options.output_stall_timeout);
                    on_connection(lines, Peer { address })
                }
                Err(error) => tracing::debug!(%address, %error, "refused a WebSocket connection"),
            }
        });
    }
}

/// The handshake's checks, in order: the path, the token, a free slot.
#[allow(clippy::result_large_err)]
fn admit(
    options: &ServeOptions,
    full: bool,
    request: &Request,
    response: Response,
) -> Result<Response, ErrorResponse> {
    if request.uri().path() != options.path {
        return Err(refusal(StatusCode::NOT_FOUND, "no ACP endpoint here"));
    }
    if let Some(token) = &options.bearer_token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if !given.is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes())) {
            let mut refused = refusal(StatusCode::UNAUTHORIZED, "a valid bearer token is required");
            refused.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return Err(refused);
        }
    }
    if full {
        return Err(refusal(StatusCode::SERVICE_UNAVAILABLE, "too many connections"));
    }
    Ok(response)
}

fn refusal(status: StatusCode, text: &str) -> ErrorResponse {
    let mut response = ErrorResponse::new(Some(text.to_owned()));
    *response.status_mut() = status;
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

fn config(max_message_size: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_message_size))
        .max_frame_size(Some(max_message_size))
}

fn to_io(error: WsError) -> io::Error {
    match error {
        WsError::Io(error) => error,
        WsError::Http(response) => io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!(
                "the server refused the WebSocket upgrade: HTTP {}",
                response.status()
            ),
        ),
        other => io::Error::other(other.to_string()),
    }
}

/// Move frames between `socket` and `inner`, the far end of a [`Lines`]
/// stream, on two tasks that end with the socket (and then release `slot`).
/// A send that makes no progress for `stall` drops the socket.
fn bridge<S>(
    socket: WebSocketStream<S>,
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
    inner: DuplexStream,
    stall: Option<Duration>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (inner_read, mut inner_write) = tokio::io::split(inner);
    let (sink, mut frames) = socket.split();
    let sink = Arc::new(Mutex::new(sink));
    let closing = sink.clone();
    let inbound = tokio::spawn(async move {
        let reason = loop {
            let Some(frame) = frames.next().await else {
                break None;
            };
            match frame {
                Ok(Message::Text(text)) => {
                    let mut line = text.as_bytes().to_vec();
                    for byte in &mut line {
                        if *byte == b'\n' || *byte == b'\r' {
                            *byte = b' ';
                        }
                    }
                    line.push(b'\n');
                    if inner_write.write_all(&line).await.is_err() {
                        break None;
                    }
                }
                Ok(Message::Binary(_)) => {
                    break Some((
                        CloseCode::Unsupported,
                        "binary frames are not supported: send JSON-RPC messages as text frames",
                    ))
                }
                Ok(Message::Close(_)) => break None,
                Ok(_) => {}
                Err(WsError::Capacity(_)) => break Some((CloseCode::Size, "message too big")),
                Err(error) => {
                    tracing::debug!(%error, "WebSocket read failed");
                    break None;
                }
            }
        };
        if let Some((code, reason)) = reason {
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            let _ = closing.lock().await.send(Message::Close(Some(frame))).await;
        }
        let _ = inner_write.shutdown().await;
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(inner_read);
        let mut line = Vec::new();
        let mut stalled_or_failed = false;
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            // The engine writes UTF-8 JSON only.
            let Ok(text) = std::str::from_utf8(text) else {
                continue;
            };
            let mut sink = sink.lock().await;
            let send = async {
                sink.feed(Message::text(text)).await?;
                // One flush per burst: more lines already read go out with it.
                if lines.buffer().is_empty() {
                    sink.flush().await?;
                }
                Ok::<(), WsError>(())
            };
            let sent = match stall {
                Some(stall) => tokio::time::timeout(stall, send).await.unwrap_or_else(|_| {
                    // The peer read nothing for that long: drop the socket (a
                    // close frame could not get through either).
                    tracing::warn!(
                        timeout_ms = stall.as_millis() as u64,
                        "output stalled: closing the WebSocket"
                    );
                    Err(WsError::AlreadyClosed)
                }),
                None => send.await,
            };
            if sent.is_err() {
                stalled_or_failed = true;
                break;
            }
        }
        if !stalled_or_failed {
            let _ = sink.lock().await.close().await;
        }
        // The socket is done: stop reading it too.
        inbound.abort();
        drop(slot);
    });
}
