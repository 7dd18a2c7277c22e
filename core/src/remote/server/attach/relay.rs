//! One connection's place between its transport and its agent when
//! sessions may be shared: every line either way passes here, is read for
//! its routing fields (peek.rs), and goes on unchanged unless it concerns
//! a session with other clients (board/).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::board::{Answer, Attached, Board, Party, Queue};
use crate::error::RequestError;
use crate::message::RequestId;
use crate::remote::peek::{self, Kind, Peek};
use crate::remote::{Lines, BRIDGE_BUFFER};
use crate::schema::method;
use crate::schema::v1::ContentBlock;
use crate::schema::v1_unstable::method::SESSION_FORK;

/// Items queued for one writer before its feeders wait (observers' are
/// evicted instead).
const QUEUE: usize = 1024;

/// Requests of the client's that make a session live on its agent, by id,
/// until answered: (method, the session asked for).
type Asked = Arc<Mutex<HashMap<RequestId, (String, Option<String>)>>>;

/// Put a relay between `client` (the transport's end) and the agent; the
/// agent's end is returned, for the server's callback.
pub(crate) fn relay(board: Arc<Board>, client: Lines) -> Lines {
    let (agent_end, inner) = tokio::io::duplex(BRIDGE_BUFFER);
    let (from_client_half, to_client_half) = tokio::io::split(client);
    let (from_agent_half, to_agent_half) = tokio::io::split(inner);
    let (to_client, client_queue) = mpsc::channel(QUEUE);
    let (to_agent, agent_queue) = mpsc::channel(QUEUE);
    let party = board.join(to_client, to_agent);
    let input_over = CancellationToken::new();
    let asked = Asked::default();
    tokio::spawn(write_lines(client_queue, to_client_half, party.ended.clone()));
    tokio::spawn(write_lines(agent_queue, to_agent_half, input_over.clone()));
    tokio::spawn(from_client(
        board.clone(),
        party.clone(),
        BufReader::new(from_client_half),
        asked.clone(),
        input_over,
    ));
    tokio::spawn(from_agent(board, party, BufReader::new(from_agent_half), asked));
    agent_end
}

