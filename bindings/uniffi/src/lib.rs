//! acp-engine for uniffi (Kotlin on the JVM now, Swift later).
//!
//! One [`NativeConnection`] per connection, on the core's host bridge
//! ([`acp_engine::host::HostConnection`]): the engine checks every message
//! both ways for the connection's [`Side`], orders notifications before the
//! responses that follow them, answers `$/cancel_request` and applies the
//! client's `session/cancel` rule; this crate only moves JSON text between
//! the engine and the foreign side.
//!
//! - A connection is the core's text connection
//!   (`acp_engine::host::threaded::TextConnection`), and the foreign side
//!   moves its messages through the C ABI's `acp_text_connection_*`
//!   functions (bindings/c), which this library exports too: everything
//!   the engine has for the foreign side (inbound requests and
//!   notifications, our requests' outcomes, cancellations, the close)
//!   crosses as batches of events that the foreign side's event thread
//!   takes, in the order the engine released them, and sends
//!   (notifications, requests, answers) cross once per message. A uniffi
//!   call crosses several times (a `RustBuffer` per string, a status
//!   structure JNA allocates and tracks), about 70 µs a message on the
//!   JVM; a plain C function through JNA's direct mapping crosses once.
//! - The foreign side runs requests concurrently and notifications in
//!   order, so a response is seen only after the notifications that
//!   arrived before it were handled.
//! - uniffi carries the rest: construction, errors, `closed`, `waitWritten`.
//!
//! Messages cross as JSON text: the engine already holds each message as
//! text, checks it against the schema without building values, and a host
//! parses one text faster than it converts a tree of foreign records
//! (docs/architecture.md has the host contract and its words).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use acp_engine::host::threaded::TextConnection;
use acp_engine::host::{kind, runtime, HostConnection, HostOptions, Side as HostSide};
use acp_engine::{
    Protocol, ProtocolVersions, RequestError as CoreError, SpawnOptions, Transport, UncheckedMethods,
};
use tokio::runtime::Handle;

uniffi::setup_scaffolding!();

mod mcp;
mod proxy;

/// A JSON-RPC error: what a handler throws to answer with an error, and
/// what a request fails with.
#[derive(Debug, Clone, PartialEq, uniffi::Error)]
pub enum AcpError {
    /// A JSON-RPC error response (`code`, `message`, `data` as JSON text).
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The error's message (`message` on the wire).
        reason: String,
        /// The error's `data` as JSON text, if any.
        data: Option<String>,
    },
}

impl fmt::Display for AcpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AcpError::Rpc { code, reason, .. } => write!(f, "{reason} ({code})"),
        }
    }
}

impl std::error::Error for AcpError {}

impl From<CoreError> for AcpError {
    fn from(error: CoreError) -> Self {
        AcpError::Rpc {
            code: error.code,
            reason: error.message,
            data: error.data.map(|data| data.to_string()),
        }
    }
}

impl From<AcpError> for CoreError {
    fn from(error: AcpError) -> Self {
        let AcpError::Rpc { code, reason, data } = error;
        let error = CoreError::new(code, reason);
        match data {
            // Data that is not JSON travels as a string.
            Some(text) => match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(data) => error.with_data(data),
                Err(_) => error.with_data(serde_json::Value::String(text)),
            },
            None => error,
        }
    }
}

/// Which side of ACP a connection plays: the engine checks what it
/// receives against this side's methods, and what it sends against the
/// peer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Side {
    /// Plain JSON-RPC: any method, no schema checks.
    Raw,
    /// An agent: receives agent methods, sends client methods.
    Agent,
    /// A client: receives client methods, sends agent methods.
    Client,
}

