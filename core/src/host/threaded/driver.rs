//! One driven connection's state, and who takes events from the engine.
//!
//! Events come out of the engine in wire order, in batches. One thread at a
//! time *drives* (`stream.rs`): it drains the engine's queue and, with a
//! pipe or socket, reads the stream itself, on its own thread. What it
//! takes goes on the backlog, from which the dispatch thread runs callbacks
//! (`dispatch.rs`) or the host takes events (`events.rs`).
//!
//! A thread blocked in a request drives while it waits (the dispatch thread
//! leaves the stream to it), so that its answer, read on its own thread,
//! costs no wake-up of another thread: a request/response exchange is then
//! as cheap as in Rust. It keeps an answer for itself only when no
//! notification received before it is still waiting or running; otherwise
//! the answer takes its turn on the backlog.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::answers::{Answer, Answers, Slot, Waiting};
use super::decode::{decode, Event, Item, Text};
use super::monitor::Job;
use super::stream::Stream;
use crate::error::RequestError;
use crate::host::HostConnection;

/// After the last waiting request got its answer, how long the dispatch
/// thread leaves the stream alone: a callback that sends requests one after
/// another comes back within a round trip.
const WAITER_GRACE: Duration = Duration::from_millis(1);

/// What a host does with the events of a driven connection (the C library
/// calls its C function pointers). Callbacks run on the dispatch thread in
/// wire order; with no callbacks (`DriverOptions::callbacks` false) only
/// `reply` runs, inside `Driver::next_events`.
pub trait Handler: Sized + Send + Sync + 'static {
    /// How a request sent with `Waiting::Reply` wants its answer.
    type Reply: Send;
    /// An inbound request: answer `token` now or later
    /// (`HostConnection::respond`). An error is sent as the answer at once.
    fn request(
        &self,
        driver: &Arc<Driver<Self>>,
        token: u64,
        method: &Text,
        params: Option<&Text>,
    ) -> Result<(), RequestError>;
    /// A notification, one at a time, in order.
    fn notification(&self, driver: &Arc<Driver<Self>>, method: &Text, params: Option<&Text>);
    /// A notification whose params failed the schema (dropped).
    fn invalid_notification(&self, driver: &Arc<Driver<Self>>, method: &str, error: &RequestError);
    /// The peer cancelled inbound request `token`.
    fn cancelled(&self, driver: &Arc<Driver<Self>>, token: u64);
    /// The connection closed: the last call.
    fn closed(&self, driver: &Arc<Driver<Self>>, reason: &str);
    /// The answer to our request `id`, sent with `Waiting::Reply(reply)`.
    fn reply(
        &self,
        driver: &Arc<Driver<Self>>,
        reply: Self::Reply,
        id: i64,
        outcome: Result<&Text, &RequestError>,
    );
}

/// How a connection is driven.
#[derive(Debug, Clone, Copy, Default)]
pub struct DriverOptions {
    /// A dispatch thread runs the handler's callbacks; otherwise the host
    /// takes events with `Driver::next_events`.
    pub callbacks: bool,
    /// Response callbacks are quick: never handed off (they run like
    /// notification callbacks).
    pub quick_replies: bool,
}

pub(super) struct State {
    /// A thread is taking events from the engine.
    driving: bool,
    /// Events taken and not delivered yet, in wire order.
    pub backlog: VecDeque<Item>,
    /// The connection closed and the host was told.
    pub finished: bool,
    /// Threads blocked in a request (with callbacks), and when the last one
    /// stopped waiting.
    waiters: usize,
    waiters_left_at: Option<Instant>,
    /// A waiting request read events for callbacks: the dispatch thread
    /// reads the stream until no request waits (it runs those callbacks
    /// where it reads them, without a hop to another thread).
    dispatch_drives: bool,
    /// The dispatch thread runs a notification callback.
    notification_running: bool,
    /// Threads other than the dispatch thread asleep on `changed`.
    sleepers: usize,
    /// How the dispatch thread sleeps on `changed`, if it does.
    dispatch_nap: Option<Nap>,
}

/// Why the dispatch thread sleeps, which says what must wake it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nap {
    /// A request waits (or just waited) and reads its own answers: only new
    /// work wakes it; it looks again by itself after `WAITER_GRACE`.
    WhileWaited,
    /// Another thread reads the stream: wake it when it lets go.
    UntilFree,
}

/// A host connection driven by threads of its host (see the module docs).
pub struct Driver<H: Handler> {
    /// The engine's connection.
    pub host: HostConnection,
    /// What the host does with events.
    pub handler: H,
    pub(super) options: DriverOptions,
    pub(super) job: Job,
    pub(super) answers: Answers<H::Reply>,
    pub(super) stream: Stream,
    state: Mutex<State>,
    /// Notified when the state changes for drivers and waiters.
    changed: Condvar,
    /// Notified once, when the connection finished (`wait_finished`).
    finished_changed: Condvar,
}

