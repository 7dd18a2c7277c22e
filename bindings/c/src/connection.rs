//! `acp_connection`: create (stdio, spawned process, file descriptors),
//! send, cancel, close, free, and the event queue.

use std::ffi::{c_char, c_int, c_void, OsStr};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::{
    Connection, IncomingNotification, IncomingRequest, PendingRequest, RawJson, RequestError, RequestId,
    SpawnOptions, Transport,
};
use tokio::runtime::Handle;

use crate::events::{acp_event, EventQueue, Next};
use crate::ffi::{acp_result, guard, guard_value, json_arg, owned_string, str_arg, structured, Failure};
use crate::handlers::{acp_error, acp_handlers, acp_response_callback, acp_side, Bridge, Delivery, UserData};
use crate::{responder, runtime};

/// A connection to a peer. Opaque; every function on it may be called from
/// any thread, except that `acp_connection_free` must be the last call.
pub struct acp_connection {
    id: u64,
    connection: Connection,
    bridge: Arc<Bridge>,
    runtime: Handle,
    /// The runtime generation (see `acp_shutdown`).
    generation: u64,
    /// The spawned process, if any.
    pid: Option<u32>,
}

/// Settings for a new connection. A NULL `acp_options*` means all defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_options {
    /// Which side of ACP this connection plays (default RAW).
    pub side: acp_side,
    /// Bound on one inbound message in bytes (0: the default, 64 MiB).
    pub max_message_size: usize,
    /// acp_connection_spawn: how long a child may take to exit after its
    /// stdin closed, before it is killed (0: the default, 500 ms).
    pub exit_grace_ms: u32,
    /// Speak the unstable protocol too (schema/v1/schema.unstable.json):
    /// its methods pass the checks; otherwise they are unknown (-32601).
    pub unstable: bool,
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

unsafe fn start(
    transport: impl FnOnce(&acp_options) -> Result<Transport, Failure>,
    options: *const acp_options,
    handlers: *const acp_handlers,
    out: *mut *mut acp_connection,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::new(acp_result::ACP_ERR_NULL_ARGUMENT, "out is NULL"));
    }
    *out = ptr::null_mut();
    let options = options.as_ref().copied().unwrap_or(acp_options {
        side: acp_side::ACP_SIDE_RAW,
        max_message_size: 0,
        exit_grace_ms: 0,
        unstable: false,
    });
    let delivery = match handlers.as_ref() {
        Some(handlers) => Delivery::Callbacks(*handlers),
        None => Delivery::Events(Arc::new(EventQueue::default())),
    };
    let id = NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed);
    let bridge = Arc::new(Bridge {
        connection_id: id,
        side: options.side,
        protocol: if options.unstable {
            acp_engine::Protocol::Unstable
        } else {
            acp_engine::Protocol::Stable
        },
        delivery,
        ready: Default::default(),
        finished: Default::default(),
    });
    let (runtime, generation) = runtime::handle();
    // Transports register with the reactor: build them inside the runtime.
    let _entered = runtime.enter();
    let transport = transport(&options)?;
    let pid = transport.child_pid();
    // C hosts do not ignore SIGPIPE: writes made on their threads block it.
    let mut builder = Connection::builder().guard_sigpipe(true);
    if options.max_message_size > 0 {
        builder = builder.max_message_size(options.max_message_size);
    }
    let (on_request, on_notification) = (bridge.clone(), bridge.clone());
    let connection = builder
        .on_request(move |request: IncomingRequest| on_request.clone().handle_request(request))
        .on_notification(move |notification: IncomingNotification| {
            on_notification.clone().handle_notification(notification)
        })
        .connect_on(transport, &runtime);
    let watcher = (connection.clone(), bridge.clone());
    runtime.spawn(async move {
        let (connection, bridge) = watcher;
        connection.closed().await;
        bridge.closed(connection.close_reason().unwrap_or_default()).await;
        bridge.finished.cancel();
    });
    *out = Box::into_raw(Box::new(acp_connection {
        id,
        connection,
        bridge: bridge.clone(),
        runtime,
        generation,
        pid,
    }));
    // Only now may callbacks and events see the connection.
    bridge.ready.cancel();
    Ok(())
}

