//! The write path: how a frame gets onto the wire. Every frame goes through
//! one door, [`Outbound::offer`]: it is written straight to the stream from
//! the caller's thread when nothing is queued before it and it is not part
//! of a burst (a cross-thread wake-up costs more than the write on a virtual
//! machine), or put on the bounded write queue, which the writer task
//! (`writer.rs`) drains in batches. When the queue is full, `offer` hands the
//! frame back and the caller chooses how to wait: [`Outbound::wait`]
//! (async), [`Outbound::block`] (a thread outside the runtime),
//! [`Outbound::detach`] (from code that cannot wait), or keep it (the host
//! bindings park it in order).
//!
//! The queued frames and bytes are counted here: a frame is counted from
//! the moment it is queued until the writer wrote it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{mpsc, Notify};

use super::Inner;
use crate::error::RequestError;
use crate::framing::FrameWriter;
use crate::transport::BoxWriter;

/// A gap shorter than this since the last send, with nothing read from the
/// peer in between, makes a frame part of a burst: it goes through the
/// queue, where the writer task batches it. A frame sent after input
/// (an answer, the next request of a request/response exchange) is not a
/// burst: queueing it would cost a wake-up of the writer per round trip.
const BURST_GAP_NS: u64 = 20_000;

/// What a queued message costs besides its bytes (its buffer's header and
/// allocation, its queue slot), counted in `held_bytes`: a peer that is sent
/// many small messages cannot hold several times the bound.
const MESSAGE_OVERHEAD: usize = 64;

/// What `offer` did with a frame.
pub(crate) enum Offered {
    /// Written, or queued for the writer.
    Taken,
    /// The queue is full: the frame, back (nothing was counted for it).
    Full(Vec<u8>),
}

/// One frame, or a batch of frames a host collected (written directly
/// whenever nothing is queued before it, burst or not).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Frame,
    Batch,
}

/// What a thread waiting in [`Outbound::block`] sends. One answering a
/// peer's request holds that request, so it counts as a request in flight
/// (it holds a thread, and reading more would start more of them). One
/// sending its own request or notification does not: its peer may be
/// waiting for us to read before it reads, and two peers flooding each
/// other with requests would both stop reading.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Outgoing {
    Answer,
    Own,
}

pub(crate) struct Outbound {
    queue: mpsc::Sender<Vec<u8>>,
    /// The stream's writer while the writer task is not using it.
    direct: Mutex<Option<FrameWriter<BoxWriter>>>,
    /// Bytes of direct writes that the stream did not take, left in the
    /// writer's batch for the writer task (counted in `queued_bytes` until
    /// it wrote them). Changed only under the `direct` lock.
    direct_rest: AtomicUsize,
    /// Frames in the queue or being written by the writer task; a direct
    /// write may only go out when this is zero (ordering).
    in_flight: AtomicUsize,
    /// Bytes of those frames (and of what a direct write left unwritten).
    queued_bytes: AtomicUsize,
    /// Bytes a sender holds for the write path, not queued yet (a host's
    /// parked sends): output all the same, for admission control.
    parked_bytes: AtomicUsize,
    /// Frames `detach` could not queue, in order, and whether a task is
    /// queueing them (one task per connection, not one per frame).
    overflow: Mutex<(VecDeque<Vec<u8>>, bool)>,
    /// Senders blocked in `block`: each holds a frame and, with a host, a
    /// thread (counted as requests in flight by admission control).
    blocked: AtomicUsize,
    /// When the last frame was sent (`clock_ns`).
    last_send: AtomicU64,
    /// Messages read from the peer so far (only the reader counts them),
    /// and that count at the last send.
    inputs: AtomicU64,
    inputs_at_last_send: AtomicU64,
    /// Notified whenever the writer wrote something (room again).
    pub(super) drained: Notify,
}

impl Outbound {
    pub(super) fn new(queue: mpsc::Sender<Vec<u8>>, writer: FrameWriter<BoxWriter>) -> Self {
        Self {
            queue,
            direct: Mutex::new(Some(writer)),
            direct_rest: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            queued_bytes: AtomicUsize::new(0),
            parked_bytes: AtomicUsize::new(0),
            overflow: Mutex::new((VecDeque::new(), false)),
            blocked: AtomicUsize::new(0),
            last_send: AtomicU64::new(0),
            inputs: AtomicU64::new(0),
            inputs_at_last_send: AtomicU64::new(0),
            drained: Notify::new(),
        }
    }