/// A connection's settings.
#[derive(Debug, Clone, uniffi::Record)]
pub struct Settings {
    /// Which side the connection plays.
    pub side: Side,
    /// Speak the unstable protocol too (its methods are unknown otherwise).
    pub unstable: bool,
    /// The largest inbound message, in bytes (None: the engine's 64 MiB).
    pub max_message_size: Option<u64>,
    /// Methods outside the ACP schema the connection sends and receives as
    /// they are, unchecked: for peers that still use methods the schema
    /// dropped (the legacy `session/set_model`) or methods of a newer
    /// schema. Inbound ones reach the handler like extension methods;
    /// they are sent with the generic request and notification calls.
    pub unchecked_methods: Vec<String>,
    /// The ACP versions the connection speaks (1, 2 or both; empty: 1):
    /// with 2, `initialize` selects the version and every later message is
    /// checked against it.
    pub protocol_versions: Vec<u16>,
}

/// How to start an agent process.
#[derive(Debug, Clone, uniffi::Record)]
pub struct SpawnConfig {
    /// The program (looked up in `PATH` unless it is a path).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to (or, with `clear_env`, replacing) the environment.
    pub env: HashMap<String, String>,
    /// Start it with `env` only.
    pub clear_env: bool,
    /// Its working directory (None: this process's).
    pub cwd: Option<String>,
    /// Pass its stderr through to ours (true) or drop it.
    pub inherit_stderr: bool,
    /// Milliseconds it may take to exit after its stdin closed before it is
    /// killed (None: the engine's default).
    pub exit_grace_ms: Option<u32>,
}

/// The engine's own error codes and the JSON-RPC ones, for the foreign
/// layer's error factories.
#[derive(Debug, Clone, uniffi::Record)]
pub struct ErrorCodes {
    /// -32700
    pub parse_error: i64,
    /// -32600
    pub invalid_request: i64,
    /// -32601
    pub method_not_found: i64,
    /// -32602
    pub invalid_params: i64,
    /// -32603
    pub internal_error: i64,
    /// ACP: authentication required.
    pub auth_required: i64,
    /// ACP: resource not found.
    pub resource_not_found: i64,
    /// -32800: the request was cancelled.
    pub request_cancelled: i64,
    /// What every pending request fails with once the connection closed.
    pub connection_closed: i64,
    /// MCP-over-ACP -33000: a binding limit was exceeded.
    pub mcp_resource_limit_exceeded: i64,
    /// MCP-over-ACP -33001: no server is registered under the id.
    pub mcp_server_unavailable: i64,
    /// MCP-over-ACP -33002: the server failed without a valid MCP outcome.
    pub mcp_backend_failed: i64,
}

/// The error codes.
#[uniffi::export]
pub fn error_codes() -> ErrorCodes {
    use acp_engine::error::codes;
    ErrorCodes {
        parse_error: codes::PARSE_ERROR,
        invalid_request: codes::INVALID_REQUEST,
        method_not_found: codes::METHOD_NOT_FOUND,
        invalid_params: codes::INVALID_PARAMS,
        internal_error: codes::INTERNAL_ERROR,
        auth_required: codes::AUTH_REQUIRED,
        resource_not_found: codes::RESOURCE_NOT_FOUND,
        request_cancelled: codes::REQUEST_CANCELLED,
        connection_closed: codes::CONNECTION_CLOSED,
        mcp_resource_limit_exceeded: codes::MCP_RESOURCE_LIMIT_EXCEEDED,
        mcp_server_unavailable: codes::MCP_SERVER_UNAVAILABLE,
        mcp_backend_failed: codes::MCP_BACKEND_FAILED,
    }
}

/// The engine's error for a code, with the engine's message for it (what
/// `RequestError.methodNotFound()` and friends build on).
#[uniffi::export]
pub fn standard_error(code: i64, detail: Option<String>) -> AcpError {
    use acp_engine::error::codes;
    let error = match code {
        codes::PARSE_ERROR => CoreError::parse_error(),
        codes::INVALID_REQUEST => CoreError::invalid_request(),
        codes::METHOD_NOT_FOUND => CoreError::method_not_found(detail.as_deref().unwrap_or("")),
        codes::INVALID_PARAMS => CoreError::invalid_params(),
        codes::AUTH_REQUIRED => CoreError::auth_required(),
        codes::RESOURCE_NOT_FOUND => CoreError::resource_not_found(detail.as_deref()),
        codes::REQUEST_CANCELLED => CoreError::request_cancelled(),
        _ => CoreError::internal_error(),
    };
    error.into()
}

