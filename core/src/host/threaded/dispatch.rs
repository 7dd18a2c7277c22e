//! The dispatch thread: a connection with callbacks has one, which takes
//! events in batches and runs their callbacks in wire order, on itself,
//! without a thread hop per message. Notification callbacks run one at a
//! time; a response is delivered after the notifications before it were
//! handled, because the same thread delivers it after them.
//!
//! Callbacks may block. A request or response callback that blocks must not
//! stop the events behind it, so the dispatch thread hands its job to a new
//! thread: at once when the callback calls a blocking function of the
//! driver (a request, a send that waits for room), or, when it blocks in
//! the host's own code, once the monitor sees it busy (`monitor.rs`), or
//! sooner when it has run a while and sends a request whose answer it does
//! not wait for (`after_request_sent`: the answer needs a reader). The
//! old thread finishes its callback and ends. A notification callback is
//! never handed off (the next notification would overtake it).

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use super::answers::Waiting;
use super::decode::{Event, Item};
use super::driver::{answer, Driver, Handler};
use super::monitor::{self, Watched};
use crate::error::RequestError;

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
    static ON_DISPATCH: Cell<Option<(*const dyn Watched, u64, Doing)>> = const { Cell::new(None) };
}

/// Start the dispatch thread of a connection with callbacks.
pub(super) fn start<H: Handler>(conn: &Arc<Driver<H>>) {
    let watched: Arc<dyn Watched> = conn.clone();
    monitor::watch(Arc::downgrade(&watched));
    spawn(conn.clone(), 0);
}

fn spawn<H: Handler>(conn: Arc<Driver<H>>, epoch: u64) {
    let spawned = std::thread::Builder::new()
        .name("acp-dispatch".into())
        .spawn(move || run(conn, epoch));
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start a dispatch thread");
    }
}

impl<H: Handler> Watched for Driver<H> {
    fn job(&self) -> &monitor::Job {
        &self.job
    }

    fn hand_off(self: Arc<Self>, epoch: u64) {
        if self.job.take_from(epoch) {
            spawn(self, epoch + 1);
        }
    }
}

fn set_doing<H: Handler>(conn: &Driver<H>, epoch: u64, doing: Doing) {
    let on: *const dyn Watched = conn;
    ON_DISPATCH.with(|cell| cell.set(Some((on, epoch, doing))));
}

/// The dispatch loop: take events, run their callbacks, until the
/// connection is finished or the job was handed to another thread.
fn run<H: Handler>(conn: Arc<Driver<H>>, epoch: u64) {
    set_doing(&conn, epoch, Doing::Idle);
    let holds_job = || conn.job.epoch() == epoch;
    while let Some(item) = conn.next_for_dispatch(holds_job) {
        if deliver(&conn, epoch, item) {
            break;
        }
    }
    ON_DISPATCH.with(|cell| cell.set(None));
}

/// Run one event's callback; true once the connection is finished.
fn deliver<H: Handler>(conn: &Arc<Driver<H>>, epoch: u64, item: Item) -> bool {
    let handler = &conn.handler;
    match item.event() {
        Event::Request {
            token,
            method,
            params,
        } => {
            let handled = in_callback(conn, epoch, Doing::Callback, || {
                handler.request(conn, *token, method, params.as_ref())
            });
            if let Err(error) = handled {
                let _ = conn.host.respond(*token, Err(error));
            }
        }
        Event::Notification { method, params } => {
            in_callback(conn, epoch, Doing::Notification, || {
                handler.notification(conn, method, params.as_ref())
            });
            conn.notification_done();
        }
        Event::Response { id, outcome } => match conn.answers.take(*id) {
            Some(Waiting::Slot(slot)) => conn.complete(&slot, answer(outcome)),
            Some(Waiting::Reply(reply)) => {
                let doing = if conn.options.quick_replies {
                    Doing::Notification
                } else {
                    Doing::Callback
                };
                in_callback(conn, epoch, doing, || {
                    handler.reply(conn, reply, *id, outcome.as_ref())
                });
            }
            Some(Waiting::Event) | None => {}
        },
        Event::InvalidNotification { method, error } => {
            in_callback(conn, epoch, Doing::Notification, || {
                handler.invalid_notification(conn, method, error)
            });
            conn.notification_done();
        }
        // A later answer finds the request gone.
        Event::Cancelled { token } => {
            in_callback(conn, epoch, Doing::Notification, || {
                handler.cancelled(conn, *token)
            });
        }
        Event::Closed { reason } => {
            // No answer owed to a callback is dropped: one still missing fails as the close.
            let closed = RequestError::connection_closed(reason);
            for (id, reply) in conn.fail_waiting(reason) {
                in_callback(conn, epoch, Doing::Notification, || {
                    handler.reply(conn, reply, id, Err(&closed))
                });
            }
            in_callback(conn, epoch, Doing::Notification, || handler.closed(conn, reason));
            conn.mark_finished();
            return true;
        }
    }
    false
}

/// Run `callback`, marked as what it is for hand-offs.
fn in_callback<H: Handler, T>(conn: &Driver<H>, epoch: u64, doing: Doing, callback: impl FnOnce() -> T) -> T {
    set_doing(conn, epoch, doing);
    let busy = doing == Doing::Callback;
    if busy {
        conn.job.busy(epoch, true);
    }
    let result = callback();
    if busy {
        conn.job.busy(epoch, false);
    }
    set_doing(conn, epoch, Doing::Idle);
    result
}

