//! `Connection`: a bidirectional JSON-RPC 2.0 peer over a byte
//! stream. Cheap to clone; every clone is the same connection. A handle on
//! the engine's state; `connection_builder.rs` starts one.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::{unconstrained, Unconstrained};

use crate::engine::inner::Inner;
use crate::engine::outbound::Outgoing;
use crate::engine::pending::Waiter;
use crate::error::RequestError;
use crate::message::{frame, RawJson, RequestId};

/// A bidirectional JSON-RPC 2.0 connection over a transport (see the crate docs). Cheap to clone; every clone is the same connection.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("closed", &self.is_closed())
            .field("close_reason", &self.close_reason())
            .finish()
    }
}

impl Connection {
    pub(crate) fn from_inner(inner: Arc<Inner>) -> Self {
        Self { inner }
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }

    /// Send a request and wait for its result, deserialized as `R` (use
    /// `serde_json::Value` or `RawJson` to keep it untyped). Dropping the
    /// returned future before it completes cancels the request.
    pub async fn send_request<P, R>(&self, method: &str, params: &P) -> Result<R, RequestError>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        let result = self.start_request(method, params).await?.await?;
        serde_json::from_str(result.get()).map_err(|error| {
            RequestError::internal_error().with_data(
                serde_json::json!({ "message": format!("unexpected result for {method}: {error}") }),
            )
        })
    }

    /// Send a request and get it back as a [`PendingRequest`]: a future for
    /// the raw result that also knows its id (for `cancel_pending_request`).
    /// A params value that serializes to `null` is left out of the message.
    pub async fn start_request<P>(&self, method: &str, params: &P) -> Result<PendingRequest, RequestError>
    where
        P: Serialize + ?Sized,
    {
        let id = self.inner.next_request_id();
        let frame = frame::request(id, method, params)?;
        let (waiter, result) = oneshot::channel();
        self.inner.register(id, Waiter::Future(waiter))?;
        let pending = PendingRequest {
            id: RequestId::Number(id),
            result: unconstrained(result),
            inner: self.inner.clone(),
            done: false,
        };
        // If this future is dropped while waiting for queue space, `pending`
        // drops too and withdraws the request.
        self.inner.enqueue(frame).await?;
        Ok(pending)
    }

    /// `start_request` for synchronous callers (a foreign thread, a host
    /// language's thread): the frame is serialized on the calling thread and
    /// queued without a task hop; the thread blocks only while the write
    /// queue is full. Must not be called from async code.
    pub fn blocking_start_request<P>(&self, method: &str, params: &P) -> Result<PendingRequest, RequestError>
    where
        P: Serialize + ?Sized,
    {
        let id = self.inner.next_request_id();
        let frame = frame::request(id, method, params)?;
        let (waiter, result) = oneshot::channel();
        self.inner.register(id, Waiter::Future(waiter))?;
        let pending = PendingRequest {
            id: RequestId::Number(id),
            result: unconstrained(result),
            inner: self.inner.clone(),
            done: false,
        };
        self.inner.enqueue_blocking(frame, Outgoing::Own)?;
        Ok(pending)
    }

    /// Send a request from synchronous code and have `on_response` called
    /// with its outcome where the engine releases it: in order with the
    /// notifications around it, on an engine task (or, when the connection
    /// closes, on the closing thread). Keep `on_response` quick and
    /// non-blocking; hand real work elsewhere. Returns the request's id.
    pub fn blocking_send_request_with<P>(
        &self,
        method: &str,
        params: &P,
        on_response: impl FnOnce(RequestId, Result<RawJson, RequestError>) + Send + 'static,
    ) -> Result<RequestId, RequestError>
    where
        P: Serialize + ?Sized,
    {
        let id = self.inner.next_request_id();
        let frame = frame::request(id, method, params)?;
        let on_response = move |outcome| on_response(RequestId::Number(id), outcome);
        self.inner.register(id, Waiter::Callback(Box::new(on_response)))?;
        if let Err(error) = self.inner.enqueue_blocking(frame, Outgoing::Own) {
            // Not sent: withdraw it (close may have completed it already).
            if let Some(waiter) = self.inner.take_waiter(id) {
                drop(waiter);
            }
            return Err(error);
        }
        Ok(RequestId::Number(id))
    }

    /// `send_notification` for synchronous callers (see
    /// `blocking_start_request`).
    pub fn blocking_send_notification<P>(&self, method: &str, params: &P) -> Result<(), RequestError>
    where
        P: Serialize + ?Sized,
    {
        self.inner
            .enqueue_blocking(frame::notification(method, params)?, Outgoing::Own)
    }

    /// Queue an answer (a serialized response with its newline) from
    /// synchronous code.
    pub(crate) fn blocking_send_answer(&self, frame: Vec<u8>) -> Result<(), RequestError> {
        self.inner.enqueue_blocking(frame, Outgoing::Answer)
    }

    /// Send a notification (no response).
    pub async fn send_notification<P>(&self, method: &str, params: &P) -> Result<(), RequestError>
    where
        P: Serialize + ?Sized,
    {
        self.inner.enqueue(frame::notification(method, params)?).await
    }

    /// Send `$/cancel_request` for `request_id`, with optional `_meta`.
    pub async fn send_cancel_request_notification(
        &self,
        request_id: &RequestId,
        meta: Option<Value>,
    ) -> Result<(), RequestError> {
        self.send_notification(crate::CANCEL_REQUEST_METHOD, &cancel_params(request_id, meta))
            .await
    }

    /// Cancel an outbound request that is still pending: its waiter fails
    /// with -32800 at once, the peer gets `$/cancel_request`, and a late
    /// response is dropped. False if it was no longer pending.
    pub async fn cancel_pending_request(&self, request_id: &RequestId, meta: Option<Value>) -> bool {
        let RequestId::Number(id) = request_id else {
            return false;
        };
        let Some(waiter) = self.inner.take_waiter(*id) else {
            return false;
        };
        waiter.complete(Err(RequestError::request_cancelled()));
        let _ = self.send_cancel_request_notification(request_id, meta).await;
        true
    }

    /// Close the connection: pending requests fail, running handlers are
    /// cancelled, queued outbound messages are flushed (for at most a
    /// second), the stream is shut, and a spawned peer process is reaped.
    pub fn close(&self) {
        self.inner.close("connection closed locally");
        self.inner.aborted.cancel();
    }

    /// Resolves once the connection is closed and torn down: tasks ended,
    /// the stream shut, a spawned peer process exited and reaped.
    pub async fn closed(&self) {
        self.inner.closed.cancelled().await
    }

    /// True from the moment the connection starts closing: later sends fail.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closing()
    }

    /// How many inbound requests are being handled or answered right now.
    pub fn running_requests(&self) -> usize {
        self.inner.running.len()
    }

    /// Bytes of output held for the peer and not written yet, queued or
    /// waiting for room, with a small per-message overhead (what a peer
    /// that stops reading leaves behind, as `Limits::max_buffered_bytes`
    /// counts it).
    pub fn queued_output_bytes(&self) -> usize {
        self.inner.outbound.held_bytes()
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<String> {
        self.inner.close_reason().map(str::to_owned)
    }

    /// The tokio runtime the connection's tasks run on.
    pub fn runtime(&self) -> &Handle {
        &self.inner.runtime
    }
}

