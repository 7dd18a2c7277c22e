//! WebSocket: one JSON-RPC message per text frame, as the official SDKs
//! send them. The client's handshake runs over our own TCP or TLS stream;
//! the server's arrives as an HTTP upgrade (server/mod.rs). Either way the
//! socket is bridged to a [`Lines`] stream of newline-delimited JSON, so the
//! engine's framing and rules apply unchanged: a frame that is not JSON gets
//! -32700, a batch -32600; a binary frame's bytes are taken as a message
//! too (not UTF-8: -32700), and bytes that are not UTF-8 are sent as one.
//! What only a socket can get wrong ends it with a close reason: a frame
//! over the size limit (1009). Raw newlines in a frame (JSON whitespace)
//! become spaces, so a pretty-printed message stays one line.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hyper::header::{self, HeaderMap, HeaderValue};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::answer_wait::{answer_may_follow, answer_within};
use super::cookies::CookieJar;
use super::endpoint::Endpoint;
use super::keep_alive::Silence;
use super::net::{self, Stream};
use super::peek::peek;
use super::server::metrics::Tap;
use super::ConnectOptions;

/// Open a client WebSocket to `endpoint` (handshake done), with `extra`
/// headers besides the options' and `cookies`; the server's answer's
/// headers too.
pub(crate) async fn open(
    endpoint: &Endpoint,
    options: &ConnectOptions,
    extra: &[(&'static str, String)],
    cookies: &CookieJar,
) -> Result<(WebSocketStream<Stream>, HeaderMap), WsError> {
    // One budget for the TCP connect, the TLS handshake and the upgrade.
    net::within_connect_timeout(options, upgrade(endpoint, options, extra, cookies)).await?
}

async fn upgrade(
    endpoint: &Endpoint,
    options: &ConnectOptions,
    extra: &[(&'static str, String)],
    cookies: &CookieJar,
) -> Result<(WebSocketStream<Stream>, HeaderMap), WsError> {
    let stream = net::connect(endpoint, options).await?;
    let mut request = endpoint.uri.to_string().into_client_request()?;
    for (name, value) in super::request_headers(options)? {
        request.headers_mut().insert(name, value);
    }
    for (name, value) in extra {
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        request.headers_mut().insert(*name, value);
    }
    cookies.apply(request.headers_mut());
    let (socket, response) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(config(options.max_message_size)))
            .await?;
    Ok((socket, response.into_parts().0.headers))
}

pub(crate) fn config(max_message_size: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_message_size))
        .max_frame_size(Some(max_message_size))
}

pub(crate) fn to_io(error: WsError) -> io::Error {
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

/// How a bridged socket ends besides its peer: a server shutting down
/// (close 1001), a server draining (the agent's input ends; once its output
/// has, close 1001), silence for three `keep_alive` intervals (it is pinged
/// each one; a network that drops traffic), and what to release when it is
/// done. A server's socket also has its messages counted (`tap`).
#[derive(Default)]
pub(crate) struct Ending {
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) shutdown: Option<CancellationToken>,
    pub(crate) drain: Option<CancellationToken>,
    pub(crate) tap: Option<Tap>,
    pub(crate) release: Option<Box<dyn Send + Sync>>,
}

/// Move frames between `socket` and `inner`, the far end of a [`Lines`]
/// stream, on two tasks that end with the socket (and then drop
/// `ending.release`). A send that makes no progress for `stall` drops the
/// socket.
///
/// [`Lines`]: super::Lines
pub(crate) fn bridge<S>(
    socket: WebSocketStream<S>,
    inner: DuplexStream,
    stall: Option<Duration>,
    ending: Ending,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (inner_read, mut inner_write) = tokio::io::split(inner);
    let (sink, mut frames) = socket.split();
    let sink = Arc::new(Mutex::new(sink));
    let closing = sink.clone();
    let shutdown = ending.shutdown.unwrap_or_default();
    let shutting_down = shutdown.clone();
    let drain = ending.drain.unwrap_or_default();
    let draining = drain.clone();
    let (tap, inbound_tap) = (ending.tap.clone(), ending.tap);
    let keep_alive = ending.keep_alive;
    let silent = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let heard_nothing = silent.clone();
    // A message went to the engine: its answer may follow at once.
    let delivered = Arc::new(tokio::sync::Notify::new());
    let answer_due = delivered.clone();
    let socket_done = CancellationToken::new();
    ping_every(keep_alive, sink.clone(), socket_done.clone());
    let inbound = tokio::spawn(async move {
        let _done = socket_done.drop_guard();
        let mut silence = Silence::new(keep_alive);
        let reason = loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                why = silence.silent() => {
                    tracing::warn!(%why, "the WebSocket is taken as broken");
                    heard_nothing.store(true, std::sync::atomic::Ordering::SeqCst);
                    break None;
                }
                _ = shutting_down.cancelled() => break Some((CloseCode::Away, "the server is shutting down")),
                // The agent's input ends; the socket closes when its output has.
                _ = draining.cancelled() => break None,
            };
            let Some(frame) = frame else {
                break None;
            };
            silence.heard();
            match frame {
                // A binary frame's bytes are a message too: what is not
                // UTF-8 JSON gets the engine's -32700, as on a pipe.
                Ok(message @ (Message::Text(_) | Message::Binary(_))) => {
                    let line = frame_line(message, inbound_tap.as_ref());
                    let answer_may_follow = answer_may_follow(&line);
                    if inner_write.write_all(&line).await.is_err() {
                        break None;
                    }
                    if answer_may_follow {
                        delivered.notify_one();
                    }
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
    let release = ending.release;
    tokio::spawn(async move {
        let mut lines = BufReader::new(inner_read);
        let mut line = Vec::new();
        let mut stalled_or_failed = false;
        loop {
            let read = tokio::select! {
                read = lines.read_until(b'\n', &mut line) => read,
                _ = shutdown.cancelled() => break,
                _ = answer_due.notified() => match answer_within(&mut lines, &mut line).await {
                    Some(read) => read,
                    None => continue,
                },
            };
            match read {
                // (A line begun by an earlier read still goes out.)
                Ok(0) if line.is_empty() => break,
                Err(_) => break,
                Ok(_) => {}
            }
            let message = line_frame(std::mem::take(&mut line), tap.as_ref());
            let mut sink = sink.lock().await;
            let send = async {
                sink.feed(message).await?;
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
        let away = if shutdown.is_cancelled() {
            Some("the server is shutting down")
        } else if drain.is_cancelled() && !stalled_or_failed {
            Some("the server is draining")
        } else {
            None
        };
        if let Some(reason) = away {
            let frame = CloseFrame {
                code: CloseCode::Away,
                reason: reason.into(),
            };
            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                sink.lock().await.send(Message::Close(Some(frame))).await
            })
            .await;
        } else if !stalled_or_failed && !silent.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = sink.lock().await.close().await;
        }
        // The socket is done: stop reading it too.
        inbound.abort();
        drop(release);
    });
}

/// Ping through `sink` every `keep_alive` until `done` (the peer answers
/// with a pong, which shows the network still carries its traffic).
fn ping_every<S>(keep_alive: Option<Duration>, sink: Arc<Mutex<WsSink<S>>>, done: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(every) = keep_alive else { return };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = done.cancelled() => return,
            }
            let ping = async { sink.lock().await.send(Message::Ping(Default::default())).await };
            if !matches!(tokio::time::timeout(every, ping).await, Ok(Ok(()))) {
                return;
            }
        }
    });
}

