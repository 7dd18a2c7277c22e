//! What a user plugs into a connection: a request handler and a
//! notification handler (closures work for both), and what they are handed.
//! The third, an observer, is in `observer.rs`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::error::RequestError;
use crate::message::{from_raw, RawJson, RequestId};

/// A boxed, sendable future: what handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// An inbound request, handed to the request handler on its own task.
pub struct IncomingRequest {
    /// The request's id, as the peer sent it.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params as JSON text; None when the request had none.
    pub params: Option<RawJson>,
    /// Fires when the peer sends `$/cancel_request` for this id or the
    /// connection closes. The handler's future is dropped at that moment
    /// anyway; the token is for work the handler started elsewhere.
    pub cancellation: CancellationToken,
    /// The connection the request came in on, to call the peer back.
    pub connection: Connection,
    pub(crate) answered: Arc<AtomicBool>,
}

impl IncomingRequest {
    /// A handle that answers this request from outside its handler future
    /// (another thread, a host language), synchronously and in order with
    /// what is sent after it. Once it has answered, the handler future's own
    /// output is dropped; the future should still finish (or be cancelled)
    /// so the request stops counting as running.
    pub fn responder(&self) -> Responder {
        Responder {
            id: self.id.clone(),
            connection: self.connection.clone(),
            answered: self.answered.clone(),
        }
    }

    /// Deserialize the params; a mismatch is -32602 with the reason in `data`.
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, RequestError> {
        from_raw(self.params.as_deref()).map_err(RequestError::from)
    }
}

/// Answers one inbound request, once, from synchronous code: see
/// [`IncomingRequest::responder`].
#[derive(Clone, Debug)]
pub struct Responder {
    id: RequestId,
    connection: Connection,
    answered: Arc<AtomicBool>,
}

/// Why a `Responder` could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RespondError {
    /// Answered before (by this responder, by the handler, or by the engine
    /// with -32800 after `$/cancel_request`).
    AlreadyAnswered,
    /// The connection is closed: nothing can be sent.
    Closed,
}

impl Responder {
    /// The id of the request this answers.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Queue the answer now (blocking while the write queue is full), so it
    /// goes out before anything this thread sends afterwards. Not for async
    /// code.
    pub fn blocking_respond(&self, outcome: Result<RawJson, RequestError>) -> Result<(), RespondError> {
        if self.answered.swap(true, Ordering::AcqRel) {
            return Err(RespondError::AlreadyAnswered);
        }
        let frame = crate::message::frame::response(&self.id, &outcome);
        self.connection
            .blocking_send_answer(frame)
            .map_err(|_| RespondError::Closed)
    }

    /// Claim the right to answer (false if answered already): for callers
    /// that queue the response frame themselves.
    pub(crate) fn claim(&self) -> bool {
        !self.answered.swap(true, Ordering::AcqRel)
    }

    /// True once the request has an answer (from anyone).
    pub fn is_answered(&self) -> bool {
        self.answered.load(Ordering::Acquire)
    }
}

/// An inbound notification, handed to the notification handler in arrival
/// order, one at a time.
pub struct IncomingNotification {
    /// The method name.
    pub method: String,
    /// The params as JSON text; None when the notification had none.
    pub params: Option<RawJson>,
    /// The connection it came in on, to call the peer back.
    pub connection: Connection,
}

impl IncomingNotification {
    /// The params, parsed as `T` (absent params read as `{}`); a mismatch is -32602.
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, RequestError> {
        from_raw(self.params.as_deref()).map_err(RequestError::from)
    }
}

/// Answers inbound requests. Requests run concurrently, each on its own
/// task; return `Err(RequestError)` to answer with that error. A panic is
/// answered -32603 with no detail.
pub trait RequestHandler: Send + Sync + 'static {
    /// Answer `request`: its result as JSON, or an error.
    fn handle_request(&self, request: IncomingRequest) -> BoxFuture<Result<RawJson, RequestError>>;
}

impl<F, Fut> RequestHandler for F
where
    F: Fn(IncomingRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<RawJson, RequestError>> + Send + 'static,
{
    fn handle_request(&self, request: IncomingRequest) -> BoxFuture<Result<RawJson, RequestError>> {
        Box::pin(self(request))
    }
}

/// Receives inbound notifications, one at a time in arrival order: the next
/// one (and any response that arrived after it) waits until this returns.
/// So a notification handler must not await a response from the peer;
/// spawn a task for that.
pub trait NotificationHandler: Send + Sync + 'static {
    /// Handle `notification`; an error is logged (notifications get no answer).
    fn handle_notification(&self, notification: IncomingNotification) -> BoxFuture<Result<(), RequestError>>;
}

impl<F, Fut> NotificationHandler for F
where
    F: Fn(IncomingNotification) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), RequestError>> + Send + 'static,
{
    fn handle_notification(&self, notification: IncomingNotification) -> BoxFuture<Result<(), RequestError>> {
        Box::pin(self(notification))
    }
}
