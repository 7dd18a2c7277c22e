//! Responders: how C answers an inbound request, now or later, from any
//! thread. A responder pointer is a token looked up in a registry and never
//! dereferenced, so answering twice (or after the connection is gone) is a
//! result code, not a crash.

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use acp_engine::{CancellationToken, RawJson, RequestError};
use tokio::sync::oneshot;

use crate::ffi::{acp_result, guard, guard_value, json_arg, str_arg, Failure};

/// An inbound request waiting for its answer. Opaque: answer it exactly
/// once with `acp_responder_ok` or `acp_responder_error`.
pub struct acp_responder {
    _private: [u8; 0],
}

struct Entry {
    answer: oneshot::Sender<Result<RawJson, RequestError>>,
    cancellation: CancellationToken,
    connection: u64,
}

static RESPONDERS: Mutex<Option<HashMap<u64, Entry>>> = Mutex::new(None);
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

fn with_registry<T>(body: impl FnOnce(&mut HashMap<u64, Entry>) -> T) -> T {
    let mut registry = RESPONDERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    body(registry.get_or_insert_with(HashMap::new))
}

/// A new responder for a request of `connection`; the receiver gets C's
/// answer (or an error if the responder is dropped unanswered).
pub(crate) fn register(
    connection: u64,
    cancellation: CancellationToken,
) -> (
    *mut acp_responder,
    oneshot::Receiver<Result<RawJson, RequestError>>,
) {
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let (answer, answered) = oneshot::channel();
    with_registry(|registry| {
        registry.insert(
            token,
            Entry {
                answer,
                cancellation,
                connection,
            },
        )
    });
    (token as *mut acp_responder, answered)
}

/// Forget the unanswered responders of a connection: each of their requests
/// is then answered -32603 by the engine (if it can still write).
pub(crate) fn abandon_all(connection: u64) {
    with_registry(|registry| registry.retain(|_, entry| entry.connection != connection));
}

fn answer(responder: *mut acp_responder, outcome: Result<RawJson, RequestError>) -> Result<(), Failure> {
    if responder.is_null() {
        return Err(Failure::new(
            acp_result::ACP_ERR_NULL_ARGUMENT,
            "responder is NULL",
        ));
    }
    let entry = with_registry(|registry| registry.remove(&(responder as u64)));
    let Some(entry) = entry else {
        return Err(Failure::new(
            acp_result::ACP_ERR_ALREADY_ANSWERED,
            "this responder was already answered, or its connection was freed",
        ));
    };
    entry.answer.send(outcome).map_err(|_| {
        Failure::new(
            acp_result::ACP_ERR_ALREADY_ANSWERED,
            "the request is no longer pending: the peer cancelled it (answered -32800) or the connection closed",
        )
    })
}

/// Answer a request with its result (`result_json`: a JSON value; NULL or
/// "" mean `null`). Any thread, once. The responder is spent afterwards.
#[no_mangle]
pub unsafe extern "C" fn acp_responder_ok(
    responder: *mut acp_responder,
    result_json: *const c_char,
) -> acp_result {
    guard(|| {
        let result = json_arg(result_json, "result_json")?;
        let result = result.unwrap_or_else(|| serde_json::value::to_raw_value(&()).expect("null"));
        answer(responder, Ok(result))
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

/// True once the request no longer wants an answer: the peer sent
/// `$/cancel_request` for it, or the connection closed. Long-running
/// handlers poll this to stop early (answering is still allowed, and
/// harmless). Unknown or spent responders count as cancelled.
#[no_mangle]
pub extern "C" fn acp_responder_is_cancelled(responder: *const acp_responder) -> bool {
    guard_value(true, || {
        with_registry(|registry| {
            registry
                .get(&(responder as u64))
                .is_none_or(|entry| entry.cancellation.is_cancelled())
        })
    })
}

/// Drop one responder unanswered (its request gets the caller's error).
pub(crate) fn abandon(responder: *mut acp_responder) {
    with_registry(|registry| registry.remove(&(responder as u64)));
}