type WsSink<S> = futures_util::stream::SplitSink<WebSocketStream<S>, Message>;

/// A frame from the peer as a line for the engine (counted by `tap`): raw
/// newlines become spaces, and the line ends with one.
pub(crate) fn frame_line(message: Message, tap: Option<&Tap>) -> Vec<u8> {
    let mut line = message.into_data().to_vec();
    if let Some(Tap { traffic, metrics }) = tap {
        traffic.to_agent(metrics, line.len(), peek(&line).as_ref());
    }
    super::one_line(&mut line);
    line.push(b'\n');
    line
}

/// A line from the engine as a frame (counted by `tap`). The line moves into
/// the frame (a large message is not copied once more). The engine writes
/// UTF-8 JSON; bytes that are not UTF-8 (a bridge of raw input: `acp-engine
/// connect`) cannot be a text frame.
pub(crate) fn line_frame(mut line: Vec<u8>, tap: Option<&Tap>) -> Message {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if let Some(Tap { traffic, metrics }) = tap {
        traffic.to_client(metrics, line.len(), peek(&line).as_ref());
    }
    match String::from_utf8(line) {
        Ok(text) => Message::text(text),
        Err(not_text) => Message::binary(not_text.into_bytes()),
    }
}

/// Whether an HTTP request asks for a WebSocket upgrade.
pub(crate) fn is_upgrade<B>(request: &hyper::Request<B>) -> bool {
    request
        .headers()
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"))
}

/// The `101 Switching Protocols` answer to a valid upgrade request, or why
/// it is not one.
pub(crate) fn accept_key<B>(request: &hyper::Request<B>) -> Result<String, &'static str> {
    let headers = request.headers();
    if request.method() != hyper::Method::GET {
        return Err("a WebSocket upgrade must be a GET");
    }
    let version = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .and_then(|v| v.to_str().ok());
    if version != Some("13") {
        return Err("Sec-WebSocket-Version must be 13");
    }
    let key = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .ok_or("Sec-WebSocket-Key is missing")?;
    Ok(tokio_tungstenite::tungstenite::handshake::derive_accept_key(
        key.as_bytes(),
    ))
}
