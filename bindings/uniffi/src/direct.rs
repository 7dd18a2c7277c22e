//! The send path as a plain C function beside the uniffi scaffolding.
//!
//! A uniffi call from Kotlin crosses through JNA several times (a
//! `RustBuffer` for each string, the call, a buffer for the result, its
//! release) and JNA allocates a tracked native block for every status
//! structure: about 70 µs per notification on the JVM. A notification
//! loop is the hottest thing an agent does, so `sendNotification` calls
//! [`acp_uniffi_send_notification`] through JNA's direct mapping instead:
//! one crossing, UTF-8 bytes in, a number out. The refusal's detail, when
//! there is one, is fetched with the uniffi call [`take_send_refusal`] on
//! the same thread.
//!
//! Connections are found by a number from [`register`], not by pointer, so
//! a stale number from the foreign side finds nothing instead of freed
//! memory.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use acp_engine::host::HostConnection;
use acp_engine::RequestError as CoreError;

use crate::pull::EventPull;
use crate::{engine, AcpError};

/// `acp_uniffi_send_notification`: queued for writing.
const SENT: i64 = -1;
/// `acp_uniffi_send_notification`: refused; [`take_send_refusal`] says why.
const REFUSED: i64 = -2;

/// What a connection's number finds.
pub(crate) struct Registered {
    pub(crate) host: Arc<HostConnection>,
    pub(crate) pull: EventPull,
}

fn registry() -> &'static RwLock<HashMap<u64, Arc<Registered>>> {
    static REGISTRY: OnceLock<RwLock<HashMap<u64, Arc<Registered>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

thread_local! {
    static REFUSAL: RefCell<Option<CoreError>> = const { RefCell::new(None) };
}

/// Make a connection reachable from the direct functions by the returned
/// number, until [`unregister`].
pub(crate) fn register(entry: Arc<Registered>) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(id, entry);
    id
}

/// The connection numbered `id`, unless it is unknown (or gone).
pub(crate) fn registered(id: u64) -> Option<Arc<Registered>> {
    registry()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&id)
        .cloned()
}

pub(crate) fn unregister(id: u64) {
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .remove(&id);
}

/// Find connection `connection` and run `send` on it inside the engine.
fn on_connection<T>(
    connection: u64,
    send: impl FnOnce(&HostConnection) -> Result<T, CoreError>,
) -> Result<T, CoreError> {
    catch_unwind(AssertUnwindSafe(|| {
        let entry = registered(connection).ok_or_else(|| CoreError::connection_closed("closed"))?;
        let _guard = engine().enter();
        send(&entry.host)
    }))
    .unwrap_or_else(|_| Err(CoreError::internal_error()))
}

/// A send's outcome as the direct functions' number: the value, or
/// [`REFUSED`] with the error kept for [`take_send_refusal`].
fn kept_refusal(outcome: Result<i64, CoreError>) -> i64 {
    outcome.unwrap_or_else(|error| {
        REFUSAL.with(|refusal| *refusal.borrow_mut() = Some(error));
        REFUSED
    })
}

/// UTF-8 text from the foreign side; None for NULL.
///
/// # Safety
/// `bytes` is NULL or points to `len` readable bytes.
unsafe fn text<'a>(bytes: *const u8, len: usize) -> Result<Option<&'a str>, CoreError> {
    if bytes.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::slice::from_raw_parts(bytes, len) };
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|_| CoreError::invalid_params())
}

/// Send a notification on connection `connection` (a number from
/// `NativeConnection.directId()`): `method` and `params` are UTF-8 bytes,
/// `params` NULL for none. Returns -1 when it is queued for writing, a
/// ticket (>= 0) for `waitWritten` when the peer is not reading and the
/// send is parked, or -2 when it is refused (invalid params, an unknown
/// connection, a closed one): then `takeSendRefusal()` on the same thread
/// throws the reason.
///
/// # Safety
/// `method` points to `method_len` readable bytes, and `params` (unless
/// NULL) to `params_len`.
#[no_mangle]
pub unsafe extern "C" fn acp_uniffi_send_notification(
    connection: u64,
    method: *const u8,
    method_len: usize,
    params: *const u8,
    params_len: usize,
) -> i64 {
    kept_refusal(on_connection(connection, |host| {
        // SAFETY: the caller's promise above.
        let (method, params) = unsafe { (text(method, method_len)?, text(params, params_len)?) };
        let ticket = host.send_notification(method.unwrap_or(""), params)?;
        Ok(ticket.map_or(SENT, |ticket| i64::try_from(ticket).unwrap_or(i64::MAX)))
    }))
}

