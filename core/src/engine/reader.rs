//! The reader: frames lines, classifies them, starts a task per inbound
//! request, answers invalid input, and queues notifications (and the
//! responses that arrive behind them) for the ordered dispatcher. With a
//! reader handler (host bindings) requests and notifications go straight to
//! it instead. It runs as a task, or is driven by the host's own
//! thread through `HostReader::pump`.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Handlers, Inner, Ordered, ReaderHandler};
use crate::connection::Connection;
use crate::error::RequestError;
use crate::framing::{LineEvent, LineReader};
use crate::handler::{BoxFuture, IncomingNotification, IncomingRequest, RequestHandler};
use crate::message::{classify, frame, Inbound, RawJson, RequestId};
use crate::observer::Direction;
use crate::transport::BoxReader;

/// What one read produced: work for the dispatcher and error replies.
#[derive(Default)]
struct Batch {
    ordered: Vec<Ordered>,
    /// Replies that found the write queue full: sent (waiting for room)
    /// after the read, in order.
    replies: Vec<Vec<u8>>,
}

impl Batch {
    /// Answer an invalid line now, so replies go out in the order of the
    /// lines they answer (before the answer to a valid request read after
    /// it); if the write queue is full, after this read, waiting for room.
    fn reply(&mut self, inner: &Inner, frame: Vec<u8>) {
        if !self.replies.is_empty() {
            self.replies.push(frame);
            return;
        }
        if let Ok(super::Offered::Full(frame)) = inner.outbound.offer(inner, frame, super::Kind::Frame) {
            self.replies.push(frame);
        }
    }
}

/// The reader's state, wherever it runs.
pub(crate) struct Reader {
    lines: LineReader<BoxReader>,
    dispatch: mpsc::Sender<Vec<Ordered>>,
    handler: Arc<dyn RequestHandler>,
    reader_handler: Option<Arc<dyn ReaderHandler>>,
    batch: Batch,
}

impl Reader {
    pub(super) fn new(
        lines: LineReader<BoxReader>,
        dispatch: mpsc::Sender<Vec<Ordered>>,
        handlers: &Handlers,
    ) -> Self {
        Self {
            lines,
            dispatch,
            handler: handlers.request.clone(),
            reader_handler: handlers.reader_handler.clone(),
            batch: Batch::default(),
        }
    }
}

pub(super) async fn run(inner: Arc<Inner>, mut reader: Reader) {
    let Reader {
        lines,
        dispatch,
        handler,
        reader_handler,
        batch,
    } = &mut reader;
    let reason = loop {
        if !inner.admits() {
            inner.room_to_read().await;
        }
        let read = tokio::select! {
            biased;
            _ = inner.closing.cancelled() => break None,
            read = lines.read_batch(|event| on_line(&inner, handler, reader_handler.as_ref(), event, batch)) => read,
        };
        for reply in batch.replies.drain(..) {
            let _ = inner.enqueue(reply).await;
        }
        if !batch.ordered.is_empty() {
            let ordered = std::mem::take(&mut batch.ordered);
            // Waiting here is the backpressure when notification handlers lag.
            tokio::select! {
                sent = dispatch.send(ordered) => if sent.is_err() { break Some("dispatcher stopped".to_owned()) },
                _ = inner.aborted.cancelled() => break None,
            }
        }
        match read {
            Ok(true) => {}
            Ok(false) => break Some("peer closed the connection".to_owned()),
            Err(error) => break Some(crate::transport::failure_reason("read", &error)),
        }
    };
    if let Some(reason) = reason {
        inner.close_by_peer(&reason);
    }
}

/// The reader driven by the host's thread: the host watches the stream's
/// file descriptor and calls `pump` when it is readable.
pub(crate) struct HostReader {
    inner: Arc<Inner>,
    /// None once the stream ended or the connection closed.
    reader: Mutex<Option<Reader>>,
    /// Called once reading may go on after `pump` found the connection at
    /// a limit (`Pumped::Paused`); the host then pumps again.
    resume: Arc<dyn Fn() + Send + Sync>,
    /// A task waits for room on the host's behalf.
    paused: Arc<AtomicBool>,
}