/// Write queued lines until the queue closes or `stop` (then what is
/// queued already), and end the stream.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut queue: mpsc::Receiver<Vec<u8>>,
    mut to: W,
    stop: CancellationToken,
) {
    loop {
        let text = tokio::select! {
            biased;
            text = queue.recv() => text,
            _ = stop.cancelled() => queue.try_recv().ok(),
        };
        let Some(text) = text else { break };
        if to.write_all(&text).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// Where a client's line goes.
enum Route {
    /// On to its own agent, unchanged.
    Own,
    /// Back to the client: this answer instead.
    Back(Vec<u8>),
    /// To another connection's agent: this line instead.
    To(Queue, Vec<u8>),
    /// Nowhere: it was handled here.
    Nowhere,
}

async fn from_client<R: AsyncRead + Unpin>(
    board: Arc<Board>,
    party: Party,
    mut from: BufReader<R>,
    asked: Asked,
    input_over: CancellationToken,
) {
    loop {
        let mut line = Vec::new();
        let read = tokio::select! {
            read = from.read_until(b'\n', &mut line) => read,
            _ = party.ended.cancelled() => break,
        };
        if !matches!(read, Ok(n) if n > 0) {
            break;
        }
        // Not an object: its own agent answers it.
        let route = peek::peek(&line).map_or(Route::Own, |peeked| {
            route_from_client(&board, &party, &peeked, &asked, &line)
        });
        let sent = match route {
            Route::Own => party.agent.send(line).await,
            Route::Back(answer) => party.client.send(answer).await,
            Route::To(agent, answer) => agent.send(answer).await,
            Route::Nowhere => Ok(()),
        };
        if sent.is_err() {
            break;
        }
    }
    input_over.cancel();
}

/// Where a client's `line` goes: its own agent, another's agent (an answer
/// to a shared permission request), back (a refusal), or nowhere.
fn route_from_client(board: &Board, party: &Party, peeked: &Peek, asked: &Asked, line: &[u8]) -> Route {
    let Some(id) = peeked.id.clone() else {
        if let Some(session) = &peeked.session {
            if board.observes(party.id, session) {
                tracing::debug!(?peeked.method, "an observer's notification is dropped");
                return Route::Nowhere;
            }
        }
        return Route::Own;
    };
    match peeked.kind {
        Kind::Response => match serde_json::from_slice::<Value>(line) {
            Ok(response) => match board.answered(party.id, &id, response) {
                Answer::Own => Route::Own,
                Answer::Late => Route::Nowhere,
                Answer::First(agent, answer) => Route::To(agent, answer),
            },
            Err(_) => Route::Own,
        },
        Kind::Request => {
            let method = peeked.method.as_deref().unwrap_or_default();
            let Some(session) = peeked.session.clone() else {
                if method == method::SESSION_NEW {
                    asked.lock().unwrap().insert(id, (method.to_owned(), None));
                }
                return Route::Own;
            };
            if method == method::SESSION_LOAD {
                match board.attach(&session, party.id, &id) {
                    Attached::Observing => return Route::Nowhere,
                    Attached::Busy => {
                        let busy = RequestError::internal_error()
                            .with_data("the session's history did not fit this connection's queue");
                        return Route::Back(error_line(&id, busy));
                    }
                    Attached::NotLive => {}
                }
            }
            if board.observes(party.id, &session) {
                let refused = RequestError::invalid_request().with_data(format!(
                    "this connection observes session {session}: only its controller may send {method}"
                ));
                return Route::Back(error_line(&id, refused));
            }
            if method == method::SESSION_LOAD || method == method::SESSION_RESUME {
                // Live from now: the agent's replay is the start of its history.
                board.claim(&session, party.id, None);
                asked
                    .lock()
                    .unwrap()
                    .insert(id, (method.to_owned(), Some(session)));
            } else if method == SESSION_FORK {
                asked.lock().unwrap().insert(id, (method.to_owned(), None));
            } else if method == method::SESSION_PROMPT && board.controls(party.id, &session) {
                if let Some(prompt) = prompt_of(line) {
                    board.prompted(&session, party.id, prompt);
                }
            }
            Route::Own
        }
        _ => Route::Own,
    }
}

async fn from_agent<R: AsyncRead + Unpin>(
    board: Arc<Board>,
    party: Party,
    mut from: BufReader<R>,
    asked: Asked,
) {
    loop {
        let mut line = Vec::new();
        if !matches!(from.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            break;
        }
        let peeked = peek::peek(&line);
        if let Some(peeked) = &peeked {
            note_from_agent(&board, &party, peeked, &asked, &line);
        }
        if party.client.send(line).await.is_err() {
            break;
        }
        // Observers get their copies once the controller's is queued.
        if let Some(peeked) = peeked.filter(|p| p.kind == Kind::Request) {
            if let Some(id) = peeked
                .id
                .filter(|_| peeked.method.as_deref() == Some(method::SESSION_REQUEST_PERMISSION))
            {
                board.permission_delivered(party.id, &id);
            }
        }
    }
    board.leave(party.id);
    party.ended.cancel();
}

/// What the board learns from an agent's line before its client gets it.
fn note_from_agent(board: &Board, party: &Party, peeked: &Peek, asked: &Asked, line: &[u8]) {
    match peeked.kind {
        Kind::Response => {
            let Some(id) = &peeked.id else { return };
            let Some((_, session)) = asked.lock().unwrap().remove(id) else {
                return;
            };
            match (session.or_else(|| peeked.result_session.clone()), peeked.failed) {
                (Some(session), true) => board.release(&session, party.id),
                (Some(session), false) => board.claim(&session, party.id, result_of(line)),
                (None, _) => {}
            }
        }
        Kind::Notification => {
            if peeked.method.as_deref() == Some(crate::CANCEL_REQUEST_METHOD) {
                if let Some(id) = cancelled_id(line) {
                    board.agent_withdrew(party.id, &id);
                }
            } else if let Some(session) = &peeked.session {
                board.notified(session, party.id, line);
            }
        }
        Kind::Request if peeked.method.as_deref() == Some(method::SESSION_REQUEST_PERMISSION) => {
            if let (Some(session), Some(id)) = (&peeked.session, &peeked.id) {
                if let Some(params) = params_of(line) {
                    board.permission_asked(session, party.id, id, params);
                }
            }
        }
        _ => {}
    }
}

fn result_of(text: &[u8]) -> Option<Map<String, Value>> {
    #[derive(Deserialize)]
    struct Response {
        result: Map<String, Value>,
    }
    serde_json::from_slice::<Response>(text).ok().map(|r| r.result)
}

fn params_of(text: &[u8]) -> Option<Value> {
    #[derive(Deserialize)]
    struct Message {
        params: Value,
    }
    serde_json::from_slice::<Message>(text).ok().map(|m| m.params)
}

fn prompt_of(text: &[u8]) -> Option<Vec<ContentBlock>> {
    #[derive(Deserialize)]
    struct Params {
        prompt: Vec<ContentBlock>,
    }
    #[derive(Deserialize)]
    struct Message {
        params: Params,
    }
    serde_json::from_slice::<Message>(text)
        .ok()
        .map(|m| m.params.prompt)
}

fn cancelled_id(text: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    #[derive(Deserialize)]
    struct Message {
        params: Params,
    }
    serde_json::from_slice::<Message>(text)
        .ok()
        .map(|m| m.params.request_id)
}

fn error_line(id: &RequestId, error: RequestError) -> Vec<u8> {
    let mut text = json!({"jsonrpc": "2.0", "id": id, "error": error})
        .to_string()
        .into_bytes();
    text.push(b'\n');
    text
}