/// The kinds of event in a batch (`acp_text_connection_next_events`), the first
/// element of each.
#[derive(Debug, Clone, uniffi::Record)]
pub struct EventKinds {
    /// `[request, token, method, params, id]`: answer with `acp_text_connection_respond`;
    /// `id` is the request's JSON-RPC id as the peer sent it.
    pub request: u8,
    /// `[notification, method, params]`.
    pub notification: u8,
    /// `[result, id, result]`: the result of our request `id`.
    pub result: u8,
    /// `[error, id, {code, message, data?}]`: our request `id` failed.
    pub error: u8,
    /// `[cancelled, token]`: stop the handler of inbound request `token`.
    pub cancelled: u8,
    /// `[written, ticket, ok]`: a parked send was queued (or dropped).
    pub written: u8,
    /// `[closed, reason]`: the connection closed; the last event.
    pub closed: u8,
    /// `[invalid_notification, method, {code, message, data?}]`: a
    /// notification from the peer whose params fail the schema was dropped
    /// (the -32602 that says what failed); nothing answers it.
    pub invalid_notification: u8,
}

/// The event kinds.
#[uniffi::export]
pub fn event_kinds() -> EventKinds {
    EventKinds {
        request: kind::REQUEST,
        notification: kind::NOTIFICATION,
        result: kind::RESULT,
        error: kind::ERROR,
        cancelled: kind::CANCELLED,
        written: kind::WRITTEN,
        closed: kind::CLOSED,
        invalid_notification: kind::INVALID_NOTIFICATION,
    }
}

/// The engine's runtime, kept for the life of the process: its threads are
/// the engine's, never the JVM's.
fn engine() -> &'static Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE.get_or_init(runtime)
}

/// One ACP (or plain JSON-RPC) connection: see the crate docs.
#[derive(uniffi::Object)]
pub struct NativeConnection {
    text: Arc<TextConnection>,
}

fn options(settings: &Settings) -> HostOptions {
    let mut options = HostOptions {
        side: match settings.side {
            Side::Raw => HostSide::Raw,
            Side::Agent => HostSide::Agent,
            Side::Client => HostSide::Client,
        },
        ..HostOptions::default()
    };
    if settings.unstable {
        options.protocol = Protocol::Unstable;
    }
    if let Some(max) = settings.max_message_size {
        options.max_message_size = usize::try_from(max).unwrap_or(usize::MAX).max(1);
    }
    options.unchecked_methods = UncheckedMethods::new(settings.unchecked_methods.clone());
    // Kotlin checks the list first (ConnectionOptions); anything else speaks v1.
    if let Some(versions) = ProtocolVersions::from_list(&settings.protocol_versions) {
        options.protocol_versions = versions;
    }
    options
}

#[uniffi::export]
impl NativeConnection {
    /// A client of a spawned agent process. Failing to start it throws
    /// -32603 with the reason in `data`.
    #[uniffi::constructor]
    pub fn spawn(settings: Settings, config: SpawnConfig) -> Result<Arc<Self>, AcpError> {
        let mut spawn = SpawnOptions::new(config.command)
            .args(config.args)
            .inherit_stderr(config.inherit_stderr);
        if config.clear_env {
            spawn = spawn.clear_env();
        }
        for (key, value) in config.env {
            spawn = spawn.env(key, value);
        }
        if let Some(cwd) = config.cwd {
            spawn = spawn.cwd(cwd);
        }
        if let Some(ms) = config.exit_grace_ms {
            spawn = spawn.exit_grace(Duration::from_millis(ms.into()));
        }
        let transport = {
            let _guard = engine().enter();
            Transport::spawn(spawn).map_err(CoreError::internal)?
        };
        Ok(Self::start(transport, &settings))
    }

    /// This process's stdin and stdout (an agent launched by its client).
    #[uniffi::constructor]
    pub fn stdio(settings: Settings) -> Arc<Self> {
        let transport = {
            let _guard = engine().enter();
            Transport::stdio()
        };
        Self::start(transport, &settings)
    }

