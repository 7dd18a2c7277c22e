//! The `acp_text_connection_*` calls: a connection whose events are taken as
//! the engine's JSON batches on one thread of the host's, and whose sends
//! never block (the core's `host::threaded::TextConnection`). Kotlin's
//! package takes every message through these, with JNA's direct mapping:
//! one crossing per message, and per batch of events.

use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use acp_engine::host;
use acp_engine::host::threaded::TextConnection;
use acp_engine::{RequestError, Transport};

use crate::calls::{connect_in, owned_fds, spawn_transport, url_transport};
use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, guard, guard_value, set_last_failure, Failure};
use crate::options::{acp_options, acp_remote_options, Settings};

/// A text connection (`acp_text_connection_spawn`, `_fds`, `_stdio`,
/// `_connect_url`): events come as JSON text, a batch per
/// `acp_text_connection_next_events`, and sends never block. Opaque. Its
/// functions may be called from any thread,
/// `acp_text_connection_next_events` from one thread at a time;
/// `acp_text_connection_free` must be the last call.
pub struct acp_text_connection {
    _private: [u8; 0],
}

/// `acp_text_connection_send_*`: queued for writing.
pub const ACP_TEXT_QUEUED: i64 = -1;
/// `acp_text_connection_*`: refused; `acp_last_error_message` and
/// `acp_last_error_json` say why.
pub const ACP_TEXT_REFUSED: i64 = -2;
/// `acp_text_connection_next_events`: every event was taken, the close
/// among them.
pub const ACP_TEXT_END: i64 = -3;

/// The C pointer of a new reference to `text`.
pub fn text_connection_pointer(text: Arc<TextConnection>) -> *const acp_text_connection {
    Arc::into_raw(text).cast()
}

/// The connection behind `connection`, borrowed for the call.
///
/// # Safety
/// `connection` is NULL or a pointer from this library not yet freed.
unsafe fn borrowed<'a>(connection: *const acp_text_connection) -> Result<&'a TextConnection, Failure> {
    connection
        .cast::<TextConnection>()
        .as_ref()
        .ok_or_else(|| Failure::null("connection"))
}

/// UTF-8 text of `len` bytes at `bytes`; None for NULL.
unsafe fn text_arg<'a>(bytes: *const u8, len: usize, name: &str) -> Result<Option<&'a str>, Failure> {
    if bytes.is_null() {
        return Ok(None);
    }
    std::str::from_utf8(std::slice::from_raw_parts(bytes, len))
        .map(Some)
        .map_err(|_| {
            Failure::rpc(
                ACP_ERR_INVALID_UTF8,
                format!("{name} is not UTF-8"),
                RequestError::invalid_params(),
            )
        })
}

/// The connection, method and params of a send.
unsafe fn message_args<'a>(
    connection: *const acp_text_connection,
    method: *const u8,
    method_len: usize,
    params: *const u8,
    params_len: usize,
) -> Result<(&'a TextConnection, &'a str, Option<&'a str>), Failure> {
    let text = borrowed(connection)?;
    let method = text_arg(method, method_len, "method")?.unwrap_or("");
    Ok((text, method, text_arg(params, params_len, "params")?))
}

/// Run `body` behind the panic guard: its value, or `ACP_TEXT_REFUSED`
/// with the failure kept as this thread's last error.
fn numbered_call(body: impl FnOnce() -> Result<i64, Failure>) -> i64 {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        Err(Failure::new(
            ACP_ERR_INTERNAL,
            "internal error in acp-engine (a panic was caught at the C boundary)",
        ))
    });
    outcome.unwrap_or_else(|failure| {
        set_last_failure(&failure);
        ACP_TEXT_REFUSED
    })
}

/// Start a text connection with the options C passed.
unsafe fn start_text(
    transport: impl FnOnce(&Settings) -> Result<Transport, Failure>,
    options: *const acp_options,
    out: *mut *mut acp_text_connection,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null("out"));
    }
    *out = ptr::null_mut();
    let settings = Settings::read(options)?;
    let runtime = host::runtime();
    let text = connect_in(&runtime, &settings, transport, |transport, host_options| {
        TextConnection::connect(transport, host_options, &runtime)
    })?;
    *out = text_connection_pointer(Arc::new(text)).cast_mut();
    Ok(())
}

/// A text connection on this process's stdin/stdout (an agent launched by
/// its client).
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_stdio(
    options: *const acp_options,
    out: *mut *mut acp_text_connection,
) -> acp_result {
    guard(|| start_text(|_| Ok(Transport::stdio()), options, out))
}

/// A text connection to a spawned process (arguments as for
/// `acp_connection_spawn`).
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_spawn(
    argv: *const *const c_char,
    env: *const *const c_char,
    cwd: *const c_char,
    options: *const acp_options,
    out: *mut *mut acp_text_connection,
) -> acp_result {
    guard(|| start_text(|settings| spawn_transport(argv, env, cwd, settings), options, out))
}