/// Serve on this process's stdin/stdout (an agent launched by its client).
/// `handlers` NULL selects the event queue (`acp_connection_next_event`).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_stdio(
    options: *const acp_options,
    handlers: *const acp_handlers,
    out: *mut *mut acp_connection,
) -> acp_result {
    guard(|| start(|_| Ok(Transport::stdio()), options, handlers, out))
}

/// Spawn a process and talk to it over its stdin/stdout (a client launching
/// its agent). `argv`: NULL-terminated, `argv[0]` the program (looked up in
/// PATH). `env`: NULL or NULL-terminated "KEY=VALUE" entries added to the
/// inherited environment. `cwd`: NULL for ours. The child's stderr is ours;
/// it is reaped when the connection closes (killed if it has not exited
/// half a second after its stdin closed).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_spawn(
    argv: *const *const c_char,
    env: *const *const c_char,
    cwd: *const c_char,
    options: *const acp_options,
    handlers: *const acp_handlers,
    out: *mut *mut acp_connection,
) -> acp_result {
    guard(|| {
        let spawn = |options: &acp_options| {
            let argv = string_list(argv, "argv")?;
            let Some((program, args)) = argv.split_first() else {
                return Err(Failure::new(
                    acp_result::ACP_ERR_INVALID_ARGUMENT,
                    "argv is empty",
                ));
            };
            let mut spawn =
                SpawnOptions::new(OsStr::from_bytes(program)).args(args.iter().map(|a| OsStr::from_bytes(a)));
            if !env.is_null() {
                for entry in string_list(env, "env")? {
                    let Some(split) = entry.iter().position(|b| *b == b'=') else {
                        return Err(Failure::new(
                            acp_result::ACP_ERR_INVALID_ARGUMENT,
                            "env entries are KEY=VALUE",
                        ));
                    };
                    spawn = spawn.env(
                        OsStr::from_bytes(&entry[..split]),
                        OsStr::from_bytes(&entry[split + 1..]),
                    );
                }
            }
            if !cwd.is_null() {
                spawn = spawn.cwd(str_arg(cwd, "cwd")?);
            }
            if options.exit_grace_ms > 0 {
                spawn = spawn.exit_grace(Duration::from_millis(options.exit_grace_ms.into()));
            }
            let program = String::from_utf8_lossy(program).into_owned();
            Transport::spawn(spawn)
                .map_err(|error| Failure::new(acp_result::ACP_ERR_IO, format!("spawn {program}: {error}")))
        };
        start(spawn, options, handlers, out)
    })
}

/// Talk over two file descriptors. Unless `out` is NULL or a descriptor is
/// negative (then nothing is touched), the library owns both from this
/// call on and closes them (with the connection, or at once on failure).
/// Pipes and sockets work best; pass one socket as two duplicates (dup).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_fds(
    read_fd: c_int,
    write_fd: c_int,
    options: *const acp_options,
    handlers: *const acp_handlers,
    out: *mut *mut acp_connection,
) -> acp_result {
    guard(|| {
        if out.is_null() {
            return Err(Failure::new(acp_result::ACP_ERR_NULL_ARGUMENT, "out is NULL"));
        }
        if read_fd < 0 || write_fd < 0 {
            return Err(Failure::new(
                acp_result::ACP_ERR_INVALID_ARGUMENT,
                "negative file descriptor",
            ));
        }
        let (read, write) = (OwnedFd::from_raw_fd(read_fd), OwnedFd::from_raw_fd(write_fd));
        start(
            move |_| Ok(Transport::from_fds(read, write)),
            options,
            handlers,
            out,
        )
    })
}

/// A NULL-terminated array of C strings, as bytes.
unsafe fn string_list(list: *const *const c_char, name: &str) -> Result<Vec<Vec<u8>>, Failure> {
    if list.is_null() {
        return Err(Failure::new(
            acp_result::ACP_ERR_NULL_ARGUMENT,
            format!("{name} is NULL"),
        ));
    }
    let mut items = Vec::new();
    let mut cursor = list;
    while !(*cursor).is_null() {
        items.push(std::ffi::CStr::from_ptr(*cursor).to_bytes().to_vec());
        cursor = cursor.add(1);
    }
    Ok(items)
}

