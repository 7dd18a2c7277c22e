//! Callbacks: each connection with handlers has a dispatch thread that
//! takes events in batches and runs their callbacks in wire order, on
//! itself, without a thread hop per message. Notification callbacks run one
//! at a time; a response is delivered after the notifications before it
//! were handled, because it is delivered by the same thread after them.
//!
//! Callbacks may block. A request or response callback that blocks must not
//! stop the events behind it, so the dispatch thread hands its job to a new
//! thread: at once when the callback calls a blocking acp_* function
//! (`acp_connection_request`, a send that waits for room), or, when it
//! blocks in its own code, once the monitor thread sees it busy for
//! `HANDOFF_AFTER`. The old thread finishes its callback and ends. A
//! notification callback is never handed off (the next notification would
//! overtake it).

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use acp_engine::RequestError;

use crate::batch::{Event, Item};
use crate::conn::{outcome_text, Conn, Waiting};
use crate::ffi::c_string;
use crate::handlers::acp_error;
use crate::responder;

/// A request or response callback busy this long is handed off.
const HANDOFF_AFTER: Duration = Duration::from_millis(2);

/// One connection's dispatch job.
#[derive(Default)]
pub(crate) struct Dispatch {
    /// Which thread holds the job: bumped by every hand-off.
    epoch: AtomicU64,
    /// When the job's thread entered a request or response callback
    /// (nanoseconds since `clock_start`, 0: it is not in one).
    busy_since: AtomicU64,
}

/// What the current thread is doing for a connection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Doing {
    /// Taking events, or nothing.
    Idle,
    /// In a request or response callback (a hand-off is allowed).
    Callback,
    /// In a notification callback (a hand-off is not).
    Notification,
}

thread_local! {
    /// Set on dispatch threads: their connection, their epoch, what they do.
    static ON_DISPATCH: Cell<Option<(*const Conn, u64, Doing)>> = const { Cell::new(None) };
}

/// Start the dispatch thread of a connection with handlers.
pub(crate) fn start(conn: &Arc<Conn>) {
    monitor().watch(conn);
    spawn_dispatcher(conn.clone(), 0);
}

fn spawn_dispatcher(conn: Arc<Conn>, epoch: u64) {
    let spawned = std::thread::Builder::new()
        .name("acp-dispatch".into())
        .spawn(move || run(conn, epoch));
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start a dispatch thread");
    }
}

/// The dispatch loop: take events, run their callbacks, until the
/// connection is finished or the job was handed to another thread.
fn run(conn: Arc<Conn>, epoch: u64) {
    ON_DISPATCH.with(|on| on.set(Some((Arc::as_ptr(&conn), epoch, Doing::Idle))));
    let holds_job = || conn.dispatch.epoch.load(Ordering::Acquire) == epoch;
    while let Some(item) = conn.next_for_dispatch(holds_job) {
        if deliver(&conn, epoch, item) {
            break;
        }
    }
    ON_DISPATCH.with(|on| on.set(None));
}

