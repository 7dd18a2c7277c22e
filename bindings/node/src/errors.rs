//! Errors as JS sees them: a `RequestError` from the engine becomes an
//! `Error` whose `code` is the JSON-RPC code (a number) and whose `dataJson`
//! is its `data` as JSON text; the JS layer (`errors.ts`) turns that into its
//! `RequestError`. A spawn failure is an `Error` with the system's code
//! (`ENOENT`, ...), as Node's own `child_process` reports one.

use std::ffi::CString;
use std::ptr;

use acp_engine::RequestError;
use napi::bindgen_prelude::JsObjectValue;
use napi::{sys, Env, Error, Status};

/// Build the JS error for `error` (on the JS thread of `env`); null if the
/// env cannot make one (it is tearing down).
///
/// # Safety
/// `env` is the calling thread's live env.
pub(crate) unsafe fn js_request_error(env: sys::napi_env, error: &RequestError) -> sys::napi_value {
    let message = CString::new(error.message.as_str()).unwrap_or_else(|_| c"invalid message".to_owned());
    let data = error.data.as_ref().map(|data| data.to_string());
    // SAFETY: values of this env, made and used on its thread.
    unsafe {
        let mut text = ptr::null_mut();
        let mut object = ptr::null_mut();
        if sys::napi_create_string_utf8(
            env,
            message.as_ptr(),
            message.as_bytes().len() as isize,
            &mut text,
        ) != sys::Status::napi_ok
            || sys::napi_create_error(env, ptr::null_mut(), text, &mut object) != sys::Status::napi_ok
        {
            return ptr::null_mut();
        }
        let mut code = ptr::null_mut();
        sys::napi_create_int64(env, error.code, &mut code);
        sys::napi_set_named_property(env, object, c"code".as_ptr(), code);
        if let Some(data) = data {
            let mut value = ptr::null_mut();
            sys::napi_create_string_utf8(env, data.as_ptr().cast(), data.len() as isize, &mut value);
            sys::napi_set_named_property(env, object, c"dataJson".as_ptr(), value);
        }
        object
    }
}

/// `error` thrown from a `#[napi]` method.
pub(crate) fn request_error(env: &Env, error: &RequestError) -> Error {
    // SAFETY: `#[napi]` methods run on the JS thread of `env`.
    let object = unsafe { js_request_error(env.raw(), error) };
    if object.is_null() || unsafe { sys::napi_throw(env.raw(), object) } != sys::Status::napi_ok {
        return Error::new(Status::GenericFailure, error.message.clone());
    }
    // Thrown already: napi-rs leaves a pending exception as it is.
    Error::from_status(Status::PendingException)
}

/// A failure to start the agent, with the system's error code.
pub(crate) fn spawn_error(env: &Env, error: &std::io::Error) -> Error {
    use std::io::ErrorKind;
    let code = match error.kind() {
        ErrorKind::NotFound => "ENOENT",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::InvalidInput => "EINVAL",
        ErrorKind::ResourceBusy => "EBUSY",
        _ => "ESPAWN",
    };
    let thrown = env
        .create_error(Error::new(Status::GenericFailure, error.to_string()))
        .and_then(|mut object| {
            object.set_named_property("code", code)?;
            env.throw(object)
        });
    match thrown {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(_) => Error::new(Status::GenericFailure, error.to_string()),
    }
}