unsafe fn connection_arg<'a>(connection: *const acp_connection) -> Result<&'a acp_connection, Failure> {
    connection
        .as_ref()
        .ok_or_else(|| Failure::new(acp_result::ACP_ERR_NULL_ARGUMENT, "connection is NULL"))
}

/// A connection whose runtime still runs (not cut off by `acp_shutdown`).
unsafe fn live_connection<'a>(connection: *const acp_connection) -> Result<&'a acp_connection, Failure> {
    let connection = connection_arg(connection)?;
    if runtime::alive(connection.generation) {
        Ok(connection)
    } else {
        Err(Failure::new(
            acp_result::ACP_ERR_CLOSED,
            "acp_shutdown stopped this connection's runtime",
        ))
    }
}

/// Method and params of an outbound message, checked before anything is
/// sent: JSON syntax, structured params, and (for AGENT/CLIENT) the schema.
unsafe fn outbound(
    connection: &acp_connection,
    method: *const c_char,
    params_json: *const c_char,
    request: bool,
) -> Result<(String, Option<RawJson>), Failure> {
    let method = str_arg(method, "method")?.to_owned();
    let params = json_arg(params_json, "params_json")?;
    structured(&params, "params_json")?;
    let checked = if request {
        connection
            .bridge
            .check_outbound_request(&method, params.as_deref())
    } else {
        connection
            .bridge
            .check_outbound_notification(&method, params.as_deref())
    };
    checked.map_err(|error| {
        Failure::new(
            acp_result::ACP_ERR_INVALID_ARGUMENT,
            format!("not sent: {method}: {error}"),
        )
    })?;
    Ok((method, params))
}

fn start_request(
    connection: &acp_connection,
    method: &str,
    params: &Option<RawJson>,
) -> Result<PendingRequest, Failure> {
    connection
        .connection
        .blocking_start_request(method, params)
        .map_err(Failure::from)
}

/// Send a request. Its answer goes to `callback` (on a worker thread), or,
/// if `callback` is NULL on an event-queue connection, to an
/// `ACP_EVENT_RESPONSE`. `params_json` may be NULL (no params).
/// `out_request_id` (may be NULL) receives the id for
/// `acp_connection_cancel_request`. Nothing is sent on a failure code.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_send_request(
    connection: *const acp_connection,
    method: *const c_char,
    params_json: *const c_char,
    callback: acp_response_callback,
    user_data: *mut c_void,
    out_request_id: *mut i64,
) -> acp_result {
    guard(|| {
        let connection = connection_arg(connection)?;
        let (method, params) = outbound(connection, method, params_json, true)?;
        let bridge = connection.bridge.clone();
        let runtime = connection.runtime.clone();
        let user_data = UserData(user_data);
        // Runs where the engine releases the response: in order with the
        // notifications around it.
        let on_response = move |id: RequestId, outcome: Result<RawJson, RequestError>| {
            let RequestId::Number(id) = id else { return };
            let outcome = outcome.map(|result| result.get().to_owned());
            deliver_response(&bridge, &runtime, id, outcome, callback, user_data);
        };
        let id = connection
            .connection
            .blocking_send_request_with(&method, &params, on_response)
            .map_err(Failure::from)?;
        let RequestId::Number(id) = id else {
            unreachable!("our ids are numbers")
        };
        if let Some(out) = out_request_id.as_mut() {
            *out = id;
        }
        Ok(())
    })
}

