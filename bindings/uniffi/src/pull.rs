//! The connection's events, pulled by the foreign side's event thread with
//! a plain C function (`direct::acp_uniffi_next_events`).
//!
//! A foreign callback from an engine thread crosses JNA's callback proxy
//! (reflection, a `Structure` for the call status, a `RustBuffer` for the
//! text) on every batch; in a request/response exchange every message is
//! a batch of its own. A thread of the foreign side that calls in and
//! waits here instead crosses once, through JNA's direct mapping, with the
//! batch copied into a buffer it owns. With a pipe or socket it reads the
//! stream itself too (the threaded driver's [`Stream`]), so that a message
//! reaches the handler without a hop from the engine's reader task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use acp_engine::host::threaded::Stream;
use acp_engine::host::{kind, HostConnection};
use acp_engine::CancellationToken;
use serde_json::value::RawValue;

/// `acp_uniffi_next_events`: every event was taken (the close among them)
/// or the connection is unknown.
pub(crate) const END: i64 = -3;

/// One connection's side of the pull.
pub(crate) struct EventPull {
    /// Where events come from: the engine's queue, and the stream read here.
    stream: Stream,
    /// A batch larger than the buffer it was asked for, until asked again.
    held: Mutex<Option<String>>,
    /// The batch with the `CLOSED` event was taken.
    close_taken: AtomicBool,
    /// Cancelled when the foreign side comes back after handling the close.
    pub(crate) finished: CancellationToken,
}

impl EventPull {
    pub(crate) fn new(stream: Stream) -> Self {
        Self {
            stream,
            held: Mutex::new(None),
            close_taken: AtomicBool::new(false),
            finished: CancellationToken::new(),
        }
    }

    /// The next batch of `host`'s events, waiting for one; None once the
    /// close was taken.
    pub(crate) fn next(&self, host: &HostConnection) -> Option<String> {
        if let Some(batch) = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
        {
            return Some(batch);
        }
        if self.close_taken.load(Ordering::Acquire) {
            self.finished.cancel();
            return None;
        }
        // With no deadline, nothing done and no yielding, `drive` waits for a batch.
        let batch = self.stream.drive(host, None, false, &|| false)?;
        if ends_with_close(host, &batch) {
            self.close_taken.store(true, Ordering::Release);
        }
        Some(batch)
    }

    pub(crate) fn hold(&self, batch: String) {
        *self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(batch);
    }
}

/// Whether a batch (a JSON array of events) ends with the `CLOSED` event,
/// which only a closing connection's can.
fn ends_with_close(host: &HostConnection, batch: &str) -> bool {
    host.is_closed()
        && serde_json::from_str::<Vec<Vec<&RawValue>>>(batch)
            .ok()
            .and_then(|events| events.last()?.first()?.get().parse::<u8>().ok())
            == Some(kind::CLOSED)
}
