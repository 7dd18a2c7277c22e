//! What the connections of one server share about their live sessions:
//! who controls each, who observes it, what it said so far, and the
//! permission requests still waiting for an answer. Every operation holds
//! the lock only to decide and to queue without waiting (`try_send`): an
//! observer whose queue is full is evicted rather than let stall the
//! controller's agent.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::message::RequestId;
use crate::schema::v1::{ContentBlock, ContentChunk, SessionNotification, SessionUpdate};

mod permissions;

use permissions::{copy_id, request_line, withdraw, Permission};

/// Lines (each ending in a newline, possibly several) for one writer, as
/// bytes: a line passes through unchanged, whatever it holds.
pub(super) type Queue = mpsc::Sender<Vec<u8>>;

/// The `_meta` key of a joiner's `session/load` answer.
pub const ATTACH_META: &str = "acpEngine/attach";

/// One served connection, as the board reaches it.
#[derive(Clone)]
pub(super) struct Party {
    pub(super) id: u64,
    /// Lines to its client.
    pub(super) client: Queue,
    /// Lines to its agent.
    pub(super) agent: Queue,
    /// Cancelled to end the connection (its queue overflowed, or it ended).
    pub(super) ended: CancellationToken,
}

/// What a joiner's `session/load` came to.
pub(super) enum Attached {
    /// The session is not live on another connection: its own agent loads it.
    NotLive,
    /// History, pending permissions and the answer are queued to it.
    Observing,
    /// Its queue had no room for them: it is answered with this error.
    Busy,
}

/// What to do with a client's response.
pub(super) enum Answer {
    /// Not an answer to a shared permission request: its own agent's.
    Own,
    /// An answer to a request withdrawn from it: dropped.
    Late,
    /// The first answer: this line (the agent's id) to this agent.
    First(Queue, Vec<u8>),
}

struct Session {
    controller: u64,
    observers: Vec<u64>,
    history: History,
    /// The controller's `session/new` (or `session/load`) result, without
    /// `sessionId`: a joiner's answer starts from it.
    snapshot: Map<String, Value>,
}

/// A session's messages so far; the oldest are let go when its
/// connection's sessions hold more than the budget together.
#[derive(Default)]
struct History {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    dropped: u64,
}

impl History {
    /// Let the oldest line go: the bytes freed.
    fn drop_oldest(&mut self) -> usize {
        let Some(oldest) = self.lines.pop_front() else {
            return 0;
        };
        self.bytes -= oldest.len();
        self.dropped += 1;
        oldest.len()
    }
}

#[derive(Default)]
struct State {
    parties: HashMap<u64, Party>,
    sessions: HashMap<String, Session>,
    /// History bytes kept, by controlling connection.
    history_bytes: HashMap<u64, usize>,
    permissions: HashMap<u64, Permission>,
    /// (party, id it holds a permission under) -> the permission.
    copies: HashMap<(u64, RequestId), u64>,
    /// Copies withdrawn whose answers have not come: dropped when they do.
    withdrawn: HashSet<(u64, RequestId)>,
    next_permission: u64,
}

/// The live sessions of one server, shared by its connections.
pub(crate) struct Board {
    state: Mutex<State>,
    next_party: AtomicU64,
    /// The histories of one connection's sessions are kept up to this many
    /// bytes together (memory is bounded per connection).
    history_bytes: usize,
}

impl Board {
    pub(crate) fn new(history_bytes: usize) -> Self {
        Self {
            state: Mutex::default(),
            next_party: AtomicU64::new(1),
            history_bytes,
        }
    }

    /// A new connection.
    pub(super) fn join(&self, client: Queue, agent: Queue) -> Party {
        let party = Party {
            id: self.next_party.fetch_add(1, Ordering::Relaxed),
            client,
            agent,
            ended: CancellationToken::new(),
        };
        self.lock().parties.insert(party.id, party.clone());
        party
    }

    /// Observers attached now, over every session.
    pub(crate) fn observers(&self) -> usize {
        self.lock().sessions.values().map(|s| s.observers.len()).sum()
    }

