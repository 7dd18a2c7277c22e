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

use crate::{engine, AcpError};

/// `acp_uniffi_send_notification`: queued for writing.
const SENT: i64 = -1;
/// `acp_uniffi_send_notification`: refused; [`take_send_refusal`] says why.
const REFUSED: i64 = -2;

fn registry() -> &'static RwLock<HashMap<u64, Arc<HostConnection>>> {
    static REGISTRY: OnceLock<RwLock<HashMap<u64, Arc<HostConnection>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

thread_local! {
    static REFUSAL: RefCell<Option<CoreError>> = const { RefCell::new(None) };
}

/// Make `host` reachable from [`acp_uniffi_send_notification`] by the
/// returned number, until [`unregister`].
pub(crate) fn register(host: &Arc<HostConnection>) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(id, host.clone());
    id
}

pub(crate) fn unregister(id: u64) {
    registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .remove(&id);
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
    let send = AssertUnwindSafe(|| {
        let text = |bytes: *const u8, len: usize| {
            // SAFETY: the caller's promise above.
            let bytes = unsafe { std::slice::from_raw_parts(bytes, len) };
            std::str::from_utf8(bytes).map_err(|_| CoreError::invalid_params())
        };
        let host = registry()
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&connection)
            .cloned()
            .ok_or_else(|| CoreError::connection_closed("closed"))?;
        let method = if method.is_null() {
            Ok("")
        } else {
            text(method, method_len)
        }?;
        let params = if params.is_null() {
            None
        } else {
            Some(text(params, params_len)?)
        };
        let _guard = engine().enter();
        host.send_notification(method, params)
    });
    let outcome = catch_unwind(send).unwrap_or_else(|_| Err(CoreError::internal_error()));
    match outcome {
        Ok(None) => SENT,
        Ok(Some(ticket)) => i64::try_from(ticket).unwrap_or(i64::MAX),
        Err(error) => {
            REFUSAL.with(|refusal| *refusal.borrow_mut() = Some(error));
            REFUSED
        }
    }
}

/// Throw why this thread's last `acp_uniffi_send_notification` was refused.
#[uniffi::export]
pub fn take_send_refusal() -> Result<(), AcpError> {
    match REFUSAL.with(|refusal| refusal.borrow_mut().take()) {
        Some(error) => Err(error.into()),
        None => Err(CoreError::internal_error().into()),
    }
}
