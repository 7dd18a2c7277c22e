//! Events, for hosts that take what happens on their own thread instead of
//! in callbacks (Go, Java, scripting runtimes, event loops): a connection
//! created without handlers, drained with `acp_connection_next_events` (a
//! batch per call) or `acp_connection_next_event`.

use std::ffi::{c_char, CString};
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_engine::RequestError;

use crate::batch::{Batch, Event, Item};
use crate::conn::{Conn, Waiting};
use crate::dispatch::with_c_error;
use crate::ffi::c_string;
use crate::handlers::acp_error;
use crate::responder;
use crate::tables::acp_event_kind;

/// One event. Every pointer in it is owned by the event and valid until
/// `acp_event_free`.
#[repr(C)]
pub struct acp_event {
    /// What the event is.
    pub kind: acp_event_kind,
    /// REQUEST, NOTIFICATION, INVALID_NOTIFICATION: the method. NULL
    /// otherwise.
    pub method: *const c_char,
    /// REQUEST, NOTIFICATION: the params as JSON (NULL when absent).
    /// RESPONSE: the result as JSON (NULL when the request failed).
    pub json: *const c_char,
    /// RESPONSE: the id `acp_connection_send_request` gave the request.
    pub request_id: i64,
    /// RESPONSE that failed, INVALID_NOTIFICATION: the error (code 0 and
    /// NULL pointers otherwise).
    pub error: acp_error,
    /// REQUEST: answer it with `acp_responder_ok` / `acp_responder_error`.
    /// CANCELLED: the request the peer cancelled.
    pub responder: *mut crate::responder::acp_responder,
    /// CLOSED: why the connection closed.
    pub reason: *const c_char,
}

/// An event and what its pointers point into (the event comes first, so a
/// pointer to the box is a pointer to the event).
#[repr(C)]
struct EventBox {
    event: acp_event,
    _batch: Arc<Batch>,
    strings: Vec<CString>,
}

impl EventBox {
    fn new(kind: acp_event_kind, batch: Arc<Batch>) -> Self {
        Self {
            event: acp_event {
                kind,
                method: ptr::null(),
                json: ptr::null(),
                request_id: 0,
                error: acp_error::none(),
                responder: ptr::null_mut(),
                reason: ptr::null(),
            },
            _batch: batch,
            strings: Vec::new(),
        }
    }

    /// Keep `text` alive with the event and return a pointer to it.
    fn keep(&mut self, text: &str) -> *const c_char {
        let string = c_string(text);
        let pointer = string.as_ptr();
        self.strings.push(string);
        pointer
    }

    /// Set the event's `error` to a copy of `error`.
    fn keep_error(&mut self, error: &RequestError) {
        self.event.error.code = error.code;
        self.event.error.message = self.keep(&error.message);
        if let Some(data) = &error.data {
            self.event.error.data_json = self.keep(&data.to_string());
        }
    }

    fn into_raw(self) -> *mut acp_event {
        Box::into_raw(Box::new(self)).cast()
    }
}

/// Up to `max` events, waiting until `timeout` (None: no limit) for the
/// first. Responses that go to a callback run it here, on the caller's
/// thread, in order.
pub(crate) fn next_events(conn: &Arc<Conn>, max: usize, timeout: Option<Duration>) -> Vec<*mut acp_event> {
    let deadline = timeout.map(|timeout| Instant::now() + timeout);
    loop {
        let items = conn.take(deadline, |backlog| {
            if backlog.is_empty() {
                return None;
            }
            let count = backlog.len().min(max);
            Some(backlog.drain(..count).collect::<Vec<Item>>())
        });
        let Some(items) = items else { return Vec::new() };
        let events: Vec<*mut acp_event> = items
            .into_iter()
            .filter_map(|item| to_event(conn, item))
            .collect();
        if !events.is_empty() {
            return events;
        }
    }
}

/// An item as a C event (None when it went to a callback instead).
fn to_event(conn: &Arc<Conn>, item: Item) -> Option<*mut acp_event> {
    let Item { batch, event } = item;
    let event = match event {
        Event::Request {
            token,
            method,
            params,
        } => {
            responder::register(token, conn);
            let mut event = EventBox::new(acp_event_kind::ACP_EVENT_REQUEST, batch);
            event.event.method = method.0;
            event.event.json = params.0;
            event.event.responder = token as *mut _;
            event
        }
        Event::Notification { method, params } => {
            let mut event = EventBox::new(acp_event_kind::ACP_EVENT_NOTIFICATION, batch);
            event.event.method = method.0;
            event.event.json = params.0;
            event
        }
        Event::Response { id, outcome } => {
            match conn.answer_wanted(id) {
                Some(Waiting::Callback(Some(callback), user_data)) => {
                    let c_conn = conn.c_pointer();
                    match &outcome {
                        Ok(result) => unsafe { callback(user_data.0, c_conn, id, result.0, ptr::null()) },
                        Err(error) => with_c_error(error, |error| unsafe {
                            callback(user_data.0, c_conn, id, ptr::null(), error)
                        }),
                    }
                    return None;
                }
                Some(Waiting::Slot(slot)) => {
                    conn.complete(&slot, crate::conn::outcome_text(&outcome));
                    return None;
                }
                Some(Waiting::Event) => {}
                _ => return None,
            }
            let mut event = EventBox::new(acp_event_kind::ACP_EVENT_RESPONSE, batch);
            event.event.request_id = id;
            match &outcome {
                Ok(result) => event.event.json = result.0,
                Err(error) => event.keep_error(error),
            }
            event
        }
        Event::InvalidNotification { method, error } => {
            let mut event = EventBox::new(acp_event_kind::ACP_EVENT_INVALID_NOTIFICATION, batch);
            event.event.method = event.keep(&method);
            event.keep_error(&error);
            event
        }
        Event::Cancelled { token } => {
            let mut event = EventBox::new(acp_event_kind::ACP_EVENT_CANCELLED, batch);
            event.event.responder = token as *mut _;
            event
        }
        Event::Closed { reason } => {
            conn.fail_waiting(&reason);
            conn.lock_state().finished = true;
            conn.notify();
            let mut event = EventBox::new(acp_event_kind::ACP_EVENT_CLOSED, batch);
            event.event.reason = event.keep(&reason);
            event
        }
    };
    Some(event.into_raw())
}

/// Free an event from `acp_connection_next_event(s)`. NULL is fine. An
/// unanswered REQUEST event's responder stays valid (answer it, or it is
/// answered -32603 when the connection is closed).
#[no_mangle]
pub unsafe extern "C" fn acp_event_free(event: *mut acp_event) {
    crate::ffi::guard_value((), || {
        if !event.is_null() {
            drop(Box::from_raw(event.cast::<EventBox>()));
        }
    })
}
