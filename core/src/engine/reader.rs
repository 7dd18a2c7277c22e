//! The reader task: frames lines, classifies them, starts a task per
//! inbound request, answers invalid input, and queues notifications (and
//! the responses that arrive behind them) for the ordered dispatcher.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::FutureExt;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::{Inner, Ordered};
use crate::connection::Connection;
use crate::error::RequestError;
use crate::framing::{LineEvent, LineReader};
use crate::handler::{BoxFuture, Direction, IncomingNotification, IncomingRequest, RequestHandler};
use crate::message::{classify, frame, Inbound, RawJson, RequestId};
use crate::transport::BoxReader;

pub(crate) const CANCEL_REQUEST: &str = "$/cancel_request";

/// What one read produced: work for the dispatcher and error replies.
#[derive(Default)]
struct Batch {
    ordered: Vec<Ordered>,
    replies: Vec<Vec<u8>>,
}

pub(super) async fn run(
    inner: Arc<Inner>,
    mut lines: LineReader<BoxReader>,
    dispatch: mpsc::Sender<Vec<Ordered>>,
    handler: Arc<dyn RequestHandler>,
) {
    let mut batch = Batch::default();
    let reason = loop {
        let read = tokio::select! {
            biased;
            _ = inner.closing.cancelled() => break None,
            read = lines.read_batch(|event| on_line(&inner, &handler, event, &mut batch)) => read,
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
            Err(error) => break Some(format!("read error: {error}")),
        }
    };
    if let Some(reason) = reason {
        inner.close(&reason);
    }
}

fn on_line(inner: &Arc<Inner>, handler: &Arc<dyn RequestHandler>, event: LineEvent<'_>, batch: &mut Batch) {
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
            batch.replies.push(frame::response(&RequestId::Null, &Err(error)));
            return;
        }
    };
    inner.observe(Direction::Inbound, line);
    match classify(line) {
        Inbound::Request { id, method, params } => start_request(inner, handler, id, method, params, batch),
        Inbound::Notification { method, params } if method == CANCEL_REQUEST => {
            on_cancel_request(inner, params)
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
            batch.replies.push(frame::response(&id, &Err(error)));
        }
    }
}

fn on_response(inner: &Arc<Inner>, id: RequestId, outcome: Result<RawJson, RequestError>, batch: &mut Batch) {
    let waiter = match id {
        RequestId::Number(n) => inner.take_waiter(n),
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
            let found = inner.cancel_running(&params.request_id);
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
    if !inner.track_running(&id, &cancellation) {
        let error = RequestError::invalid_request()
            .with_data(json!({ "reason": format!("request id {id} is already in use") }));
        batch.replies.push(frame::response(&id, &Err(error)));
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
    let task = async move {
        let outcome = match run_handler(&*handler, request, &cancellation).await {
            Some(outcome) => Some(outcome),
            // Closed: nobody can read an answer any more.
            None if inner.is_closing() => None,
            None => Some(Err(RequestError::request_cancelled())),
        };
        // Unless a `Responder` answered already.
        if let Some(outcome) = outcome {
            if !answered.swap(true, Ordering::AcqRel) {
                let _ = inner.enqueue(frame::response(&id, &outcome)).await;
            }
        }
        // Only now: "no request running" means every answer is queued.
        inner.untrack_running(&id);
    };
    let task: BoxFuture<()> = Box::pin(task.instrument(span));
    // A request starts only after the notifications that arrived before it
    // were handled (a client sees the tool call before the permission
    // request about it); it then runs concurrently with everything else.
    if wait_for_notifications {
        batch.ordered.push(Ordered::Request(task));
        return;
    }
    super::run_inline_or_spawn(task, &runtime);
}

/// Run the handler until it finishes (`Some`) or is cancelled (`None`).
/// A panic becomes a plain -32603.
async fn run_handler(
    handler: &dyn RequestHandler,
    request: IncomingRequest,
    cancellation: &tokio_util::sync::CancellationToken,
) -> Option<Result<RawJson, RequestError>> {
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle_request(request))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind(),
        Err(_) => return Some(Err(panicked())),
    };
    tokio::select! {
        biased;
        _ = cancellation.cancelled() => None,
        outcome = future => Some(outcome.unwrap_or_else(|_| Err(panicked()))),
    }
}

fn panicked() -> RequestError {
    RequestError::internal("request handler panicked")
}
