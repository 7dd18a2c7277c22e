//! `acp_server`: serve agents to remote clients over WebSocket and
//! Streamable HTTP (the core's `Serving`, on the engine's `HostServer`). Each accepted connection is
//! an `acp_connection` started with the server's options and handlers, its
//! `user_data` given by the accept callback (one agent's state per
//! connection); the server owns it and frees it once it has finished.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use acp_engine::host::{threaded::Serving, Accepted};
use acp_engine::remote::PeerTransport;

use crate::calls::{acp_connection_free, start_with};
use crate::conn::Conn;
use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, c_string, guard, guard_value, owned_string, str_arg, Failure};
use crate::handlers::acp_handlers;
use crate::options::{acp_options, Settings};
use crate::server_options::{acp_serve_options, acp_server_options, serve_options};
use crate::sized;

/// The transport a client connected with.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_transport {
    /// WebSocket (`ws://`, `wss://`).
    ACP_TRANSPORT_WEBSOCKET = 1,
    /// Streamable HTTP (`http://`, `https://`).
    ACP_TRANSPORT_HTTP = 2,
}

/// Called on a library thread for each accepted connection, before any of
/// its callbacks run: returns the `user_data` its handlers get (a new
/// agent's state, say; free it in `on_close`). `peer_address` is valid
/// during the call only.
pub type acp_accept_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        peer_address: *const c_char,
        transport: acp_transport,
    ) -> *mut c_void,
>;

/// A listening server. Opaque; `acp_server_free` must be the last call.
pub struct acp_server {
    _private: [u8; 0],
}

/// A `user_data` pointer moved to the accepting thread.
struct Carried(*mut c_void);
unsafe impl Send for Carried {}

/// Listen on `address` (`"HOST:PORT"`; port 0 picks one) and serve: every
/// connection is an `acp_connection` made with `options` and `handlers`
/// (which must not be NULL), with the `user_data` `on_accept` returns for
/// it (NULL callback: `handlers->user_data` for all). Connections belong to
/// the server: do not free them; one is freed after its `on_close`.
/// `server`: NULL for the defaults, or from `ACP_SERVER_OPTIONS_INIT`.
#[no_mangle]
pub unsafe extern "C" fn acp_server_listen(
    address: *const c_char,
    server: *const acp_server_options,
    options: *const acp_options,
    handlers: *const acp_handlers,
    on_accept: acp_accept_callback,
    accept_user_data: *mut c_void,
    out: *mut *mut acp_server,
) -> acp_result {
    guard(|| {
        if !out.is_null() {
            *out = ptr::null_mut();
        }
        let server = sized::read(server, "server")?;
        listen(
            address,
            server,
            options,
            handlers,
            on_accept,
            accept_user_data,
            out,
        )
    })
}

/// `acp_server_listen` with 0.1's settings (`acp_serve_options`, which
/// cannot grow; NULL: the defaults), for programs written before it.
#[no_mangle]
pub unsafe extern "C" fn acp_server_start(
    address: *const c_char,
    serve: *const acp_serve_options,
    options: *const acp_options,
    handlers: *const acp_handlers,
    on_accept: acp_accept_callback,
    accept_user_data: *mut c_void,
    out: *mut *mut acp_server,
) -> acp_result {
    guard(|| {
        let server = serve.as_ref().map(acp_server_options::from);
        listen(
            address,
            server,
            options,
            handlers,
            on_accept,
            accept_user_data,
            out,
        )
    })
}

