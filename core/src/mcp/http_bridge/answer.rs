//! One HTTP request, start to end: checked, admitted, forwarded as one
//! `mcp/message` request, and answered with JSON, or with SSE once the MCP
//! server sent a notification for it (then the terminal answer is the last
//! event). The response holds its admission until it is finished or
//! dropped; dropping it before the answer cancels the forwarded request.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hyper::body::{Bytes, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Map, Value};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::checks::{self, error_message, McpHttpRequest, Refusal};
use super::{strip_header_annotations, McpHttpCall, Shared};
use crate::error::{codes, RequestError};
use crate::mcp::binding;
use crate::mcp::McpNotificationListener;
use crate::remote::http_body::{read_limited, BodyError};
use crate::tables::mcp;

/// A comment every so often keeps idle proxies from closing an SSE answer.
const SSE_KEEPALIVE: Duration = Duration::from_secs(15);
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";

pub(super) async fn handle(request: Request<Incoming>, shared: Arc<Shared>) -> Response<AnswerBody> {
    let (parts, body) = request.into_parts();
    let server_id = match checks::transport(&parts.method, &parts.headers, parts.uri.path(), &shared.secret) {
        Ok(server_id) => server_id,
        Err(refusal) => return refused(&refusal, None),
    };
    let Some(admission) = Admission::take(&shared) else {
        return refused(&Refusal::too_many_requests(), None);
    };
    let body = match read_limited(&parts.headers, body, shared.options.max_request_body_bytes).await {
        Ok(body) => body,
        Err(BodyError::TooLarge) => return refused(&Refusal::body_too_large(), Some(admission)),
        // The client went away mid-upload: no one to answer.
        Err(BodyError::Unreadable) => return Response::new(AnswerBody::full(Bytes::new(), None)),
    };
    match checks::request(&body, &parts.headers) {
        Ok(request) => forward(&shared, server_id, request, admission).await,
        Err(refusal) => refused(&refusal, Some(admission)),
    }
}

async fn forward(
    shared: &Shared,
    server_id: String,
    request: McpHttpRequest,
    admission: Admission,
) -> Response<AnswerBody> {
    let request_id = binding::generate_id("mcp-http");
    let events = Arc::new(Events::new(shared.options.max_buffered_response_bytes));
    let notifications: McpNotificationListener = {
        let (events, request_id, http_id) = (events.clone(), request_id.clone(), request.id.clone());
        Arc::new(move |notification| events.notification(notification, &request_id, &http_id))
    };
    let call = McpHttpCall {
        server_id,
        request_id: request_id.clone(),
        method: request.method.clone(),
        params: Value::Object(request.params.clone()),
        notifications,
    };
    let mut outcome = shared.forward.forward(call);
    tokio::select! {
        biased;
        result = &mut outcome => {
            let terminal = terminal(result, &request, &request_id);
            if !events.started.is_cancelled() {
                return answer_json(&terminal, Some(admission));
            }
            events.finish(&terminal);
            return answer_sse(events, admission, None);
        }
        () = events.started.cancelled() => {}
    }
    // SSE from here: the rest of the request runs beside its response, and
    // ends when the response is dropped (the client left).
    let abandoned = CancellationToken::new();
    let (task_events, task_abandoned) = (events.clone(), abandoned.clone());
    tokio::spawn(async move {
        let terminal = tokio::select! {
            result = outcome => terminal(result, &request, &request_id),
            () = task_events.overflowed.cancelled() => error_message(
                &request.id,
                codes::MCP_RESOURCE_LIMIT_EXCEEDED,
                "MCP notification buffer overflow",
                None,
            ),
            () = task_abandoned.cancelled() => return,
        };
        task_events.finish(&terminal);
    });
    answer_sse(events, admission, Some(abandoned.drop_guard()))
}

/// The HTTP request's terminal answer: the MCP outcome under the client's
/// id, or the bridge's failure.
fn terminal(result: Result<Value, RequestError>, request: &McpHttpRequest, request_id: &str) -> Value {
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(error) => {
            let kept = [
                codes::MCP_RESOURCE_LIMIT_EXCEEDED,
                codes::MCP_SERVER_UNAVAILABLE,
                codes::MCP_BACKEND_FAILED,
                codes::REQUEST_CANCELLED,
            ];
            let code = if kept.contains(&error.code) {
                error.code
            } else {
                codes::MCP_BACKEND_FAILED
            };
            return error_message(&request.id, code, &error.message, None);
        }
    };
    if let Some(error) = outcome.get("error") {
        return json!({"jsonrpc": "2.0", "id": request.id, "error": error});
    }
    let mut result = outcome.get("result").cloned().unwrap_or(Value::Null);
    if request.method == "tools/list" {
        result = strip_header_annotations(result);
    }
    if let Value::Object(payload) = &mut result {
        rewrite_subscription_id(payload, request_id, &request.id);
    }
    json!({"jsonrpc": "2.0", "id": request.id, "result": result})
}

/// A subscription id naming the ACP request becomes the HTTP client's own id.
fn rewrite_subscription_id(payload: &mut Map<String, Value>, request_id: &str, http_id: &Value) {
    if let Some(Value::Object(meta)) = payload.get_mut("_meta") {
        if let Some(id) = meta.get_mut(mcp::META_SUBSCRIPTION_ID) {
            if id.as_str() == Some(request_id) {
                *id = http_id.clone();
            }
        }
    }
}

