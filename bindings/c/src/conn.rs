//! One C connection's state: the engine's host connection, our requests
//! waiting for answers, and who takes events from the engine.
//!
//! Events come out of the engine in wire order, in batches. One thread at a
//! time *drives*: it drains the engine's queue and, with a pipe or socket,
//! reads the stream itself, on its own thread, without a hop to the
//! engine's reader task. What it takes goes on the backlog, from which the
//! dispatch thread runs callbacks (`dispatch.rs`) or the host takes events
//! (`events.rs`).
//!
//! A thread blocked in `acp_connection_request` drives while it waits (the
//! dispatch thread leaves the stream to it), so that its answer, read on
//! its own thread, costs no wake-up of another thread: a request/response
//! exchange is then as cheap as in Rust. It keeps an answer for itself only
//! when no notification received before it is still waiting or running;
//! otherwise the answer takes its turn on the backlog.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_engine::host::{EventFd, HostConnection};
use acp_engine::RequestError;

use crate::batch::{self, Event, Item};
use crate::dispatch::Dispatch;
use crate::handlers::{acp_handlers, acp_response_callback, UserData};

/// How long a driver that just found events reads on before it sleeps in
/// `poll`: on a VM waking a sleeping thread costs more than a short spin.
const READ_SPIN: Duration = Duration::from_micros(50);

/// After the last waiting request got its answer, how long the dispatch
/// thread leaves the stream alone: a callback that sends requests one after
/// another comes back within a round trip.
const WAITER_GRACE: Duration = Duration::from_millis(1);

