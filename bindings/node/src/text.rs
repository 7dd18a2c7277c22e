//! JS strings read into reusable buffers for the send path (`send.rs`).
//!
//! napi-rs's `String` conversion asks V8 for the UTF-8 length first (a full pass over
//! the string), allocates, then copies. Here the copy goes straight into a buffer that
//! this thread keeps between calls; V8 is asked for the length only when a string did
//! not fit.

use std::cell::RefCell;
use std::os::raw::c_char;
use std::ptr;

use napi::sys;

thread_local! {
    /// The method name's buffer and the params' buffer.
    static BUFFERS: RefCell<(Vec<u8>, Vec<u8>)> = RefCell::new((Vec::with_capacity(64), Vec::with_capacity(4096)));
}

/// Calls `f` with this thread's two text buffers.
pub(crate) fn with_buffers<T>(f: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>) -> T) -> T {
    BUFFERS.with(|buffers| {
        let mut buffers = buffers.borrow_mut();
        let (method, params) = &mut *buffers;
        f(method, params)
    })
}

/// Copies the JS string `value` into `buffer` as UTF-8.
///
/// # Safety
/// `env` and `value` must be live values of the calling thread's env.
pub(crate) unsafe fn read(
    env: sys::napi_env,
    value: sys::napi_value,
    buffer: &mut Vec<u8>,
) -> Result<&str, &'static str> {
    buffer.clear();
    loop {
        let capacity = buffer.capacity();
        let mut length = 0usize;
        // SAFETY: the buffer has `capacity` writable bytes; V8 writes at most
        // `capacity - 1` of them plus a NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                env,
                value,
                buffer.as_mut_ptr().cast::<c_char>(),
                capacity,
                &mut length,
            )
        };
        if status != sys::Status::napi_ok {
            return Err("expected a string");
        }
        if length + 1 < capacity {
            // SAFETY: V8 wrote `length` bytes.
            unsafe { buffer.set_len(length) };
            // V8 writes whole characters, replacing invalid ones: this is UTF-8.
            return std::str::from_utf8(buffer).map_err(|_| "invalid UTF-8");
        }
        // It may have been cut: ask for the whole length, then read again.
        // SAFETY: a length query (null buffer).
        let status = unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut length) };
        if status != sys::Status::napi_ok {
            return Err("expected a string");
        }
        buffer.reserve(length + 2);
    }
}
