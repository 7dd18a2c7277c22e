//! Our requests' answers: how each request wants its answer, and where a
//! thread that waits for one finds it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::RequestError;

/// A request's answer: the result as JSON text (with room for a C host's
/// terminator, see `Text::to_owned_text`), or the error.
pub type Answer = Result<String, RequestError>;

/// How one of our requests wants its answer.
pub enum Waiting<R> {
    /// A thread waits for it in a [`Slot`] (`Driver::request` / `await_answer`).
    Slot(Arc<Slot>),
    /// The host's handler takes it (`Handler::reply`), in order with the
    /// other events.
    Reply(R),
    /// `Driver::next_events` hands it out as an event; a connection with
    /// callbacks drops it.
    Event,
}

/// Where a waiting thread finds its answer (it sleeps on the driver's
/// condition variable, notified when one is put here).
#[derive(Default)]
pub struct Slot {
    answer: Mutex<Option<Answer>>,
}

impl Slot {
    pub(super) fn put(&self, answer: Answer) {
        *self.answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(answer);
    }

    pub(super) fn take(&self) -> Option<Answer> {
        self.answer.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    pub(super) fn is_filled(&self) -> bool {
        self.answer.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
}

/// The requests whose answers are still to come, and those started to be
/// awaited later.
pub(super) struct Answers<R> {
    wanted: Mutex<HashMap<i64, Waiting<R>>>,
    awaited: Mutex<HashMap<i64, Arc<Slot>>>,
}

impl<R> Answers<R> {
    pub fn new() -> Self {
        Self {
            wanted: Mutex::new(HashMap::new()),
            awaited: Mutex::new(HashMap::new()),
        }
    }

    /// Record how request `id` wants its answer (before it can arrive).
    pub fn expect(&self, id: i64, waiting: Waiting<R>) {
        self.wanted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, waiting);
    }

    /// How request `id` wanted its answer (taken: an answer comes once).
    pub fn take(&self, id: i64) -> Option<Waiting<R>> {
        self.wanted.lock().unwrap_or_else(|p| p.into_inner()).remove(&id)
    }

    /// Request `id`'s slot, taken, if a thread waits for it.
    pub fn take_slot(&self, id: i64) -> Option<Arc<Slot>> {
        let mut wanted = self.wanted.lock().unwrap_or_else(|p| p.into_inner());
        match wanted.get(&id) {
            Some(Waiting::Slot(_)) => match wanted.remove(&id) {
                Some(Waiting::Slot(slot)) => Some(slot),
                _ => None,
            },
            _ => None,
        }
    }

    /// Every request still waiting, taken (the connection closed).
    pub fn take_all(&self) -> Vec<(i64, Waiting<R>)> {
        let mut wanted = self.wanted.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<_> = wanted.drain().collect();
        all.sort_by_key(|(id, _)| *id); // in the order they were sent
        all
    }

    /// Request `id`'s answer will be awaited later, in `slot`.
    pub fn await_later(&self, id: i64, slot: Arc<Slot>) {
        self.awaited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, slot);
    }

    /// Where request `id`'s answer will be (None: not awaited).
    pub fn awaited(&self, id: i64) -> Option<Arc<Slot>> {
        self.awaited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }

    /// Request `id`'s answer was taken.
    pub fn awaited_done(&self, id: i64) {
        self.awaited.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }
}
