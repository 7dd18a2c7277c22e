//! A proxy's one connection to its conductor as two: [`ProxyTransports`].
//! `predecessor` carries the messages to and from the client side as they
//! are (`proxy/initialize` arrives as `initialize`); `successor` those to
//! and from the agent side, taken out of `proxy/successor` and put back in.
//! A connection on each is an ordinary agent-side and client-side
//! connection, so every binding writes a proxy on the connection it already
//! has: the envelope, the id spaces and the cancellations stay here.
//!
//! - The successor connection's requests go out as `proxy/successor`
//!   requests with their ids moved up by [`SUCCESSOR_IDS`] (both connections
//!   number from 1); answers at or above it go back to the successor, moved
//!   down.
//! - The conductor's requests are remembered by id until answered, so its
//!   `$/cancel_request` reaches the connection handling that request. A
//!   successor connection cancelling its own request sends the plain
//!   `$/cancel_request` for the `proxy/successor` request it went out as.
//! - A `proxy/successor` that is no envelope is answered -32602 here.
//! - When the conductor's stream ends, both connections read EOF; when
//!   either connection ends, the proxy's output to the conductor ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::envelope;
use crate::framing::{LineEvent, LineReader, DEFAULT_MAX_MESSAGE_SIZE};
use crate::message::{frame, RequestId};
use crate::schema::v1::method::{CANCEL_REQUEST, INITIALIZE};
use crate::schema::v1_unstable::method::{PROXY_INITIALIZE, PROXY_SUCCESSOR};
use crate::transport::Transport;

/// Where the successor connection's request ids start on the wire.
pub const SUCCESSOR_IDS: i64 = 1 << 40;

/// Bytes buffered between the conductor's stream and each connection.
const PIPE_BYTES: usize = 256 * 1024;

/// Lines queued for the conductor before a connection's writes wait.
const OUTPUT_LINES: usize = 1024;

/// The two connections of a proxy: see the module docs.
pub struct ProxyTransports {
    /// Toward the client: serve it as an agent.
    pub predecessor: Transport,
    /// Toward the agent: talk to it as a client.
    pub successor: Transport,
    /// Nothing is read from the conductor until this is started (or
    /// dropped): open both connections first, so that a handler of either
    /// can reach the other.
    pub reading: ReadingGate,
}

/// A proxy's two transports for a binding that opens each on its own call:
/// the conductor's messages flow once both were taken.
pub struct ProxyHalves(Mutex<(Option<Transport>, Option<Transport>, Option<ReadingGate>)>);

/// Why a binding cannot open a proxy half: it opened that one already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenedAlready;

impl std::fmt::Display for OpenedAlready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("this proxy stream was opened already")
    }
}

impl std::error::Error for OpenedAlready {}

impl ProxyHalves {
    /// This process's stdin/stdout, the conductor's connection to it, split
    /// on `runtime` (entered here: a binding calls from its own thread).
    pub fn stdio(runtime: &Handle) -> Self {
        let _entered = runtime.enter();
        Self::new(split(Transport::stdio(), runtime))
    }

    /// Hold `transports` until taken.
    pub fn new(transports: ProxyTransports) -> Self {
        let ProxyTransports {
            predecessor,
            successor,
            reading,
        } = transports;
        Self(Mutex::new((Some(predecessor), Some(successor), Some(reading))))
    }

    /// The transport toward the agent (`successor`) or the client, once.
    /// Taking the second starts reading from the conductor (what arrives
    /// waits for its connection to read it): a host whose handlers run on
    /// one thread (Python's, Node's loop) has both connections before any
    /// handler runs.
    pub fn take(&self, successor: bool) -> Result<Transport, OpenedAlready> {
        let mut halves = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let taken = if successor {
            halves.1.take()
        } else {
            halves.0.take()
        };
        if halves.0.is_none() && halves.1.is_none() {
            if let Some(reading) = halves.2.take() {
                reading.start();
            }
        }
        taken.ok_or(OpenedAlready)
    }
}

/// Holds the conductor's messages back until [`ReadingGate::start`] (or drop).
pub struct ReadingGate(Option<tokio::sync::oneshot::Sender<()>>);

impl ReadingGate {
    /// Let the conductor's messages through.
    pub fn start(mut self) {
        self.open();
    }

    fn open(&mut self) {
        if let Some(start) = self.0.take() {
            let _ = start.send(());
        }
    }
}

impl Drop for ReadingGate {
    fn drop(&mut self) {
        self.open();
    }
}

/// Which of the two connections a message belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hop {
    Predecessor,
    Successor,
}

/// What the split reads of a line; the parts it passes on pass as text.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Where a line from the conductor goes.
enum Inbound {
    /// To a connection, as this line.
    To(Hop, Vec<u8>),
    /// Back to the conductor: the split answers it.
    Answer(Vec<u8>),
    /// Nowhere (a notification that is no envelope).
    Drop,
}

#[derive(Deserialize)]
struct CancelParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: &'a RawValue,
}