thread_local! {
    /// This thread pumps a stream and drains right after: what it queues
    /// needs no wake-up (an eventfd write and read saved per batch).
    static PUMPING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the engine's wake-up would only wake this very thread.
pub(crate) fn pumping() -> bool {
    PUMPING.with(Cell::get)
}

/// How one of our requests wants its answer.
pub(crate) enum Waiting {
    /// A thread blocked in `acp_connection_request`.
    Slot(Arc<Slot>),
    /// `acp_connection_send_request` with a callback (or none, on a
    /// connection with handlers: the answer is dropped).
    Callback(acp_response_callback, UserData),
    /// `acp_connection_send_request` without one, on an event connection:
    /// an `ACP_EVENT_RESPONSE`.
    Event,
}

/// Where a blocked `acp_connection_request` finds its answer (it waits on
/// the connection's condition variable, notified when one is put here).
#[derive(Default)]
pub(crate) struct Slot {
    outcome: Mutex<Option<Result<CString, RequestError>>>,
}

impl Slot {
    fn put(&self, outcome: Result<CString, RequestError>) {
        *self.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
    }

    pub fn take(&self) -> Option<Result<CString, RequestError>> {
        self.outcome.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn is_filled(&self) -> bool {
        self.outcome.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
}

pub(crate) struct State {
    /// A thread is taking events from the engine.
    driving: bool,
    /// Events taken and not delivered yet, in wire order.
    backlog: VecDeque<Item>,
    /// The connection closed and C was told (`on_close` returned, or the
    /// host took `ACP_EVENT_CLOSED`).
    pub finished: bool,
    /// Threads blocked in `acp_connection_request` (on a connection with
    /// handlers), and when the last one stopped waiting.
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

impl State {
    pub fn backlog_is_empty(&self) -> bool {
        self.backlog.is_empty()
    }
}

pub(crate) struct Conn {
    pub host: HostConnection,
    /// None: an event connection (`acp_connection_next_events`).
    pub handlers: Option<acp_handlers>,
    pub dispatch: Dispatch,
    pub pid: Option<u32>,
    /// `acp_options.quick_response_callbacks`.
    pub quick_response_callbacks: bool,
    /// The runtime generation (see `acp_shutdown`).
    pub generation: u64,
    requests: Mutex<HashMap<i64, Waiting>>,
    /// Requests of `acp_connection_start_request` whose answer was not
    /// taken yet (`acp_connection_await`).
    awaited: Mutex<HashMap<i64, Arc<Slot>>>,
    state: Mutex<State>,
    /// Notified when the state changes for drivers and waiters.
    changed: Condvar,
    /// Notified once, when the connection finished (`wait_finished`).
    finished_changed: Condvar,
    /// Signalled by the engine when events arrive on an empty queue.
    wake: Arc<EventFd>,
    /// The stream can still be read on the driver's thread.
    reading: AtomicBool,
    /// A waiting request asks the dispatch thread to stop driving.
    yield_stream: AtomicBool,
}

impl Conn {
    pub fn new(
        host: HostConnection,
        handlers: Option<acp_handlers>,
        wake: Arc<EventFd>,
        pid: Option<u32>,
        quick_response_callbacks: bool,
        generation: u64,
    ) -> Self {
        let reading = host.read_fd().is_some();
        Self {
            host,
            handlers,
            dispatch: Dispatch::default(),
            pid,
            quick_response_callbacks,
            generation,
            requests: Mutex::new(HashMap::new()),
            awaited: Mutex::new(HashMap::new()),
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
            wake,
            reading: AtomicBool::new(reading),
            yield_stream: AtomicBool::new(false),
        }
    }

    /// The pointer C knows this connection by.
    pub fn c_pointer(self: &Arc<Self>) -> *const crate::connection::acp_connection {
        Arc::as_ptr(self).cast()
    }

    pub fn is_event_connection(&self) -> bool {
        self.handlers.is_none()
    }

    pub fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wake every thread waiting on the state (the connection finished).
    pub fn notify(&self) {
        self.changed.notify_all();
        self.finished_changed.notify_all();
    }

    /// Record how request `id` wants its answer (before it can arrive).
    pub fn expect_answer(&self, id: i64, waiting: Waiting) {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, waiting);
    }

    /// How request `id` wanted its answer (taken: an answer comes once).
    pub fn answer_wanted(&self, id: i64) -> Option<Waiting> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id)
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

    /// Give a waiting `acp_connection_request` its answer.
    pub fn complete(&self, slot: &Slot, outcome: Result<CString, RequestError>) {
        slot.put(outcome);
        // Under the lock: a waiter checks its slot under it before it sleeps.
        let state = self.lock_state();
        if state.sleepers > 0 {
            self.changed.notify_all();
        }
        drop(state);
        // The waiter may be driving, asleep in `poll` rather than on the
        // condition variable (its answer was queued behind a notification
        // and delivered by the dispatch thread).
        self.wake.signal();
    }

    /// Wait until C was told the connection closed; false at `deadline`.
    pub fn wait_finished(&self, deadline: Option<Instant>) -> bool {
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
    pub fn next_for_dispatch(&self, holds_job: impl Fn() -> bool) -> Option<Item> {
        let mut state = self.lock_state();
        loop {
            if !holds_job() {
                return None;
            }
            if let Some(item) = state.backlog.pop_front() {
                state.notification_running = matches!(
                    item.event,
                    Event::Notification { .. } | Event::InvalidNotification { .. }
                );
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
                let text = self.drive(None, true, &|| false);
                state = self.lock_state();
                state.driving = false;
                let added = text.is_some();
                if let Some(text) = text {
                    state.backlog.extend(batch::parse(text));
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
    pub fn notification_done(&self) {
        self.lock_state().notification_running = false;
    }

    /// On a connection with handlers: wait for `slot`'s answer, driving
    /// while nobody else does; None at `deadline`.
    pub fn wait_answer(
        &self,
        slot: &Slot,
        deadline: Option<Instant>,
    ) -> Option<Result<CString, RequestError>> {
        let mut state = self.lock_state();
        state.waiters += 1;
        if state.driving && !state.dispatch_drives {
            // The dispatch thread may be asleep in poll: have it leave the stream to us.
            self.yield_stream.store(true, Ordering::Release);
            self.wake.signal();
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
                let text = self.drive(deadline, false, &|| slot.is_filled());
                state = self.lock_state();
                state.driving = false;
                let added = match text {
                    Some(text) => self.take_in(&mut state, batch::parse(text)),
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
            if let Event::Response { id, outcome } = &item.event {
                if state.backlog.is_empty() && !state.notification_running {
                    let mut requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(Waiting::Slot(slot)) = requests.get(id) {
                        let slot = slot.clone();
                        requests.remove(id);
                        drop(requests);
                        slot.put(outcome_text(outcome));
                        continue;
                    }
                }
            }
            state.backlog.push_back(item);
        }
        state.backlog.len() > before
    }

    /// On an event connection: wait until `want` finds what it wants in the
    /// backlog, driving when nobody else does; None at `deadline`.
    pub fn take<R>(
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
                let items = self
                    .drive(deadline, false, &|| false)
                    .map(|text| self.answer_blocked(batch::parse(text)));
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

    /// On an event connection, blocked `acp_connection_request` calls get
    /// their answers as soon as they are taken (their caller may be the very
    /// thread that would otherwise take the events before them).
    fn answer_blocked(&self, items: Vec<Item>) -> Vec<Item> {
        items
            .into_iter()
            .filter_map(|item| {
                if let Event::Response { id, outcome } = &item.event {
                    let mut requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(Waiting::Slot(slot)) = requests.get(id) {
                        let slot = slot.clone();
                        requests.remove(id);
                        drop(requests);
                        slot.put(outcome_text(outcome));
                        return None;
                    }
                }
                Some(item)
            })
            .collect()
    }

    /// Take the next batch of events from the engine, reading the stream on
    /// this thread when it can; None at `deadline`, once `done` (the
    /// driver's own answer arrived another way), or (`yielding`) when a
    /// waiting request asked for the stream.
    fn drive(&self, deadline: Option<Instant>, yielding: bool, done: &dyn Fn() -> bool) -> Option<String> {
        let read_fd = self.host.read_fd();
        loop {
            if done() {
                return None;
            }
            if yielding && self.yield_stream.swap(false, Ordering::AcqRel) {
                return None;
            }
            // Reset before draining, or a wake-up could be lost.
            self.wake.reset();
            if let Some(text) = self.host.drain() {
                return Some(text);
            }
            // At the connection's limits the engine reads nothing until the
            // peer reads; its wake says when to read again.
            let reading =
                read_fd.is_some() && self.reading.load(Ordering::Acquire) && !self.host.reading_paused();
            if reading && self.read_for(READ_SPIN) {
                continue;
            }
            let timeout = match deadline {
                None => -1,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    left.as_millis().clamp(1, i32::MAX as u128) as i32
                }
            };
            let mut fds = [
                libc::pollfd {
                    fd: self.wake.raw(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: read_fd.unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let count = if reading { 2 } else { 1 };
            // SAFETY: `fds` is a live array of `count` pollfds.
            unsafe { libc::poll(fds.as_mut_ptr(), count, timeout) };
        }
    }

    /// Read and handle what the stream holds, for up to `spin`: true once
    /// events are queued.
    fn read_for(&self, spin: Duration) -> bool {
        let start = Instant::now();
        loop {
            PUMPING.with(|pumping| pumping.set(true));
            let open = self.host.pump();
            PUMPING.with(|pumping| pumping.set(false));
            if !open {
                // The stream ended: a CLOSED event follows through `wake`.
                self.reading.store(false, Ordering::Release);
                return self.host.queued_events() > 0;
            }
            if self.host.queued_events() > 0 {
                return true;
            }
            if start.elapsed() >= spin || self.host.reading_paused() {
                return false;
            }
            std::hint::spin_loop();
        }
    }

    /// After the connection closed: answer every request still waiting (the
    /// engine failed them all before `CLOSED`; this covers any registered
    /// too late to be failed).
    pub fn fail_waiting(&self, reason: &str) {
        let waiting: Vec<Waiting> = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, waiting)| waiting)
            .collect();
        for waiting in waiting {
            if let Waiting::Slot(slot) = waiting {
                self.complete(&slot, Err(RequestError::connection_closed(reason)));
            }
        }
    }
}

/// A response's outcome as C text of its own, copied once: the engine's
/// text is JSON it checked (UTF-8, no NUL inside), so it needs no other
/// pass (a 16 MiB file read scanned and copied it three more times).
pub(crate) fn outcome_text(outcome: &Result<batch::Text, RequestError>) -> Result<CString, RequestError> {
    match outcome {
        // SAFETY: the batch's texts are NUL-terminated and live while it does.
        Ok(text) => Ok(unsafe { std::ffi::CStr::from_ptr(text.0) }.to_owned()),
        Err(error) => Err(error.clone()),
    }
}
