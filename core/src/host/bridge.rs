//! The engine's handlers for a host connection: check, then queue for the
//! host. Two flavours:
//! - `TaskBridge` (the reader runs as a task): a request's handler future lives
//!   until the host answers, so the engine's `$/cancel_request` and close
//!   handling apply unchanged; if that future is dropped first, the host is
//!   told to stop its handler. Notifications wait for room in the queue.
//! - `ReaderBridge` (the host's thread reads): nothing waits; a request is
//!   tracked until `HostConnection::respond`, and cancelling it answers
//!   -32800 and tells the host. The host pumps only after draining, which
//!   bounds the queue.
//!
//! With `HostOptions::handler_answers_cancelled`, either way, a peer's
//! `$/cancel_request` only tells the host (`CANCELLED`): the request stays
//! in flight and the host's answer is sent.
//!
//! Either way, with `HostOptions::withdraw_cancelled_requests`, a request
//! cancelled (or closed) before the host took it from the queue is
//! withdrawn from it: no handler starts, and the engine answers -32800
//! itself, as the official Python SDK does for a request and its
//! cancellation read together.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::responders::PendingAnswer;
use super::{Shared, Side};
use crate::engine::{CancelCause, OnCancel, ReaderHandler};
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::frame;
use crate::message::RawJson;
use crate::{Protocol, UncheckedMethods};
use serde_json::value::RawValue;

pub(crate) struct TaskBridge {
    pub side: Side,
    pub protocol: Protocol,
    pub unchecked: UncheckedMethods,
    pub shared: Arc<Shared>,
}

impl TaskBridge {
    pub async fn handle_request(self: Arc<Self>, request: IncomingRequest) -> Result<RawJson, RequestError> {
        let stripped = self
            .shared
            .check_request(self.side, self.protocol, &self.unchecked, &request)?;
        let (answered, answer) = tokio::sync::oneshot::channel();
        let token = self.shared.responders.register(&request, Some(answered));
        let guard = Unanswered {
            shared: &self.shared,
            token,
        };
        self.shared
            .queue
            .push_request(
                token,
                &request.id,
                &request.method,
                params_text(&request.params, &stripped),
            )
            .await;
        // The host answers through `HostConnection::respond`, which queues
        // the response itself; the value returned here is then dropped.
        if request.connection.inner().settings.handler_answers_cancelled {
            // A peer's `$/cancel_request` fires the request's token (the
            // engine does not drop this future then): the host is told, and
            // its answer still comes here.
            let told_host = async {
                request.cancellation.cancelled().await;
                if withdraw(&self.shared, token).is_some() {
                    return;
                }
                tell_host_cancelled(&self.shared, token);
                std::future::pending::<()>().await
            };
            tokio::select! {
                _ = answer => {}
                // Withdrawn: the engine answers the error returned.
                _ = told_host => return Err(RequestError::request_cancelled()),
            }
        } else {
            let _ = answer.await;
        }
        drop(guard);
        Ok(crate::to_raw(&()).expect("null serializes"))
    }

    pub async fn handle_notification(
        self: Arc<Self>,
        notification: IncomingNotification,
    ) -> Result<(), RequestError> {
        let stripped =
            match self
                .shared
                .check_notification(self.side, self.protocol, &self.unchecked, &notification)
            {
                Ok(stripped) => stripped,
                Err(error) if !surfaced(&error) => return Err(error),
                Err(error) => {
                    self.shared
                        .queue
                        .push_invalid_notification(&notification.method, &error)
                        .await;
                    return Ok(());
                }
            };
        self.shared
            .queue
            .push_notification(&notification.method, params_text(&notification.params, &stripped))
            .await;
        Ok(())
    }
}

pub(crate) struct ReaderBridge {
    pub side: Side,
    pub protocol: Protocol,
    pub unchecked: UncheckedMethods,
    pub shared: Arc<Shared>,
}

impl ReaderHandler for ReaderBridge {
    fn notification(&self, notification: IncomingNotification) {
        let stripped = match self.shared.check_notification(
            self.side,
            self.protocol,
            &self.unchecked,
            &notification,
        ) {
            Ok(stripped) => stripped,
            Err(error) => {
                if surfaced(&error) {
                    self.shared
                        .queue
                        .push_invalid_notification_now(&notification.method, &error);
                } else {
                    tracing::debug!(method = %notification.method, %error, "dropped an unknown notification");
                }
                return;
            }
        };
        self.shared
            .queue
            .push_notification_now(&notification.method, params_text(&notification.params, &stripped));
    }

    fn request(&self, request: IncomingRequest) -> Result<OnCancel, RequestError> {
        let stripped = self
            .shared
            .check_request(self.side, self.protocol, &self.unchecked, &request)?;
        let token = self.shared.responders.register(&request, None);
        self.shared.queue.push_request_now(
            token,
            &request.id,
            &request.method,
            params_text(&request.params, &stripped),
        );
        let shared = self.shared.clone();
        let told = AtomicBool::new(false);
        Ok(Arc::new(move |cause| {
            let connection = &request.connection;
            let answer_cancelled = |pending: PendingAnswer| {
                if pending.responder.claim() && connection.close_reason().is_none() {
                    let cancelled = frame::response(&request.id, &Err(RequestError::request_cancelled()));
                    connection.inner().enqueue_detached(cancelled);
                }
            };
            if cause == CancelCause::PeerAwaitsHandler {
                // The host's handler is told (once); its answer goes out.
                if told.swap(true, Ordering::AcqRel) {
                    return;
                }
                match withdraw(&shared, token) {
                    Some(pending) => {
                        // Still in flight for the engine: nobody else answers.
                        connection.inner().running.untrack(&request.id);
                        answer_cancelled(pending);
                    }
                    None => tell_host_cancelled(&shared, token),
                }
                return;
            }
            let Some(pending) = shared.responders.take(token) else {
                return;
            };
            answer_cancelled(pending);
            if !shared.queue.withdraw_request(token) {
                shared.queue.push_cancelled(token);
            }
        }))
    }
}

/// Take request `token` back from the queue if the host has not taken it:
/// its answer is then the engine's to give.
fn withdraw(shared: &Shared, token: u64) -> Option<PendingAnswer> {
    if !shared.queue.withdraw_request(token) {
        return None;
    }
    shared.responders.take(token)
}

/// Tell the host its handler for request `token` was cancelled, if it
/// still owes the answer.
fn tell_host_cancelled(shared: &Shared, token: u64) {
    if shared.responders.contains(token) {
        shared.queue.push_cancelled(token);
    }
}

/// The params handed to the host: the stripped ones, or those received.
fn params_text<'a>(received: &'a Option<RawJson>, stripped: &'a Option<RawJson>) -> Option<&'a RawValue> {
    stripped.as_deref().or(received.as_deref())
}

/// Whether a notification refused with `error` is told to the host: one of
/// its side's methods whose params fail the schema (claude-agent-acp's
/// `usage_update` with `"used": null`) is a peer's bug worth a warning; a
/// method this side does not have is ignored quietly, as JSON-RPC says.
fn surfaced(error: &RequestError) -> bool {
    error.code == crate::error::codes::INVALID_PARAMS
}

/// Dropped when the request's handler future ends: if the host has not
/// answered by then (cancelled, closed), the host is told to stop.
struct Unanswered<'a> {
    shared: &'a Shared,
    token: u64,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        let pending = self.shared.responders.take(self.token);
        if pending.is_some() && !self.shared.queue.withdraw_request(self.token) {
            self.shared.queue.push_cancelled(self.token);
        }
    }
}
