//! Admission control: what one connection holds for a peer that is not
//! reading stays bounded. Before each read the reader asks [`Inner::admits`]:
//! while the peer's requests in flight or the output held for the peer are
//! at their [`Limits`], it reads nothing more (the peer's writes then block
//! on a full pipe or socket: backpressure) until requests finish or the
//! peer reads. With a stall timeout, a wait in which nothing moves for that
//! long closes the connection.

use std::time::Duration;

use super::Inner;

/// Default for [`Limits::max_in_flight_requests`] (the tables' `defaults`).
pub const DEFAULT_MAX_IN_FLIGHT_REQUESTS: usize = crate::tables::defaults::MAX_IN_FLIGHT_REQUESTS;

/// Default for [`Limits::max_buffered_bytes`] (the tables' `defaults`, as the
/// official TypeScript SDK's server transport).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = crate::tables::defaults::MAX_BUFFERED_BYTES;

/// What one connection may hold for its peer before it stops reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The peer's requests being handled at once: started and not
    /// answered yet, or answered by a host thread that waits for room to
    /// queue the answer (it holds that thread). An answer a handler future
    /// returned waits as output instead, counted in `max_buffered_bytes`.
    pub max_in_flight_requests: usize,
    /// Bytes of output queued for the peer and not written yet: answers,
    /// the engine's own error replies, notifications and requests.
    pub max_buffered_bytes: usize,
    /// Close the connection when reading has been held at a limit for this
    /// long with no progress (nothing written to the peer, no request
    /// finished). None: wait for ever (the default on stdio, where the peer
    /// is a process we started or that started us).
    pub output_stall_timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_in_flight_requests: DEFAULT_MAX_IN_FLIGHT_REQUESTS,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            output_stall_timeout: None,
        }
    }
}

impl Inner {
    /// Whether the reader may read more now.
    pub(crate) fn admits(&self) -> bool {
        let limits = &self.settings.limits;
        self.outbound.held_bytes() < limits.max_buffered_bytes
            && self.running.len() + self.outbound.blocked_answers() < limits.max_in_flight_requests
    }

    /// Wait until the reader may read more, or the connection closes (the
    /// stall timeout closes it).
    pub(crate) async fn room_to_read(&self) {
        let stall = self.settings.limits.output_stall_timeout;
        let mut deadline = stall.map(|timeout| tokio::time::Instant::now() + timeout);
        loop {
            let finished = self.running.finished.notified();
            let drained = self.outbound.drained.notified();
            tokio::pin!(finished, drained);
            finished.as_mut().enable();
            drained.as_mut().enable();
            if self.admits() || self.is_closing() {
                return;
            }
            let stalled = async {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = &mut finished => {}
                _ = &mut drained => {}
                _ = self.closing.cancelled() => return,
                _ = stalled => {
                    let timeout = stall.unwrap_or_default();
                    self.close(&format!(
                        "output stalled: the peer read nothing for {} ms while {}",
                        timeout.as_millis(),
                        self.held_reason()
                    ));
                    return;
                }
            }
            deadline = stall.map(|timeout| tokio::time::Instant::now() + timeout);
        }
    }

    /// Which limit holds reading, in words (for the close reason).
    fn held_reason(&self) -> String {
        let limits = &self.settings.limits;
        let held = self.outbound.held_bytes();
        if held >= limits.max_buffered_bytes {
            format!(
                "{held} bytes of output were held (max_buffered_bytes {})",
                limits.max_buffered_bytes
            )
        } else {
            format!(
                "{} requests were in flight (max_in_flight_requests {})",
                self.running.len() + self.outbound.blocked_answers(),
                limits.max_in_flight_requests
            )
        }
    }
}