/// What `HostReader::pump` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pumped {
    /// Input was handled, or there was none.
    Read,
    /// Nothing was read: the connection holds as much as its limits allow
    /// for a peer that is not reading. Stop watching the stream until the
    /// resume callback runs.
    Paused,
    /// The stream ended or the connection closed: stop watching.
    Done,
}

impl HostReader {
    pub(super) fn new(inner: Arc<Inner>, reader: Reader) -> Self {
        Self {
            inner,
            reader: Mutex::new(Some(reader)),
            resume: Arc::new(|| {}),
            paused: Arc::new(AtomicBool::new(false)),
        }
    }

    /// What to call when reading may go on after `Pumped::Paused` (from an
    /// engine thread: it must be quick).
    pub fn set_resume(&mut self, resume: impl Fn() + Send + Sync + 'static) {
        self.resume = Arc::new(resume);
    }

    /// Whether reading waits for room (the host should not watch the stream).
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// Wait for room on a task, then call the resume callback.
    fn pause(&self) -> Pumped {
        if !self.paused.swap(true, Ordering::AcqRel) {
            let (inner, resume, paused) = (self.inner.clone(), self.resume.clone(), self.paused.clone());
            self.inner.runtime.spawn(async move {
                inner.room_to_read().await;
                paused.store(false, Ordering::Release);
                resume();
            });
        }
        Pumped::Paused
    }