/// Hand a response to C: an event (queued right here, in wire order) or
/// the callback (on a worker thread).
fn deliver_response(
    bridge: &Bridge,
    runtime: &Handle,
    id: i64,
    outcome: Result<String, RequestError>,
    callback: acp_response_callback,
    user_data: UserData,
) {
    let Some(callback) = callback else {
        if let Delivery::Events(queue) = &bridge.delivery {
            queue.push_response(id, &outcome);
        }
        return;
    };
    runtime.spawn_blocking(move || {
        let user_data = user_data;
        match outcome {
            Ok(result) => {
                let result = crate::ffi::c_string(&result);
                unsafe { callback(user_data.0, id, result.as_ptr(), ptr::null()) };
            }
            Err(error) => {
                let message = crate::ffi::c_string(&error.message);
                let data = error.data.as_ref().map(|d| crate::ffi::c_string(&d.to_string()));
                let error = acp_error {
                    code: error.code,
                    message: message.as_ptr(),
                    data_json: data.as_ref().map_or(ptr::null(), |d| d.as_ptr()),
                };
                unsafe { callback(user_data.0, id, ptr::null(), &error) };
            }
        }
    });
}

/// Send a request and wait for its answer on this thread (up to
/// `timeout_ms`; negative: no limit). On `ACP_OK`, `*out_json` is the
/// result; on `ACP_ERR_REQUEST_FAILED` it is the JSON-RPC error object
/// `{"code","message","data"?}`; either way free it with `acp_string_free`.
/// On `ACP_ERR_TIMEOUT` the request is cancelled (`$/cancel_request`). Do
/// not call it from a notification callback (the answer could be queued
/// behind that very notification).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_request(
    connection: *const acp_connection,
    method: *const c_char,
    params_json: *const c_char,
    timeout_ms: i32,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        let connection = live_connection(connection)?;
        if out_json.is_null() {
            return Err(Failure::new(
                acp_result::ACP_ERR_NULL_ARGUMENT,
                "out_json is NULL",
            ));
        }
        *out_json = ptr::null_mut();
        let (method, params) = outbound(connection, method, params_json, true)?;
        let pending = start_request(connection, &method, &params)?;
        let outcome = if timeout_ms < 0 {
            Some(connection.runtime.block_on(pending))
        } else {
            let limit = Duration::from_millis(timeout_ms as u64);
            // Dropping the timed-out request sends $/cancel_request.
            connection
                .runtime
                .block_on(async { tokio::time::timeout(limit, pending).await.ok() })
        };
        match outcome {
            None => Err(Failure::new(
                acp_result::ACP_ERR_TIMEOUT,
                format!("{method}: no answer within {timeout_ms} ms"),
            )),
            Some(Ok(result)) => {
                *out_json = owned_string(result.get());
                Ok(())
            }
            Some(Err(error)) if error.is_connection_closed() => Err(Failure::closed(&error)),
            Some(Err(error)) => {
                *out_json = owned_string(&error.to_error_response().to_string());
                Err(Failure::new(
                    acp_result::ACP_ERR_REQUEST_FAILED,
                    format!("{method}: {error}"),
                ))
            }
        }
    })
}

/// Send a notification. `params_json` may be NULL. Nothing is sent on a
/// failure code.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_send_notification(
    connection: *const acp_connection,
    method: *const c_char,
    params_json: *const c_char,
) -> acp_result {
    guard(|| {
        let connection = connection_arg(connection)?;
        let (method, params) = outbound(connection, method, params_json, false)?;
        connection
            .connection
            .blocking_send_notification(&method, &params)
            .map_err(Failure::from)
    })
}

/// Cancel a request still waiting for its answer: its callback (or event)
/// gets error -32800 at once, the peer gets `$/cancel_request`, a late
/// answer is dropped. `ACP_ERR_INVALID_ARGUMENT` if it was not pending.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_cancel_request(
    connection: *const acp_connection,
    request_id: i64,
) -> acp_result {
    guard(|| {
        let connection = live_connection(connection)?;
        let id = RequestId::Number(request_id);
        let cancelled = connection
            .runtime
            .block_on(connection.connection.cancel_pending_request(&id, None));
        if cancelled {
            Ok(())
        } else {
            Err(Failure::new(
                acp_result::ACP_ERR_INVALID_ARGUMENT,
                format!("request {request_id} is not pending"),
            ))
        }
    })
}