/// Run one event's callback; true once the connection is finished.
fn deliver(conn: &Arc<Conn>, epoch: u64, item: Item) -> bool {
    let handlers = conn
        .handlers
        .expect("a dispatch thread serves a connection with handlers");
    let c_conn = conn.c_pointer();
    match item.event {
        Event::Request {
            token,
            method,
            params,
        } => match handlers.on_request {
            None => {
                let method = unsafe { std::ffi::CStr::from_ptr(method.0) }.to_string_lossy();
                let _ = conn
                    .host
                    .respond(token, Err(RequestError::method_not_found(&method)));
            }
            Some(on_request) => {
                responder::register(token, conn);
                in_callback(conn, epoch, Doing::Callback, || unsafe {
                    on_request(handlers.user_data, c_conn, method.0, params.0, token as *mut _)
                });
            }
        },
        Event::Notification { method, params } => {
            if let Some(on_notification) = handlers.on_notification {
                in_callback(conn, epoch, Doing::Notification, || unsafe {
                    on_notification(handlers.user_data, c_conn, method.0, params.0)
                });
            }
            conn.notification_done();
        }
        Event::Response { id, outcome } => match conn.answer_wanted(id) {
            Some(Waiting::Slot(slot)) => conn.complete(&slot, outcome_text(&outcome)),
            Some(Waiting::Callback(Some(callback), user_data)) => {
                let doing = if conn.quick_response_callbacks {
                    Doing::Notification
                } else {
                    Doing::Callback
                };
                in_callback(conn, epoch, doing, || match &outcome {
                    Ok(result) => unsafe { callback(user_data.0, c_conn, id, result.0, ptr::null()) },
                    Err(error) => with_c_error(error, |error| unsafe {
                        callback(user_data.0, c_conn, id, ptr::null(), error)
                    }),
                });
            }
            _ => {}
        },
        Event::InvalidNotification { method, error } => {
            if let Some(on_invalid_notification) = handlers.on_invalid_notification {
                let method = c_string(&method);
                in_callback(conn, epoch, Doing::Notification, || {
                    with_c_error(&error, |error| unsafe {
                        on_invalid_notification(handlers.user_data, c_conn, method.as_ptr(), error)
                    })
                });
            }
            conn.notification_done();
        }
        // A later answer finds the request gone (ACP_ERR_ALREADY_ANSWERED).
        Event::Cancelled { token } => {
            if let Some(on_cancel) = handlers.on_cancel {
                in_callback(conn, epoch, Doing::Notification, || unsafe {
                    on_cancel(handlers.user_data, c_conn, token as *mut _)
                });
            }
        }
        Event::Closed { reason } => {
            conn.fail_waiting(&reason);
            if let Some(on_close) = handlers.on_close {
                let reason = c_string(&reason);
                in_callback(conn, epoch, Doing::Notification, || unsafe {
                    on_close(handlers.user_data, c_conn, reason.as_ptr())
                });
            }
            conn.lock_state().finished = true;
            conn.notify();
            return true;
        }
    }
    drop(item.batch);
    false
}

/// Run `callback`, marked as what it is for hand-offs.
fn in_callback(conn: &Conn, epoch: u64, doing: Doing, callback: impl FnOnce()) {
    ON_DISPATCH.with(|on| on.set(Some((conn as *const Conn, epoch, doing))));
    if doing == Doing::Callback {
        conn.dispatch
            .busy_since
            .store(clock_ns().max(1), Ordering::Release);
        monitor().busy();
    }
    callback();
    if doing == Doing::Callback && conn.dispatch.epoch.load(Ordering::Acquire) == epoch {
        conn.dispatch.busy_since.store(0, Ordering::Release);
    }
    ON_DISPATCH.with(|on| on.set(Some((conn as *const Conn, epoch, Doing::Idle))));
}

/// An engine error as C's `acp_error`, valid during `body`.
pub(crate) fn with_c_error(error: &RequestError, body: impl FnOnce(*const acp_error)) {
    let message = c_string(&error.message);
    let data = error.data.as_ref().map(|data| c_string(&data.to_string()));
    let error = acp_error {
        code: error.code,
        message: message.as_ptr(),
        data_json: data.as_ref().map_or(ptr::null(), |data| data.as_ptr()),
    };
    body(&error);
}

/// Give `conn`'s dispatch job to a new thread, if `epoch` still holds it.
fn hand_off(conn: &Arc<Conn>, epoch: u64) {
    let taken = conn
        .dispatch
        .epoch
        .compare_exchange(epoch, epoch + 1, Ordering::AcqRel, Ordering::Acquire);
    if taken.is_ok() {
        conn.dispatch.busy_since.store(0, Ordering::Release);
        spawn_dispatcher(conn.clone(), epoch + 1);
    }
}

