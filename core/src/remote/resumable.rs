//! A WebSocket connection that outlives its socket, for clients that ask for
//! it (docs/websocket-resume.md). Each side numbers the messages it sends
//! and keeps the latest of them, up to a byte budget (the [`Journal`]), and
//! counts those it received. When the socket breaks without a close frame,
//! the client opens a new one saying how many it received, the server
//! answers how many it did, and each sends again what the other lacks, in
//! order, exactly once. A side that no longer keeps what the other lacks
//! ends the connection instead of losing it silently.
//!
//! The connection's two ends (the agent's or the engine's lines) are read and
//! written by tasks of their own that live as long as the connection; a
//! socket only borrows them, so dropping a broken socket at any point loses
//! nothing: a frame read but not handed on was not counted, and a message
//! sent is kept until the budget pushes it out.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::keep_alive::{Silence, Ticks};
use super::server::metrics::Tap;
use super::websocket::{frame_line, line_frame, Ending};

/// The headers Streamable HTTP uses too: a resumable connection's id (both
/// ways), and how many of the server's messages the client received (0 asks
/// for a resumable connection; with the id, it resumes one).
pub(crate) use super::http_client::{CONNECTION_ID, LAST_EVENT_ID};
/// How many of the client's messages the server received (on a resume).
pub(crate) use crate::tables::headers::RECEIVED;

/// What one side sent: the latest messages, numbered from 1, kept up to a
/// byte budget.
pub(crate) struct Journal {
    kept: VecDeque<(u64, Message)>,
    kept_bytes: usize,
    max_bytes: usize,
    sent: u64,
}

impl Journal {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            kept: VecDeque::new(),
            kept_bytes: 0,
            max_bytes,
            sent: 0,
        }
    }

    fn keep(&mut self, message: &Message) {
        self.sent += 1;
        self.kept_bytes += message.len();
        self.kept.push_back((self.sent, message.clone()));
        while self.kept_bytes > self.max_bytes {
            let Some((_, oldest)) = self.kept.pop_front() else {
                break;
            };
            self.kept_bytes -= oldest.len();
        }
    }

    /// What the other side lacks, having received `theirs` of our messages;
    /// or why it cannot have it.
    pub(crate) fn missing(&self, theirs: u64) -> Result<Vec<Message>, String> {
        if theirs > self.sent {
            return Err(format!(
                "{theirs} messages said to be received, of {} sent",
                self.sent
            ));
        }
        let first_kept = self.kept.front().map_or(self.sent + 1, |(number, _)| *number);
        if theirs + 1 < first_kept {
            return Err(format!(
                "messages {} to {} are no longer kept (the replay budget is {} bytes)",
                theirs + 1,
                first_kept - 1,
                self.max_bytes
            ));
        }
        Ok(self
            .kept
            .iter()
            .filter(|(number, _)| *number > theirs)
            .map(|(_, message)| message.clone())
            .collect())
    }
}

/// Where a resumable connection's next socket comes from.
pub(crate) enum Next<S> {
    /// A socket, and the messages the other side lacks, to send first.
    Socket(Box<WebSocketStream<S>>, Vec<Message>),
    /// None: the connection ends, for this reason.
    GiveUp(String),
}

/// A side's way to new sockets: the server waits for its client to resume,
/// the client dials again.
pub(crate) trait Sockets<S>: Send + 'static {
    /// A request for a new socket made while one is attached (a server's
    /// client resuming before the server saw its old socket die). Never
    /// resolves on a client.
    type Request: Send;
    fn request(&mut self) -> impl Future<Output = Self::Request> + Send;
    /// The next socket after the attached one broke (`request`: a takeover
    /// already asked for), given that `received` of the other side's
    /// messages arrived and what `journal` kept.
    fn next(
        &mut self,
        request: Option<Self::Request>,
        received: u64,
        journal: &Journal,
    ) -> impl Future<Output = Next<S>> + Send;
}

