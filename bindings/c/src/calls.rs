//! The `acp_connection_*` calls: create (stdio, spawned process, remote URL, file descriptors),
//! send, request, cancel, take events, close, free. A connection is the
//! core's threaded driver (`conn.rs`) plus the C conversions: callbacks are
//! C's handler (`callbacks.rs`), events are C structs (`events.rs`).

use std::ffi::{c_char, c_int, c_void, OsStr};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_engine::host::threaded::{Driver, DriverOptions, Waiting};
use acp_engine::host::{self, HostOptions};
use acp_engine::{SpawnOptions, Transport};
use serde_json::value::RawValue;
use tokio::runtime::Handle;

use crate::conn::{connection_arg, live_connection, CHost, Conn, Reply};
use crate::connection::acp_connection;
use crate::events::{self, acp_event};
use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, guard, guard_value, json_arg, owned_string, str_arg, structured, Failure};
use crate::handlers::{acp_handlers, acp_response_callback, UserData};
use crate::options::{acp_options, acp_remote_options, Settings};

/// Start a connection with the settings C passed (read, and copied, first:
/// a failure there starts no transport).
pub(crate) unsafe fn start(
    transport: impl FnOnce(&Settings) -> Result<Transport, Failure>,
    options: *const acp_options,
    handlers: *const acp_handlers,
    out: *mut *mut acp_connection,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null("out"));
    }
    *out = ptr::null_mut();
    let settings = Settings::read(options)?;
    let handlers = acp_handlers::read(handlers)?;
    start_with(transport, settings, handlers, out)
}

/// Start a connection with settings and handlers already read (a
/// server's, for each connection it accepts).
pub(crate) unsafe fn start_with(
    transport: impl FnOnce(&Settings) -> Result<Transport, Failure>,
    settings: Settings,
    handlers: Option<acp_handlers>,
    out: *mut *mut acp_connection,
) -> Result<(), Failure> {
    let conn = open_with(transport, settings, handlers, out)?;
    // Only now, with the connection handed to C, may callbacks run.
    conn.start();
    Ok(())
}

/// `start_with` without the start: `*out` is written, no callback runs
/// until `start` (a proxy hands C both of its connections first).
pub(crate) unsafe fn open_with(
    transport: impl FnOnce(&Settings) -> Result<Transport, Failure>,
    settings: Settings,
    handlers: Option<acp_handlers>,
    out: *mut *mut acp_connection,
) -> Result<Arc<Conn>, Failure> {
    if out.is_null() {
        return Err(Failure::null("out"));
    }
    *out = ptr::null_mut();
    let (runtime, generation) = host::runtime_and_generation();
    let options = DriverOptions {
        callbacks: handlers.is_some(),
        quick_replies: settings.quick_response_callbacks,
    };
    let handler = CHost { handlers, generation };
    let conn = connect_in(&runtime, &settings, transport, |transport, host_options| {
        Driver::connect(transport, host_options, handler, options, &runtime)
    })?;
    *out = Arc::into_raw(conn.clone()).cast_mut().cast();
    Ok(conn)
}

/// What every C connection's start shares (`acp_connection_*` and
/// `acp_text_connection_*`): the transport built inside the library's
/// runtime (transports register with its reactor), then `connect` with the
/// settings' host options as C hosts need them (C hosts do not ignore
/// SIGPIPE).
pub(crate) fn connect_in<T>(
    runtime: &Handle,
    settings: &Settings,
    transport: impl FnOnce(&Settings) -> Result<Transport, Failure>,
    connect: impl FnOnce(Transport, HostOptions) -> std::io::Result<T>,
) -> Result<T, Failure> {
    let _entered = runtime.enter();
    let transport = transport(settings)?;
    let host_options = HostOptions {
        guard_sigpipe: true,
        ..settings.host.clone()
    };
    connect(transport, host_options).map_err(|error| Failure::new(ACP_ERR_IO, error.to_string()))
}

/// Serve on this process's stdin/stdout (an agent launched by its client).
/// `handlers` NULL makes an event connection (`acp_connection_next_events`).
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
/// `exit_grace_ms` after its stdin closed).
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
        start(
            |settings| spawn_transport(argv, env, cwd, settings),
            options,
            handlers,
            out,
        )
    })
}

