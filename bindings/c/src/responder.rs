//! Responders: how C answers an inbound request, now or later, from any
//! thread. A responder pointer is a token looked up in a registry and never
//! dereferenced, so answering twice (or after the connection is gone) is a
//! result code, not a crash.

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use acp_engine::{CancellationToken, RawJson, RequestError, RespondError, Responder};
use tokio::sync::oneshot;

use crate::ffi::{acp_result, guard, guard_value, json_arg, str_arg, Failure};

/// An inbound request waiting for its answer. Opaque: answer it exactly
/// once with `acp_responder_ok` or `acp_responder_error`.
pub struct acp_responder {
    _private: [u8; 0],
}

struct Entry {
    /// Queues the answer on the wire, synchronously, once.
    responder: Responder,
    cancellation: CancellationToken,
    connection: u64,
    /// Tells the engine's handler future the request is answered.
    answered: oneshot::Sender<()>,
}

static RESPONDERS: Mutex<Option<HashMap<u64, Entry>>> = Mutex::new(None);
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

fn with_registry<T>(body: impl FnOnce(&mut HashMap<u64, Entry>) -> T) -> T {
    let mut registry = RESPONDERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    body(registry.get_or_insert_with(HashMap::new))
}

/// A new responder for a request of `connection`; the receiver resolves
/// once C answered (and fails if the responder is dropped unanswered).
pub(crate) fn register(
    connection: u64,
    responder: Responder,
    cancellation: CancellationToken,
) -> (*mut acp_responder, oneshot::Receiver<()>) {
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let (answered, on_answer) = oneshot::channel();
    let entry = Entry {
        responder,
        cancellation,
        connection,
        answered,
    };
    with_registry(|registry| registry.insert(token, entry));
    (token as *mut acp_responder, on_answer)
}

/// Answer every request of `connection` C has not answered with -32603,
/// now (before the connection closes), and forget their responders.
pub(crate) fn abandon_all(connection: u64) {
    let abandoned: Vec<Entry> = with_registry(|registry| {
        let tokens: Vec<u64> = registry
            .iter()
            .filter(|(_, entry)| entry.connection == connection)
            .map(|(token, _)| *token)
            .collect();
        tokens.iter().filter_map(|token| registry.remove(token)).collect()
    });
    for entry in abandoned {
        let _ = entry
            .responder
            .blocking_respond(Err(RequestError::internal_error()));
    }
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
    let sent = entry.responder.blocking_respond(outcome);
    let _ = entry.answered.send(());
    sent.map_err(|error| match error {
        RespondError::AlreadyAnswered => Failure::new(
            acp_result::ACP_ERR_ALREADY_ANSWERED,
            "the peer cancelled this request; it was answered -32800 and this answer was not sent",
        ),
        RespondError::Closed => Failure::new(acp_result::ACP_ERR_CLOSED, "the connection is closed"),
    })
}

/// Answer a request with its result (`result_json`: a JSON value; NULL or
/// "" mean `null`). Any thread, once; the answer is queued before this
/// returns, so it goes out before anything sent afterwards. The responder
/// is spent afterwards (also on failure, except ACP_ERR_INVALID_JSON and
/// ACP_ERR_NULL_ARGUMENT, which leave it unanswered).
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
/// `$/cancel_request` for it (the engine answered -32800), or the
/// connection closed. Long-running handlers poll this to stop early;
/// answering afterwards sends nothing and returns ACP_ERR_ALREADY_ANSWERED.
/// Unknown or spent responders count as cancelled.
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

/// Forget one responder without answering (the caller answers otherwise).
pub(crate) fn forget(responder: *mut acp_responder) {
    with_registry(|registry| registry.remove(&(responder as u64)));
}