/// The conductor's requests not answered yet, by id text: which connection has each.
type Open = Arc<Mutex<HashMap<String, Hop>>>;

/// Split `conductor` (a proxy's stdio, usually) into its two connections;
/// the moving of lines runs on `runtime`.
pub fn split(conductor: Transport, runtime: &Handle) -> ProxyTransports {
    let (predecessor, predecessor_split) = tokio::io::duplex(PIPE_BYTES);
    let (successor, successor_split) = tokio::io::duplex(PIPE_BYTES);
    let (reader, writer) = conductor.into_streams();
    let (to_conductor, output) = mpsc::channel::<Vec<u8>>(OUTPUT_LINES);
    let open: Open = Arc::default();
    let (predecessor_in, predecessor_out) = tokio::io::split(predecessor_split);
    let (successor_in, successor_out) = tokio::io::split(successor_split);
    let done = CancellationToken::new();
    let (start, started) = tokio::sync::oneshot::channel();
    runtime.spawn(write_to_conductor(writer, output, done.clone()));
    runtime.spawn(read_from_conductor(
        started,
        reader,
        predecessor_out,
        successor_out,
        open.clone(),
        to_conductor.clone(),
    ));
    runtime.spawn(read_from(
        Hop::Predecessor,
        predecessor_in,
        open.clone(),
        to_conductor.clone(),
        done.clone(),
    ));
    runtime.spawn(read_from(Hop::Successor, successor_in, open, to_conductor, done));
    ProxyTransports {
        predecessor: Transport::from_stream(predecessor),
        successor: Transport::from_stream(successor),
        reading: ReadingGate(Some(start)),
    }
}

/// The proxy's output, until either connection ends (`done`): what was
/// queued still goes out, then the conductor reads EOF.
async fn write_to_conductor(
    mut writer: crate::transport::BoxWriter,
    mut output: mpsc::Receiver<Vec<u8>>,
    done: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            biased;
            line = output.recv() => line,
            _ = done.cancelled() => output.try_recv().ok(),
        };
        let Some(line) = line else { break };
        if writer.write_all(&line).await.is_err() {
            return;
        }
        if output.is_empty() && writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}

/// The conductor's lines, each to the connection it is for.
async fn read_from_conductor(
    started: tokio::sync::oneshot::Receiver<()>,
    reader: crate::transport::BoxReader,
    mut predecessor: tokio::io::WriteHalf<DuplexStream>,
    mut successor: tokio::io::WriteHalf<DuplexStream>,
    open: Open,
    to_conductor: mpsc::Sender<Vec<u8>>,
) {
    let _ = started.await;
    let mut lines = LineReader::new(reader, DEFAULT_MAX_MESSAGE_SIZE);
    loop {
        let mut routed: Vec<Inbound> = Vec::new();
        let more = lines.read_batch(|event| match event {
            LineEvent::Line(line) => routed.push(route_inbound(line, &open)),
            LineEvent::TooLong { len } => routed.push(Inbound::Answer(too_long(len))),
        });
        let more = matches!(more.await, Ok(true));
        for routed in routed {
            let written = match routed {
                Inbound::To(Hop::Predecessor, line) => predecessor.write_all(&line).await,
                Inbound::To(Hop::Successor, line) => successor.write_all(&line).await,
                Inbound::Answer(line) => {
                    let _ = to_conductor.send(line).await;
                    Ok(())
                }
                Inbound::Drop => Ok(()),
            };
            if written.is_err() {
                return;
            }
        }
        if !more {
            let _ = predecessor.shutdown().await;
            let _ = successor.shutdown().await;
            return;
        }
    }
}

/// Where one line from the conductor goes, and as what.
fn route_inbound(line: &[u8], open: &Open) -> Inbound {
    let as_is = |hop| Inbound::To(hop, with_newline(line));
    let Ok(text) = std::str::from_utf8(line) else {
        return as_is(Hop::Predecessor); // its connection answers the parse error
    };
    let Ok(peek) = serde_json::from_str::<Peek>(text) else {
        return as_is(Hop::Predecessor);
    };
    let Some(method) = peek.method.as_deref() else {
        // An answer to one of our requests: the successor's ids are moved up.
        return match peek.id.and_then(|id| id.get().parse::<i64>().ok()) {
            Some(id) if id >= SUCCESSOR_IDS => {
                Inbound::To(Hop::Successor, response_line(id - SUCCESSOR_IDS, &peek))
            }
            _ => as_is(Hop::Predecessor),
        };
    };
    let remember = |hop| {
        if let Some(id) = peek.id {
            lock(open).insert(id.get().to_owned(), hop);
        }
    };
    match method {
        PROXY_SUCCESSOR => match envelope::unwrap(peek.params) {
            Ok(inner) => {
                remember(Hop::Successor);
                Inbound::To(
                    Hop::Successor,
                    message_line(
                        peek.id.map(RawValue::get),
                        &inner.method,
                        inner.params.as_deref().map(RawValue::get),
                    ),
                )
            }
            Err(error) => match peek
                .id
                .and_then(|id| serde_json::from_str::<RequestId>(id.get()).ok())
            {
                Some(id) => Inbound::Answer(frame::response(&id, &Err(error))),
                None => Inbound::Drop,
            },
        },
        PROXY_INITIALIZE => {
            remember(Hop::Predecessor);
            Inbound::To(
                Hop::Predecessor,
                message_line(
                    peek.id.map(RawValue::get),
                    INITIALIZE,
                    peek.params.map(RawValue::get),
                ),
            )
        }
        CANCEL_REQUEST if peek.id.is_none() => {
            let cancelled = peek
                .params
                .and_then(|params| serde_json::from_str::<CancelParams>(params.get()).ok())
                .and_then(|params| lock(open).get(params.request_id.get()).copied());
            as_is(cancelled.unwrap_or(Hop::Predecessor))
        }
        _ => {
            remember(Hop::Predecessor);
            as_is(Hop::Predecessor)
        }
    }
}

