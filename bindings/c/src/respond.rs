//! Responders: how C answers an inbound request, now or later, from any
//! thread. A responder pointer is the engine's token for the request (unique
//! in the process), looked up here and never dereferenced, so answering
//! twice (or after the connection is gone) is a result code, not a crash.

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::{Arc, Mutex, Weak};

use acp_engine::RequestError;
use serde_json::value::RawValue;

use crate::conn::Conn;
use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, guard, guard_value, json_arg, str_arg, Failure};
use crate::responder::acp_responder;

/// Requests handed to C and not answered yet: token -> connection.
static RESPONDERS: Mutex<Option<HashMap<u64, Weak<Conn>>>> = Mutex::new(None);

fn with_registry<T>(body: impl FnOnce(&mut HashMap<u64, Weak<Conn>>) -> T) -> T {
    let mut registry = RESPONDERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    body(registry.get_or_insert_with(HashMap::new))
}

/// Request `token` of `conn` is handed to C.
pub(crate) fn register(token: u64, conn: &Arc<Conn>) {
    with_registry(|registry| registry.insert(token, Arc::downgrade(conn)));
}

/// C closed or freed `conn`: its requests are answered (-32603) or cannot
/// be any more. (A request cancelled by the peer, or left unanswered by a
/// peer that hung up, keeps its entry: answering it says so.)
pub(crate) fn forget_connection(conn: &Conn) {
    with_registry(|registry| {
        registry.retain(|_, owner| owner.strong_count() > 0 && !std::ptr::eq(owner.as_ptr(), conn))
    });
}

fn answer(responder: *mut acp_responder, outcome: Result<&RawValue, RequestError>) -> Result<(), Failure> {
    if responder.is_null() {
        return Err(Failure::null("responder"));
    }
    let token = responder as u64;
    let conn = with_registry(|registry| registry.remove(&token)).and_then(|conn| conn.upgrade());
    let Some(conn) = conn else {
        return Err(Failure::new(
            ACP_ERR_ALREADY_ANSWERED,
            "this responder was already answered, or its connection is gone",
        ));
    };
    // Checked once, here (`json_arg`): the engine does not read it again.
    match conn.host.respond_json(token, outcome) {
        Ok(true) => Ok(()),
        Ok(false) if conn.host.is_closed() => Err(Failure::new(ACP_ERR_CLOSED, "the connection is closed")),
        Ok(false) => Err(Failure::new(
            ACP_ERR_ALREADY_ANSWERED,
            "the peer cancelled this request; it was answered -32800 and this answer was not sent",
        )),
        Err(error) => Err(Failure::from(error)),
    }
}

/// Answer a request with its result (`result_json`: a JSON value; NULL or
/// "" mean `null`, which an ACP side sends as `{}`). Any thread, once; the
/// answer is queued before this returns, so it goes out before anything
/// sent afterwards. The responder is spent afterwards (also on failure,
/// except ACP_ERR_INVALID_JSON and ACP_ERR_NULL_ARGUMENT, which leave it
/// unanswered).
#[no_mangle]
pub unsafe extern "C" fn acp_responder_ok(
    responder: *mut acp_responder,
    result_json: *const c_char,
) -> acp_result {
    guard(|| {
        let result = json_arg(result_json, "result_json")?;
        answer(responder, Ok(result.unwrap_or(RawValue::NULL)))
    })
}

/// Answer a request with a JSON-RPC error (`data_json` may be NULL). Any
/// thread, once. The responder is spent afterwards.
#[no_mangle]
pub unsafe extern "C" fn acp_responder_error(
    responder: *mut acp_responder,
    code: i64,
    message: *const c_char,
    data_json: *const c_char,
) -> acp_result {
    guard(|| {
        let message = str_arg(message, "message")?;
        let data = json_arg(data_json, "data_json")?;
        let mut error = RequestError::new(code, message);
        if let Some(data) = data {
            let data: serde_json::Value = serde_json::from_str(data.get()).expect("already parsed");
            error = error.with_data(data);
        }
        answer(responder, Err(error))
    })
}

/// Answer a request with a JSON-RPC error object, `error_json`:
/// `{"code", "message", "data"?}`, as `ACP_ERR_REQUEST_FAILED` hands one
/// out (`acp_connection_request`, `acp_mcp_provider_start`). Any thread,
/// once; `ACP_ERR_INVALID_ARGUMENT` (the responder unspent) when it is not
/// such an object.
#[no_mangle]
pub unsafe extern "C" fn acp_responder_error_json(
    responder: *mut acp_responder,
    error_json: *const c_char,
) -> acp_result {
    guard(|| {
        let text = json_arg(error_json, "error_json")?.map_or("null", RawValue::get);
        let error: RequestError = serde_json::from_str(text).map_err(|error| {
            Failure::new(
                ACP_ERR_INVALID_ARGUMENT,
                format!("error_json is no JSON-RPC error object: {error}"),
            )
        })?;
        answer(responder, Err(error))
    })
}

/// True once the request no longer wants an answer: the peer sent
/// `$/cancel_request` for it (the engine answered -32800), or the
/// connection closed. Long-running handlers poll this to stop early;
/// answering afterwards sends nothing and returns ACP_ERR_ALREADY_ANSWERED.
/// Unknown or spent responders count as cancelled.
#[no_mangle]
pub extern "C" fn acp_responder_is_cancelled(responder: *const acp_responder) -> bool {
    guard_value(true, || {
        let token = responder as u64;
        let conn = with_registry(|registry| registry.get(&token).and_then(Weak::upgrade));
        conn.is_none_or(|conn| !conn.host.is_pending(token))
    })
}