/// What a blocking acp_* function asks before it blocks on `conn`'s behalf.
pub(crate) enum BeforeBlocking {
    /// Go ahead (after handing the dispatch job off, if this thread held it).
    Proceed,
    /// This is `conn`'s dispatch thread in a notification callback: waiting
    /// for the connection here would wait for itself.
    WouldDeadlock,
}

/// Called by a blocking acp_* function on `conn` before it blocks.
pub(crate) fn before_blocking(conn: &Arc<Conn>) -> BeforeBlocking {
    let Some((on, epoch, doing)) = ON_DISPATCH.with(|on| on.get()) else {
        return BeforeBlocking::Proceed;
    };
    if !ptr::eq(on, Arc::as_ptr(conn)) {
        return BeforeBlocking::Proceed;
    }
    match doing {
        Doing::Notification => BeforeBlocking::WouldDeadlock,
        Doing::Callback | Doing::Idle => {
            hand_off(conn, epoch);
            BeforeBlocking::Proceed
        }
    }
}

/// The hook the engine runs before a send waits for room in the write
/// queue: hand the job off if a request or response callback is sending
/// (a notification callback blocks, and the reading with it: backpressure).
pub(crate) fn before_send_blocks() {
    let Some((on, epoch, Doing::Callback)) = ON_DISPATCH.with(|on| on.get()) else {
        return;
    };
    // SAFETY: a dispatch thread holds an Arc of its connection while it runs.
    let conn = unsafe {
        Arc::increment_strong_count(on);
        Arc::from_raw(on)
    };
    hand_off(&conn, epoch);
}

fn clock_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The thread that notices callbacks blocked in C's own code. While
/// connections with handlers exist it looks every millisecond after a
/// callback started, every 20 ms otherwise; with none it sleeps.
struct Monitor {
    watched: Mutex<Vec<Weak<Conn>>>,
    /// Bumped when a callback starts: the monitor looks more often.
    activity: AtomicU64,
    added: Condvar,
}

static MONITOR: OnceLock<Monitor> = OnceLock::new();

fn monitor() -> &'static Monitor {
    MONITOR.get_or_init(|| {
        std::thread::Builder::new()
            .name("acp-monitor".into())
            .spawn(|| monitor().run())
            .expect("start the acp-engine monitor thread");
        Monitor {
            watched: Mutex::new(Vec::new()),
            activity: AtomicU64::new(0),
            added: Condvar::new(),
        }
    })
}

impl Monitor {
    fn watch(&self, conn: &Arc<Conn>) {
        let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        watched.retain(|conn| conn.strong_count() > 0);
        watched.push(Arc::downgrade(conn));
        self.added.notify_all();
    }

    fn busy(&self) {
        self.activity.fetch_add(1, Ordering::Relaxed);
    }

    fn run(&self) {
        let mut last_activity = u64::MAX;
        loop {
            let watched: Vec<Arc<Conn>> = {
                let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
                watched.retain(|conn| conn.strong_count() > 0);
                let mut watched = self
                    .added
                    .wait_while(watched, |watched| watched.is_empty())
                    .unwrap_or_else(|p| p.into_inner());
                watched.retain(|conn| conn.strong_count() > 0);
                watched.iter().filter_map(Weak::upgrade).collect()
            };
            let now = clock_ns();
            for conn in watched {
                let epoch = conn.dispatch.epoch.load(Ordering::Acquire);
                let since = conn.dispatch.busy_since.load(Ordering::Acquire);
                if since != 0 && now.saturating_sub(since) >= HANDOFF_AFTER.as_nanos() as u64 {
                    hand_off(&conn, epoch);
                }
            }
            let activity = self.activity.load(Ordering::Relaxed);
            let interval = if activity != last_activity { 1 } else { 20 };
            last_activity = activity;
            std::thread::sleep(Duration::from_millis(interval));
        }
    }
}