impl<H: Handler> Driver<H> {
    pub(super) fn new(host: HostConnection, handler: H, options: DriverOptions, stream: Stream) -> Self {
        Self {
            host,
            handler,
            options,
            job: Job::default(),
            answers: Answers::new(),
            stream,
            state: Mutex::new(State {
                driving: false,
                backlog: VecDeque::new(),
                finished: false,
                waiters: 0,
                waiters_left_at: None,
                dispatch_drives: false,
                notification_running: false,
                sleepers: 0,
                dispatch_nap: None,
            }),
            changed: Condvar::new(),
            finished_changed: Condvar::new(),
        }
    }

    /// Whether the host takes events (`next_events`) rather than callbacks.
    pub fn takes_events(&self) -> bool {
        !self.options.callbacks
    }

    /// True once the host was told the connection closed and nothing is left to take.
    pub fn is_finished(&self) -> bool {
        let state = self.lock_state();
        state.finished && state.backlog.is_empty()
    }

    pub(super) fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The host was told the connection closed: wake every thread waiting.
    pub(super) fn mark_finished(&self) {
        self.lock_state().finished = true;
        self.changed.notify_all();
        self.finished_changed.notify_all();
    }

    /// Give a waiting request its answer.
    pub(super) fn complete(&self, slot: &Slot, answer: Answer) {
        slot.put(answer);
        // Under the lock: a waiter checks its slot under it before it sleeps.
        let state = self.lock_state();
        if state.sleepers > 0 {
            self.changed.notify_all();
        }
        drop(state);
        // The waiter may be driving, asleep in `poll` rather than on the
        // condition variable (its answer was queued behind a notification
        // and delivered by the dispatch thread).
        self.stream.wake.signal();
    }

