//! Events, for hosts that take what happens on their own thread instead of
//! in callbacks (Go, Java, scripting runtimes, event loops): a connection
//! created without handlers, drained with `acp_connection_next_events` (a
//! batch per call) or `acp_connection_next_event`. The driver's events as
//! C structs: strings point into the drained batch the event keeps.

use std::ffi::{c_char, CString};
use std::ptr;
use std::sync::Arc;

use acp_engine::host::threaded::{Event, Item, Text};
use acp_engine::RequestError;

use crate::conn::Conn;
use crate::ffi::c_string;
use crate::handlers::acp_error;
use crate::respond;
use crate::responder::acp_responder;
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
    pub responder: *mut acp_responder,
    /// CLOSED: why the connection closed.
    pub reason: *const c_char,
}

/// An event and what its pointers point into (the event comes first, so a
/// pointer to the box is a pointer to the event).
#[repr(C)]
struct EventBox {
    event: acp_event,
    _item: Item,
    _strings: Vec<CString>,
}

/// `text` as a C string kept in `strings`.
fn keep(strings: &mut Vec<CString>, text: &str) -> *const c_char {
    strings.push(c_string(text));
    strings.last().expect("just pushed").as_ptr()
}

/// `error` as C's, its strings kept in `strings`.
fn keep_error(strings: &mut Vec<CString>, error: &RequestError) -> acp_error {
    acp_error {
        code: error.code,
        message: keep(strings, &error.message),
        data_json: error
            .data
            .as_ref()
            .map_or(ptr::null(), |data| keep(strings, &data.to_string())),
    }
}

fn text(text: Option<&Text>) -> *const c_char {
    text.map_or(ptr::null(), |text| text.as_c_str().as_ptr())
}

/// A driver's event as a C event (a REQUEST's responder registered).
pub(crate) fn to_event(conn: &Arc<Conn>, item: Item) -> *mut acp_event {
    let mut strings = Vec::new();
    let mut event = acp_event {
        kind: acp_event_kind::ACP_EVENT_CLOSED,
        method: ptr::null(),
        json: ptr::null(),
        request_id: 0,
        error: acp_error::none(),
        responder: ptr::null_mut(),
        reason: ptr::null(),
    };
    match item.event() {
        Event::Request {
            token,
            method,
            params,
        } => {
            respond::register(*token, conn);
            event.kind = acp_event_kind::ACP_EVENT_REQUEST;
            (event.method, event.json) = (text(Some(method)), text(params.as_ref()));
            event.responder = *token as *mut _;
        }
        Event::Notification { method, params } => {
            event.kind = acp_event_kind::ACP_EVENT_NOTIFICATION;
            (event.method, event.json) = (text(Some(method)), text(params.as_ref()));
        }
        Event::Response { id, outcome } => {
            event.kind = acp_event_kind::ACP_EVENT_RESPONSE;
            event.request_id = *id;
            match outcome {
                Ok(result) => event.json = text(Some(result)),
                Err(error) => event.error = keep_error(&mut strings, error),
            }
        }
        Event::InvalidNotification { method, error } => {
            event.kind = acp_event_kind::ACP_EVENT_INVALID_NOTIFICATION;
            event.method = keep(&mut strings, method);
            event.error = keep_error(&mut strings, error);
        }
        Event::Cancelled { token } => {
            event.kind = acp_event_kind::ACP_EVENT_CANCELLED;
            event.responder = *token as *mut _;
        }
        Event::Closed { reason } => event.reason = keep(&mut strings, reason),
    }
    let boxed = EventBox {
        event,
        _item: item,
        _strings: strings,
    };
    Box::into_raw(Box::new(boxed)).cast()
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