    /// Read what the stream holds now (one read) and handle it, without
    /// waiting. Handlers run on this thread.
    pub fn pump(&self) -> Pumped {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};
        let inner = &self.inner;
        let mut slot = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        let Some(reader) = slot.as_mut() else {
            return Pumped::Done;
        };
        if inner.is_closing() {
            *slot = None;
            return Pumped::Done;
        }
        if self.is_paused() || !inner.admits() {
            return self.pause();
        }
        let Reader {
            lines,
            handler,
            reader_handler,
            batch,
            ..
        } = reader;
        // One read, or more while a long message is still coming in (a
        // 16 MiB line takes hundreds of reads; a turn of the host's loop
        // for each would dominate). A burst of short lines stays at one
        // read per pump: the host handles it before reading more.
        let read = loop {
            let lines_seen = std::cell::Cell::new(0usize);
            let mut read = std::pin::pin!(lines.read_batch(|event| {
                lines_seen.set(lines_seen.get() + 1);
                on_line(inner, handler, reader_handler.as_ref(), event, batch)
            }));
            match read.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(Ok(true)) if lines_seen.get() == 0 => continue,
                Poll::Ready(read) => break Some(read),
                Poll::Pending => break None,
            }
        };
        for reply in batch.replies.drain(..) {
            inner.enqueue_detached(reply);
        }
        // With reader_handler handlers nothing waits for the dispatcher; keep order
        // for anything that does all the same.
        for item in batch.ordered.drain(..) {
            match item {
                Ordered::Response(waiter, outcome) => waiter.complete(outcome),
                Ordered::Request(task) => super::poll_once_or_spawn(task, &inner.runtime),
                Ordered::Notification(notification) => {
                    if let Some(reader_handler) = reader_handler {
                        reader_handler.notification(notification);
                    }
                    inner.unhandled_notifications.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
        let ended = match read {
            None | Some(Ok(true)) => return Pumped::Read,
            Some(Ok(false)) => "peer closed the connection".to_owned(),
            Some(Err(error)) => crate::transport::failure_reason("read", &error),
        };
        *slot = None;
        drop(slot);
        inner.close_by_peer(&ended);
        Pumped::Done
    }

    /// Stop reading (the connection is closing): release the stream.
    pub fn stop(&self) {
        *self.reader.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

fn on_line(
    inner: &Arc<Inner>,
    handler: &Arc<dyn RequestHandler>,
    reader_handler: Option<&Arc<dyn ReaderHandler>>,
    event: LineEvent<'_>,
    batch: &mut Batch,
) {
    let line = match event {
        LineEvent::Line(line) => line,
        LineEvent::TooLong { len } => {
            tracing::warn!(
                len,
                limit = inner.settings.max_message_size,
                "discarded an oversized message"
            );
            let error = RequestError::invalid_request().with_data(json!({
                "reason": format!(
                    "message of {len} bytes exceeds the limit of {} bytes",
                    inner.settings.max_message_size
                )
            }));
            batch.reply(inner, frame::response(&RequestId::Null, &Err(error)));
            return;
        }
    };
    inner.observe(Direction::Inbound, line);
    inner.outbound.note_input();
    match classify(line) {
        Inbound::Request { id, method, params } => match reader_handler {
            Some(reader_handler) => start_reader_request(inner, reader_handler, id, method, params, batch),
            None => start_request(inner, handler, id, method, params, batch),
        },
        Inbound::Notification { method, params } if method == crate::CANCEL_REQUEST_METHOD => {
            on_cancel_request(inner, params)
        }
        Inbound::Notification { method, params } if reader_handler.is_some() => {
            let notification = IncomingNotification {
                method,
                params,
                connection: Connection::from_inner(inner.clone()),
            };
            let reader_handler = reader_handler.expect("checked");
            if std::panic::catch_unwind(AssertUnwindSafe(|| reader_handler.notification(notification)))
                .is_err()
            {
                tracing::error!("reader_handler notification handler panicked");
            }
        }
        Inbound::Notification { method, params } => {
            inner.unhandled_notifications.fetch_add(1, Ordering::AcqRel);
            batch.ordered.push(Ordered::Notification(IncomingNotification {
                method,
                params,
                connection: Connection::from_inner(inner.clone()),
            }));
        }
        Inbound::Response { id, outcome } => on_response(inner, id, outcome, batch),
        Inbound::Invalid { id, error } => {
            tracing::debug!(%id, %error, "invalid inbound message");
            batch.reply(inner, frame::response(&id, &Err(error)));
        }
        Inbound::InvalidResponse { id, error } => {
            tracing::debug!(%id, %error, "invalid response");
            // The request it answers fails rather than wait for an answer
            // that has come and gone.
            let reason = error
                .data
                .as_ref()
                .and_then(|data| data["reason"].as_str())
                .unwrap_or_default();
            let failed = RequestError::internal_error()
                .with_data(json!({ "reason": format!("the peer's response was invalid: {reason}") }));
            on_response(inner, id.clone(), Err(failed), batch);
            batch.reply(inner, frame::response(&id, &Err(error)));
        }
    }
}

fn on_response(inner: &Arc<Inner>, id: RequestId, outcome: Result<RawJson, RequestError>, batch: &mut Batch) {
    let waiter = match id {
        RequestId::Number(n) => inner.pending.take(n),
        _ => None,
    };
    let Some(waiter) = waiter else {
        tracing::debug!(%id, "dropped a response to an unknown or cancelled request");
        return;
    };
    // Notifications that came first are handled first: if any is still
    // queued, the response waits its turn in the dispatcher.
    if inner.unhandled_notifications.load(Ordering::Acquire) == 0 {
        waiter.complete(outcome);
    } else {
        batch.ordered.push(Ordered::Response(waiter, outcome));
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelRequestParams {
    request_id: RequestId,
}

fn on_cancel_request(inner: &Inner, params: Option<RawJson>) {
    match crate::message::from_raw::<CancelRequestParams>(params.as_deref()) {
        Ok(params) => {
            let until_answered = inner.settings.handler_answers_cancelled;
            let found = inner.running.cancel(&params.request_id, until_answered);
            tracing::debug!(id = %params.request_id, found, "peer cancelled a request");
        }
        Err(error) => tracing::debug!(%error, "ignored a malformed $/cancel_request"),
    }
}

fn start_request(
    inner: &Arc<Inner>,
    handler: &Arc<dyn RequestHandler>,
    id: RequestId,
    method: String,
    params: Option<RawJson>,
    batch: &mut Batch,
) {
    let cancellation = inner.closing.child_token();
    if !inner.running.track_task(&id, &cancellation) {
        batch.reply(inner, id_in_use(&id));
        return;
    }
    let span = tracing::debug_span!("acp_request", %method, %id);
    let answered = Arc::new(AtomicBool::new(false));
    let request = IncomingRequest {
        id: id.clone(),
        method,
        params,
        cancellation: cancellation.clone(),
        connection: Connection::from_inner(inner.clone()),
        answered: answered.clone(),
    };
    let runtime = inner.runtime.clone();
    let wait_for_notifications = inner.unhandled_notifications.load(Ordering::Acquire) > 0;
    let inner = inner.clone();
    let handler = handler.clone();
    // What ends the handler early: its own token (`$/cancel_request` or
    // close), or, when handlers answer their cancellation, close only.
    let dropped_on = if inner.settings.handler_answers_cancelled {
        inner.closing.clone()
    } else {
        cancellation.clone()
    };
    let task = async move {
        let outcome = match run_handler(&*handler, request, &dropped_on).await {
            Some(outcome) => Some(outcome),
            // Closed: nobody can read an answer any more.
            None if inner.is_closing() => None,
            None => Some(Err(RequestError::request_cancelled())),
        };
        // Unless a `Responder` answered already.
        let answer = match outcome {
            Some(outcome) if !answered.swap(true, Ordering::AcqRel) => Some(frame::response(&id, &outcome)),
            _ => None,
        };
        // Answered, the request stops counting as in flight (before the
        // answer goes out: the peer may reuse the id at once). An answer
        // that waits for room is held output, bounded by the buffered bytes:
        // were it still in flight, two engines holding each other's
        // requests at the limit would both stop reading with full pipes.
        inner.running.untrack(&id);
        if let Some(answer) = answer {
            inner.enqueue_detached(answer);
        }
    };
    let task: BoxFuture<()> = Box::pin(task.instrument(span));
    // A request starts only after the notifications that arrived before it
    // were handled (a client sees the tool call before the permission
    // request about it); it then runs concurrently with everything else.
    if wait_for_notifications {
        batch.ordered.push(Ordered::Request(task));
        return;
    }
    super::poll_once_or_spawn(task, &runtime);
}

/// The answer to a request whose id is still running.
fn id_in_use(id: &RequestId) -> Vec<u8> {
    let error = RequestError::invalid_request()
        .with_data(json!({ "reason": format!("request id {id} is already in use") }));
    frame::response(id, &Err(error))
}

/// Hand a request to an reader_handler handler, which answers it later through its
/// `Responder` (or now, with an error).
fn start_reader_request(
    inner: &Arc<Inner>,
    reader_handler: &Arc<dyn ReaderHandler>,
    id: RequestId,
    method: String,
    params: Option<RawJson>,
    batch: &mut Batch,
) {
    if !inner.running.track_deferred(&id) {
        batch.reply(inner, id_in_use(&id));
        return;
    }
    let answered = Arc::new(AtomicBool::new(false));
    let request = IncomingRequest {
        id: id.clone(),
        method,
        params,
        cancellation: inner.closing.child_token(),
        connection: Connection::from_inner(inner.clone()),
        answered: answered.clone(),
    };
    let taken = std::panic::catch_unwind(AssertUnwindSafe(|| reader_handler.request(request)))
        .unwrap_or_else(|_| Err(panicked()));
    match taken {
        Ok(on_cancel) => inner.running.set_on_cancel(&id, on_cancel),
        Err(error) => {
            inner.running.untrack(&id);
            if !answered.swap(true, Ordering::AcqRel) {
                batch.reply(inner, frame::response(&id, &Err(error)));
            }
        }
    }
}

/// Run the handler until it finishes (`Some`) or `dropped_on` fires (`None`).
/// A panic becomes a plain -32603.
async fn run_handler(
    handler: &dyn RequestHandler,
    request: IncomingRequest,
    dropped_on: &tokio_util::sync::CancellationToken,
) -> Option<Result<RawJson, RequestError>> {
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle_request(request))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind(),
        Err(_) => return Some(Err(panicked())),
    };
    tokio::select! {
        biased;
        _ = dropped_on.cancelled() => None,
        outcome = future => Some(outcome.unwrap_or_else(|_| Err(panicked()))),
    }
}

fn panicked() -> RequestError {
    RequestError::internal("request handler panicked")
}