/// A client of a remote agent at `url`: `ws://` or `wss://` (WebSocket),
/// `http://` or `https://` (Streamable HTTP), as `acp-engine serve` and the
/// official SDKs' servers serve them. `remote` may be NULL (no token, the
/// system's CA roots). Returns at once; the connection is made in the
/// background, and a failure to make it closes the connection with the
/// reason (`on_close`, or a `CLOSED` event), failing every request sent
/// meanwhile.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_connect_url(
    url: *const c_char,
    remote: *const acp_remote_options,
    options: *const acp_options,
    handlers: *const acp_handlers,
    out: *mut *mut acp_connection,
) -> acp_result {
    guard(|| start(url_transport(url, remote)?, options, handlers, out))
}

/// The transport of `acp_*_connect_url`: `url` and `remote` as documented
/// there, read now; dialled when the connection starts.
pub(crate) unsafe fn url_transport<'a>(
    url: *const c_char,
    remote: *const acp_remote_options,
) -> Result<impl FnOnce(&Settings) -> Result<Transport, Failure> + 'a, Failure> {
    let url = str_arg(url, "url")?;
    let mut connect = match remote.as_ref() {
        Some(remote) => remote.connect_options()?,
        None => acp_engine::remote::ConnectOptions::default(),
    };
    Ok(move |settings: &Settings| {
        connect.reconnect_timeout = settings.reconnect_timeout;
        connect.connect_timeout = settings.connect_timeout;
        Ok(acp_engine::remote::dial(url, &connect))
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
        let (read, write) = owned_fds(read_fd, write_fd, out.is_null())?;
        start(
            move |_| Ok(Transport::from_fds(read, write)),
            options,
            handlers,
            out,
        )
    })
}

/// The descriptors of `acp_*_fds`, owned from here on, unless `out` is NULL
/// or a descriptor is negative (then nothing is touched).
pub(crate) unsafe fn owned_fds(
    read_fd: c_int,
    write_fd: c_int,
    out_is_null: bool,
) -> Result<(OwnedFd, OwnedFd), Failure> {
    if out_is_null {
        return Err(Failure::null("out"));
    }
    if read_fd < 0 || write_fd < 0 {
        return Err(Failure::new(ACP_ERR_INVALID_ARGUMENT, "negative file descriptor"));
    }
    Ok((OwnedFd::from_raw_fd(read_fd), OwnedFd::from_raw_fd(write_fd)))
}

/// The transport of `acp_*_spawn`: `argv`, `env` and `cwd` as documented there.
pub(crate) unsafe fn spawn_transport(
    argv: *const *const c_char,
    env: *const *const c_char,
    cwd: *const c_char,
    settings: &Settings,
) -> Result<Transport, Failure> {
    let argv = string_list(argv, "argv")?;
    let Some((program, args)) = argv.split_first() else {
        return Err(Failure::new(ACP_ERR_INVALID_ARGUMENT, "argv is empty"));
    };
    let mut spawn =
        SpawnOptions::new(OsStr::from_bytes(program)).args(args.iter().map(|a| OsStr::from_bytes(a)));
    if !env.is_null() {
        for entry in string_list(env, "env")? {
            let Some(split) = entry.iter().position(|b| *b == b'=') else {
                return Err(Failure::new(
                    ACP_ERR_INVALID_ARGUMENT,
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
    if settings.exit_grace_ms > 0 {
        spawn = spawn.exit_grace(Duration::from_millis(settings.exit_grace_ms.into()));
    }
    Transport::spawn(spawn).map_err(|error| Failure::new(ACP_ERR_IO, error.to_string()))
}

/// A NULL-terminated array of C strings, as bytes.
unsafe fn string_list(list: *const *const c_char, name: &str) -> Result<Vec<Vec<u8>>, Failure> {
    if list.is_null() {
        return Err(Failure::null(name));
    }
    let mut items = Vec::new();
    let mut cursor = list;
    while !(*cursor).is_null() {
        items.push(std::ffi::CStr::from_ptr(*cursor).to_bytes().to_vec());
        cursor = cursor.add(1);
    }
    Ok(items)
}

/// Method and params of an outbound message, as given (the engine checks
/// them against the schema before anything is sent).
pub(crate) unsafe fn outbound<'a>(
    method: *const c_char,
    params_json: *const c_char,
) -> Result<(&'a str, Option<&'a RawValue>), Failure> {
    let method = str_arg(method, "method")?;
    let params = json_arg(params_json, "params_json")?;
    structured(params, "params_json")?;
    Ok((method, params))
}

pub(crate) fn not_sent(method: &str, error: acp_engine::RequestError) -> Failure {
    if error.is_connection_closed() {
        Failure::closed(&error)
    } else {
        Failure::rpc(
            ACP_ERR_INVALID_ARGUMENT,
            format!("not sent: {method}: {error}"),
            error,
        )
    }
}

/// Send a request. Its answer goes to `callback` (on the connection's
/// dispatch thread, in order with the other events; on an event connection,
/// inside `acp_connection_next_event(s)`), or, if `callback` is NULL on an
/// event connection, to an `ACP_EVENT_RESPONSE`. `params_json` may be NULL
/// (no params). `out_request_id` (may be NULL) receives the id for
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
        let conn = live_connection(connection)?;
        let (method, params) = outbound(method, params_json)?;
        // Without a callback: an ACP_EVENT_RESPONSE (dropped with handlers).
        let waiting = match callback {
            Some(_) => Waiting::Reply(Reply(callback, UserData(user_data))),
            None => Waiting::Event,
        };
        let id = conn
            .send_request(method, params.map(RawValue::get), waiting)
            .map_err(|error| not_sent(method, error))?;
        if let Some(out) = out_request_id.as_mut() {
            *out = id;
        }
        Ok(())
    })
}

/// Send a notification. `params_json` may be NULL. Nothing is sent on a
/// failure code. A client's `session/cancel` also answers that session's
/// pending permission requests `cancelled`, as the protocol requires.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_send_notification(
    connection: *const acp_connection,
    method: *const c_char,
    params_json: *const c_char,
) -> acp_result {
    guard(|| {
        let conn = live_connection(connection)?;
        let (method, params) = outbound(method, params_json)?;
        conn.host
            .send_notification(method, params.map(RawValue::get))
            .map(|_| ())
            .map_err(|error| not_sent(method, error))
    })
}