    /// Wait until the host was told the connection closed; false at `deadline`.
    pub(super) fn wait_finished(&self, deadline: Option<Instant>) -> bool {
        let mut state = self.lock_state();
        while !state.finished {
            state = match deadline {
                None => self
                    .finished_changed
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let Some(left) = deadline
                        .checked_duration_since(Instant::now())
                        .filter(|left| !left.is_zero())
                    else {
                        return false;
                    };
                    self.finished_changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
        true
    }

    /// Sleep on the state until notified or `deadline` (None when it passed).
    fn sleep<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        deadline: Option<Instant>,
    ) -> Option<MutexGuard<'a, State>> {
        let left = match deadline {
            None => None,
            Some(deadline) => Some(
                deadline
                    .checked_duration_since(Instant::now())
                    .filter(|left| !left.is_zero())?,
            ),
        };
        state.sleepers += 1;
        let mut state = match left {
            None => self.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
            Some(left) => {
                self.changed
                    .wait_timeout(state, left)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        };
        state.sleepers -= 1;
        Some(state)
    }

    /// A driver let go of the stream (`added`: it put events on the
    /// backlog): wake whoever needs to know, and nobody else (a futex wake
    /// per round trip is a measurable share of it).
    fn released(&self, state: &State, added: bool) {
        let dispatch = match state.dispatch_nap {
            Some(Nap::UntilFree) => true,
            Some(Nap::WhileWaited) => added,
            None => false,
        };
        // While the dispatch thread reads for them, sleeping waiters only
        // wait for their answer (`complete` wakes them).
        let others = state.sleepers > 0 && !state.dispatch_drives;
        if dispatch || others {
            self.changed.notify_all();
        }
    }

    /// The dispatch thread's next event (None: the job was handed off, or
    /// the connection is finished). It drives when nobody else does and no
    /// request waits (or has just waited) for an answer.
    pub(super) fn next_for_dispatch(&self, holds_job: impl Fn() -> bool) -> Option<Item> {
        let mut state = self.lock_state();
        loop {
            if !holds_job() {
                return None;
            }
            if let Some(item) = state.backlog.pop_front() {
                state.notification_running = item.event().is_notification();
                return Some(item);
            }
            if state.finished {
                return None;
            }
            let grace = state
                .waiters_left_at
                .and_then(|left_at| WAITER_GRACE.checked_sub(left_at.elapsed()))
                .filter(|grace| !grace.is_zero());
            let waited = !state.dispatch_drives && (state.waiters > 0 || grace.is_some());
            if !state.driving && !waited {
                state.driving = true;
                drop(state);
                let text = self.stream.drive(&self.host, None, true, &|| false);
                state = self.lock_state();
                state.driving = false;
                let added = text.is_some();
                if let Some(text) = text {
                    state.backlog.extend(decode(text));
                }
                self.released(&state, added);
                continue;
            }
            state.dispatch_nap = Some(if waited { Nap::WhileWaited } else { Nap::UntilFree });
            state = if waited {
                let nap = grace.unwrap_or(WAITER_GRACE);
                self.changed
                    .wait_timeout(state, nap)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            } else {
                self.changed.wait(state).unwrap_or_else(|p| p.into_inner())
            };
            state.dispatch_nap = None;
        }
    }

    /// The dispatch thread finished a notification callback.
    pub(super) fn notification_done(&self) {
        self.lock_state().notification_running = false;
    }

    /// With callbacks: wait for `slot`'s answer, driving while nobody else
    /// does; None at `deadline`.
    pub(super) fn wait_answer(&self, slot: &Slot, deadline: Option<Instant>) -> Option<Answer> {
        let mut state = self.lock_state();
        state.waiters += 1;
        if state.driving && !state.dispatch_drives {
            // The dispatch thread may be asleep in poll: have it leave the stream to us.
            self.stream.ask_to_yield();
        }
        let outcome = loop {
            if let Some(outcome) = slot.take() {
                break Some(outcome);
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                break None;
            }
            if !state.driving && !state.dispatch_drives {
                state.driving = true;
                drop(state);
                let text = self
                    .stream
                    .drive(&self.host, deadline, false, &|| slot.is_filled());
                state = self.lock_state();
                state.driving = false;
                let added = match text {
                    Some(text) => self.take_in(&mut state, decode(text)),
                    None => false,
                };
                if added {
                    // Callbacks are due: the dispatch thread reads from now
                    // on and runs them where it reads them.
                    state.dispatch_drives = true;
                }
                self.released(&state, added);
                continue;
            }
            match self.sleep(state, deadline) {
                Some(next) => state = next,
                None => {
                    state = self.lock_state();
                    break slot.take();
                }
            }
        };
        state.waiters -= 1;
        if state.waiters == 0 {
            state.waiters_left_at = Some(Instant::now());
            state.dispatch_drives = false;
        }
        outcome
    }

    /// What a waiting request's thread read: answers of blocked requests go
    /// to them at once when nothing received before them is still to be
    /// handled (no notification waits or runs); the rest joins the backlog.
    fn take_in(&self, state: &mut State, items: Vec<Item>) -> bool {
        let before = state.backlog.len();
        for item in items {
            if state.backlog.is_empty() && !state.notification_running && self.answer_blocked(&item) {
                continue;
            }
            state.backlog.push_back(item);
        }
        state.backlog.len() > before
    }

    /// Without callbacks: wait until `want` finds what it wants in the
    /// backlog, driving when nobody else does; None at `deadline`.
    pub(super) fn take<R>(
        &self,
        deadline: Option<Instant>,
        mut want: impl FnMut(&mut VecDeque<Item>) -> Option<R>,
    ) -> Option<R> {
        let mut state = self.lock_state();
        loop {
            if let Some(found) = want(&mut state.backlog) {
                return Some(found);
            }
            if !state.driving {
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    return None;
                }
                state.driving = true;
                drop(state);
                // Blocked requests get their answers as soon as they are
                // taken (their caller may be the very thread that would
                // otherwise take the events before them).
                let items = self
                    .stream
                    .drive(&self.host, deadline, false, &|| false)
                    .map(|text| {
                        let mut items = decode(text);
                        items.retain(|item| !self.answer_blocked(item));
                        items
                    });
                state = self.lock_state();
                state.driving = false;
                let added = items.as_ref().is_some_and(|items| !items.is_empty());
                if let Some(items) = items {
                    state.backlog.extend(items);
                }
                self.released(&state, added);
                continue;
            }
            state = self.sleep(state, deadline)?;
        }
    }

    /// If `item` answers a request a thread waits for, put the answer in
    /// its slot (true).
    fn answer_blocked(&self, item: &Item) -> bool {
        let Event::Response { id, outcome } = item.event() else {
            return false;
        };
        match self.answers.take_slot(*id) {
            Some(slot) => {
                slot.put(answer(outcome));
                true
            }
            None => false,
        }
    }

    /// After the connection closed: answer every request still waiting (the
    /// engine failed them all before `CLOSED`; this covers any whose answer
    /// did not come before it). Threads waiting in slots are answered here;
    /// the replies a handler takes are returned, to be failed in order
    /// before the handler hears of the close.
    pub(super) fn fail_waiting(&self, reason: &str) -> Vec<(i64, H::Reply)> {
        let mut replies = Vec::new();
        for (id, waiting) in self.answers.take_all() {
            match waiting {
                Waiting::Slot(slot) => self.complete(&slot, Err(RequestError::connection_closed(reason))),
                Waiting::Reply(reply) => replies.push((id, reply)),
                Waiting::Event => {}
            }
        }
        replies
    }
}

/// A response's outcome as an answer of its own, copied once: the engine's
/// text is JSON it checked (UTF-8, no NUL inside), so it needs no other pass.
pub(super) fn answer(outcome: &Result<Text, RequestError>) -> Answer {
    match outcome {
        Ok(text) => Ok(text.to_owned_text()),
        Err(error) => Err(error.clone()),
    }
}
