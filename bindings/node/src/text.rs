//! JS strings read into reusable buffers for the send path (`notify`, `request`).
//!
//! napi-rs's `String` conversion asks V8 for the UTF-8 length first (a full pass over
//! the string), allocates, then copies. Here the copy goes straight into a buffer that
//! this thread keeps between calls; V8 is asked for the length only when a string did
//! not fit.

use std::cell::RefCell;
use std::os::raw::c_char;
use std::ptr;

use napi::{sys, Env, Error, JsValue, Result, Status, Unknown, ValueType};

thread_local! {
    /// The method name's buffer and the params' buffer.
    static BUFFERS: RefCell<(Vec<u8>, Vec<u8>)> = RefCell::new((Vec::with_capacity(64), Vec::with_capacity(4096)));
}

/// Calls `f` with `method` and `params` (None: `undefined` or `null`) as `&str`.
pub(crate) fn with_texts<T>(
    env: &Env,
    method: Unknown,
    params: Option<Unknown>,
    f: impl FnOnce(&str, Option<&str>) -> Result<T>,
) -> Result<T> {
    BUFFERS.with(|buffers| {
        let mut buffers = buffers.borrow_mut();
        let (method_buffer, params_buffer) = &mut *buffers;
        // SAFETY: values of this env, on its thread.
        let method = unsafe { read(env.raw(), method.raw(), method_buffer)? };
        let params = match params {
            Some(value) if !matches!(value.get_type()?, ValueType::Undefined | ValueType::Null) => {
                // SAFETY: as above.
                Some(unsafe { read(env.raw(), value.raw(), params_buffer)? })
            }
            _ => None,
        };
        f(method, params)
    })
}

/// Copies the JS string `value` into `buffer` as UTF-8.
///
/// # Safety
/// `env` and `value` must be live values of the calling thread's env.
unsafe fn read(env: sys::napi_env, value: sys::napi_value, buffer: &mut Vec<u8>) -> Result<&str> {
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
            return Err(Error::new(Status::StringExpected, "expected a string"));
        }
        if length + 1 < capacity {
            // SAFETY: V8 wrote `length` bytes.
            unsafe { buffer.set_len(length) };
            // V8 writes whole characters, replacing invalid ones: this is UTF-8.
            return std::str::from_utf8(buffer).map_err(|_| Error::new(Status::InvalidArg, "invalid UTF-8"));
        }
        // It may have been cut: ask for the whole length, then read again.
        // SAFETY: a length query (null buffer).
        let status = unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut length) };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::StringExpected, "expected a string"));
        }
        buffer.reserve(length + 2);
    }
}
