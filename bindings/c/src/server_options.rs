//! A server's settings as C passes them: `acp_server_options` (sized, so
//! that fields can be appended: `sized.rs`), and 0.1's `acp_serve_options`
//! (not sized, so it cannot grow; kept for the programs written against it).

use std::ffi::c_char;
use std::mem::{offset_of, size_of};
use std::ptr;
use std::time::Duration;

use acp_engine::remote::{RefusalBody, ServeOptions, ServerTls};

use crate::ffi::acp_result::*;
use crate::ffi::{str_arg, Failure};
use crate::sized::SizedStruct;

/// A server's settings (`acp_server_listen`). Start from
/// `ACP_SERVER_OPTIONS_INIT` (`struct_size` set, every other field zero:
/// its default) and set what you need. A path left NULL is the default
/// one; `""` serves none.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_server_options {
    /// `sizeof(acp_server_options)` as the caller's header has it (see
    /// `acp_options`).
    pub struct_size: usize,
    /// The endpoint (NULL: "/acp"); other paths get 404.
    pub path: *const c_char,
    /// NULL, or required as `Authorization: Bearer <token>` (401 otherwise,
    /// before anything reaches an agent; on the metrics path too).
    pub token: *const c_char,
    /// Connections open at once, beyond which 503 (0:
    /// ACP_DEFAULT_MAX_CONNECTIONS).
    pub max_connections: usize,
    /// The largest message a client may send (0:
    /// ACP_DEFAULT_MAX_MESSAGE_SIZE).
    pub max_message_size: usize,
    /// Drop a client that takes nothing this long while output waits (0:
    /// ACP_DEFAULT_SERVER_OUTPUT_STALL_TIMEOUT_MS; UINT32_MAX: never).
    pub output_stall_timeout_ms: u32,
    /// Streamable HTTP: output held per connection for its client (0:
    /// ACP_DEFAULT_MAX_BUFFERED_BYTES).
    pub max_buffered_bytes: usize,
    /// End a Streamable HTTP connection with no event stream open and
    /// nothing sent this long, and a resumable WebSocket not resumed this
    /// long (0: ACP_DEFAULT_IDLE_TIMEOUT_MS; UINT32_MAX: never).
    pub idle_timeout_ms: u32,
    /// NULL, or PEM files (certificate chain and key) to serve `wss://` and
    /// `https://`; both or neither.
    pub tls_cert: *const c_char,
    /// See `tls_cert`.
    pub tls_key: *const c_char,
    /// Streamable HTTP: the longest session id or string request id a
    /// client may send, in bytes; longer is 400 (0:
    /// ACP_DEFAULT_MAX_ID_LENGTH).
    pub max_id_length: usize,
    /// Streamable HTTP: sessions of a connection whose output waits for a
    /// client to read it; one more ends the connection (0:
    /// ACP_DEFAULT_MAX_BUFFERED_SESSION_STREAMS).
    pub max_buffered_session_streams: usize,
    /// Output kept per connection for a client that resumes with
    /// Last-Event-ID (0: `acp_options.max_replay_bytes`, else
    /// ACP_DEFAULT_MAX_REPLAY_BYTES; a resume needing more gets 410).
    pub max_replay_bytes: usize,
    /// Ping each WebSocket and comment on each idle event stream this often
    /// (0: ACP_DEFAULT_KEEP_ALIVE_INTERVAL_MS; UINT32_MAX: never).
    pub keep_alive_interval_ms: u32,
    /// Let a client's `session/load` of a session live on another
    /// connection attach to it as an observer (docs/session-attach.md).
    pub attach: bool,
    /// A liveness probe's path (NULL: "/healthz"; "": none).
    pub health_path: *const c_char,
    /// A readiness probe's path, 503 while full or draining (NULL:
    /// "/readyz"; "": none).
    pub ready_path: *const c_char,
    /// The Prometheus metrics' path (NULL: "/metrics"; "": none).
    pub metrics_path: *const c_char,
    /// How refusals (400 and up) read: an `acp_refusal_body` (0: the
    /// default, plain text as the official TypeScript server's).
    pub refusal_body: u32,
    /// Zero (keeps the struct free of padding).
    pub _reserved: u32,
}

/// The values of `acp_server_options::refusal_body`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_refusal_body {
    /// The reason as plain text, as the official TypeScript server's (what
    /// 0 means too).
    ACP_REFUSAL_BODY_TEXT = 1,
    /// `{"error": reason}` as `application/json`, as the official Python
    /// server's, which also answers a JSON-RPC batch 501 instead of 400.
    ACP_REFUSAL_BODY_JSON = 2,
}

impl Default for acp_server_options {
    fn default() -> Self {
        Self {
            struct_size: size_of::<Self>(),
            path: ptr::null(),
            token: ptr::null(),
            max_connections: 0,
            max_message_size: 0,
            output_stall_timeout_ms: 0,
            max_buffered_bytes: 0,
            idle_timeout_ms: 0,
            tls_cert: ptr::null(),
            tls_key: ptr::null(),
            max_id_length: 0,
            max_buffered_session_streams: 0,
            max_replay_bytes: 0,
            keep_alive_interval_ms: 0,
            attach: false,
            health_path: ptr::null(),
            ready_path: ptr::null(),
            metrics_path: ptr::null(),
            refusal_body: 0,
            _reserved: 0,
        }
    }
}

impl SizedStruct for acp_server_options {
    const NAME: &'static str = "acp_server_options";
    const FIRST_SIZE: usize = offset_of!(acp_server_options, metrics_path) + size_of::<*const c_char>();