/// A notification callback waiting for its own connection would wait for
/// itself (what it waits for is delivered after it returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WouldDeadlock;

impl<H: Handler> Driver<H> {
    /// Called before this thread blocks on the connection's behalf: from a
    /// request or response callback the dispatch job moves to a new thread;
    /// from a notification callback it is refused.
    pub fn before_blocking(self: &Arc<Self>) -> Result<(), WouldDeadlock> {
        let Some((on, epoch, doing)) = ON_DISPATCH.with(Cell::get) else {
            return Ok(());
        };
        if !std::ptr::addr_eq(on, Arc::as_ptr(self)) {
            return Ok(());
        }
        match doing {
            Doing::Notification => Err(WouldDeadlock),
            Doing::Callback | Doing::Idle => {
                self.clone().hand_off(epoch);
                Ok(())
            }
        }
    }
}

/// A request or response callback that has run this long and sends a
/// request whose answer it does not wait for hands its job off at once:
/// the answer, and the events behind it, need a reader, and the monitor
/// would take up to its 2 ms. A callback shorter than this (one that sends
/// a request or two and returns) never costs a hand-off.
const HANDOFF_SENDING_AFTER: Duration = Duration::from_micros(100);

/// Called after this thread sent a request of `conn`'s whose answer comes
/// as an event (a callback's reply), not to a waiting thread.
pub(super) fn after_request_sent(conn: &dyn Watched) {
    let Some((on, epoch, Doing::Callback)) = ON_DISPATCH.with(Cell::get) else {
        return;
    };
    let job = conn.job();
    if !std::ptr::addr_eq(on, conn) || job.epoch() != epoch {
        return; // another connection's thread, or handed off already
    }
    if job.busy_for(HANDOFF_SENDING_AFTER, monitor::clock_ns()) {
        dispatching(on).hand_off(epoch);
    }
}

/// The hook the engine runs before a send waits for room in the write
/// queue: hand the job off if a request or response callback is sending
/// (a notification callback blocks, and the reading with it: backpressure).
pub(super) fn before_send_blocks() {
    let Some((on, epoch, Doing::Callback)) = ON_DISPATCH.with(Cell::get) else {
        return;
    };
    dispatching(on).hand_off(epoch);
}

/// The connection this dispatch thread runs callbacks of (`ON_DISPATCH`'s), as a new reference.
fn dispatching(on: *const dyn Watched) -> Arc<dyn Watched> {
    // SAFETY: a dispatch thread holds an Arc of its connection while it
    // runs, and `on` came from it by an unsizing cast.
    unsafe {
        Arc::increment_strong_count(on);
        Arc::from_raw(on)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::super::decode::Text;
    use super::super::driver::{Driver, DriverOptions, Handler};
    use super::Arc;
    use crate::error::RequestError;
    use crate::host::{runtime, HostOptions};
    use crate::transport::Transport;

    /// On the peer's request: past the early hand-off's threshold in its
    /// callback, it sends a request of its own (answered as an event) and
    /// says whether its job moved to another thread by then.
    struct SendsLate(mpsc::Sender<bool>);

    impl Handler for SendsLate {
        type Reply = ();
        fn request(
            &self,
            driver: &Arc<Driver<Self>>,
            _: u64,
            _: &Text,
            _: Option<&Text>,
        ) -> Result<(), RequestError> {
            let epoch = driver.job.epoch();
            std::thread::sleep(Duration::from_micros(300));
            driver.send_request("_test/ask", Some("{}"), super::Waiting::Reply(()))?;
            let _ = self.0.send(driver.job.epoch() != epoch);
            Ok(())
        }
        fn notification(&self, _: &Arc<Driver<Self>>, _: &Text, _: Option<&Text>) {}
        fn invalid_notification(&self, _: &Arc<Driver<Self>>, _: &str, _: &RequestError) {}
        fn cancelled(&self, _: &Arc<Driver<Self>>, _: u64) {}
        fn closed(&self, _: &Arc<Driver<Self>>, _: &str) {}
        fn reply(&self, _: &Arc<Driver<Self>>, _: (), _: i64, _: Result<&Text, &RequestError>) {}
    }

    /// The answer to a request sent late in a callback needs a reader: the
    /// send hands the job off itself, rather than leave it to the monitor's
    /// 2 ms. (Under heavy load the sleep may outlast those 2 ms, and the
    /// monitor moves it first: the job has moved either way.)
    #[test]
    fn a_callback_sending_late_hands_its_job_off_at_once() {
        let runtime = runtime();
        let (ours, peer) = Transport::memory_pair();
        let (moved, told) = mpsc::channel();
        let options = DriverOptions {
            callbacks: true,
            quick_replies: false,
        };
        let driver = {
            let _entered = runtime.enter();
            Driver::connect(ours, HostOptions::default(), SendsLate(moved), options, &runtime).unwrap()
        };
        driver.start();
        let asked = runtime.block_on(async move {
            let (reader, mut writer) = peer.into_streams();
            writer
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_test/go\"}\n")
                .await
                .unwrap();
            writer.flush().await.unwrap();
            let mut line = String::new();
            BufReader::new(reader).read_line(&mut line).await.unwrap();
            line
        });
        assert!(asked.contains("_test/ask"), "{asked}");
        assert!(
            told.recv_timeout(Duration::from_secs(30)).unwrap(),
            "the job stayed on the sending thread"
        );
    }
}