/// How the attached socket's time ended.
enum End<R> {
    /// The connection ends; close the socket with this frame (None: a
    /// normal close).
    Connection(Option<(CloseCode, &'static str)>),
    /// The socket broke: resume on another.
    Broken(String),
    /// A newer socket takes over.
    TakenOver(R),
}

/// The connection's two ends, as each socket in turn uses them.
struct Lines {
    from_agent: mpsc::Receiver<Message>,
    to_agent: mpsc::Sender<Vec<u8>>,
    tap: Option<Tap>,
}

/// Run a resumable connection between `inner` (the far end of its lines)
/// and `socket`, then the sockets `sockets` gives it, until it ends.
pub(crate) fn run<S, K>(
    socket: WebSocketStream<S>,
    inner: DuplexStream,
    max_replay_bytes: usize,
    stall: Option<Duration>,
    ending: Ending,
    mut sockets: K,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    K: Sockets<S>,
{
    let (inner_read, inner_write) = tokio::io::split(inner);
    let timers = Timers {
        stall,
        keep_alive: ending.keep_alive,
    };
    let drain = ending.drain.clone().unwrap_or_default();
    let shutdown = ending.shutdown.clone().unwrap_or_default();
    let mut lines = Lines {
        from_agent: read_lines(inner_read, ending.tap.clone()),
        to_agent: write_lines(inner_write, drain.clone()),
        tap: ending.tap.clone(),
    };
    tokio::spawn(async move {
        let mut journal = Journal::new(max_replay_bytes);
        let mut received = 0u64;
        let (mut socket, mut replay) = (socket, Vec::new());
        loop {
            let end = attached(
                &mut socket,
                replay,
                (&mut journal, &mut received),
                &mut lines,
                &mut sockets,
                timers,
                (&shutdown, &drain),
            )
            .await;
            let request = match end {
                End::Connection(close) => {
                    let frame = close.map(|(code, reason)| CloseFrame {
                        code,
                        reason: reason.into(),
                    });
                    let _ = tokio::time::timeout(Duration::from_secs(1), socket.close(frame)).await;
                    break;
                }
                End::Broken(why) => {
                    tracing::debug!(%why, "a resumable WebSocket broke");
                    None
                }
                End::TakenOver(request) => Some(request),
            };
            drop(socket);
            let next = tokio::select! {
                next = sockets.next(request, received, &journal) => next,
                _ = shutdown.cancelled() => Next::GiveUp("the server is shutting down".into()),
            };
            match next {
                Next::Socket(resumed, lacking) => (socket, replay) = (*resumed, lacking),
                Next::GiveUp(why) => {
                    tracing::debug!(%why, "a resumable WebSocket connection ended");
                    break;
                }
            }
        }
        // The agent's input ends with `lines`; then what the connection held.
        drop(lines);
        drop(ending);
    });
}

/// How long a socket may go without taking what is sent (`stall`), and how
/// often it is pinged (`keep_alive`; nothing heard for three intervals
/// breaks it).
#[derive(Clone, Copy)]
struct Timers {
    stall: Option<Duration>,
    keep_alive: Option<Duration>,
}

/// Carry messages between `socket` and the connection's ends until one of
/// them ends, the socket breaks, or another socket takes over.
async fn attached<S, K: Sockets<S>>(
    socket: &mut WebSocketStream<S>,
    replay: Vec<Message>,
    (journal, received): (&mut Journal, &mut u64),
    lines: &mut Lines,
    sockets: &mut K,
    Timers { stall, keep_alive }: Timers,
    (shutdown, drain): (&CancellationToken, &CancellationToken),
) -> End<K::Request>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut frames) = socket.split();
    let Lines {
        from_agent,
        to_agent,
        tap,
    } = lines;
    let inbound = async {
        let mut silence = Silence::new(keep_alive);
        loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                why = silence.silent() => return End::Broken(why),
            };
            silence.heard();
            let line = match frame {
                None => return End::Broken("the socket ended without a close frame".into()),
                Some(Ok(message @ (Message::Text(_) | Message::Binary(_)))) => {
                    frame_line(message, tap.as_ref())
                }
                Some(Ok(Message::Close(_))) => return End::Connection(None),
                Some(Ok(_)) => continue,
                Some(Err(WsError::Capacity(_))) => {
                    return End::Connection(Some((CloseCode::Size, "message too big")))
                }
                Some(Err(error)) => return End::Broken(error.to_string()),
            };
            // Counted once handed on (a drop before that loses nothing: the
            // other side sends it again). Once the agent's input ended
            // (draining), what arrives has no taker.
            let _ = to_agent.send(line).await;
            *received += 1;
        }
    };
    let outbound = async {
        for message in replay {
            if let Err(why) = send(&mut sink, message, true, stall).await {
                return End::Broken(why);
            }
        }
        let mut pings = Ticks::new(keep_alive);
        loop {
            let message = tokio::select! {
                message = from_agent.recv() => message,
                _ = pings.tick() => {
                    // A ping each interval: the pong shows the way back works too.
                    if let Err(why) = send(&mut sink, Message::Ping(Default::default()), true, stall).await {
                        return End::Broken(why);
                    }
                    continue;
                }
            };
            let Some(message) = message else {
                let away = drain
                    .is_cancelled()
                    .then_some((CloseCode::Away, "the server is draining"));
                return End::Connection(away);
            };
            journal.keep(&message);
            if let Err(why) = send(&mut sink, message, from_agent.is_empty(), stall).await {
                return End::Broken(why);
            }
        }
    };
    tokio::pin!(inbound, outbound);
    // Draining: the agent's input ends (write_lines), and nothing more is read.
    let mut reading = !drain.is_cancelled();
    loop {
        tokio::select! {
            end = &mut inbound, if reading => return end,
            end = &mut outbound => return end,
            request = sockets.request() => return End::TakenOver(request),
            _ = shutdown.cancelled() => {
                return End::Connection(Some((CloseCode::Away, "the server is shutting down")))
            }
            _ = drain.cancelled(), if reading => reading = false,
        }
    }
}

