//! The writer task: drains the bounded outbound queue and writes whatever
//! is queued as one batch, so a burst costs one write, not one per message.
//! Between batches the stream's writer sits in `Outbound`, where a sender
//! that finds nothing queued writes its frame itself.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{Inner, CLOSE_FLUSH_GRACE};
use crate::framing::FrameWriter;
use crate::observer::Direction;
use crate::transport::BoxWriter;

pub(super) async fn run(inner: Arc<Inner>, mut queue: mpsc::Receiver<Vec<u8>>) {
    let spin = inner.settings.write_spin;
    loop {
        let first = match next_soon(&mut queue, spin) {
            Some(frame) => Some(frame),
            None => tokio::select! {
                biased;
                frame = queue.recv() => frame,
                _ = inner.closing.cancelled() => None,
            },
        };
        let Some(first) = first else { break };
        let Some((mut frames, rest)) = inner.outbound.take_writer() else {
            return;
        };
        let (mut taken, mut bytes) = (1, first.len() + rest);
        take(&inner, &mut frames, first);
        while let Ok(frame) = queue.try_recv() {
            taken += 1;
            bytes += frame.len();
            if take(&inner, &mut frames, frame) {
                break;
            }
        }
        let flushed = tokio::select! {
            flushed = frames.flush() => flushed,
            _ = closing_grace_over(&inner) => Err(std::io::ErrorKind::TimedOut.into()),
        };
        inner.outbound.put_writer(frames, taken, bytes);
        if let Err(error) = flushed {
            inner.close_by_peer(&crate::transport::failure_reason("write", &error));
            return;
        }
    }
    // Closing: write what was queued before the close (answers the peer may
    // still read), then shut our side so the peer sees EOF.
    let Some((mut frames, _)) = inner.outbound.take_writer() else {
        return;
    };
    let drained = async {
        while let Ok(frame) = queue.try_recv() {
            take(&inner, &mut frames, frame);
        }
        frames.shutdown().await
    };
    if let Ok(Err(error)) = tokio::time::timeout(CLOSE_FLUSH_GRACE, drained).await {
        tracing::debug!(%error, "could not flush while closing");
    }
}

/// A frame that arrives within `spin`, polled without parking: a sender in
/// a burst (a host-language thread) then never pays for waking this task.
fn next_soon(queue: &mut mpsc::Receiver<Vec<u8>>, spin: std::time::Duration) -> Option<Vec<u8>> {
    if spin.is_zero() {
        return None;
    }
    let deadline = std::time::Instant::now() + spin;
    loop {
        match queue.try_recv() {
            Ok(frame) => return Some(frame),
            Err(mpsc::error::TryRecvError::Disconnected) => return None,
            Err(mpsc::error::TryRecvError::Empty) if std::time::Instant::now() < deadline => {
                std::hint::spin_loop()
            }
            Err(mpsc::error::TryRecvError::Empty) => return None,
        }
    }
}

/// Add a frame to the batch; true when the batch is full. An empty frame
/// only wakes the task to flush what a direct write left in the batch.
fn take(inner: &Inner, frames: &mut FrameWriter<BoxWriter>, frame: Vec<u8>) -> bool {
    if frame.is_empty() {
        return false;
    }
    inner.observe(Direction::Outbound, frame.strip_suffix(b"\n").unwrap_or(&frame));
    frames.push_owned(frame, 0)
}

async fn closing_grace_over(inner: &Inner) {
    inner.closing.cancelled().await;
    tokio::time::sleep(CLOSE_FLUSH_GRACE).await;
}