/// One connection's lines, each to the conductor as what it is there.
async fn read_from(
    hop: Hop,
    reader: tokio::io::ReadHalf<DuplexStream>,
    open: Open,
    to_conductor: mpsc::Sender<Vec<u8>>,
    done: CancellationToken,
) {
    let _done = done.drop_guard();
    // Our own engine's output: no line is dropped (its size is what the proxy wrote).
    let mut lines = LineReader::new(reader, usize::MAX);
    loop {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let more = lines.read_batch(|event| {
            if let LineEvent::Line(line) = event {
                out.push(route_outbound(hop, line, &open));
            }
        });
        let more = matches!(more.await, Ok(true));
        for line in out {
            if to_conductor.send(line).await.is_err() {
                return;
            }
        }
        if !more {
            return; // this connection ended: so does the proxy's output
        }
    }
}

/// What one line a connection wrote is on the conductor's wire.
fn route_outbound(hop: Hop, line: &[u8], open: &Open) -> Vec<u8> {
    let text = std::str::from_utf8(line).unwrap_or_default(); // the engine writes UTF-8 JSON
    let Ok(peek) = serde_json::from_str::<Peek>(text) else {
        return with_newline(line);
    };
    let Some(method) = peek.method.as_deref() else {
        // An answer to the conductor's request: no longer open.
        if let Some(id) = peek.id {
            lock(open).remove(id.get());
        }
        return with_newline(line);
    };
    if hop == Hop::Predecessor {
        return with_newline(line);
    }
    match (method, peek.id) {
        (CANCEL_REQUEST, None) => {
            // Our request went out as a `proxy/successor` with its id moved up.
            let moved = peek
                .params
                .and_then(|params| serde_json::from_str::<CancelParams>(params.get()).ok())
                .and_then(|params| params.request_id.get().parse::<i64>().ok());
            match moved {
                Some(id) => {
                    let params = format!("{{\"requestId\":{}}}", id + SUCCESSOR_IDS);
                    message_line(None, CANCEL_REQUEST, Some(&params))
                }
                None => with_newline(line),
            }
        }
        (_, id) => {
            let wrapped = envelope::text(method, peek.params.map(RawValue::get));
            let mut out = Vec::new();
            match id.and_then(|id| id.get().parse::<i64>().ok()) {
                Some(id) => {
                    frame::write_request(&mut out, id + SUCCESSOR_IDS, PROXY_SUCCESSOR, Some(&wrapped))
                }
                None => frame::write_notification(&mut out, PROXY_SUCCESSOR, Some(&wrapped)),
            }
            out
        }
    }
}

/// A request (with `id`, JSON text) or notification line.
fn message_line(id: Option<&str>, method: &str, params: Option<&str>) -> Vec<u8> {
    let mut out = Vec::new();
    match id {
        Some(id) => frame::write_request_with_id_text(&mut out, id, method, params),
        None => frame::write_notification(&mut out, method, params),
    }
    out
}

/// The answer to a line longer than a connection takes (as the engine's reader answers one).
fn too_long(len: usize) -> Vec<u8> {
    let error = crate::error::RequestError::invalid_request().with_data(serde_json::json!({
        "reason": format!("message of {len} bytes exceeds the limit of {DEFAULT_MAX_MESSAGE_SIZE} bytes")
    }));
    frame::response(&RequestId::Null, &Err(error))
}

/// A response line for `id`, with the result or error `peek` holds.
fn response_line(id: i64, peek: &Peek) -> Vec<u8> {
    let outcome = match (peek.result, peek.error) {
        (Some(result), _) => format!("\"result\":{}", result.get()),
        (None, Some(error)) => format!("\"error\":{}", error.get()),
        (None, None) => "\"result\":null".to_owned(),
    };
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{outcome}}}\n").into_bytes()
}

fn with_newline(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 1);
    out.extend_from_slice(line);
    out.push(b'\n');
    out
}

fn lock(open: &Open) -> std::sync::MutexGuard<'_, HashMap<String, Hop>> {
    open.lock().unwrap_or_else(|p| p.into_inner())
}
