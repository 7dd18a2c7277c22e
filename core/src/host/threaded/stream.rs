//! Taking events from the engine on the driving thread: drain the queue
//! and, with a pipe or socket, read the stream right here (no hop to the
//! engine's reader task), sleeping in `poll` on the stream and the wake fd.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use crate::host::{EventFd, HostConnection, HostOptions};
use crate::transport::Transport;

/// How long a driver that just found events reads on before it sleeps in
/// `poll`: on a VM waking a sleeping thread costs more than a short spin.
pub const READ_SPIN: Duration = Duration::from_micros(50);

thread_local! {
    /// This thread pumps a stream and drains right after: what it queues
    /// needs no wake-up (an eventfd write and read saved per batch).
    static PUMPING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the engine's wake-up would only wake this very thread.
pub(super) fn pumping() -> bool {
    PUMPING.with(Cell::get)
}

/// A connection's stream as its drivers see it: the host's thread that
/// takes events reads the stream itself ([`Stream::drive`]).
pub struct Stream {
    /// Signalled by the engine when events arrive on an empty queue.
    pub(super) wake: Arc<EventFd>,
    /// The stream can still be read on the driver's thread.
    reading: AtomicBool,
    /// A waiting request asks the dispatch thread to stop driving.
    yield_asked: AtomicBool,
    /// How long to read on after events before sleeping in `poll`.
    read_spin: Duration,
}

impl Stream {
    /// Connect over `transport` for host threads that take the events
    /// through the returned stream (with `HostOptions::host_reads`, reading
    /// a pipe or socket themselves); `read_spin`: how long a driver reads
    /// on after events before it sleeps in `poll` ([`READ_SPIN`]).
    pub fn connect(
        transport: Transport,
        host_options: HostOptions,
        runtime: &Handle,
        read_spin: Duration,
    ) -> std::io::Result<(HostConnection, Self)> {
        let wake = Arc::new(EventFd::new()?);
        let signal = wake.clone();
        let host = HostConnection::connect(transport, host_options, runtime, move || {
            // Events queued while this thread pumps are drained right after.
            if !pumping() {
                signal.signal();
            }
        });
        let stream = Self {
            wake,
            reading: AtomicBool::new(host.read_fd().is_some()),
            yield_asked: AtomicBool::new(false),
            read_spin,
        };
        Ok((host, stream))
    }

    /// Ask the driver (the dispatch thread, maybe asleep in `poll`) to let go.
    pub(super) fn ask_to_yield(&self) {
        self.yield_asked.store(true, Ordering::Release);
        self.wake.signal();
    }

    /// Take the next batch of events from the engine, reading the stream on
    /// this thread when it can; None at `deadline`, once `done` (the
    /// driver's own answer arrived another way), or (`yielding`) when a
    /// waiting request asked for the stream.
    pub fn drive(
        &self,
        host: &HostConnection,
        deadline: Option<Instant>,
        yielding: bool,
        done: &dyn Fn() -> bool,
    ) -> Option<String> {
        let read_fd = host.read_fd();
        loop {
            // Reset before every check the wake stands for (`done`, a yield
            // asked, events to drain): a signal from before the reset is
            // seen by the checks, one after it wakes `poll`. One between a
            // check and the reset would be lost (an answer `Driver::complete`
            // put in its slot, its thread asleep in `poll` with it there).
            self.wake.reset();
            if done() {
                return None;
            }
            if yielding && self.yield_asked.swap(false, Ordering::AcqRel) {
                return None;
            }
            if let Some(text) = host.drain() {
                return Some(text);
            }
            // At the connection's limits the engine reads nothing until the
            // peer reads; its wake says when to read again.
            let reading = read_fd.is_some() && self.reading.load(Ordering::Acquire) && !host.reading_paused();
            if reading && self.read_for(host, self.read_spin) {
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
    fn read_for(&self, host: &HostConnection, spin: Duration) -> bool {
        let start = Instant::now();
        loop {
            PUMPING.with(|pumping| pumping.set(true));
            let open = host.pump();
            PUMPING.with(|pumping| pumping.set(false));
            if !open {
                // The stream ended: a CLOSED event follows through `wake`.
                self.reading.store(false, Ordering::Release);
                return host.queued_events() > 0;
            }
            if host.queued_events() > 0 {
                return true;
            }
            if start.elapsed() >= spin || host.reading_paused() {
                return false;
            }
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    use super::{Stream, READ_SPIN};
    use crate::host::{runtime, HostOptions};
    use crate::transport::Transport;

    /// What `done` stands for (a waiting request's answer, put in its slot
    /// by another thread, then the wake signalled) may happen right after
    /// the driver looked: the driver still sees it at once, rather than
    /// sleep in `poll` with it there.
    #[test]
    fn an_answer_put_right_after_the_driver_looked_ends_its_drive() {
        let runtime = runtime();
        let (ours, _peer) = Transport::memory_pair();
        let (host, stream) = {
            let _entered = runtime.enter();
            Stream::connect(ours, HostOptions::default(), &runtime, READ_SPIN).unwrap()
        };
        let looks = Cell::new(0);
        // The first look finds nothing, and the answer comes right after it.
        let done = || {
            looks.set(looks.get() + 1);
            if looks.get() == 1 {
                stream.wake.signal();
                return false;
            }
            true
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        assert_eq!(stream.drive(&host, Some(deadline), false, &done), None);
        assert!(
            Instant::now() < deadline,
            "the driver slept until its deadline with its answer there"
        );
        assert_eq!(looks.get(), 2);
    }
}