/// A text connection to a remote agent at `url` (arguments as for
/// `acp_connection_connect_url`): made in the background, a failure closes
/// it with the reason (the close event).
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_connect_url(
    url: *const c_char,
    remote: *const acp_remote_options,
    options: *const acp_options,
    out: *mut *mut acp_text_connection,
) -> acp_result {
    guard(|| start_text(url_transport(url, remote)?, options, out))
}

/// A text connection over two file descriptors (owned as by
/// `acp_connection_fds`).
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_fds(
    read_fd: c_int,
    write_fd: c_int,
    options: *const acp_options,
    out: *mut *mut acp_text_connection,
) -> acp_result {
    guard(|| {
        let (read, write) = owned_fds(read_fd, write_fd, out.is_null())?;
        start_text(move |_| Ok(Transport::from_fds(read, write)), options, out)
    })
}

/// Send a notification: `method` is `method_len` bytes of UTF-8, `params`
/// (NULL for none) `params_len` bytes of JSON. Returns `ACP_TEXT_QUEUED`
/// when it is queued for writing, a ticket (>= 0) when the peer is not
/// reading and the send is parked (an `ACP_EVENT_WRITTEN` event, `[written,
/// ticket, ok]`, says when it was queued), or `ACP_TEXT_REFUSED`: params
/// that fail the schema, a closed connection (`acp_last_error_json` gives
/// the JSON-RPC error).
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_send_notification(
    connection: *const acp_text_connection,
    method: *const u8,
    method_len: usize,
    params: *const u8,
    params_len: usize,
) -> i64 {
    numbered_call(|| {
        let (text, method, params) = message_args(connection, method, method_len, params, params_len)?;
        let ticket = text.send_notification(method, params)?;
        Ok(ticket.map_or(ACP_TEXT_QUEUED, |ticket| {
            i64::try_from(ticket).unwrap_or(i64::MAX)
        }))
    })
}

/// Send a request (arguments as for `acp_text_connection_send_notification`).
/// Returns its id (>= 0): its outcome arrives among the events (`[result,
/// id, result]` or `[error, id, error]`). `ACP_TEXT_REFUSED` when it is
/// refused.
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_send_request(
    connection: *const acp_text_connection,
    method: *const u8,
    method_len: usize,
    params: *const u8,
    params_len: usize,
) -> i64 {
    numbered_call(|| {
        let (text, method, params) = message_args(connection, method, method_len, params, params_len)?;
        Ok(text.send_request(method, params)?)
    })
}

/// Answer inbound request `token` (from its `[request, token, method,
/// params, id]` event; `id` is the peer's JSON-RPC id): `body` is `body_len` bytes, the result's JSON, or with
/// `is_error` non-zero the error's (`{"code", "message", "data"?}`). Returns
/// 1 when the answer was sent, 0 when none is wanted any more (cancelled,
/// closed), `ACP_TEXT_REFUSED` for a result that is not JSON (the peer then
/// gets -32603 with the reason).
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_respond(
    connection: *const acp_text_connection,
    token: u64,
    body: *const u8,
    body_len: usize,
    is_error: c_int,
) -> i64 {
    numbered_call(|| {
        let text = borrowed(connection)?;
        let body = text_arg(body, body_len, "body")?.unwrap_or("null");
        Ok(i64::from(text.respond(token, body, is_error != 0)?))
    })
}

/// Wait for the next batch of events: a JSON array of event arrays, each
/// starting with its kind (`acp_event_kind`), in the order the engine
/// released them. Returns the batch's length in bytes: written to `buffer`
/// when it fits in `capacity`; otherwise nothing is written and the same
/// batch comes with the next call, given a buffer that large. After the
/// batch with the close (`[closed, reason]`) was taken, the next call
/// returns `ACP_TEXT_END` (and the connection counts as finished). One
/// thread at a time calls it.
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_next_events(
    connection: *const acp_text_connection,
    buffer: *mut u8,
    capacity: usize,
) -> i64 {
    numbered_call(|| {
        let text = borrowed(connection)?;
        let Some(batch) = text.next_batch() else {
            return Ok(ACP_TEXT_END);
        };
        let len = batch.len();
        if len > capacity || buffer.is_null() {
            text.hold(batch);
        } else {
            ptr::copy_nonoverlapping(batch.as_ptr(), buffer, len);
        }
        Ok(i64::try_from(len).unwrap_or(i64::MAX))
    })
}

/// Close: pending requests fail, queued output is flushed, a spawned
/// process is reaped; the close arrives as the last event.
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_close(connection: *const acp_text_connection) {
    guard_value((), || {
        if let Ok(text) = borrowed(connection) {
            text.close();
        }
    })
}

/// Release the connection (closing it, if it is open). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn acp_text_connection_free(connection: *const acp_text_connection) {
    guard_value((), || {
        if !connection.is_null() {
            drop(Arc::from_raw(connection.cast::<TextConnection>()));
        }
    })
}