/// The status of a JSON answer, by its error.
fn terminal_status(terminal: &Value) -> StatusCode {
    match terminal.pointer("/error/code").and_then(Value::as_i64) {
        Some(
            codes::MCP_HEADER_MISMATCH
            | codes::MCP_MISSING_CLIENT_CAPABILITY
            | codes::UNSUPPORTED_PROTOCOL_VERSION
            | codes::INVALID_PARAMS,
        ) => StatusCode::BAD_REQUEST,
        Some(codes::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// One of the listener's admitted requests, until its response is dropped.
pub(super) struct Admission(Arc<Shared>);

impl Admission {
    fn take(shared: &Arc<Shared>) -> Option<Self> {
        let before = shared.active.fetch_add(1, Ordering::SeqCst);
        if before >= shared.options.max_active_requests {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Self(shared.clone()))
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

fn refused(refusal: &Refusal, admission: Option<Admission>) -> Response<AnswerBody> {
    let mut response = answer_json(&refusal.body(), admission);
    *response.status_mut() = refusal.status;
    for (name, value) in &refusal.headers {
        response
            .headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    response
}

fn answer_json(message: &Value, admission: Option<Admission>) -> Response<AnswerBody> {
    let body = Bytes::from(message.to_string());
    let length = body.len();
    let mut response = Response::new(AnswerBody::full(body, admission));
    *response.status_mut() = terminal_status(message);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

fn answer_sse(
    events: Arc<Events>,
    admission: Admission,
    abandoned: Option<DropGuard>,
) -> Response<AnswerBody> {
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + SSE_KEEPALIVE, SSE_KEEPALIVE);
    keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let body = AnswerBody {
        kind: Kind::Sse { events, keepalive },
        _admission: Some(admission),
        _abandoned: abandoned,
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The SSE events of one answer not taken by the HTTP connection yet.
struct Events {
    queue: Mutex<Queue>,
    max_buffered: usize,
    /// Cancelled at the first event: the answer is SSE from then on.
    started: CancellationToken,
    /// Cancelled when more than `max_buffered` bytes wait: the request is
    /// abandoned and answered with -33000.
    overflowed: CancellationToken,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Bytes>,
    buffered: usize,
    finished: bool,
    waker: Option<Waker>,
}

impl Events {
    fn new(max_buffered: usize) -> Self {
        Self {
            queue: Mutex::default(),
            max_buffered,
            started: CancellationToken::new(),
            overflowed: CancellationToken::new(),
        }
    }

    /// One of the request's notifications (`{"method", "params"?}`).
    fn notification(&self, notification: Value, request_id: &str, http_id: &Value) {
        if self.overflowed.is_cancelled() {
            return;
        }
        let mut message =
            json!({"jsonrpc": "2.0", "method": notification.get("method").cloned().unwrap_or(Value::Null)});
        if let Some(Value::Object(mut params)) = notification.get("params").cloned() {
            rewrite_subscription_id(&mut params, request_id, http_id);
            message["params"] = Value::Object(params);
        }
        let buffered = self.push(&message);
        if buffered > self.max_buffered {
            self.overflowed.cancel();
        }
    }

    /// The terminal answer: the last event.
    fn finish(&self, terminal: &Value) {
        self.push(terminal);
        let mut queue = self.queue.lock().expect("not poisoned");
        queue.finished = true;
        if let Some(waker) = queue.waker.take() {
            waker.wake();
        }
    }

    /// Queues an event; the bytes now waiting.
    fn push(&self, message: &Value) -> usize {
        let event = Bytes::from(format!("event: message\ndata: {message}\n\n"));
        let mut queue = self.queue.lock().expect("not poisoned");
        if queue.finished {
            return queue.buffered;
        }
        queue.buffered += event.len();
        queue.events.push_back(event);
        if let Some(waker) = queue.waker.take() {
            waker.wake();
        }
        let buffered = queue.buffered;
        drop(queue);
        self.started.cancel();
        buffered
    }
}

/// A response's body: JSON at once, or SSE events as they come.
pub(super) struct AnswerBody {
    kind: Kind,
    _admission: Option<Admission>,
    _abandoned: Option<DropGuard>,
}

enum Kind {
    Full(Option<Bytes>),
    Sse {
        events: Arc<Events>,
        keepalive: tokio::time::Interval,
    },
}

impl AnswerBody {
    fn full(body: Bytes, admission: Option<Admission>) -> Self {
        Self {
            kind: Kind::Full(Some(body)),
            _admission: admission,
            _abandoned: None,
        }
    }
}

impl hyper::body::Body for AnswerBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(body) => Poll::Ready(body.take().map(|body| Ok(Frame::data(body)))),
            Kind::Sse { events, keepalive } => {
                {
                    let mut queue = events.queue.lock().expect("not poisoned");
                    if let Some(event) = queue.events.pop_front() {
                        queue.buffered -= event.len();
                        return Poll::Ready(Some(Ok(Frame::data(event))));
                    }
                    if queue.finished {
                        return Poll::Ready(None);
                    }
                    queue.waker = Some(cx.waker().clone());
                }
                match keepalive.poll_tick(cx) {
                    Poll::Ready(_) => {
                        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b": keepalive\n\n")))))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(body) => SizeHint::with_exact(body.as_ref().map_or(0, |body| body.len() as u64)),
            Kind::Sse { .. } => SizeHint::default(),
        }
    }
}