    /// The reader read a message from the peer.
    pub fn note_input(&self) {
        // One reader at a time: no read-modify-write needed.
        self.inputs
            .store(self.inputs.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Bytes queued and not written yet.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes.load(Ordering::Acquire)
    }

    /// Output held for the peer (admission.rs): queued and parked bytes,
    /// plus what each queued message costs besides its bytes.
    pub fn held_bytes(&self) -> usize {
        self.queued_bytes()
            + self.parked_bytes.load(Ordering::Acquire)
            + self.in_flight.load(Ordering::Acquire) * MESSAGE_OVERHEAD
    }

    /// Answers waiting in `block` (see [`Outgoing`]).
    pub fn blocked_answers(&self) -> usize {
        self.blocked.load(Ordering::Acquire)
    }

    /// A sender parked `bytes` of output until there is room.
    pub fn note_parked(&self, bytes: usize) {
        self.parked_bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    /// Parked output was queued (it is counted there now) or dropped.
    pub fn note_unparked(&self, bytes: usize) {
        self.parked_bytes.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Make `frame` ready to wait for room (it may wait long: it holds no
    /// more than its bytes) and count it as parked; what it counts for,
    /// for `note_unparked`.
    pub fn park(&self, frame: &mut Vec<u8>) -> usize {
        frame.shrink_to_fit();
        let cost = frame.len() + MESSAGE_OVERHEAD;
        self.note_parked(cost);
        cost
    }

    /// The one way onto the wire (see the module docs).
    pub fn offer(&self, inner: &Inner, frame: Vec<u8>, kind: Kind) -> Result<Offered, RequestError> {
        if inner.is_closing() {
            return Err(inner.closed_error());
        }
        let Some(frame) = self.write_direct(inner, frame, kind)? else {
            return Ok(Offered::Taken);
        };
        let bytes = frame.len();
        self.count(bytes);
        match self.queue.try_send(frame) {
            Ok(()) => Ok(Offered::Taken),
            Err(mpsc::error::TrySendError::Full(frame)) => {
                self.uncount(bytes);
                Ok(Offered::Full(frame))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.uncount(bytes);
                Err(inner.closed_error())
            }
        }
    }

    /// Queue a frame `offer` gave back, waiting for room.
    pub async fn wait(&self, inner: &Inner, frame: Vec<u8>) -> Result<(), RequestError> {
        let bytes = frame.len();
        self.count(bytes);
        let sent = tokio::select! {
            sent = self.queue.send(frame) => sent.map_err(|_| inner.closed_error()),
            _ = inner.closing.cancelled() => Err(inner.closed_error()),
        };
        if sent.is_err() {
            self.uncount(bytes);
        }
        sent
    }

    /// Queue a frame `offer` gave back, blocking this thread (which must
    /// not be a runtime thread) until there is room; `before` runs first,
    /// once an answer counts as blocked.
    pub fn block(
        &self,
        inner: &Inner,
        frame: Vec<u8>,
        outgoing: Outgoing,
        before: impl FnOnce(),
    ) -> Result<(), RequestError> {
        let bytes = frame.len();
        let answer = outgoing == Outgoing::Answer;
        if answer {
            self.blocked.fetch_add(1, Ordering::AcqRel);
        }
        before();
        self.count(bytes);
        let sent = self.queue.blocking_send(frame).map_err(|_| inner.closed_error());
        if sent.is_err() {
            self.uncount(bytes);
        }
        if answer {
            self.blocked.fetch_sub(1, Ordering::AcqRel);
        }
        self.drained.notify_waiters();
        sent
    }

    /// Queue a frame `offer` gave back, in the background: after the frames
    /// detached before it, by one task per connection.
    pub fn detach(&self, inner: &Arc<Inner>, mut frame: Vec<u8>) {
        self.park(&mut frame);
        let mut overflow = self.overflow.lock().unwrap_or_else(|p| p.into_inner());
        overflow.0.push_back(frame);
        if std::mem::replace(&mut overflow.1, true) {
            return;
        }
        drop(overflow);
        let inner = inner.clone();
        inner.runtime.clone().spawn(async move {
            let outbound = &inner.outbound;
            loop {
                let frame = {
                    let mut overflow = outbound.overflow.lock().unwrap_or_else(|p| p.into_inner());
                    match overflow.0.pop_front() {
                        Some(frame) => frame,
                        None => {
                            overflow.1 = false;
                            return;
                        }
                    }
                };
                let bytes = frame.len();
                let sent = outbound.wait(&inner, frame).await;
                outbound.note_unparked(bytes + MESSAGE_OVERHEAD);
                if sent.is_err() {
                    let mut overflow = outbound.overflow.lock().unwrap_or_else(|p| p.into_inner());
                    for frame in overflow.0.drain(..) {
                        outbound.note_unparked(frame.len() + MESSAGE_OVERHEAD);
                    }
                    overflow.1 = false;
                    return;
                }
            }
        });
    }

    fn count(&self, bytes: usize) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.queued_bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    fn uncount(&self, bytes: usize) {
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        self.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Write `frame` straight to the stream if nothing is queued before it
    /// and (for a single frame) it is not part of a burst; `Some(frame)`
    /// back when it must go through the queue instead.
    fn write_direct(
        &self,
        inner: &Inner,
        frame: Vec<u8>,
        kind: Kind,
    ) -> Result<Option<Vec<u8>>, RequestError> {
        if self.in_flight.load(Ordering::Acquire) != 0 {
            return Ok(Some(frame));
        }
        let now = clock_ns();
        let inputs = self.inputs.load(Ordering::Relaxed);
        let after_input = self.inputs_at_last_send.swap(inputs, Ordering::Relaxed) != inputs;
        if kind == Kind::Frame
            && !after_input
            && now.saturating_sub(self.last_send.load(Ordering::Relaxed)) < BURST_GAP_NS
        {
            self.last_send.store(now, Ordering::Relaxed);
            return Ok(Some(frame));
        }
        let Ok(mut slot) = self.direct.try_lock() else {
            return Ok(Some(frame));
        };
        let Some(frames) = slot.as_mut() else {
            return Ok(Some(frame));
        };
        // Checked again under the lock the writer task takes first.
        if self.in_flight.load(Ordering::Acquire) != 0 {
            return Ok(Some(frame));
        }
        self.last_send.store(now, Ordering::Relaxed);
        inner.observe(
            crate::Direction::Outbound,
            frame.strip_suffix(b"\n").unwrap_or(&frame),
        );
        // A writer that is not a plain pipe or socket (a file, a terminal:
        // tokio's blocking-thread writers) needs the runtime, and the
        // caller's thread may not be in it.
        let _runtime = inner.runtime.enter();
        let written = if inner.settings.guard_sigpipe {
            sigpipe::guarded(|| frames.try_write_now(&frame))
        } else {
            frames.try_write_now(&frame)
        };
        match written {
            Ok((written, needs_flush)) => {
                if written < frame.len() || needs_flush {
                    // The rest waits in the batch for the writer task, which
                    // an empty frame wakes.
                    let rest = frame.len() - written;
                    frames.push_owned(frame, written);
                    self.count(rest);
                    if self.queue.try_send(Vec::new()).is_ok() {
                        // The empty frame carries no bytes: the writer task
                        // learns of these when it takes the writer.
                        self.direct_rest.fetch_add(rest, Ordering::AcqRel);
                    } else {
                        self.uncount(rest);
                    }
                }
                Ok(None)
            }
            Err(error) => {
                drop(slot);
                inner.close_by_peer(&crate::transport::failure_reason("write", &error));
                Err(inner.closed_error())
            }
        }
    }

    /// The writer, for the writer task, with the bytes direct writes left
    /// in its batch (to count as written with the frames it writes). None
    /// only while a direct write holds it: the lock is then taken after it.
    pub(super) fn take_writer(&self) -> Option<(FrameWriter<BoxWriter>, usize)> {
        let mut slot = self.direct.lock().unwrap_or_else(|p| p.into_inner());
        let writer = slot.take()?;
        Some((writer, self.direct_rest.swap(0, Ordering::AcqRel)))
    }

    /// Give the writer back after writing `frames` queued frames of `bytes`
    /// bytes in all.
    pub(super) fn put_writer(&self, writer: FrameWriter<BoxWriter>, frames: usize, bytes: usize) {
        *self.direct.lock().unwrap_or_else(|p| p.into_inner()) = Some(writer);
        self.in_flight.fetch_sub(frames, Ordering::AcqRel);
        self.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.drained.notify_waiters();
    }
}

/// A monotonic clock in nanoseconds (for the burst check).
fn clock_ns() -> u64 {
    static ORIGIN: OnceLock<std::time::Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    // Never 0 after the first call, so "no direct write yet" never looks recent.
    origin.elapsed().as_nanos() as u64 + 1_000_000
}

mod sigpipe {
    /// Run `write` with SIGPIPE blocked on this thread, and swallow the
    /// SIGPIPE a write to a closed pipe raised (the write still fails with
    /// EPIPE): for hosts, such as C programs, whose threads would otherwise
    /// be killed by it.
    pub(super) fn guarded<T>(write: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        // SAFETY: plain signal-mask calls on this thread's own mask.
        unsafe {
            let mut pipe: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut pipe);
            libc::sigaddset(&mut pipe, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut previous);
            let result = write();
            let was_blocked = libc::sigismember(&previous, libc::SIGPIPE) == 1;
            if !was_blocked {
                if matches!(&result, Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe) {
                    let zero = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    };
                    while libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero) == libc::SIGPIPE {}
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
            }
            result
        }
    }
}
