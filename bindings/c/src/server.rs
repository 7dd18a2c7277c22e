//! `acp_server`: serve agents to remote clients over WebSocket and
//! Streamable HTTP (the engine's `HostServer`). Each accepted connection is
//! an `acp_connection` started with the server's options and handlers, its
//! `user_data` given by the accept callback (one agent's state per
//! connection); the server owns it and frees it once it has finished.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use acp_engine::host::{self, EventFd, HostServer};
use acp_engine::remote::{PeerTransport, ServeOptions, ServerTls};

use crate::calls::{acp_connection_free, start_with};
use crate::conn::Conn;
use crate::connection::acp_connection;
use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, guard, guard_value, owned_string, str_arg, Failure};
use crate::handlers::acp_handlers;
use crate::options::{acp_options, Settings};

/// The transport a client connected with.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_transport {
    /// WebSocket (`ws://`, `wss://`).
    ACP_TRANSPORT_WEBSOCKET = 1,
    /// Streamable HTTP (`http://`, `https://`).
    ACP_TRANSPORT_HTTP = 2,
}

/// A server's settings. NULL, or zero-initialised, means the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_serve_options {
    /// The endpoint (NULL: "/acp"); other paths get 404.
    pub path: *const c_char,
    /// NULL, or required as `Authorization: Bearer <token>` (401 otherwise,
    /// before anything reaches an agent).
    pub token: *const c_char,
    /// Connections open at once, beyond which 503 (0: 1024).
    pub max_connections: usize,
    /// The largest message a client may send (0: 64 MiB).
    pub max_message_size: usize,
    /// Drop a client that takes nothing this long while output waits (0:
    /// 60 s; UINT32_MAX: never).
    pub output_stall_timeout_ms: u32,
    /// Streamable HTTP: output held per connection for its client (0: 64 MiB).
    pub max_buffered_bytes: usize,
    /// Streamable HTTP: end a connection with no event stream open and
    /// nothing sent this long (0: 60 s; UINT32_MAX: never).
    pub idle_timeout_ms: u32,
    /// NULL, or PEM files (certificate chain and key) to serve `wss://` and
    /// `https://`; both or neither.
    pub tls_cert: *const c_char,
    /// See `tls_cert`.
    pub tls_key: *const c_char,
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

struct Server {
    host: Arc<HostServer>,
    stopping: Arc<AtomicBool>,
    accepting: Mutex<Option<JoinHandle<()>>>,
}

/// How often the accepting thread frees finished connections when idle.
const SWEEP_EVERY: Duration = Duration::from_millis(200);

unsafe fn serve_options(serve: Option<&acp_serve_options>) -> Result<ServeOptions, Failure> {
    let mut options = ServeOptions::default();
    let Some(serve) = serve else {
        return Ok(options);
    };
    let timeout = |ms: u32, default: Option<Duration>| match ms {
        0 => default,
        u32::MAX => None,
        ms => Some(Duration::from_millis(ms.into())),
    };
    if !serve.path.is_null() {
        options.path = str_arg(serve.path, "path")?.to_owned();
    }
    if !serve.token.is_null() {
        options.bearer_token = Some(str_arg(serve.token, "token")?.to_owned());
    }
    if serve.max_connections > 0 {
        options.max_connections = serve.max_connections;
    }
    if serve.max_message_size > 0 {
        options.max_message_size = serve.max_message_size;
    }
    options.output_stall_timeout = timeout(serve.output_stall_timeout_ms, options.output_stall_timeout);
    if serve.max_buffered_bytes > 0 {
        options.max_buffered_bytes = serve.max_buffered_bytes;
    }
    options.idle_timeout = timeout(serve.idle_timeout_ms, options.idle_timeout);
    match (serve.tls_cert.is_null(), serve.tls_key.is_null()) {
        (true, true) => {}
        (false, false) => {
            let (cert, key) = (
                str_arg(serve.tls_cert, "tls_cert")?,
                str_arg(serve.tls_key, "tls_key")?,
            );
            let tls = ServerTls::from_pem_files(cert, key)
                .map_err(|error| Failure::new(ACP_ERR_INVALID_ARGUMENT, error.to_string()))?;
            options.tls = Some(tls);
        }
        _ => {
            return Err(Failure::new(
                ACP_ERR_INVALID_ARGUMENT,
                "tls_cert and tls_key go together",
            ))
        }
    }
    Ok(options)
}

/// A `user_data` or callback pointer moved to the accepting thread.
struct Carried<T>(T);
unsafe impl<T> Send for Carried<T> {}

impl<T> Carried<T> {
    // A method, so that a closure captures the whole (Send) value, not
    // its fields.
    fn take(self) -> T {
        self.0
    }
}

