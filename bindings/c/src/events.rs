//! The event queue: for hosts that cannot take callbacks on foreign threads
//! (Go, Java, scripting runtimes), a connection created without handlers
//! queues what happens, and the host takes it with
//! `acp_connection_next_event` on its own thread.

use std::collections::VecDeque;
use std::ffi::{c_char, CString};
use std::ptr;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use acp_engine::RequestError;

use crate::ffi::{c_string, guard_value};
use crate::handlers::acp_error;
use crate::responder::acp_responder;

/// What an event is.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_event_kind {
    /// An inbound request: answer `responder` (exactly once).
    ACP_EVENT_REQUEST = 1,
    /// An inbound notification.
    ACP_EVENT_NOTIFICATION = 2,
    /// The response to a request sent without a callback.
    ACP_EVENT_RESPONSE = 3,
    /// The connection closed; `reason` says why. The last event.
    ACP_EVENT_CLOSED = 4,
}

/// One event. Every pointer in it is owned by the event and valid until
/// `acp_event_free`.
#[repr(C)]
pub struct acp_event {
    /// What the event is.
    pub kind: acp_event_kind,
    /// REQUEST, NOTIFICATION: the method. NULL otherwise.
    pub method: *const c_char,
    /// REQUEST, NOTIFICATION: the params as JSON (NULL when absent).
    /// RESPONSE: the result as JSON (NULL when the request failed).
    pub json: *const c_char,
    /// RESPONSE: the id `acp_connection_send_request` gave the request.
    pub request_id: i64,
    /// RESPONSE that failed: the error (code 0 and NULL pointers otherwise).
    pub error: acp_error,
    /// REQUEST: answer it with `acp_responder_ok` / `acp_responder_error`.
    pub responder: *mut acp_responder,
    /// CLOSED: why the connection closed.
    pub reason: *const c_char,
}

/// An event and the strings it points into (the event comes first, so a
/// pointer to the box is a pointer to the event).
#[repr(C)]
struct EventBox {
    event: acp_event,
    strings: Vec<CString>,
}

impl EventBox {
    fn new(kind: acp_event_kind) -> Self {
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
}

/// Events are moved between threads; their raw pointers point into the
/// strings they own.
struct QueuedEvent(Box<EventBox>);
unsafe impl Send for QueuedEvent {}

#[derive(Default)]
pub(crate) struct EventQueue {
    events: Mutex<VecDeque<QueuedEvent>>,
    ready: Condvar,
}

/// What `next` found.
pub(crate) enum Next {
    Event(*mut acp_event),
    Timeout,
}

impl EventQueue {
    fn push(&self, event: EventBox) {
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        events.push_back(QueuedEvent(Box::new(event)));
        self.ready.notify_one();
    }

    pub fn push_request(&self, method: &str, params: Option<&str>, responder: *mut acp_responder) {
        let mut event = EventBox::new(acp_event_kind::ACP_EVENT_REQUEST);
        event.event.method = event.keep(method);
        event.event.json = params.map_or(ptr::null(), |params| event.keep(params));
        event.event.responder = responder;
        self.push(event);
    }

    pub fn push_notification(&self, method: &str, params: Option<&str>) {
        let mut event = EventBox::new(acp_event_kind::ACP_EVENT_NOTIFICATION);
        event.event.method = event.keep(method);
        event.event.json = params.map_or(ptr::null(), |params| event.keep(params));
        self.push(event);
    }

    pub fn push_response(&self, request_id: i64, outcome: &Result<String, RequestError>) {
        let mut event = EventBox::new(acp_event_kind::ACP_EVENT_RESPONSE);
        event.event.request_id = request_id;
        match outcome {
            Ok(result) => event.event.json = event.keep(result),
            Err(error) => {
                event.event.error.code = error.code;
                event.event.error.message = event.keep(&error.message);
                if let Some(data) = &error.data {
                    event.event.error.data_json = event.keep(&data.to_string());
                }
            }
        }
        self.push(event);
    }

    pub fn push_closed(&self, reason: &str) {
        let mut event = EventBox::new(acp_event_kind::ACP_EVENT_CLOSED);
        event.event.reason = event.keep(reason);
        self.push(event);
    }

    /// The next event, waiting up to `timeout` (None: forever).
    pub fn next(&self, timeout: Option<Duration>) -> Next {
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(QueuedEvent(event)) = events.pop_front() {
                return Next::Event(Box::into_raw(event).cast());
            }
            events = match deadline {
                None => self.ready.wait(events).unwrap_or_else(|p| p.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Next::Timeout;
                    }
                    self.ready
                        .wait_timeout(events, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
    }
}

/// Free an event from `acp_connection_next_event`. NULL is fine. An
/// unanswered REQUEST event's responder stays valid (answer it, or it is
/// answered -32603 when the connection is closed).
#[no_mangle]
pub unsafe extern "C" fn acp_event_free(event: *mut acp_event) {
    guard_value((), || {
        if !event.is_null() {
            drop(Box::from_raw(event.cast::<EventBox>()));
        }
    })
}
