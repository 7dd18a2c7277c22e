//! The C side's handlers and how the engine reaches them: callbacks on the
//! library's worker threads, or events on a queue the host drains.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::Arc;

use acp_engine::{to_raw, CancellationToken, IncomingNotification, IncomingRequest, RawJson, RequestError};
use serde_json::value::RawValue;

use crate::events::EventQueue;
use crate::ffi::c_string;
use crate::responder::{self, acp_responder};

/// Which side of ACP the connection plays: decides which messages it
/// accepts and checks, before C sees them.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_side {
    /// Plain JSON-RPC: any method, no schema checks.
    ACP_SIDE_RAW = 0,
    /// An agent: inbound agent methods are checked against the ACP schema
    /// (unknown: -32601, bad params: -32602, C never sees them), and what it
    /// sends must be a client method with fitting params.
    ACP_SIDE_AGENT = 1,
    /// A client: the same, the other way round.
    ACP_SIDE_CLIENT = 2,
}

impl acp_side {
    /// The engine's name for this side.
    pub(crate) fn engine(self) -> acp_engine::host::Side {
        match self {
            acp_side::ACP_SIDE_RAW => acp_engine::host::Side::Raw,
            acp_side::ACP_SIDE_AGENT => acp_engine::host::Side::Agent,
            acp_side::ACP_SIDE_CLIENT => acp_engine::host::Side::Client,
        }
    }
}

/// An error answer, in callbacks and events. Pointers are NULL when absent.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_error {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The error message.
    pub message: *const c_char,
    /// The error's `data` as JSON, or NULL.
    pub data_json: *const c_char,
}

impl acp_error {
    pub(crate) fn none() -> Self {
        Self {
            code: 0,
            message: ptr::null(),
            data_json: ptr::null(),
        }
    }
}

/// An inbound request. Answer `responder` exactly once, now or later, from
/// any thread. `params_json` is NULL when the request had no params. The
/// strings are valid only during the call.
pub type acp_request_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        method: *const c_char,
        params_json: *const c_char,
        responder: *mut acp_responder,
    ),
>;

/// An inbound notification. Called one at a time, in arrival order.
pub type acp_notification_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, method: *const c_char, params_json: *const c_char)>;

/// The connection closed (`reason` valid during the call). Called once.
pub type acp_close_callback = Option<unsafe extern "C" fn(user_data: *mut c_void, reason: *const c_char)>;

/// The answer to `acp_connection_send_request`: `result_json` on success
/// (and `error` NULL), `error` on failure (and `result_json` NULL). Valid
/// during the call.
pub type acp_response_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request_id: i64,
        result_json: *const c_char,
        error: *const acp_error,
    ),
>;

/// Callbacks for a connection. Any may be NULL: requests then get -32601,
/// notifications are dropped. They run on the library's worker threads
/// (never the thread that created the connection), may block, and may call
/// any acp_* function. `user_data` is passed back as given.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct acp_handlers {
    /// Passed back to every callback.
    pub user_data: *mut c_void,
    /// Inbound requests (NULL: they get -32601).
    pub on_request: acp_request_callback,
    /// Inbound notifications (NULL: dropped).
    pub on_notification: acp_notification_callback,
    /// The connection closed (optional).
    pub on_close: acp_close_callback,
}

/// A `user_data` pointer moved to the library's threads (the header tells
/// C that it must be usable there).
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

/// Where inbound traffic goes.
pub(crate) enum Delivery {
    Callbacks(acp_handlers),
    Events(Arc<EventQueue>),
}

// The handler table holds C function pointers and user_data: both usable
// from any thread by the header's contract.
unsafe impl Send for Delivery {}
unsafe impl Sync for Delivery {}

/// The engine's view of one C connection's handlers.
pub(crate) struct Bridge {
    pub connection_id: u64,
    pub side: acp_side,
    pub protocol: acp_engine::Protocol,
    pub delivery: Delivery,
    /// Cancelled once the constructor has handed the connection to C:
    /// nothing reaches C before it can know its connection.
    pub ready: CancellationToken,
    /// Cancelled after the connection closed and C was told (on_close
    /// returned, or the CLOSED event was queued).
    pub finished: CancellationToken,
}