/// Listen on `address` (`"HOST:PORT"`; port 0 picks one) and serve: every
/// connection is an `acp_connection` made with `options` and `handlers`
/// (which must not be NULL), with the `user_data` `on_accept` returns for
/// it (NULL callback: `handlers->user_data` for all). Connections belong to
/// the server: do not free them; one is freed after its `on_close`.
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
        let serve = serve_options(serve.as_ref())?;
        let wake = Arc::new(EventFd::new().map_err(|error| Failure::new(ACP_ERR_IO, error.to_string()))?);
        let signal = wake.clone();
        let host = HostServer::bind(address, serve, &host::runtime(), move || signal.signal())
            .map_err(|error| Failure::new(ACP_ERR_IO, format!("cannot listen on {address}: {error}")))?;
        let host = Arc::new(host);
        let stopping = Arc::new(AtomicBool::new(false));
        let accepting = {
            let (host, stopping) = (host.clone(), stopping.clone());
            let carried = Carried((handlers, settings, on_accept, accept_user_data));
            std::thread::Builder::new()
                .name("acp-server".to_owned())
                .spawn(move || {
                    let (handlers, settings, on_accept, accept_user_data) = carried.take();
                    accept_loop(
                        &host,
                        &wake,
                        &stopping,
                        handlers,
                        &settings,
                        on_accept,
                        accept_user_data,
                    )
                })
                .map_err(|error| Failure::new(ACP_ERR_IO, error.to_string()))?
        };
        let server = Box::new(Server {
            host,
            stopping,
            accepting: Mutex::new(Some(accepting)),
        });
        *out = Box::into_raw(server).cast();
        Ok(())
    })
}

/// Start a connection for each accepted one; free those that finished.
fn accept_loop(
    host: &HostServer,
    wake: &EventFd,
    stopping: &AtomicBool,
    handlers: acp_handlers,
    settings: &Settings,
    on_accept: acp_accept_callback,
    accept_user_data: *mut c_void,
) {
    let mut open: Vec<*mut acp_connection> = Vec::new();
    loop {
        wake.reset();
        while let Some(accepted) = host.accept() {
            let mut handlers = handlers;
            if let Some(on_accept) = on_accept {
                let address = owned_string(&accepted.peer.address.to_string());
                let transport = match accepted.peer.transport {
                    PeerTransport::WebSocket => acp_transport::ACP_TRANSPORT_WEBSOCKET,
                    PeerTransport::StreamableHttp => acp_transport::ACP_TRANSPORT_HTTP,
                };
                // SAFETY: the header's contract for the callback.
                handlers.user_data = unsafe { on_accept(accept_user_data, address, transport) };
                unsafe { crate::ffi::acp_string_free(address) };
            }
            let mut conn = ptr::null_mut();
            let transport = accepted.transport;
            // SAFETY: `conn` is ours; the handlers were read from the caller's.
            let started = unsafe {
                start_with(
                    move |_| Ok(transport),
                    settings.clone(),
                    Some(handlers),
                    &mut conn,
                )
            };
            match started {
                Ok(()) => open.push(conn),
                Err(failure) => {
                    tracing::warn!(message = %failure.message, "could not start an accepted connection")
                }
            }
        }
        open.retain(|&conn| {
            // SAFETY: the server holds a reference to each open connection.
            let finished = unsafe { &*conn.cast_const().cast::<Conn>() }.is_finished();
            if finished {
                unsafe { acp_connection_free(conn) };
            }
            !finished
        });
        if stopping.load(Ordering::Acquire) && open.is_empty() {
            return;
        }
        let mut poll = libc::pollfd {
            fd: wake.raw(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut poll, 1, SWEEP_EVERY.as_millis() as i32) };
    }
}

unsafe fn server_arg<'a>(server: *const acp_server) -> Result<&'a Server, Failure> {
    server
        .cast::<Server>()
        .as_ref()
        .ok_or_else(|| Failure::null("server"))
}

/// The server's WebSocket URL (`ws://HOST:PORT/acp`, `wss://` with TLS).
/// Free with `acp_string_free`; NULL when `server` is NULL.
#[no_mangle]
pub unsafe extern "C" fn acp_server_websocket_url(server: *const acp_server) -> *mut c_char {
    guard_value(ptr::null_mut(), || {
        server_arg(server).map_or(ptr::null_mut(), |s| owned_string(s.host.websocket_url()))
    })
}

/// The server's Streamable HTTP URL (`http://HOST:PORT/acp`, `https://`
/// with TLS). Free with `acp_string_free`; NULL when `server` is NULL.
#[no_mangle]
pub unsafe extern "C" fn acp_server_http_url(server: *const acp_server) -> *mut c_char {
    guard_value(ptr::null_mut(), || {
        server_arg(server).map_or(ptr::null_mut(), |s| owned_string(s.host.http_url()))
    })
}

/// Connections open now (0 when `server` is NULL).
#[no_mangle]
pub unsafe extern "C" fn acp_server_connections(server: *const acp_server) -> usize {
    guard_value(0, || server_arg(server).map_or(0, |s| s.host.connections()))
}

/// Stop accepting and end every connection (each closes, failing what is
/// pending; its `on_close` runs), then return once they are freed. Must
/// not be called from one of the server's own callbacks.
#[no_mangle]
pub unsafe extern "C" fn acp_server_stop(server: *mut acp_server) -> acp_result {
    guard(|| {
        let server = server_arg(server)?;
        stop(server);
        Ok(())
    })
}

fn stop(server: &Server) {
    server.host.shutdown();
    server.stopping.store(true, Ordering::Release);
    if let Some(accepting) = server.accepting.lock().unwrap().take() {
        let _ = accepting.join();
    }
}

/// Stop the server (as `acp_server_stop`) and free it. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn acp_server_free(server: *mut acp_server) {
    guard_value((), || {
        if server.is_null() {
            return;
        }
        let server = Box::from_raw(server.cast::<Server>());
        stop(&server);
    })
}