/// Cancel a request still waiting for its answer: its callback (or event,
/// or `acp_connection_request`) gets error -32800, the peer gets
/// `$/cancel_request`, a late answer is dropped. `ACP_ERR_INVALID_ARGUMENT`
/// if it was not pending.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_cancel_request(
    connection: *const acp_connection,
    request_id: i64,
) -> acp_result {
    guard(|| {
        let conn = live_connection(connection)?;
        if conn.host.cancel_pending_request(request_id) {
            Ok(())
        } else {
            Err(Failure::new(
                ACP_ERR_INVALID_ARGUMENT,
                format!("request {request_id} is not pending"),
            ))
        }
    })
}

/// Up to `max` events of an event connection (created without handlers),
/// in wire order, into `events[0..*out_count]`, waiting up to `timeout_ms`
/// (negative: no limit) for the first. Free each with `acp_event_free`.
/// `ACP_ERR_TIMEOUT` with `*out_count` 0 when none came; after
/// `ACP_EVENT_CLOSED` was taken, `ACP_ERR_CLOSED`. One call per burst:
/// the cheapest way across the boundary.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_next_events(
    connection: *const acp_connection,
    events: *mut *mut acp_event,
    max: usize,
    timeout_ms: i32,
    out_count: *mut usize,
) -> acp_result {
    guard(|| {
        let conn = connection_arg(connection)?;
        if events.is_null() || out_count.is_null() {
            return Err(Failure::new(ACP_ERR_NULL_ARGUMENT, "events or out_count is NULL"));
        }
        *out_count = 0;
        if max == 0 {
            return Err(Failure::new(ACP_ERR_INVALID_ARGUMENT, "max is 0"));
        }
        let taken = take_events(&conn, max, timeout_ms)?;
        for (index, event) in taken.iter().enumerate() {
            *events.add(index) = *event;
        }
        *out_count = taken.len();
        Ok(())
    })
}

/// The next event of an event connection; `acp_connection_next_events`
/// with room for one.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_next_event(
    connection: *const acp_connection,
    timeout_ms: i32,
    out: *mut *mut acp_event,
) -> acp_result {
    guard(|| {
        let conn = connection_arg(connection)?;
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        *out = ptr::null_mut();
        *out = take_events(&conn, 1, timeout_ms)?[0];
        Ok(())
    })
}