/// Send `message`, flushing when `flush` (one flush per burst), giving up
/// after `stall` without progress.
async fn send<S>(
    sink: &mut futures_util::stream::SplitSink<&mut WebSocketStream<S>, Message>,
    message: Message,
    flush: bool,
    stall: Option<Duration>,
) -> Result<(), String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let sending = async {
        sink.feed(message).await?;
        if flush {
            sink.flush().await?;
        }
        Ok::<(), WsError>(())
    };
    match stall {
        Some(stall) => match tokio::time::timeout(stall, sending).await {
            Ok(sent) => sent.map_err(|error| error.to_string()),
            Err(_) => Err(format!(
                "output stalled: nothing taken for {} ms",
                stall.as_millis()
            )),
        },
        None => sending.await.map_err(|error| error.to_string()),
    }
}

/// The agent's (or engine's) output, one message per line, read for as
/// long as the connection lives; the channel holds one message, so output
/// waits in the pipe while no socket takes it.
fn read_lines<R: AsyncRead + Unpin + Send + 'static>(inner: R, tap: Option<Tap>) -> mpsc::Receiver<Message> {
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(async move {
        let mut lines = BufReader::new(inner);
        loop {
            let mut line = Vec::new();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if tx.send(line_frame(line, tap.as_ref())).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// The agent's (or engine's) input: lines written in order until the
/// connection ends or drains (then the input ends).
fn write_lines<W: AsyncWrite + Unpin + Send + 'static>(
    mut inner: W,
    drain: CancellationToken,
) -> mpsc::Sender<Vec<u8>> {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(1);
    tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                line = rx.recv() => line,
                _ = drain.cancelled() => None,
            };
            let Some(line) = line else { break };
            if inner.write_all(&line).await.is_err() {
                break;
            }
        }
        let _ = inner.shutdown().await;
    });
    tx
}