impl Bridge {
    /// The core request handler: check, hand to C, wait until C answered
    /// (C's answer goes on the wire directly, through the responder).
    pub async fn handle_request(self: Arc<Self>, request: IncomingRequest) -> Result<RawJson, RequestError> {
        self.side
            .engine()
            .check_request(self.protocol, &request.method, request.params.as_deref())?;
        self.ready.cancelled().await;
        let (responder, answered) = responder::register(
            self.connection_id,
            request.responder(),
            request.cancellation.clone(),
        );
        let params = request.params.as_ref().map(|p| p.get().to_owned());
        match &self.delivery {
            Delivery::Events(queue) => queue.push_request(&request.method, params.as_deref(), responder),
            Delivery::Callbacks(handlers) => {
                let Some(on_request) = handlers.on_request else {
                    responder::forget(responder);
                    return Err(RequestError::method_not_found(&request.method));
                };
                let user_data = UserData(handlers.user_data);
                let method = request.method.clone();
                let responder = ResponderPtr(responder);
                tokio::task::spawn_blocking(move || {
                    let (user_data, responder) = (user_data, responder);
                    let method = c_string(&method);
                    let params = params.as_deref().map(c_string);
                    let params = params.as_ref().map_or(ptr::null(), |p| p.as_ptr());
                    unsafe { on_request(user_data.0, method.as_ptr(), params, responder.0) };
                });
            }
        }
        match answered.await {
            // Already on the wire; the engine drops this value.
            Ok(()) => Ok(to_raw(&()).expect("null serializes")),
            Err(_) => Err(RequestError::internal_error()),
        }
    }

    /// The core notification handler: check, hand to C, one at a time.
    pub async fn handle_notification(
        self: Arc<Self>,
        notification: IncomingNotification,
    ) -> Result<(), RequestError> {
        self.side.engine().check_notification(
            self.protocol,
            &notification.method,
            notification.params.as_deref(),
        )?;
        let params = notification.params.as_ref().map(|p| p.get().to_owned());
        match &self.delivery {
            Delivery::Events(queue) => queue.push_notification(&notification.method, params.as_deref()),
            Delivery::Callbacks(handlers) => {
                let Some(on_notification) = handlers.on_notification else {
                    return Ok(());
                };
                let user_data = UserData(handlers.user_data);
                let method = notification.method;
                // Awaited: the next notification waits for this one.
                let _ = tokio::task::spawn_blocking(move || {
                    let user_data = user_data;
                    let method = c_string(&method);
                    let params = params.as_deref().map(c_string);
                    let params = params.as_ref().map_or(ptr::null(), |p| p.as_ptr());
                    unsafe { on_notification(user_data.0, method.as_ptr(), params) };
                })
                .await;
            }
        }
        Ok(())
    }

    /// Tell C the connection closed.
    pub async fn closed(&self, reason: String) {
        self.ready.cancelled().await;
        match &self.delivery {
            Delivery::Events(queue) => queue.push_closed(&reason),
            Delivery::Callbacks(handlers) => {
                if let Some(on_close) = handlers.on_close {
                    let user_data = UserData(handlers.user_data);
                    let _ = tokio::task::spawn_blocking(move || {
                        let user_data = user_data;
                        let reason = c_string(&reason);
                        unsafe { on_close(user_data.0, reason.as_ptr()) };
                    })
                    .await;
                }
            }
        }
    }

    /// Check what this side sends: an agent sends client methods, a client
    /// agent methods.
    pub fn check_outbound_request(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), RequestError> {
        self.side
            .engine()
            .peer()
            .check_request(self.protocol, method, params)
    }

    pub fn check_outbound_notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), RequestError> {
        self.side
            .engine()
            .peer()
            .check_notification(self.protocol, method, params)
    }
}

/// A responder token moved to a worker thread.
struct ResponderPtr(*mut acp_responder);
unsafe impl Send for ResponderPtr {}