    /// A client of a remote agent (`ws://`, `wss://`, `http://` or
    /// `https://`), connected in the background: a failure closes the
    /// connection with the reason. `ca_file`: a PEM file of CA
    /// certificates to trust besides the system's.
    /// `reconnect_timeout_millis`: `ConnectOptions::reconnect_timeout`
    /// (None or 0: off). `connect_timeout_millis`:
    /// `ConnectOptions::connect_timeout` (None: the default; 0: wait for
    /// ever).
    #[uniffi::constructor]
    pub fn remote(
        settings: Settings,
        url: String,
        bearer_token: Option<String>,
        ca_file: Option<String>,
        reconnect_timeout_millis: Option<u64>,
        connect_timeout_millis: Option<u64>,
    ) -> Arc<Self> {
        use acp_engine::remote::ConnectOptions;
        let connect = ConnectOptions {
            bearer_token,
            ca_file: ca_file.map(Into::into),
            reconnect_timeout: reconnect_timeout_millis
                .filter(|millis| *millis > 0)
                .map(std::time::Duration::from_millis),
            connect_timeout: ConnectOptions::connect_timeout_millis(connect_timeout_millis),
            ..Default::default()
        };
        let transport = {
            let _guard = engine().enter();
            acp_engine::remote::dial(&url, &connect)
        };
        Self::start(transport, &settings)
    }

    /// Cancel our request `id` (its caller gave up): the peer gets
    /// `$/cancel_request`, and its outcome arrives among the events as
    /// -32800 (or as the answer, if that came first).
    pub fn cancel_request(&self, id: i64) {
        let _guard = engine().enter();
        self.text.host().cancel_pending_request(id);
    }

    /// A new reference to this connection as the C ABI's
    /// `acp_text_connection*`, for its `acp_text_connection_*` functions:
    /// notifications, requests, answers and events go there, not through
    /// uniffi. The caller releases it with `acp_text_connection_free`.
    pub fn text_connection(&self) -> u64 {
        acp_engine_ffi::text_connection_pointer(self.text.clone()) as u64
    }

    /// Until the parked send of `ticket` is queued for writing; an error
    /// when the connection closed first.
    pub async fn wait_written(&self, ticket: u64) -> Result<(), AcpError> {
        let host = self.text.host();
        if host.wait_written(ticket).await {
            Ok(())
        } else {
            Err(closed_error(host).into())
        }
    }

    /// Close: pending requests fail, running handlers are cancelled, queued
    /// output is flushed, a spawned agent is reaped. (Not `close`: uniffi
    /// gives every object a `close()` that frees the handle.)
    pub fn close_connection(&self) {
        self.text.close();
    }

    /// Wait until the connection is closed and torn down.
    pub async fn closed(&self) {
        self.text.finished().cancelled().await
    }

    /// Whether the connection is closed (or closing).
    pub fn is_closed(&self) -> bool {
        self.text.host().is_closed()
    }

    /// Why the connection closed, once it did.
    pub fn close_reason(&self) -> Option<String> {
        self.text.host().close_reason()
    }

    /// The ACP version the connection speaks: the one `initialize`
    /// selected, or its lowest until then.
    pub fn protocol_version(&self) -> u16 {
        self.text.host().protocol_version()
    }

    /// The spawned agent's process id, for connections made by spawning.
    pub fn pid(&self) -> Option<u32> {
        self.text.host().pid()
    }
}

impl NativeConnection {
    pub(crate) fn start(transport: Transport, settings: &Settings) -> Arc<Self> {
        let text = TextConnection::connect(transport, options(settings), engine())
            .expect("an eventfd for the event thread");
        Arc::new(Self { text: Arc::new(text) })
    }
}

impl Drop for NativeConnection {
    fn drop(&mut self) {
        // Nobody can wait any more: release the peer (the event thread's
        // next batch has the close), even while the foreign side still
        // holds its `acp_text_connection*`.
        self.text.close();
    }
}

fn closed_error(host: &HostConnection) -> CoreError {
    CoreError::connection_closed(host.close_reason().as_deref().unwrap_or("closed"))
}
