//! Outbound requests awaiting their response, by id: registered when sent,
//! taken when the response (or a cancellation) arrives, all failed at once
//! when the connection closes.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::error::RequestError;
use crate::message::RawJson;

/// Where a response goes: the local waiter of an outbound request (a
/// `PendingRequest` future), or a callback run where the response is
/// released, in order with the notifications around it.
pub(crate) enum Waiter {
    Future(oneshot::Sender<Result<RawJson, RequestError>>),
    Callback(Box<dyn FnOnce(Result<RawJson, RequestError>) + Send>),
}

impl Waiter {
    pub fn complete(self, outcome: Result<RawJson, RequestError>) {
        match self {
            Waiter::Future(sender) => {
                let _ = sender.send(outcome);
            }
            Waiter::Callback(callback) => callback(outcome),
        }
    }
}

pub(crate) struct Pending {
    /// None once the connection closed: nothing registers after the
    /// waiters were failed.
    waiters: Mutex<Option<HashMap<i64, Waiter>>>,
}

impl Default for Pending {
    fn default() -> Self {
        Self {
            waiters: Mutex::new(Some(HashMap::new())),
        }
    }
}

impl Pending {
    /// Register the waiter of request `id`; the connection's closed error if
    /// it is closed already.
    pub fn register(
        &self,
        id: i64,
        waiter: Waiter,
        closed: impl FnOnce() -> RequestError,
    ) -> Result<(), RequestError> {
        match self.lock().as_mut() {
            Some(waiters) => {
                waiters.insert(id, waiter);
                Ok(())
            }
            None => Err(closed()),
        }
    }

    /// Take the waiter of `id`, if it is still pending.
    pub fn take(&self, id: i64) -> Option<Waiter> {
        self.lock().as_mut()?.remove(&id)
    }

    /// The connection closed: fail every waiter with `error`.
    pub fn fail_all(&self, error: &RequestError) {
        let waiters = self.lock().take().unwrap_or_default();
        for (_, waiter) in waiters {
            waiter.complete(Err(error.clone()));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<HashMap<i64, Waiter>>> {
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }
}
