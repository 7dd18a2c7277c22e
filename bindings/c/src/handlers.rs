//! The C side's callbacks: their types, the table a connection is given,
//! and the error struct they receive.

use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};
use std::ptr;

use acp_engine::RequestError;

use crate::ffi::{c_string, Failure};
use crate::sized::{self, SizedStruct};

use crate::connection::acp_connection;
use crate::responder::acp_responder;

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

/// An engine error as C's `acp_error`, valid during `body`.
pub(crate) fn with_c_error<T>(error: &RequestError, body: impl FnOnce(*const acp_error) -> T) -> T {
    let message = c_string(&error.message);
    let data = error.data.as_ref().map(|data| c_string(&data.to_string()));
    let error = acp_error {
        code: error.code,
        message: message.as_ptr(),
        data_json: data.as_ref().map_or(ptr::null(), |data| data.as_ptr()),
    };
    body(&error)
}

/// An inbound request on `connection`. Answer `responder` exactly once,
/// now or later, from any thread. `params_json` is NULL when the request had
/// no params. The strings are valid only during the call.
pub type acp_request_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        connection: *const acp_connection,
        method: *const c_char,
        params_json: *const c_char,
        responder: *mut acp_responder,
    ),
>;

/// An inbound notification on `connection`. Called one at a time, in
/// arrival order.
pub type acp_notification_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        connection: *const acp_connection,
        method: *const c_char,
        params_json: *const c_char,
    ),
>;

/// `connection` closed (`reason` valid during the call). Called once, last.
pub type acp_close_callback = Option<
    unsafe extern "C" fn(user_data: *mut c_void, connection: *const acp_connection, reason: *const c_char),
>;

/// The peer cancelled inbound request `responder` (`$/cancel_request`, or a
/// client's `session/cancel` for a permission request); the engine answered
/// it already: stop working on it (answering it now returns
/// ACP_ERR_ALREADY_ANSWERED). Called in order with the other events.
pub type acp_cancel_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        connection: *const acp_connection,
        responder: *mut acp_responder,
    ),
>;

/// The peer sent notification `method` with params that fail the ACP
/// schema: the engine dropped it (a notification gets no answer). `error`
/// is the -32602 that says what failed (its `data_json` names the field).
/// Called in order with the other notifications; `method` and `error` are
/// valid during the call.
pub type acp_invalid_notification_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        connection: *const acp_connection,
        method: *const c_char,
        error: *const acp_error,
    ),
>;

/// The answer to `acp_connection_send_request`: `result_json` on success
/// (and `error` NULL), `error` on failure (and `result_json` NULL). Valid
/// during the call.
pub type acp_response_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        connection: *const acp_connection,
        request_id: i64,
        result_json: *const c_char,
        error: *const acp_error,
    ),
>;

/// Callbacks for a connection. Any may be NULL: requests then get -32601,
/// notifications are dropped. They run on the connection's dispatch thread
/// (never the thread that created the connection), may block, and may call
/// any acp_* function. `user_data` is passed back as given. Start from
/// `ACP_HANDLERS_INIT` (`struct_size` set, every callback NULL):
/// `acp_handlers h = ACP_HANDLERS_INIT; h.on_request = on_request;`.
/// Callbacks are only ever appended; the library reads those within
/// `struct_size`, so a program built against an older header keeps working.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct acp_handlers {
    /// `sizeof(acp_handlers)`, as the caller's header defines it (set by
    /// `ACP_HANDLERS_INIT`). Callbacks beyond it are NULL. Smaller than the
    /// first version's struct (0 included) is refused with
    /// ACP_ERR_INVALID_ARGUMENT; so is a larger struct (from a newer
    /// header) whose fields this library does not know are not all zero.
    pub struct_size: usize,
    /// Passed back to every callback.
    pub user_data: *mut c_void,
    /// Inbound requests (NULL: they get -32601).
    pub on_request: acp_request_callback,
    /// Inbound notifications (NULL: dropped).
    pub on_notification: acp_notification_callback,
    /// The connection closed (optional).
    pub on_close: acp_close_callback,
    /// The peer cancelled an inbound request (optional; otherwise poll
    /// `acp_responder_is_cancelled`).
    pub on_cancel: acp_cancel_callback,
    /// The peer sent a notification whose params fail the ACP schema; the
    /// engine dropped it (optional; NULL: ignored). For example
    /// claude-agent-acp 0.23's `session/update` `usage_update` with
    /// `"used": null`.
    pub on_invalid_notification: acp_invalid_notification_callback,
}

impl SizedStruct for acp_handlers {
    const NAME: &'static str = "acp_handlers";
    const FIRST_SIZE: usize =
        offset_of!(acp_handlers, on_invalid_notification) + size_of::<acp_invalid_notification_callback>();

    fn defaults() -> Self {
        Self {
            struct_size: size_of::<Self>(),
            user_data: ptr::null_mut(),
            on_request: None,
            on_notification: None,
            on_close: None,
            on_cancel: None,
            on_invalid_notification: None,
        }
    }
}

impl acp_handlers {
    /// Read `handlers` (NULL: `None`): the callbacks within its
    /// `struct_size`, NULL beyond it.
    pub(crate) unsafe fn read(handlers: *const acp_handlers) -> Result<Option<Self>, Failure> {
        sized::read(handlers, "handlers")
    }
}

// C function pointers and `user_data`: usable from any thread by the
// header's contract.
unsafe impl Send for acp_handlers {}
unsafe impl Sync for acp_handlers {}

/// A `user_data` pointer carried to the thread that runs a callback.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}
