//! What every export shares: result codes, the thread-local last error,
//! the panic guard, and C string conversions.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use acp_engine::RequestError;
use serde_json::value::RawValue;

use acp_result::*;

/// The outcome of every fallible call. On anything but `ACP_OK`,
/// `acp_last_error_message()` says what went wrong.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_result {
    /// It worked.
    ACP_OK = 0,
    /// A required pointer argument was NULL.
    ACP_ERR_NULL_ARGUMENT = 1,
    /// A string argument was not valid UTF-8.
    ACP_ERR_INVALID_UTF8 = 2,
    /// A JSON argument did not parse (nothing was sent).
    ACP_ERR_INVALID_JSON = 3,
    /// An argument was out of range or did not fit the method's schema type
    /// (nothing was sent).
    ACP_ERR_INVALID_ARGUMENT = 4,
    /// The connection is closed (or closing).
    ACP_ERR_CLOSED = 5,
    /// An operating-system error (spawning a process, a descriptor).
    ACP_ERR_IO = 6,
    /// The responder was already answered (or is unknown).
    ACP_ERR_ALREADY_ANSWERED = 7,
    /// Nothing happened within the timeout.
    ACP_ERR_TIMEOUT = 8,
    /// The peer answered a request with a JSON-RPC error.
    ACP_ERR_REQUEST_FAILED = 9,
    /// The call does not fit the connection's mode (e.g. `next_event` on a
    /// connection with callbacks).
    ACP_ERR_WRONG_MODE = 10,
    /// A bug in acp-engine (a Rust panic, caught at the boundary).
    ACP_ERR_INTERNAL = 11,
    /// `acp_json_get_*`: no value at the pointer, or not of that type.
    ACP_ERR_NOT_FOUND = 12,
}

/// An error failure of the library, before it becomes a code.
pub(crate) struct Failure {
    pub code: acp_result,
    pub message: String,
    /// The engine's JSON-RPC error, when the failure is one
    /// (`acp_last_error_json`).
    pub error: Option<RequestError>,
}

impl Failure {
    pub fn new(code: acp_result, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            error: None,
        }
    }

    /// A failure that is the engine's JSON-RPC error `error`.
    pub fn rpc(code: acp_result, message: impl Into<String>, error: RequestError) -> Self {
        Self {
            error: Some(error),
            ..Self::new(code, message)
        }
    }

    /// A required pointer argument, `name`, was NULL.
    pub fn null(name: &str) -> Self {
        Self::new(ACP_ERR_NULL_ARGUMENT, format!("{name} is NULL"))
    }

    pub fn closed(error: &RequestError) -> Self {
        Self::rpc(acp_result::ACP_ERR_CLOSED, error.to_string(), error.clone())
    }
}

/// A JSON-RPC error of a send: closed connections map to `ACP_ERR_CLOSED`,
/// params that do not serialize to `ACP_ERR_INVALID_ARGUMENT`.
impl From<RequestError> for Failure {
    fn from(error: RequestError) -> Self {
        if error.is_connection_closed() {
            Self::closed(&error)
        } else {
            Self::rpc(acp_result::ACP_ERR_INVALID_ARGUMENT, error.to_string(), error)
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static LAST_ERROR_JSON: RefCell<Option<CString>> = const { RefCell::new(None) };
}

pub(crate) fn set_last_error(message: &str) {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
    LAST_ERROR_JSON.with(|last| *last.borrow_mut() = None);
}

/// Record `failure` as this thread's last error.
pub(crate) fn set_last_failure(failure: &Failure) {
    set_last_error(&failure.message);
    if let Some(error) = &failure.error {
        let json = c_string(&error.to_error_response().to_string());
        LAST_ERROR_JSON.with(|last| *last.borrow_mut() = Some(json));
    }
}

/// The message of the last failure on this thread ("" if none). The pointer
/// stays valid until the next acp_* call on this thread; do not free it.
#[no_mangle]
pub extern "C" fn acp_last_error_message() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// The last failed call's error on this thread as a JSON-RPC error object
/// (`{"code", "message", "data"?}`), when the engine refused with one (a
/// send whose params fail the schema, a closed connection); NULL when the
/// failure was not a JSON-RPC error. Valid until the next acp_* call on
/// this thread; do not free it.
#[no_mangle]
pub extern "C" fn acp_last_error_json() -> *const c_char {
    LAST_ERROR_JSON.with(|last| {
        last.borrow()
            .as_ref()
            .map_or(std::ptr::null(), |json| json.as_ptr())
    })
}

/// Run an export's body: failures become codes and a last-error message,
/// panics become `ACP_ERR_INTERNAL`.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> acp_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => acp_result::ACP_OK,
        Ok(Err(failure)) => {
            set_last_failure(&failure);
            failure.code
        }
        Err(_) => {
            set_last_error("internal error in acp-engine (a panic was caught at the C boundary)");
            acp_result::ACP_ERR_INTERNAL
        }
    }
}