unsafe fn listen(
    address: *const c_char,
    server: Option<acp_server_options>,
    options: *const acp_options,
    handlers: *const acp_handlers,
    on_accept: acp_accept_callback,
    accept_user_data: *mut c_void,
    out: *mut *mut acp_server,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null("out"));
    }
    *out = ptr::null_mut();
    let address = str_arg(address, "address")?;
    let Some(handlers) = acp_handlers::read(handlers)? else {
        return Err(Failure::null("handlers"));
    };
    // Read now: what `options` points to need not outlive this call.
    let settings = Settings::read(options)?;
    let serve = serve_options(server.as_ref(), settings.max_replay_bytes)?;
    let accept_user_data = Carried(accept_user_data);
    let start = move |accepted: Accepted| {
        let accept_user_data = &accept_user_data;
        let mut handlers = handlers;
        if let Some(on_accept) = on_accept {
            let address = c_string(&accepted.peer.address.to_string());
            let transport = match accepted.peer.transport {
                PeerTransport::WebSocket => acp_transport::ACP_TRANSPORT_WEBSOCKET,
                PeerTransport::StreamableHttp => acp_transport::ACP_TRANSPORT_HTTP,
            };
            // SAFETY: the header's contract for the callback.
            handlers.user_data = unsafe { on_accept(accept_user_data.0, address.as_ptr(), transport) };
        }
        let (mut conn, transport) = (ptr::null_mut(), accepted.transport);
        // SAFETY: `conn` is ours; the handlers were read from the caller's.
        match unsafe {
            start_with(
                move |_| Ok(transport),
                settings.clone(),
                Some(handlers),
                &mut conn,
            )
        } {
            // SAFETY: the server takes the reference `start_with` gave C.
            Ok(()) => Some(unsafe { Arc::from_raw(conn.cast_const().cast::<Conn>()) }),
            Err(failure) => {
                tracing::warn!(message = %failure.message, "could not start an accepted connection");
                None
            }
        }
    };
    // SAFETY: the reference the server took back.
    let release = |conn: Arc<Conn>| unsafe { acp_connection_free(Arc::into_raw(conn).cast_mut().cast()) };
    let serving = Serving::listen(address, serve, start, release)
        .map_err(|error| Failure::new(ACP_ERR_IO, error.to_string()))?;
    *out = Box::into_raw(Box::new(serving)).cast();
    Ok(())
}

unsafe fn server_arg<'a>(server: *const acp_server) -> Result<&'a Serving, Failure> {
    server
        .cast::<Serving>()
        .as_ref()
        .ok_or_else(|| Failure::null("server"))
}

/// The server's WebSocket URL (`ws://HOST:PORT/acp`, `wss://` with TLS).
/// Free with `acp_string_free`; NULL when `server` is NULL.
#[no_mangle]
pub unsafe extern "C" fn acp_server_websocket_url(server: *const acp_server) -> *mut c_char {
    guard_value(ptr::null_mut(), || {
        server_arg(server).map_or(ptr::null_mut(), |s| owned_string(s.host().websocket_url()))
    })
}

/// The server's Streamable HTTP URL (`http://HOST:PORT/acp`, `https://`
/// with TLS). Free with `acp_string_free`; NULL when `server` is NULL.
#[no_mangle]
pub unsafe extern "C" fn acp_server_http_url(server: *const acp_server) -> *mut c_char {
    guard_value(ptr::null_mut(), || {
        server_arg(server).map_or(ptr::null_mut(), |s| owned_string(s.host().http_url()))
    })
}

/// Connections open now (0 when `server` is NULL).
#[no_mangle]
pub unsafe extern "C" fn acp_server_connections(server: *const acp_server) -> usize {
    guard_value(0, || server_arg(server).map_or(0, |s| s.host().connections()))
}

/// Stop accepting and end every connection (each closes, failing what is
/// pending; its `on_close` runs), then return once they are freed. Must
/// not be called from one of the server's own callbacks.
#[no_mangle]
pub unsafe extern "C" fn acp_server_stop(server: *mut acp_server) -> acp_result {
    guard(|| {
        server_arg(server)?.stop();
        Ok(())
    })
}

/// Drain, for a graceful stop: take no new connection (clients get 503,
/// the readiness path says so), let each connection's agent answer every
/// request its client sent, end each connection once it has none, and end
/// what is left after `timeout_ms`; then return once every connection is
/// freed. Must not be called from one of the server's own callbacks.
#[no_mangle]
pub unsafe extern "C" fn acp_server_drain(server: *mut acp_server, timeout_ms: u32) -> acp_result {
    guard(|| {
        server_arg(server)?.drain(Duration::from_millis(timeout_ms.into()));
        Ok(())
    })
}

/// Stop the server (as `acp_server_stop`) and free it. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn acp_server_free(server: *mut acp_server) {
    guard_value((), || {
        if server.is_null() {
            return;
        }
        drop(Box::from_raw(server.cast::<Serving>()));
    })
}