    fn defaults() -> Self {
        Self::default()
    }
}

/// 0.1's server settings (`acp_server_start`): the first fields of
/// `acp_server_options`, without `struct_size`. NULL, or zero-initialised,
/// means the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_serve_options {
    /// See `acp_server_options`.
    pub path: *const c_char,
    /// See `acp_server_options`.
    pub token: *const c_char,
    /// See `acp_server_options`.
    pub max_connections: usize,
    /// See `acp_server_options`.
    pub max_message_size: usize,
    /// See `acp_server_options`.
    pub output_stall_timeout_ms: u32,
    /// See `acp_server_options`.
    pub max_buffered_bytes: usize,
    /// See `acp_server_options`.
    pub idle_timeout_ms: u32,
    /// See `acp_server_options`.
    pub tls_cert: *const c_char,
    /// See `acp_server_options`.
    pub tls_key: *const c_char,
}

impl From<&acp_serve_options> for acp_server_options {
    fn from(serve: &acp_serve_options) -> Self {
        Self {
            path: serve.path,
            token: serve.token,
            max_connections: serve.max_connections,
            max_message_size: serve.max_message_size,
            output_stall_timeout_ms: serve.output_stall_timeout_ms,
            max_buffered_bytes: serve.max_buffered_bytes,
            idle_timeout_ms: serve.idle_timeout_ms,
            tls_cert: serve.tls_cert,
            tls_key: serve.tls_key,
            ..Self::default()
        }
    }
}

/// The core's server settings from C's (None: the defaults);
/// `max_replay_bytes`: `acp_options`' (where 0.1 took it).
pub(crate) unsafe fn serve_options(
    server: Option<&acp_server_options>,
    max_replay_bytes: Option<usize>,
) -> Result<ServeOptions, Failure> {
    let mut options = ServeOptions::default();
    if let Some(max_replay_bytes) = max_replay_bytes {
        options.max_replay_bytes = max_replay_bytes;
    }
    let Some(server) = server else {
        return Ok(options);
    };
    let timeout = |ms: u32, default: Option<Duration>| match ms {
        0 => default,
        u32::MAX => None,
        ms => Some(Duration::from_millis(ms.into())),
    };
    let at_least_one = |value: usize, default: usize| if value > 0 { value } else { default };
    if !server.path.is_null() {
        options.path = str_arg(server.path, "path")?.to_owned();
    }
    if !server.token.is_null() {
        options.bearer_token = Some(str_arg(server.token, "token")?.to_owned());
    }
    options.max_connections = at_least_one(server.max_connections, options.max_connections);
    options.max_message_size = at_least_one(server.max_message_size, options.max_message_size);
    options.output_stall_timeout = timeout(server.output_stall_timeout_ms, options.output_stall_timeout);
    options.max_buffered_bytes = at_least_one(server.max_buffered_bytes, options.max_buffered_bytes);
    options.idle_timeout = timeout(server.idle_timeout_ms, options.idle_timeout);
    options.tls = tls(server)?;
    options.max_id_length = at_least_one(server.max_id_length, options.max_id_length);
    options.max_buffered_session_streams = at_least_one(
        server.max_buffered_session_streams,
        options.max_buffered_session_streams,
    );
    options.max_replay_bytes = at_least_one(server.max_replay_bytes, options.max_replay_bytes);
    options.keep_alive_interval = timeout(server.keep_alive_interval_ms, options.keep_alive_interval);
    options.attach = server.attach;
    options.health_path = probe_path(server.health_path, "health_path", options.health_path)?;
    options.ready_path = probe_path(server.ready_path, "ready_path", options.ready_path)?;
    options.metrics_path = probe_path(server.metrics_path, "metrics_path", options.metrics_path)?;
    const TEXT: u32 = acp_refusal_body::ACP_REFUSAL_BODY_TEXT as u32;
    const JSON: u32 = acp_refusal_body::ACP_REFUSAL_BODY_JSON as u32;
    options.refusal_body = match server.refusal_body {
        0 | TEXT => RefusalBody::Text,
        JSON => RefusalBody::Json,
        other => {
            return Err(Failure::new(
                ACP_ERR_INVALID_ARGUMENT,
                format!("server->refusal_body is {other}, not an acp_refusal_body"),
            ))
        }
    };
    Ok(options)
}

fn tls(server: &acp_server_options) -> Result<Option<ServerTls>, Failure> {
    match (server.tls_cert.is_null(), server.tls_key.is_null()) {
        (true, true) => Ok(None),
        (false, false) => {
            // SAFETY: NUL-terminated strings, by the header's contract.
            let (cert, key) = unsafe {
                (
                    str_arg(server.tls_cert, "tls_cert")?,
                    str_arg(server.tls_key, "tls_key")?,
                )
            };
            ServerTls::from_pem_files(cert, key)
                .map(Some)
                .map_err(|error| Failure::new(ACP_ERR_INVALID_ARGUMENT, error.to_string()))
        }
        _ => Err(Failure::new(
            ACP_ERR_INVALID_ARGUMENT,
            "tls_cert and tls_key go together",
        )),
    }
}

/// A probe's path: NULL the default, "" none.
unsafe fn probe_path(
    path: *const c_char,
    name: &str,
    default: Option<String>,
) -> Result<Option<String>, Failure> {
    if path.is_null() {
        return Ok(default);
    }
    let path = str_arg(path, name)?;
    Ok((!path.is_empty()).then(|| path.to_owned()))
}