    /// `session` now lives on `controller`'s agent (created or loaded
    /// there); `snapshot` is its `session/new` or `session/load` result.
    pub(super) fn claim(&self, session: &str, controller: u64, snapshot: Option<Map<String, Value>>) {
        let mut state = self.lock();
        let entry = state
            .sessions
            .entry(session.to_owned())
            .or_insert_with(|| Session {
                controller,
                observers: Vec::new(),
                history: History::default(),
                snapshot: Map::new(),
            });
        if entry.controller != controller {
            return;
        }
        if let Some(mut snapshot) = snapshot {
            snapshot.remove("sessionId");
            entry.snapshot = snapshot;
        }
    }

    /// `controller`'s agent failed to load `session`.
    pub(super) fn release(&self, session: &str, controller: u64) {
        let mut state = self.lock();
        if state
            .sessions
            .get(session)
            .is_some_and(|s| s.controller == controller)
        {
            if let Some(gone) = state.sessions.remove(session) {
                if let Some(kept) = state.history_bytes.get_mut(&controller) {
                    *kept -= gone.history.bytes;
                }
            }
        }
    }

    /// Whether `party` observes `session` (and so may not steer it).
    pub(super) fn observes(&self, party: u64, session: &str) -> bool {
        self.lock()
            .sessions
            .get(session)
            .is_some_and(|s| s.observers.contains(&party))
    }

    /// Whether `party` controls `session`.
    pub(super) fn controls(&self, party: u64, session: &str) -> bool {
        self.lock()
            .sessions
            .get(session)
            .is_some_and(|s| s.controller == party)
    }

    /// `joiner` asked to load `session` (request `id`): attach it as an
    /// observer if the session lives on another connection.
    pub(super) fn attach(&self, session: &str, joiner: u64, id: &RequestId) -> Attached {
        let mut guard = self.lock();
        let state = &mut *guard;
        let Some(live) = state.sessions.get_mut(session) else {
            return Attached::NotLive;
        };
        if live.controller == joiner {
            return Attached::NotLive;
        }
        let Some(client) = state.parties.get(&joiner).map(|p| p.client.clone()) else {
            return Attached::NotLive;
        };
        let mut batch: Vec<u8> = live.history.lines.iter().flatten().copied().collect();
        let waiting: Vec<u64> = state
            .permissions
            .iter()
            .filter(|(_, p)| p.session == session && p.delivered)
            .map(|(key, _)| *key)
            .collect();
        let mut copies = Vec::new();
        for key in waiting {
            let copy_id = copy_id(key, joiner);
            let permission = &state.permissions[&key];
            batch.extend(request_line(&copy_id, &permission.params));
            copies.push((key, copy_id));
        }
        let mut result = live.snapshot.clone();
        result.insert(
            "_meta".to_owned(),
            json!({ ATTACH_META: {
                "role": "observer",
                "replayed": live.history.lines.len(),
                "dropped": live.history.dropped,
            }}),
        );
        batch.extend(line(&json!({"jsonrpc": "2.0", "id": id, "result": result})));
        if client.try_send(batch).is_err() {
            return Attached::Busy;
        }
        if !live.observers.contains(&joiner) {
            live.observers.push(joiner);
        }
        for (key, copy_id) in copies {
            if let Some(permission) = state.permissions.get_mut(&key) {
                permission.holders.push((joiner, copy_id.clone()));
            }
            state.copies.insert((joiner, copy_id), key);
        }
        Attached::Observing
    }

    /// `controller`'s agent sent `line`, a notification about `session`:
    /// kept in its history and sent to its observers.
    pub(super) fn notified(&self, session: &str, controller: u64, line: &[u8]) {
        let mut guard = self.lock();
        let state = &mut *guard;
        let Some(live) = state.sessions.get_mut(session) else {
            return;
        };
        if live.controller != controller {
            return;
        }
        live.history.lines.push_back(line.to_vec());
        live.history.bytes += line.len();
        let observers = live.observers.clone();
        let kept = state.history_bytes.entry(controller).or_default();
        *kept += line.len();
        while *kept > self.history_bytes {
            // The longest history of this connection's sessions gives way.
            let longest = state
                .sessions
                .values_mut()
                .filter(|s| s.controller == controller)
                .max_by_key(|s| s.history.bytes);
            match longest.map(|s| s.history.drop_oldest()) {
                Some(freed) if freed > 0 => *kept -= freed,
                _ => break,
            }
        }
        for observer in observers {
            send_or_evict(state, observer, line.to_vec());
        }
    }

