//! A host connection's output: sends are collected into one batch per loop
//! turn of the host (`HostOptions::buffer_output`, written at `flush` or
//! once 64 KiB are collected) and offered to the engine's write path from
//! the host's thread, without a task hop. When the write queue is full a
//! send is parked, in order, and returns a ticket; a task queues parked
//! sends as room comes and a `WRITTEN` event reports each. Nothing blocks
//! the host's thread.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};

use super::Shared;
use crate::connection::Connection;
use crate::engine::{Kind, Offered, Outgoing};
use crate::error::RequestError;

/// A host batch is written once it holds this much.
pub(super) const BATCH_BYTES: usize = 64 * 1024;

/// A send's outcome: `None` when the message is queued for writing, or a
/// ticket whose `WRITTEN` event will say when it is.
pub type Ticket = Option<u64>;

pub(super) struct Output {
    connection: Connection,
    /// Frames collected for one write, with `buffer_output`.
    batch: Option<Mutex<Vec<u8>>>,
    /// Sends parked because the write queue was full, in order (with the
    /// ticket and what each counts for in the held output).
    parked: mpsc::UnboundedSender<(Vec<u8>, u64, usize)>,
    /// How many parked sends are not queued yet: while any is, new sends
    /// park behind them, so nothing overtakes.
    parked_count: Arc<AtomicUsize>,
    next_ticket: AtomicU64,
    /// The last ticket whose send was queued (or failed): parked sends are
    /// queued in ticket order.
    written: watch::Receiver<u64>,
    /// Wait for room instead of parking (`HostOptions::block_when_full`).
    block_when_full: Option<super::options::BlockWhenFull>,
}

impl Output {
    pub fn start(
        connection: Connection,
        shared: Arc<Shared>,
        buffer: bool,
        block_when_full: Option<super::options::BlockWhenFull>,
        runtime: &Handle,
    ) -> Self {
        let (parked, parked_rx) = mpsc::unbounded_channel();
        let parked_count = Arc::new(AtomicUsize::new(0));
        let (written_tx, written) = watch::channel(0);
        runtime.spawn(write_parked(
            connection.clone(),
            shared,
            parked_rx,
            parked_count.clone(),
            written_tx,
        ));
        Self {
            connection,
            batch: buffer.then(|| Mutex::new(Vec::new())),
            parked,
            parked_count,
            next_ticket: AtomicU64::new(1),
            written,
            block_when_full,
        }
    }

    /// Until the send of `ticket` was queued for writing (true) or failed
    /// because the connection closed (false): for hosts whose sends wait
    /// for room (a suspending `send`) rather than watch `WRITTEN` events.
    pub fn wait_written(&self, ticket: u64) -> impl std::future::Future<Output = bool> + Send + 'static {
        let mut written = self.written.clone();
        let connection = self.connection.clone();
        async move {
            let reached = written.wait_for(|&last| last >= ticket).await.is_ok();
            reached && !connection.is_closed()
        }
    }

    /// Send a frame: into the batch, or to the writer.
    pub fn send_frame(&self, frame: Vec<u8>, outgoing: Outgoing) -> Result<Ticket, RequestError> {
        if self.batch.is_none() {
            return self.send_now(frame, Kind::Frame, outgoing);
        }
        self.send_built(|out| out.extend_from_slice(&frame), outgoing)
    }

    /// Send the frame `write` appends: straight into the batch (no buffer of
    /// its own), or to the writer.
    pub fn send_built(
        &self,
        write: impl FnOnce(&mut Vec<u8>),
        outgoing: Outgoing,
    ) -> Result<Ticket, RequestError> {
        let Some(batch) = &self.batch else {
            let mut frame = Vec::with_capacity(256);
            write(&mut frame);
            return self.send_now(frame, Kind::Frame, outgoing);
        };
        let mut batch = batch.lock().unwrap_or_else(|p| p.into_inner());
        if self.connection.is_closed() {
            return Err(self.closed_error());
        }
        if batch.capacity() == 0 {
            // One allocation per batch, not a doubling series.
            batch.reserve(BATCH_BYTES + BATCH_BYTES / 4);
        }
        write(&mut batch);
        if batch.len() < BATCH_BYTES {
            return Ok(None);
        }
        let full = std::mem::take(&mut *batch);
        // Sent under the lock: a concurrent flush must not overtake it.
        self.send_now(full, Kind::Batch, outgoing)
    }

    /// Write what the batch collected.
    pub fn flush(&self) -> Result<Ticket, RequestError> {
        let Some(batch) = &self.batch else {
            return Ok(None);
        };
        let mut batch = batch.lock().unwrap_or_else(|p| p.into_inner());
        if batch.is_empty() {
            return Ok(None);
        }
        let full = std::mem::take(&mut *batch);
        self.send_now(full, Kind::Batch, Outgoing::Own)
    }

    /// Offer a frame (or a batch) to the writer now if nothing is parked
    /// ahead of it; park it, with a ticket, if it does not fit.
    fn send_now(&self, frame: Vec<u8>, kind: Kind, outgoing: Outgoing) -> Result<Ticket, RequestError> {
        let frame = if self.parked_count.load(Ordering::Acquire) == 0 {
            let inner = self.connection.inner();
            match inner.outbound.offer(inner, frame, kind)? {
                Offered::Taken => return Ok(None),
                Offered::Full(frame) => match &self.block_when_full {
                    Some(hook) => {
                        // The hook lets reading go on while this sender
                        // waits; at the connection's limits reading stops
                        // anyway, and the sender just waits.
                        inner.outbound.block(inner, frame, outgoing, || {
                            if inner.admits() {
                                (hook.0)()
                            }
                        })?;
                        return Ok(None);
                    }
                    None => frame,
                },
            }
        } else if self.connection.is_closed() {
            return Err(self.closed_error());
        } else {
            frame
        };
        let mut frame = frame;
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        let outbound = &self.connection.inner().outbound;
        self.parked_count.fetch_add(1, Ordering::AcqRel);
        let cost = outbound.park(&mut frame);
        if self.parked.send((frame, ticket, cost)).is_err() {
            self.parked_count.fetch_sub(1, Ordering::AcqRel);
            outbound.note_unparked(cost);
            return Err(RequestError::connection_closed("closed"));
        }
        Ok(Some(ticket))
    }

    fn closed_error(&self) -> RequestError {
        RequestError::connection_closed(&self.connection.close_reason().unwrap_or_else(|| "closed".into()))
    }
}

/// Queue parked sends in order, waiting for room, and report each one.
async fn write_parked(
    connection: Connection,
    shared: Arc<Shared>,
    mut parked: mpsc::UnboundedReceiver<(Vec<u8>, u64, usize)>,
    parked_count: Arc<AtomicUsize>,
    written: watch::Sender<u64>,
) {
    let inner = connection.inner().clone();
    drop(connection);
    while let Some((frame, ticket, cost)) = parked.recv().await {
        let ok = inner.enqueue(frame).await.is_ok();
        inner.outbound.note_unparked(cost);
        parked_count.fetch_sub(1, Ordering::AcqRel);
        written.send_replace(ticket);
        shared.queue.push_written(ticket, ok);
    }
}