fn cancel_params(request_id: &RequestId, meta: Option<Value>) -> Value {
    let mut params = serde_json::json!({ "requestId": request_id });
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    params
}

/// An outbound request awaiting its response. Resolves to the raw result.
/// Dropping it before it resolves cancels the request (`$/cancel_request`).
pub struct PendingRequest {
    id: RequestId,
    /// Polled outside tokio's cooperative budget (see `Inner::enqueue`).
    result: Unconstrained<oneshot::Receiver<Result<RawJson, RequestError>>>,
    inner: Arc<Inner>,
    done: bool,
}

impl PendingRequest {
    /// The id of the request (to cancel it with `cancel_pending_request`).
    pub fn id(&self) -> &RequestId {
        &self.id
    }
}

impl Future for PendingRequest {
    type Output = Result<RawJson, RequestError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = match Pin::new(&mut self.result).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(outcome)) => outcome,
            // The waiter was dropped unanswered: only when closing.
            Poll::Ready(Err(_)) => Err(RequestError::connection_closed(
                self.inner.close_reason().unwrap_or("closed"),
            )),
        };
        self.done = true;
        Poll::Ready(outcome)
    }
}

impl Drop for PendingRequest {
    fn drop(&mut self) {
        let RequestId::Number(id) = self.id else { return };
        if self.done || self.inner.take_waiter(id).is_none() || self.inner.is_closing() {
            return;
        }
        tracing::debug!(id, "pending request dropped; cancelling it");
        if let Ok(frame) = frame::notification(crate::CANCEL_REQUEST_METHOD, &cancel_params(&self.id, None)) {
            self.inner.enqueue_detached(frame);
        }
    }
}