    /// `controller`'s client prompted `session`: its observers see the
    /// prompt as the agent would replay it (`user_message_chunk` updates).
    pub(super) fn prompted(&self, session: &str, controller: u64, prompt: Vec<ContentBlock>) {
        for content in prompt {
            let update = SessionUpdate::UserMessageChunk(ContentChunk::new(content));
            let notification = SessionNotification::new(session.to_owned(), update);
            let message = json!({
                "jsonrpc": "2.0",
                "method": crate::schema::method::SESSION_UPDATE,
                "params": notification,
            });
            self.notified(session, controller, &line(&message));
        }
    }

    /// `party`'s connection ended: the sessions it controlled end (their
    /// observers' waiting permissions are withdrawn), and it observes no more.
    pub(super) fn leave(&self, party: u64) {
        let mut guard = self.lock();
        let state = &mut *guard;
        state.parties.remove(&party);
        state.sessions.retain(|_, s| s.controller != party);
        state.history_bytes.remove(&party);
        for session in state.sessions.values_mut() {
            session.observers.retain(|o| *o != party);
        }
        let orphaned: Vec<u64> = state
            .permissions
            .iter()
            .filter(|(_, p)| p.controller == party)
            .map(|(key, _)| *key)
            .collect();
        for key in orphaned {
            withdraw(state, key, Some(party));
        }
        for permission in state.permissions.values_mut() {
            permission.holders.retain(|(holder, _)| *holder != party);
        }
        state.copies.retain(|(holder, _), _| *holder != party);
        state.withdrawn.retain(|(holder, _)| *holder != party);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Queue `text` to `party`'s client without waiting; a party whose queue
/// is full (or gone) is evicted, and false returned.
fn send_or_evict(state: &mut State, party: u64, text: Vec<u8>) -> bool {
    let Some(to) = state.parties.get(&party) else {
        return false;
    };
    if to.client.try_send(text).is_ok() {
        return true;
    }
    tracing::warn!(party, "an observer fell behind its session: its connection ends");
    to.ended.cancel();
    for session in state.sessions.values_mut() {
        session.observers.retain(|o| *o != party);
    }
    false
}

fn line(value: &Value) -> Vec<u8> {
    let mut text = value.to_string().into_bytes();
    text.push(b'\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn party(board: &Board) -> (Party, mpsc::Receiver<Vec<u8>>) {
        let (client, to_client) = mpsc::channel(16);
        let (agent, _) = mpsc::channel(16);
        (board.join(client, agent), to_client)
    }

    #[test]
    fn a_connections_histories_share_one_budget_and_a_joiner_learns_what_was_dropped() {
        let board = Board::new(100);
        let (controller, _) = party(&board);
        board.claim("quiet", controller.id, None);
        board.claim("busy", controller.id, None);
        board.notified("quiet", controller.id, &[b'q'; 40]);
        for _ in 0..10 {
            board.notified("busy", controller.id, &[b'b'; 30]);
        }
        let state = board.lock();
        let (quiet, busy) = (&state.sessions["quiet"].history, &state.sessions["busy"].history);
        assert!(
            quiet.bytes + busy.bytes <= 100,
            "{} + {}",
            quiet.bytes,
            busy.bytes
        );
        assert_eq!(state.history_bytes[&controller.id], quiet.bytes + busy.bytes);
        assert_eq!(
            (quiet.lines.len(), busy.lines.len()),
            (1, 2),
            "the longest gave way"
        );
        drop(state);
        let (joiner, mut told) = party(&board);
        assert!(matches!(
            board.attach("busy", joiner.id, &RequestId::Number(1)),
            Attached::Observing
        ));
        let batch = String::from_utf8(told.try_recv().unwrap()).unwrap();
        assert!(
            batch.contains(r#""dropped":8"#) && batch.contains(r#""replayed":2"#),
            "{batch}"
        );
        board.leave(controller.id);
        assert_eq!((board.observers(), board.lock().history_bytes.len()), (0, 0));
    }
}
