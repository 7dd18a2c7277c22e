//! Our requests, and threads that wait: a request whose answer the caller's
//! thread waits for (`request`), its two halves for a host that cancels a
//! wait from another thread (`start_request`, `await_answer`: Go's
//! `context`), and waiting for the close. The waiting thread reads the
//! stream itself while nobody else does, so an answer costs no wake-up of
//! another thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::answers::{Answer, Slot, Waiting};
use super::dispatch::{self, WouldDeadlock};
use super::driver::{Driver, Handler};
use crate::error::RequestError;

/// Why a wait gave no answer.
#[derive(Debug)]
pub enum WaitError {
    /// From a notification callback: see [`WouldDeadlock`] (nothing was sent).
    WouldDeadlock,
    /// The request was not sent (the connection is closed, or the params
    /// do not fit the method).
    NotSent(RequestError),
    /// `await_answer`: the id is not awaited (unknown, or already answered).
    NotAwaited,
    /// No answer by the deadline: `request` cancelled the request;
    /// `await_answer` leaves it pending.
    TimedOut,
}

impl From<WouldDeadlock> for WaitError {
    fn from(_: WouldDeadlock) -> Self {
        WaitError::WouldDeadlock
    }
}

impl<H: Handler> Driver<H> {
    /// Send a request (`params`: JSON text, None: no params) and record how
    /// its answer is wanted before it can arrive; its id.
    pub fn send_request(
        &self,
        method: &str,
        params: Option<&str>,
        waiting: Waiting<H::Reply>,
    ) -> Result<i64, RequestError> {
        let answered_as_event = !matches!(waiting, Waiting::Slot(_));
        let mut waiting = Some(waiting);
        let mut registered = None;
        let sent = self.host.send_request_with(method, params, |id| {
            registered = Some(id);
            self.answers.expect(id, waiting.take().expect("called once"));
        });
        match sent {
            Ok((id, _)) => {
                if answered_as_event {
                    dispatch::after_request_sent(self);
                }
                Ok(id)
            }
            Err(error) => {
                if let Some(id) = registered {
                    self.answers.take(id);
                }
                Err(error)
            }
        }
    }

    /// Send a request and wait for its answer on this thread until
    /// `deadline` (then it is cancelled: the peer gets `$/cancel_request`).
    pub fn request(
        self: &Arc<Self>,
        method: &str,
        params: Option<&str>,
        deadline: Option<Instant>,
    ) -> Result<Answer, WaitError> {
        self.before_blocking()?;
        let slot = Arc::new(Slot::default());
        let id = self
            .send_request(method, params, Waiting::Slot(slot.clone()))
            .map_err(WaitError::NotSent)?;
        match self.wait(&slot, deadline) {
            Some(answer) => Ok(answer),
            None => {
                // A late answer is dropped.
                self.host.cancel_pending_request(id);
                Err(WaitError::TimedOut)
            }
        }
    }

    /// Send a request whose answer `await_answer` takes (once), on any thread.
    pub fn start_request(&self, method: &str, params: Option<&str>) -> Result<i64, RequestError> {
        let slot = Arc::new(Slot::default());
        let id = self.send_request(method, params, Waiting::Slot(slot.clone()))?;
        self.answers.await_later(id, slot);
        Ok(id)
    }

    /// Wait until `deadline` for the answer to request `id` of
    /// `start_request` (cancelling it answers it -32800 at once).
    pub fn await_answer(self: &Arc<Self>, id: i64, deadline: Option<Instant>) -> Result<Answer, WaitError> {
        let slot = self.answers.awaited(id).ok_or(WaitError::NotAwaited)?;
        self.before_blocking()?;
        let answer = self.wait(&slot, deadline).ok_or(WaitError::TimedOut)?;
        self.answers.awaited_done(id);
        Ok(answer)
    }

    /// The answer in `slot` by `deadline` (None: not yet).
    fn wait(&self, slot: &Slot, deadline: Option<Instant>) -> Option<Answer> {
        if self.takes_events() {
            // Nobody else may be taking events: take them while waiting.
            self.take(deadline, |_| slot.take())
        } else {
            self.wait_answer(slot, deadline)
        }
    }

    /// Wait up to `limit` (None: no limit) until the connection is closed
    /// and torn down, and with callbacks `Handler::closed` returned; false
    /// at the limit.
    pub fn wait_closed(self: &Arc<Self>, limit: Option<Duration>) -> Result<bool, WouldDeadlock> {
        self.before_blocking()?;
        if self.takes_events() {
            let closed = self.host.connection().closed();
            let runtime = crate::host::runtime();
            return Ok(match limit {
                None => {
                    runtime.block_on(closed);
                    true
                }
                Some(limit) => runtime.block_on(async { tokio::time::timeout(limit, closed).await.is_ok() }),
            });
        }
        Ok(self.wait_finished(limit.map(|limit| Instant::now() + limit)))
    }
}
