//! Requests whose answer the caller's thread waits for: `acp_connection_request`
//! (send and wait), and its two halves, `acp_connection_start_request` and
//! `acp_connection_await`, for a host that cancels a wait from another
//! thread (Go's `context`). The waiting thread reads the stream itself while
//! nobody else does, so an answer costs no wake-up of another thread.

use std::ffi::{c_char, CString};
use std::time::{Duration, Instant};

use acp_engine::host::threaded::{Answer, WaitError};
use serde_json::value::RawValue;

use crate::calls::{not_sent, outbound};
use crate::conn::live_connection;
use crate::connection::acp_connection;
use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, guard, out_arg, request_failed, Failure};

/// Send a request and wait for its answer on this thread (up to
/// `timeout_ms`; negative: no limit). On `ACP_OK`, `*out_json` is the
/// result; on `ACP_ERR_REQUEST_FAILED` it is the JSON-RPC error object
/// `{"code","message","data"?}`; either way free it with `acp_string_free`.
/// On `ACP_ERR_TIMEOUT` the request is cancelled (`$/cancel_request`).
/// From a request or response callback, the dispatch thread's work goes on
/// on another thread meanwhile; from a notification callback it would wait
/// for itself, and fails with `ACP_ERR_WRONG_MODE` (nothing is sent).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_request(
    connection: *const acp_connection,
    method: *const c_char,
    params_json: *const c_char,
    timeout_ms: i32,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let conn = live_connection(connection)?;
        let out_json = out_arg(out_json, "out_json")?;
        let (method, params) = outbound(method, params_json)?;
        match conn.request(method, params.map(RawValue::get), deadline(timeout_ms)) {
            Ok(answer) => answered(method, answer, out_json),
            Err(WaitError::TimedOut) => Err(Failure::new(
                ACP_ERR_TIMEOUT,
                format!("{method}: no answer within {timeout_ms} ms"),
            )),
            Err(error) => Err(refused(method, error)),
        }
    })
}

/// Send a request whose answer is taken with `acp_connection_await` (once),
/// on any thread; `*out_request_id` is its id (for `acp_connection_await`
/// and `acp_connection_cancel_request`). `params_json` may be NULL. Nothing
/// is sent on a failure code.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_start_request(
    connection: *const acp_connection,
    method: *const c_char,
    params_json: *const c_char,
    out_request_id: *mut i64,
) -> acp_result {
    guard(|| {
        let conn = live_connection(connection)?;
        if out_request_id.is_null() {
            return Err(Failure::null("out_request_id"));
        }
        let (method, params) = outbound(method, params_json)?;
        *out_request_id = conn
            .start_request(method, params.map(RawValue::get))
            .map_err(|error| not_sent(method, error))?;
        Ok(())
    })
}

/// Wait (up to `timeout_ms`; negative: no limit) for the answer to a request
/// of `acp_connection_start_request`, with the results of
/// `acp_connection_request`; on `ACP_ERR_TIMEOUT` the request stays pending
/// (await it again, or cancel it: `acp_connection_cancel_request` makes this
/// return at once, `ACP_ERR_REQUEST_FAILED` with -32800). The same rules as
/// `acp_connection_request` for callbacks. `ACP_ERR_INVALID_ARGUMENT` for an
/// id that is not awaited (unknown, or its answer was already taken).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_await(
    connection: *const acp_connection,
    request_id: i64,
    timeout_ms: i32,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let conn = live_connection(connection)?;
        let out_json = out_arg(out_json, "out_json")?;
        match conn.await_answer(request_id, deadline(timeout_ms)) {
            Ok(answer) => answered(&format!("request {request_id}"), answer, out_json),
            Err(WaitError::NotAwaited) => Err(Failure::new(ACP_ERR_INVALID_ARGUMENT, format!("request {request_id} is not awaited (not from acp_connection_start_request, or already answered)"))),
            Err(WaitError::TimedOut) => Err(Failure::new(ACP_ERR_TIMEOUT, format!("request {request_id}: no answer within {timeout_ms} ms (still pending)"))),
            Err(error) => Err(refused("acp_connection_await", error)),
        }
    })
}

fn deadline(timeout_ms: i32) -> Option<Instant> {
    (timeout_ms >= 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64))
}

/// A wait that could not start: from a notification callback it would wait
/// for itself; or the request was not sent.
fn refused(what: &str, error: WaitError) -> Failure {
    match error {
        WaitError::NotSent(error) => not_sent(what, error),
        _ => Failure::new(ACP_ERR_WRONG_MODE, format!("{what}: a notification callback cannot wait for an answer (the answer is delivered after it returns); use acp_connection_send_request")),
    }
}

/// An answer as C receives it.
fn answered(what: &str, answer: Answer, out_json: &mut *mut c_char) -> Result<(), Failure> {
    match answer {
        Ok(result) => {
            // SAFETY: JSON text has no NUL inside; the answer has room for one (no copy).
            *out_json = unsafe { CString::from_vec_unchecked(result.into_bytes()) }.into_raw();
            Ok(())
        }
        Err(error) if error.is_connection_closed() => Err(Failure::closed(&error)),
        Err(error) => Err(request_failed(what, &error, out_json)),
    }
}