/// The next event of a connection created without handlers, waiting up to
/// `timeout_ms` (negative: no limit). `ACP_OK` with `*out` set (free it
/// with `acp_event_free`), `ACP_ERR_TIMEOUT` with `*out` NULL.
/// `ACP_EVENT_CLOSED` is the last event; after it, this keeps timing out.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_next_event(
    connection: *const acp_connection,
    timeout_ms: i32,
    out: *mut *mut acp_event,
) -> acp_result {
    guard(|| {
        let connection = connection_arg(connection)?;
        if out.is_null() {
            return Err(Failure::new(acp_result::ACP_ERR_NULL_ARGUMENT, "out is NULL"));
        }
        *out = ptr::null_mut();
        let Delivery::Events(queue) = &connection.bridge.delivery else {
            return Err(Failure::new(
                acp_result::ACP_ERR_WRONG_MODE,
                "this connection has handlers, not an event queue",
            ));
        };
        let timeout = (timeout_ms >= 0).then(|| Duration::from_millis(timeout_ms as u64));
        match queue.next(timeout) {
            Next::Event(event) => {
                *out = event;
                Ok(())
            }
            Next::Timeout => Err(Failure::new(
                acp_result::ACP_ERR_TIMEOUT,
                "no event within the timeout",
            )),
        }
    })
}

/// Close the connection: requests C has not answered are answered -32603,
/// queued messages are flushed, pending outbound requests fail, the stream
/// is shut, a spawned process is reaped. Returns at once; see
/// `acp_connection_wait_closed`. Closing twice is harmless.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_close(connection: *const acp_connection) -> acp_result {
    guard(|| {
        close(connection_arg(connection)?);
        Ok(())
    })
}

fn close(connection: &acp_connection) {
    if connection.connection.is_closed() {
        return;
    }
    // Requests C has not answered get -32603, queued before the close so the
    // writer still flushes them.
    responder::abandon_all(connection.id);
    connection.connection.close();
}

/// Wait until the connection is closed and torn down (the peer hung up or
/// `acp_connection_close` was called; a spawned process reaped; `on_close`
/// returned, or `ACP_EVENT_CLOSED` queued), up to `timeout_ms` (negative: no
/// limit). `ACP_OK` or `ACP_ERR_TIMEOUT`. After `ACP_OK` no new callback
/// starts; one already running (C's own code) may still be finishing.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_wait_closed(
    connection: *const acp_connection,
    timeout_ms: i32,
) -> acp_result {
    guard(|| {
        let connection = connection_arg(connection)?;
        if !runtime::alive(connection.generation) {
            return Ok(()); // cut off by acp_shutdown: nothing is left running
        }
        let finished = connection.bridge.finished.cancelled();
        let done = if timeout_ms < 0 {
            connection.runtime.block_on(finished);
            true
        } else {
            let limit = Duration::from_millis(timeout_ms as u64);
            connection
                .runtime
                .block_on(async { tokio::time::timeout(limit, finished).await.is_ok() })
        };
        if done {
            Ok(())
        } else {
            Err(Failure::new(
                acp_result::ACP_ERR_TIMEOUT,
                "still open after the timeout",
            ))
        }
    })
}

/// The process id of the peer `acp_connection_spawn` started, or -1.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_pid(connection: *const acp_connection) -> i64 {
    guard_value(-1, || {
        connection.as_ref().and_then(|c| c.pid).map_or(-1, i64::from)
    })
}

/// True once the connection is closing or closed (later sends fail).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_is_closed(connection: *const acp_connection) -> bool {
    guard_value(true, || {
        connection.as_ref().is_none_or(|c| c.connection.is_closed())
    })
}

/// Close (if open) and free the connection. NULL is fine. Callbacks may
/// still be running when this returns; they must not use the pointer.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_free(connection: *mut acp_connection) {
    guard_value((), || {
        if connection.is_null() {
            return;
        }
        let connection = Box::from_raw(connection);
        if runtime::alive(connection.generation) {
            close(&connection);
        }
        responder::abandon_all(connection.id);
    })
}

/// Why the connection closed (NULL while open). Free with `acp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_close_reason(connection: *const acp_connection) -> *mut c_char {
    guard_value(ptr::null_mut(), || {
        connection
            .as_ref()
            .and_then(|c| c.connection.close_reason())
            .map_or(ptr::null_mut(), |reason| owned_string(&reason))
    })
}
