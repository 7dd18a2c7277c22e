//! A *text connection*: the host takes its events as the engine's JSON
//! batches, unparsed, on one event thread of its own, and its sends never
//! block (a send the peer has no room for is parked and returns a ticket).
//! For hosts that parse JSON faster than they walk foreign structs, and
//! whose other threads must not block (Kotlin's coroutines, through the C
//! ABI's `acp_text_connection_*`).
//!
//! The event thread reads a pipe or socket itself (the driver's
//! [`Stream`]): a message reaches the host without a hop from the engine's
//! reader task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::runtime::Handle;

use super::stream::Stream;
use crate::error::RequestError;
use crate::host::{kind, HostConnection, HostOptions, Ticket};
use crate::transport::Transport;
use crate::CancellationToken;

/// One text connection: the engine's host connection, the stream its
/// event thread reads, and where that thread is in taking events.
pub struct TextConnection {
    host: HostConnection,
    /// The runtime the connection lives on: sends enter it.
    runtime: Handle,
    stream: Stream,
    /// A batch larger than the buffer it was asked for, until asked again.
    held: Mutex<Option<String>>,
    /// The batch with the `CLOSED` event was taken.
    close_taken: AtomicBool,
    /// Cancelled when the event thread comes back after taking the close:
    /// the host has handled everything.
    finished: CancellationToken,
}

impl TextConnection {
    /// Connect over `transport`, the host's event thread reading the stream
    /// itself (`HostOptions::host_reads` is set). It sleeps in `poll` as soon
    /// as it finds nothing: a host with threads of its own (a JVM's
    /// compilers, GC, workers) needs the core more than a spin would save.
    pub fn connect(transport: Transport, options: HostOptions, runtime: &Handle) -> std::io::Result<Self> {
        let options = HostOptions {
            host_reads: true,
            ..options
        };
        let (host, stream) = Stream::connect(transport, options, runtime, Duration::ZERO)?;
        Ok(Self {
            host,
            runtime: runtime.clone(),
            stream,
            held: Mutex::new(None),
            close_taken: AtomicBool::new(false),
            finished: CancellationToken::new(),
        })
    }

    /// The engine's connection (close, wait for written tickets, ...).
    pub fn host(&self) -> &HostConnection {
        &self.host
    }

    /// Close: pending requests fail, queued output is flushed, a spawned
    /// process is reaped; the close arrives as the last event.
    pub fn close(&self) {
        let _entered = self.runtime.enter();
        self.host.close();
    }

    /// Cancelled once the host took the close and came back for more.
    pub fn finished(&self) -> &CancellationToken {
        &self.finished
    }

    /// Send a notification: None when it is queued for writing, a ticket
    /// when it is parked until the peer reads (`HostConnection::wait_written`).
    pub fn send_notification(&self, method: &str, params: Option<&str>) -> Result<Ticket, RequestError> {
        let _entered = self.runtime.enter();
        self.host.send_notification(method, params)
    }

    /// Send a request: its id, whose outcome arrives among the events.
    pub fn send_request(&self, method: &str, params: Option<&str>) -> Result<i64, RequestError> {
        let _entered = self.runtime.enter();
        Ok(self.host.send_request(method, params)?.0)
    }

    /// Answer inbound request `token` with a result's JSON text, or (with
    /// `is_error`) an error's (`{"code", "message", "data"?}`; anything
    /// else answers -32603). False when no answer is wanted any more. A
    /// result that is not JSON is refused, and the peer gets -32603 with
    /// the reason.
    pub fn respond(&self, token: u64, body: &str, is_error: bool) -> Result<bool, RequestError> {
        let _entered = self.runtime.enter();
        let outcome = if is_error {
            Err(serde_json::from_str::<RequestError>(body).unwrap_or_else(|_| RequestError::internal_error()))
        } else {
            Ok(body)
        };
        self.host.respond(token, outcome).or_else(|error| {
            let mut internal = RequestError::internal_error();
            internal.data = error.data.clone();
            self.host.respond(token, Err(internal))?;
            Err(error)
        })
    }

    /// The next batch of events (a JSON array of event arrays, see
    /// [`kind`]), waiting for one; None once the batch with the close was
    /// taken. One thread calls it: the host's event thread.
    pub fn next_batch(&self) -> Option<String> {
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
        let batch = self.stream.drive(&self.host, None, false, &|| false)?;
        if self.ends_with_close(&batch) {
            self.close_taken.store(true, Ordering::Release);
        }
        Some(batch)
    }

    /// Give back a batch the host had no room for: the next `next_batch`
    /// returns it.
    pub fn hold(&self, batch: String) {
        *self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(batch);
    }

    /// Whether a batch ends with the `CLOSED` event, which only a closing
    /// connection's can.
    fn ends_with_close(&self, batch: &str) -> bool {
        self.host.is_closed()
            && serde_json::from_str::<Vec<Vec<&RawValue>>>(batch)
                .ok()
                .and_then(|events| events.last()?.first()?.get().parse::<u8>().ok())
                == Some(kind::CLOSED)
    }
}

impl Drop for TextConnection {
    fn drop(&mut self) {
        // Nobody can send or take events any more: release the peer.
        self.close();
    }
}
