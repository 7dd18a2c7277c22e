//! One connection's place between its transport and its agent when
//! sessions may be shared: every line either way passes here, is read for
//! its routing fields (peek.rs), and goes on unchanged unless it concerns
//! a session with other clients (board.rs).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::board::{Answer, Attached, Board, Party};
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
    mut queue: mpsc::Receiver<String>,
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
        if to.write_all(text.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

async fn from_client<R: AsyncRead + Unpin>(
    board: Arc<Board>,
    party: Party,
    mut from: BufReader<R>,
    asked: Asked,
    input_over: CancellationToken,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = tokio::select! {
            read = from.read_until(b'\n', &mut line) => read,
            _ = party.ended.cancelled() => break,
        };
        if !matches!(read, Ok(n) if n > 0) {
            break;
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        let Some(peeked) = peek::peek(&line) else {
            // Not an object: its own agent answers it.
            if party.agent.send(text).await.is_err() {
                break;
            }
            continue;
        };
        let Some((to, text)) = route_from_client(&board, &party, &peeked, &asked, text) else {
            continue;
        };
        if to.send(text).await.is_err() {
            break;
        }
    }
    input_over.cancel();
}

/// Where a client's line goes (its agent, another's agent, or back to
/// itself), and what it is then; None: nowhere.
fn route_from_client(
    board: &Board,
    party: &Party,
    peeked: &Peek,
    asked: &Asked,
    text: String,
) -> Option<(mpsc::Sender<String>, String)> {
    let back = |text| Some((party.client.clone(), text));
    let own = Some((party.agent.clone(), text.clone()));
    let Some(id) = peeked.id.clone() else {
        if let Some(session) = &peeked.session {
            if board.observes(party.id, session) {
                tracing::debug!(?peeked.method, "an observer's notification is dropped");
                return None;
            }
        }
        return own;
    };
    match peeked.kind {
        Kind::Response => match serde_json::from_str::<Value>(&text) {
            Ok(response) => match board.answered(party.id, &id, response) {
                Answer::Own => own,
                Answer::Late => None,
                Answer::First(agent, answer) => Some((agent, answer)),
            },
            Err(_) => own,
        },
        Kind::Request => {
            let method = peeked.method.as_deref().unwrap_or_default();
            let Some(session) = peeked.session.clone() else {
                if method == method::SESSION_NEW {
                    asked.lock().unwrap().insert(id, (method.to_owned(), None));
                }
                return own;
            };
            if method == method::SESSION_LOAD {
                match board.attach(&session, party.id, &id) {
                    Attached::Observing => return None,
                    Attached::Busy => {
                        let busy = RequestError::internal_error()
                            .with_data("the session's history did not fit this connection's queue");
                        return back(error_line(&id, busy));
                    }
                    Attached::NotLive => {}
                }
            }
            if board.observes(party.id, &session) {
                let refused = RequestError::invalid_request().with_data(format!(
                    "this connection observes session {session}: only its controller may send {method}"
                ));
                return back(error_line(&id, refused));
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
                if let Some(prompt) = prompt_of(&text) {
                    board.prompted(&session, party.id, prompt);
                }
            }
            own
        }
        _ => own,
    }
}

async fn from_agent<R: AsyncRead + Unpin>(
    board: Arc<Board>,
    party: Party,
    mut from: BufReader<R>,
    asked: Asked,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        if !matches!(from.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            break;
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        let peeked = peek::peek(&line);
        if let Some(peeked) = &peeked {
            note_from_agent(&board, &party, peeked, &asked, &text);
        }
        if party.client.send(text).await.is_err() {
            break;
        }
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
fn note_from_agent(board: &Board, party: &Party, peeked: &Peek, asked: &Asked, text: &str) {
    match peeked.kind {
        Kind::Response => {
            let Some(id) = &peeked.id else { return };
            let Some((_, session)) = asked.lock().unwrap().remove(id) else {
                return;
            };
            match (session.or_else(|| peeked.result_session.clone()), peeked.failed) {
                (Some(session), true) => board.release(&session, party.id),
                (Some(session), false) => board.claim(&session, party.id, result_of(text)),
                (None, _) => {}
            }
        }
        Kind::Notification => {
            if peeked.method.as_deref() == Some(crate::CANCEL_REQUEST_METHOD) {
                if let Some(id) = cancelled_id(text) {
                    board.agent_withdrew(party.id, &id);
                }
            } else if let Some(session) = &peeked.session {
                board.notified(session, party.id, text);
            }
        }
        Kind::Request if peeked.method.as_deref() == Some(method::SESSION_REQUEST_PERMISSION) => {
            if let (Some(session), Some(id)) = (&peeked.session, &peeked.id) {
                if let Some(params) = params_of(text) {
                    board.permission_asked(session, party.id, id, params);
                }
            }
        }
        _ => {}
    }
}

fn result_of(text: &str) -> Option<Map<String, Value>> {
    #[derive(Deserialize)]
    struct Response {
        result: Map<String, Value>,
    }
    serde_json::from_str::<Response>(text).ok().map(|r| r.result)
}

fn params_of(text: &str) -> Option<Value> {
    #[derive(Deserialize)]
    struct Message {
        params: Value,
    }
    serde_json::from_str::<Message>(text).ok().map(|m| m.params)
}

fn prompt_of(text: &str) -> Option<Vec<ContentBlock>> {
    #[derive(Deserialize)]
    struct Params {
        prompt: Vec<ContentBlock>,
    }
    #[derive(Deserialize)]
    struct Message {
        params: Params,
    }
    serde_json::from_str::<Message>(text)
        .ok()
        .map(|m| m.params.prompt)
}

fn cancelled_id(text: &str) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    #[derive(Deserialize)]
    struct Message {
        params: Params,
    }
    serde_json::from_str::<Message>(text)
        .ok()
        .map(|m| m.params.request_id)
}

fn error_line(id: &RequestId, error: RequestError) -> String {
    let mut text = json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string();
    text.push('\n');
    text
}