/// Like `guard` for exports that return a value instead of a code.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Borrow a C string argument. NULL and invalid UTF-8 are failures naming
/// the argument.
pub(crate) unsafe fn str_arg<'a>(pointer: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if pointer.is_null() {
        return Err(Failure::null(name));
    }
    CStr::from_ptr(pointer)
        .to_str()
        .map_err(|_| Failure::new(ACP_ERR_INVALID_UTF8, format!("{name} is not UTF-8")))
}

/// A JSON argument as raw JSON, checked and borrowed (a file's content is
/// not copied): NULL or "" mean "no params".
pub(crate) unsafe fn json_arg<'a>(
    pointer: *const c_char,
    name: &str,
) -> Result<Option<&'a RawValue>, Failure> {
    if pointer.is_null() {
        return Ok(None);
    }
    let text = str_arg(pointer, name)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str::<&RawValue>(text)
        .map(Some)
        .map_err(|error| Failure::new(ACP_ERR_INVALID_JSON, format!("{name}: {error}")))
}

/// Params must be an object or an array when present (JSON-RPC).
pub(crate) fn structured(params: Option<&RawValue>, name: &str) -> Result<(), Failure> {
    match params.map(|raw| raw.get().as_bytes()[0]) {
        None | Some(b'{') | Some(b'[') => Ok(()),
        Some(_) => Err(Failure::new(
            ACP_ERR_INVALID_ARGUMENT,
            format!("{name} must be a JSON object or array"),
        )),
    }
}

/// An out-parameter for a string the library hands to C: cleared first, so
/// C sees NULL on every failure; NULL itself is a failure naming it.
pub(crate) unsafe fn out_arg<'a>(out: *mut *mut c_char, name: &str) -> Result<&'a mut *mut c_char, Failure> {
    let out = out.as_mut().ok_or_else(|| Failure::null(name))?;
    *out = std::ptr::null_mut();
    Ok(out)
}

/// A JSON-RPC error C receives: its object in `*out`, and
/// `ACP_ERR_REQUEST_FAILED` saying `what` failed.
pub(crate) fn request_failed(what: &str, error: &RequestError, out: &mut *mut c_char) -> Failure {
    *out = owned_string(&error.to_error_response().to_string());
    Failure::new(ACP_ERR_REQUEST_FAILED, format!("{what}: {error}"))
}

/// A string the library hands to C, freed with `acp_string_free`.
pub(crate) fn owned_string(text: &str) -> *mut c_char {
    CString::new(text.replace('\0', "\\u0000"))
        .unwrap_or_default()
        .into_raw()
}

/// For strings passed to callbacks: valid for the callback's duration.
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\u0000")).unwrap_or_default()
}

/// Free a string the library returned. NULL is fine.
#[no_mangle]
pub unsafe extern "C" fn acp_string_free(string: *mut c_char) {
    guard_value((), || {
        if !string.is_null() {
            drop(CString::from_raw(string));
        }
    })
}

/// The library's version, e.g. "0.1.0" (static; do not free).
#[no_mangle]
pub extern "C" fn acp_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
#[path = "../tests/unit/ffi.rs"]
mod tests;