fn take_events(conn: &Arc<Conn>, max: usize, timeout_ms: i32) -> Result<Vec<*mut acp_event>, Failure> {
    if !conn.takes_events() {
        return Err(Failure::new(
            ACP_ERR_WRONG_MODE,
            "this connection has handlers, not events",
        ));
    }
    if conn.is_finished() {
        return Err(Failure::new(
            ACP_ERR_CLOSED,
            "the connection closed (ACP_EVENT_CLOSED was taken)",
        ));
    }
    if !host::runtime_alive(conn.handler.generation) {
        return Err(Failure::new(
            ACP_ERR_CLOSED,
            "acp_shutdown stopped this connection's runtime",
        ));
    }
    let deadline = (timeout_ms >= 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    let taken = conn.next_events(max, deadline);
    if taken.is_empty() {
        return Err(Failure::new(ACP_ERR_TIMEOUT, "no event within the timeout"));
    }
    Ok(taken
        .into_iter()
        .map(|item| events::to_event(conn, item))
        .collect())
}

/// Close the connection: requests C has not answered are answered -32603,
/// queued messages are flushed, pending outbound requests fail, the stream
/// is shut, a spawned process is reaped. Returns at once; see
/// `acp_connection_wait_closed`. Closing twice is harmless.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_close(connection: *const acp_connection) -> acp_result {
    guard(|| {
        let conn = connection_arg(connection)?;
        if host::runtime_alive(conn.handler.generation) {
            // Unanswered requests are answered -32603 now: their responders
            // are spent (a late answer gets ACP_ERR_ALREADY_ANSWERED).
            crate::respond::forget_connection(&conn);
            conn.host.close();
        }
        Ok(())
    })
}

/// Wait until the connection is closed and torn down (the peer hung up or
/// `acp_connection_close` was called; a spawned process reaped; `on_close`
/// returned, on an event connection the engine's teardown done), up to
/// `timeout_ms` (negative: no limit). `ACP_OK` or `ACP_ERR_TIMEOUT`. After
/// `ACP_OK` no new callback starts.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_wait_closed(
    connection: *const acp_connection,
    timeout_ms: i32,
) -> acp_result {
    guard(|| {
        let conn = connection_arg(connection)?;
        if !host::runtime_alive(conn.handler.generation) {
            return Ok(()); // cut off by acp_shutdown: nothing is left running
        }
        let limit = (timeout_ms >= 0).then(|| Duration::from_millis(timeout_ms as u64));
        match conn.wait_closed(limit) {
            Ok(true) => Ok(()),
            Ok(false) => Err(Failure::new(ACP_ERR_TIMEOUT, "still open after the timeout")),
            Err(_) => Err(Failure::new(
                ACP_ERR_WRONG_MODE,
                "a notification callback cannot wait for its own connection to close",
            )),
        }
    })
}

/// The process id of the peer `acp_connection_spawn` started, or -1.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_pid(connection: *const acp_connection) -> i64 {
    guard_value(-1, || {
        connection_arg(connection)
            .ok()
            .and_then(|c| c.host.pid())
            .map_or(-1, i64::from)
    })
}

/// The ACP version the connection speaks now: 1, or 2 once `initialize`
/// selected the version 2 draft (see `acp_options::protocol_versions`); an
/// agent's `initialize` handler already sees the selected version, a
/// client once the answer arrived. 0 for a NULL connection.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_protocol_version(connection: *const acp_connection) -> u16 {
    guard_value(0, || {
        connection_arg(connection).map_or(0, |c| c.host.protocol_version())
    })
}

/// True once the connection is closing or closed (later sends fail).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_is_closed(connection: *const acp_connection) -> bool {
    guard_value(true, || {
        connection_arg(connection).map_or(true, |c| {
            c.host.is_closed() || !host::runtime_alive(c.handler.generation)
        })
    })
}

/// Close (if open) and free the connection. NULL is fine. Callbacks may
/// still be running when this returns (they keep their own reference: the
/// pointer they were given stays valid until they return).
#[no_mangle]
pub unsafe extern "C" fn acp_connection_free(connection: *mut acp_connection) {
    guard_value((), || {
        if connection.is_null() {
            return;
        }
        let conn = Arc::from_raw(connection.cast_const().cast::<Conn>());
        if host::runtime_alive(conn.handler.generation) {
            conn.host.close();
        }
        crate::respond::forget_connection(&conn);
    })
}

/// Why the connection closed (NULL while open). Free with `acp_string_free`.
#[no_mangle]
pub unsafe extern "C" fn acp_connection_close_reason(connection: *const acp_connection) -> *mut c_char {
    guard_value(ptr::null_mut(), || {
        connection_arg(connection)
            .ok()
            .and_then(|c| c.host.close_reason())
            .map_or(ptr::null_mut(), |reason| owned_string(&reason))
    })
}
