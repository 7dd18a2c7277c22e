//! The engine's handlers for a host connection: check, then queue for the
//! host. A request's handler future lives until the host answers, so the
//! engine's `$/cancel_request` and close handling apply unchanged; if that
//! future is dropped first, the host is told to stop its handler.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{PendingAnswer, Shared, Side};
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::RawJson;

pub(crate) struct Bridge {
    pub side: Side,
    pub shared: Arc<Shared>,
}

impl Bridge {
    pub async fn handle_request(self: Arc<Self>, request: IncomingRequest) -> Result<RawJson, RequestError> {
        let params = request.params.as_ref();
        match self.side {
            Side::Raw => {}
            Side::Agent => crate::validate::agent_request(&request.method, params)?,
            Side::Client => crate::validate::client_request(&request.method, params)?,
        }
        let token = self.shared.next_token.fetch_add(1, Ordering::Relaxed);
        let (answered, answer) = tokio::sync::oneshot::channel();
        let responder = request.responder();
        self.shared
            .responders
            .lock()
            .unwrap()
            .insert(token, PendingAnswer { responder, answered });
        let guard = Unanswered {
            shared: &self.shared,
            token,
        };
        self.shared
            .queue
            .push_request(token, &request.method, request.params.as_ref())
            .await;
        // The host answers through `HostConnection::respond`, which queues
        // the response itself; the value returned here is then dropped.
        let _ = answer.await;
        drop(guard);
        Ok(crate::to_raw(&()).expect("null serializes"))
    }

    pub async fn handle_notification(
        self: Arc<Self>,
        notification: IncomingNotification,
    ) -> Result<(), RequestError> {
        let params = notification.params.as_ref();
        match self.side {
            Side::Raw => {}
            Side::Agent => crate::validate::agent_notification(&notification.method, params)?,
            Side::Client => crate::validate::client_notification(&notification.method, params)?,
        }
        self.shared
            .queue
            .push_notification(&notification.method, notification.params.as_ref())
            .await;
        Ok(())
    }
}

/// Dropped when the request's handler future ends: if the host has not
/// answered by then (cancelled, closed), the host is told to stop.
struct Unanswered<'a> {
    shared: &'a Shared,
    token: u64,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        let pending = self.shared.responders.lock().unwrap().remove(&self.token);
        if pending.is_some() {
            self.shared.queue.push_cancelled(self.token);
        }
    }
}