/// Send a request on connection `connection` (arguments as for
/// `acp_uniffi_send_notification`). Returns its id (>= 0): its outcome
/// arrives among the connection's events (`RESULT` or `ERROR` with that
/// id). -2 when it is refused (`takeSendRefusal()` throws why).
///
/// # Safety
/// As for `acp_uniffi_send_notification`.
#[no_mangle]
pub unsafe extern "C" fn acp_uniffi_send_request(
    connection: u64,
    method: *const u8,
    method_len: usize,
    params: *const u8,
    params_len: usize,
) -> i64 {
    kept_refusal(on_connection(connection, |host| {
        // SAFETY: the caller's promise above.
        let (method, params) = unsafe { (text(method, method_len)?, text(params, params_len)?) };
        Ok(host.send_request(method.unwrap_or(""), params)?.0)
    }))
}

/// Answer inbound request `token` on connection `connection`: `body` is
/// the result's JSON text, or with `is_error` (non-zero) the error's
/// (`{"code", "message", "data"?}`). Returns 1 when the answer was sent, 0
/// when none is wanted any more (cancelled, closed), -2 when it is refused
/// (a result that is not JSON: the peer then gets -32603 with the reason).
///
/// # Safety
/// `body` points to `body_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn acp_uniffi_respond(
    connection: u64,
    token: u64,
    body: *const u8,
    body_len: usize,
    is_error: i32,
) -> i64 {
    // Nobody asks why an answer was refused: the peer is told (-32603).
    on_connection(connection, |host| {
        // SAFETY: the caller's promise above.
        let body = unsafe { text(body, body_len) }.unwrap_or(None).unwrap_or("null");
        let outcome = if is_error != 0 {
            Err(serde_json::from_str::<CoreError>(body).unwrap_or_else(|_| CoreError::internal_error()))
        } else {
            Ok(body)
        };
        host.respond(token, outcome).or_else(|error| {
            // A result that is not JSON: the handler's fault, -32603.
            let mut internal = CoreError::internal_error();
            internal.data = error.data.clone();
            host.respond(token, Err(internal))?;
            Err(error)
        })
    })
    .map_or(REFUSED, i64::from)
}

/// Throw why this thread's last `acp_uniffi_send_notification` was refused.
#[uniffi::export]
pub fn take_send_refusal() -> Result<(), AcpError> {
    match REFUSAL.with(|refusal| refusal.borrow_mut().take()) {
        Some(error) => Err(error.into()),
        None => Err(CoreError::internal_error().into()),
    }
}

/// Wait for the next batch of events of connection `connection` (a number
/// from `NativeConnection.directId()`): a JSON array of event arrays (see
/// `EventKinds`), in order. Returns its length in bytes: written to
/// `buffer` when it fits in `capacity`; otherwise nothing is written and
/// the same batch is returned by the next call, given a buffer that large.
/// Returns -3 once the batch with the close was taken and handled (the
/// call after it), or for an unknown connection. One thread per connection
/// calls it: the foreign side's event thread.
///
/// # Safety
/// `buffer` points to `capacity` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn acp_uniffi_next_events(connection: u64, buffer: *mut u8, capacity: usize) -> i64 {
    let taken = std::panic::catch_unwind(|| {
        let entry = registered(connection)?;
        let batch = entry.pull.next(&entry.host)?;
        let len = batch.len();
        if len > capacity || buffer.is_null() {
            entry.pull.hold(batch);
        } else {
            // SAFETY: the caller's promise; `len` fits.
            unsafe { std::ptr::copy_nonoverlapping(batch.as_ptr(), buffer, len) };
        }
        Some(i64::try_from(len).unwrap_or(i64::MAX))
    });
    taken.ok().flatten().unwrap_or(crate::pull::END)
}
