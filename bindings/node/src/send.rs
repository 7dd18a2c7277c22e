//! The per-message sends (`notify`, `request`, `respond`) as plain N-API functions.
//!
//! A `#[napi]` class method costs more than the send itself: napi-rs 3 unwraps `this`
//! and records a native borrow under a process-wide lock on every call. These
//! functions carry their connection as the function's data instead, read their
//! arguments into reused buffers (`text.rs`), and return a number.

use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use acp_engine::host::{runtime, HostConnection};
use napi::sys;

use crate::text;

/// Which send a function makes.
#[derive(Clone, Copy)]
pub(crate) enum Send {
    /// `(method, params?) => ticket`: 0, or a ticket whose WRITTEN event follows.
    Notify,
    /// `(method, params?) => id`: the outcome arrives as an event.
    Request,
    /// `(token, result) => 1 | 0`: answer inbound request `token` with a result
    /// (JSON text); 0 if it needs no answer any more.
    Respond,
}

struct Sender {
    connection: Arc<HostConnection>,
    send: Send,
}

/// A new JS function making `send` on `connection`.
///
/// # Safety
/// `env` must be the calling thread's live env.
pub(crate) unsafe fn function(
    env: sys::napi_env,
    connection: Arc<HostConnection>,
    send: Send,
) -> napi::Result<sys::napi_value> {
    let name = match send {
        Send::Notify => "notify",
        Send::Request => "request",
        Send::Respond => "respond",
    };
    let data = Box::into_raw(Box::new(Sender { connection, send }));
    let mut function = ptr::null_mut();
    // SAFETY: valid env and name; `data` lives until the function's finalizer.
    let status = unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr().cast(),
            name.len() as isize,
            Some(call),
            data.cast(),
            &mut function,
        )
    };
    let status = if status == sys::Status::napi_ok {
        // SAFETY: as above; the finalizer frees `data` with the function.
        unsafe {
            sys::napi_add_finalizer(
                env,
                function,
                data.cast(),
                Some(finalize),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        }
    } else {
        status
    };
    if status != sys::Status::napi_ok {
        // SAFETY: not handed to JS.
        drop(unsafe { Box::from_raw(data) });
        return Err(napi::Error::new(
            napi::Status::from(status),
            "cannot create a send function",
        ));
    }
    Ok(function)
}

unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: the box made in `function`, finalized once.
    drop(unsafe { Box::from_raw(data.cast::<Sender>()) });
}

/// Why a send failed: a bad argument (a `TypeError`), or the engine refused it.
enum Failure {
    Argument(String),
    Engine(acp_engine::RequestError),
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::Argument(message.to_owned())
    }
}

unsafe extern "C" fn call(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: N-API calls this on the env's thread with its own callback info.
    let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { send(env, info) }))
        .unwrap_or_else(|_| Err(Failure::Argument("internal error: a send panicked".to_owned())));
    let mut result = ptr::null_mut();
    match outcome {
        // SAFETY: a number of this env.
        Ok(number) => unsafe {
            sys::napi_create_double(env, number, &mut result);
        },
        Err(Failure::Argument(message)) => {
            let message = CString::new(message).unwrap_or_else(|_| c"invalid message".to_owned());
            // SAFETY: a JS exception for this call to return with.
            unsafe { sys::napi_throw_type_error(env, ptr::null(), message.as_ptr()) };
        }
        // SAFETY: as above.
        Err(Failure::Engine(error)) => unsafe {
            let object = crate::errors::js_request_error(env, &error);
            if !object.is_null() {
                sys::napi_throw(env, object);
            }
        },
    }
    result
}

/// The send itself.
unsafe fn send(env: sys::napi_env, info: sys::napi_callback_info) -> Result<f64, Failure> {
    let mut argc = 2usize;
    let mut argv = [ptr::null_mut(); 2];
    let mut data = ptr::null_mut();
    // SAFETY: room for two arguments; missing ones read as `undefined`.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok {
        return Err("cannot read the arguments".into());
    }
    // SAFETY: the data this function was made with, alive while it is.
    let sender = unsafe { &*data.cast::<Sender>() };
    text::with_buffers(|first, second| {
        // Sends may write to the pipe from here, which needs the runtime's context.
        let _runtime = runtime().enter();
        let sent = match sender.send {
            Send::Notify | Send::Request => {
                // SAFETY (the reads below): the argument values of this call.
                let method = unsafe { text::read(env, argv[0], first) }?;
                let params = match argc >= 2 && unsafe { !nullish(env, argv[1]) } {
                    true => Some(unsafe { text::read(env, argv[1], second) }?),
                    false => None,
                };
                if let Send::Notify = sender.send {
                    let ticket = sender.connection.send_notification(method, params);
                    ticket.map(|ticket| ticket.map_or(0.0, |t| t as f64))
                } else {
                    let sent = sender.connection.send_request(method, params);
                    sent.map(|(id, _)| id as f64)
                }
            }
            Send::Respond => {
                let mut token = 0i64;
                // SAFETY (both reads): as above.
                if unsafe { sys::napi_get_value_int64(env, argv[0], &mut token) } != sys::Status::napi_ok {
                    return Err("expected a number".into());
                }
                let result = unsafe { text::read(env, argv[1], second) }?;
                let answered = sender.connection.respond(token as u64, Ok(result));
                answered.map(|answered| if answered { 1.0 } else { 0.0 })
            }
        };
        sent.map_err(Failure::Engine)
    })
}

/// Whether `value` is `undefined` or `null`.
unsafe fn nullish(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: a value of this env.
    unsafe { sys::napi_typeof(env, value, &mut kind) };
    kind == sys::ValueType::napi_undefined || kind == sys::ValueType::napi_null
}
