//! Inbound requests being handled, by id: for `$/cancel_request` (cancel
//! that handler), for ids used twice (refused), for close (cancel them
//! all), and for admission control (how many are in flight).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::message::RequestId;

/// Why a request a reader handler took is cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelCause {
    /// The peer's `$/cancel_request`; the engine answers it -32800.
    Peer,
    /// The peer's `$/cancel_request`, when handlers answer their
    /// cancellation: the request stays in flight until its handler answers.
    PeerAwaitsHandler,
    /// The connection closes.
    Close,
}

/// What to do when a request a reader handler took is cancelled. It may run
/// more than once for `PeerAwaitsHandler` (repeated `$/cancel_request`s); at
/// most once otherwise.
pub(crate) type OnCancel = Arc<dyn Fn(CancelCause) + Send + Sync>;

/// An inbound request being handled.
enum Handling {
    /// By a task, which ends when this token is cancelled.
    Task(CancellationToken),
    /// By a reader handler; the callback runs if it is cancelled.
    Deferred(Option<OnCancel>),
}

#[derive(Default)]
pub(crate) struct Running {
    requests: Mutex<HashMap<RequestId, Handling>>,
    /// Notified whenever a request stops running (room again).
    pub(super) finished: Notify,
}

impl Running {
    /// Track a request handled by a task; false if the id is already running.
    pub fn track_task(&self, id: &RequestId, token: &CancellationToken) -> bool {
        self.track(id, Handling::Task(token.clone()))
    }

    /// Track a request taken by a reader handler (its `on_cancel` comes
    /// with `set_on_cancel`); false if the id is already running.
    pub fn track_deferred(&self, id: &RequestId) -> bool {
        self.track(id, Handling::Deferred(None))
    }

    fn track(&self, id: &RequestId, handling: Handling) -> bool {
        let mut requests = self.lock();
        if requests.contains_key(id) {
            return false;
        }
        requests.insert(id.clone(), handling);
        true
    }

    pub fn set_on_cancel(&self, id: &RequestId, on_cancel: OnCancel) {
        if let Some(Handling::Deferred(slot)) = self.lock().get_mut(id) {
            *slot = Some(on_cancel);
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// The request was answered (its answer is queued).
    pub fn untrack(&self, id: &RequestId) {
        if self.lock().remove(id).is_some() {
            self.finished.notify_waiters();
        }
    }

    /// An inbound `$/cancel_request`: cancel that handler, if running.
    /// `until_answered`: a request a reader handler took stays in flight
    /// until it is answered (its handler answers the cancellation).
    pub fn cancel(&self, id: &RequestId, until_answered: bool) -> bool {
        let mut requests = self.lock();
        match requests.get(id) {
            Some(Handling::Task(token)) => {
                token.cancel();
                true
            }
            Some(Handling::Deferred(on_cancel)) if until_answered => {
                let on_cancel = on_cancel.clone();
                drop(requests);
                if let Some(on_cancel) = on_cancel {
                    on_cancel(CancelCause::PeerAwaitsHandler);
                }
                true
            }
            Some(Handling::Deferred(_)) => {
                let on_cancel = match requests.remove(id) {
                    Some(Handling::Deferred(on_cancel)) => on_cancel,
                    _ => None,
                };
                drop(requests);
                self.finished.notify_waiters();
                if let Some(on_cancel) = on_cancel {
                    on_cancel(CancelCause::Peer);
                }
                true
            }
            None => false,
        }
    }

    /// The connection closes: the callbacks of the requests reader handlers
    /// took (tasks end through the closing token).
    pub fn take_deferred(&self) -> Vec<OnCancel> {
        let mut requests = self.lock();
        let ids: Vec<RequestId> = requests
            .iter()
            .filter(|(_, handling)| matches!(handling, Handling::Deferred(_)))
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter()
            .filter_map(|id| match requests.remove(id) {
                Some(Handling::Deferred(on_cancel)) => on_cancel,
                _ => None,
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Handling>> {
        self.requests.lock().unwrap_or_else(|p| p.into_inner())
    }
}
