//! A connection's settings as C gives them, and what they mean to the engine.

use acp_engine::host::{HostOptions, Side};
use acp_engine::{Protocol, ProtocolVersions, UncheckedMethods};
use std::ffi::{c_char, c_int};
use std::mem::{offset_of, size_of};
use std::ptr;

use crate::ffi::acp_result::*;
use crate::ffi::{str_arg, Failure};
use crate::sized::{self, SizedStruct};

/// Which side of ACP the connection plays: decides which messages it
/// accepts and checks, before C sees them.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_side {
    /// Plain JSON-RPC: any method, no schema checks.
    ACP_SIDE_RAW = 0,
    /// An agent: inbound agent methods are checked against the ACP schema
    /// (unknown: -32601, bad params: -32602, C never sees them), and what it
    /// sends must be a client method with fitting params.
    ACP_SIDE_AGENT = 1,
    /// A client: the same, the other way round.
    ACP_SIDE_CLIENT = 2,
}

/// Settings for a new connection. A NULL `acp_options*` means all
/// defaults. Otherwise start from `ACP_OPTIONS_INIT` (`struct_size` set,
/// every other field zero: its default) and set what you need:
/// `acp_options o = ACP_OPTIONS_INIT; o.side = ACP_SIDE_AGENT;`.
/// Fields are only ever appended; the library reads those within
/// `struct_size`, so a program built against an older header keeps working.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_options {
    /// `sizeof(acp_options)`, as the caller's header defines it (set by
    /// `ACP_OPTIONS_INIT`). Fields beyond it take their defaults. Smaller
    /// than the first version's struct (0 included) is refused with
    /// ACP_ERR_INVALID_ARGUMENT; so is a larger struct (from a newer
    /// header) whose fields this library does not know are not all zero.
    pub struct_size: usize,
    /// Which side of ACP this connection plays (default RAW).
    pub side: acp_side,
    /// Bound on one inbound message in bytes (0: the default,
    /// ACP_DEFAULT_MAX_MESSAGE_SIZE).
    pub max_message_size: usize,
    /// acp_connection_spawn: how long a child may take to exit after its
    /// stdin closed, before it is killed (0: the default, 500 ms).
    pub exit_grace_ms: u32,
    /// Speak the unstable protocol too (schema/v1/schema.unstable.json):
    /// its methods pass the checks; otherwise they are unknown (-32601).
    pub unstable: bool,
    /// Response callbacks (`acp_response_callback`) return at once: the
    /// dispatch thread never moves its work to another thread while one
    /// runs, and they may not wait for an answer themselves. For hosts
    /// whose callbacks first wait for their own scheduler (Go's): a new
    /// thread would only wait too.
    pub quick_response_callbacks: bool,
    /// The peer's requests handled at once before the engine stops reading
    /// its input until some are answered (0: the default,
    /// ACP_DEFAULT_MAX_IN_FLIGHT_REQUESTS).
    pub max_in_flight_requests: usize,
    /// Bytes of output queued for a peer that is not reading before the
    /// engine stops reading its input until it reads (0: the default,
    /// ACP_DEFAULT_MAX_BUFFERED_BYTES).
    pub max_buffered_bytes: usize,
    /// Close the connection when reading was held at one of the limits
    /// above this long with nothing written and no request finished (0:
    /// never, the default).
    pub output_stall_timeout_ms: u32,
    /// Methods outside the ACP schema this connection sends and receives
    /// as they are, unchecked: for peers that still use methods the schema
    /// dropped (the legacy `session/set_model`) or methods of a newer
    /// schema. Inbound ones reach `on_request` / `on_notification` (or the
    /// event queue) like any other method; send them with the usual
    /// request and notification calls. A NULL-terminated array of
    /// NUL-terminated UTF-8 method names, exactly as on the wire, or NULL
    /// for none. Read when the connection is created: the strings need not
    /// outlive that call (nor `acp_server_start`, for a server's
    /// connections).
    pub unchecked_methods: *const *const c_char,
    /// The ACP versions this connection speaks: an `acp_protocol_versions`
    /// (0: the default, version 1 only). With version 2, `initialize`
    /// selects the version (`acp_connection_protocol_version`) and every
    /// later message is checked against it, both ways.
    pub protocol_versions: u32,
    /// acp_connection_connect_url: how long to keep trying, with backoff
    /// and jitter, to reopen a broken Streamable HTTP event stream or
    /// resume a broken WebSocket (the server sends what was lost, once) or
    /// to reach the server for a message, before the connection closes with the reason (0: the
    /// default, ACP_DEFAULT_RECONNECT_TIMEOUT_MS, closes at the first break).
    pub reconnect_timeout_ms: u32,
    /// acp_server_start: output kept for each connection after it was sent
    /// (Streamable HTTP events, resumable WebSocket messages), for a client
    /// that comes back with Last-Event-ID (0: the default,
    /// ACP_DEFAULT_MAX_REPLAY_BYTES; a resume that needs more gets 410).
    pub max_replay_bytes: usize,
    /// acp_connection_connect_url: how long the server has to take the
    /// connection (the TCP connect, the TLS handshake and the WebSocket
    /// upgrade) before it closes with the reason (0: the default,
    /// ACP_DEFAULT_CONNECT_TIMEOUT_MS; UINT32_MAX: wait for ever).
    pub connect_timeout_ms: u32,
    /// Zero (keeps the struct free of padding).
    pub _reserved: u32,
}

/// The values of `acp_options::protocol_versions`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_protocol_versions {
    /// Version 1 only (what 0 means too).
    ACP_PROTOCOL_VERSIONS_V1 = 1,
    /// The version 2 draft only: a v1 client's `initialize` is answered
    /// -32022 (Unsupported protocol version).
    ACP_PROTOCOL_VERSIONS_V2 = 2,
    /// Both: an agent serves each client the version it asks for; a client
    /// asking for 2 follows the agent's answer.
    ACP_PROTOCOL_VERSIONS_V1_AND_V2 = 3,
}

impl Default for acp_options {
    fn default() -> Self {
        Self {
            struct_size: size_of::<Self>(),
            side: acp_side::ACP_SIDE_RAW,
            max_message_size: 0,
            exit_grace_ms: 0,
            unstable: false,
            quick_response_callbacks: false,
            max_in_flight_requests: 0,
            max_buffered_bytes: 0,
            output_stall_timeout_ms: 0,
            unchecked_methods: ptr::null(),
            protocol_versions: 0,
            reconnect_timeout_ms: 0,
            max_replay_bytes: 0,
            connect_timeout_ms: 0,
            _reserved: 0,
        }
    }
}

/// A connection's settings as read from `acp_options` when it is created:
/// nothing in them points into C's memory, so they may be kept (a server
/// starts every connection it accepts with them).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The engine's settings (before the binding adds its own).
    pub host: HostOptions,
    /// `acp_options::exit_grace_ms`.
    pub exit_grace_ms: u32,
    /// `acp_options::quick_response_callbacks`.
    pub quick_response_callbacks: bool,
    /// `acp_options::reconnect_timeout_ms` (None: off).
    pub reconnect_timeout: Option<std::time::Duration>,
    /// `acp_options::max_replay_bytes` (None: the default).
    pub max_replay_bytes: Option<usize>,
    /// `acp_options::connect_timeout_ms` (None: wait for ever).
    pub connect_timeout: Option<std::time::Duration>,
}

impl Settings {
    /// Read `options` (NULL: the defaults; the fields beyond its
    /// `struct_size` too). Its strings are copied.
    pub(crate) unsafe fn read(options: *const acp_options) -> Result<Self, Failure> {
        let options = sized::read(options, "options")?.unwrap_or_default();
        Ok(Self {
            host: options.host_options()?,
            exit_grace_ms: options.exit_grace_ms,
            quick_response_callbacks: options.quick_response_callbacks,
            reconnect_timeout: (options.reconnect_timeout_ms > 0)
                .then(|| std::time::Duration::from_millis(options.reconnect_timeout_ms.into())),
            max_replay_bytes: (options.max_replay_bytes > 0).then_some(options.max_replay_bytes),
            connect_timeout: match options.connect_timeout_ms {
                0 => acp_engine::remote::ConnectOptions::default().connect_timeout,
                u32::MAX => None,
                ms => Some(std::time::Duration::from_millis(ms.into())),
            },
        })
    }
}

impl SizedStruct for acp_options {
    const NAME: &'static str = "acp_options";
    const FIRST_SIZE: usize = offset_of!(acp_options, unchecked_methods) + size_of::<*const *const c_char>();

    fn defaults() -> Self {
        Self::default()
    }

    unsafe fn check_in_place(options: *const Self, _size: usize, name: &str) -> Result<(), Failure> {
        // `side` is in the first version: within any accepted size.
        let side = ptr::addr_of!((*options).side).cast::<c_int>().read();
        if !(0..=2).contains(&side) {
            return Err(Failure::new(
                ACP_ERR_INVALID_ARGUMENT,
                format!("{name}->side is {side}, not an acp_side"),
            ));
        }
        Ok(())
    }
}

impl acp_options {
    /// The engine's settings for these (before the binding adds its own).
    /// A method name that is not UTF-8 is `ACP_ERR_INVALID_UTF8`.
    unsafe fn host_options(&self) -> Result<HostOptions, Failure> {
        let mut options = HostOptions {
            side: match self.side {
                acp_side::ACP_SIDE_RAW => Side::Raw,
                acp_side::ACP_SIDE_AGENT => Side::Agent,
                acp_side::ACP_SIDE_CLIENT => Side::Client,
            },
            protocol: if self.unstable {
                Protocol::Unstable
            } else {
                Protocol::Stable
            },
            ..HostOptions::default()
        };
        if self.max_message_size > 0 {
            options.max_message_size = self.max_message_size;
        }
        if self.max_in_flight_requests > 0 {
            options.limits.max_in_flight_requests = self.max_in_flight_requests;
        }
        if self.max_buffered_bytes > 0 {
            options.limits.max_buffered_bytes = self.max_buffered_bytes;
        }
        if self.output_stall_timeout_ms > 0 {
            options.limits.output_stall_timeout = Some(std::time::Duration::from_millis(
                self.output_stall_timeout_ms.into(),
            ));
        }
        options.unchecked_methods = self.unchecked_methods()?;
        options.protocol_versions = match self.protocol_versions {
            0 | 1 => ProtocolVersions::V1,
            2 => ProtocolVersions::V2,
            3 => ProtocolVersions::V1_AND_V2,
            other => {
                return Err(Failure::new(
                    ACP_ERR_INVALID_ARGUMENT,
                    format!("options->protocol_versions is {other}, not an acp_protocol_versions"),
                ))
            }
        };
        Ok(options)
    }

    /// `unchecked_methods`, copied (NULL: none).
    unsafe fn unchecked_methods(&self) -> Result<UncheckedMethods, Failure> {
        let mut names = Vec::new();
        if !self.unchecked_methods.is_null() {
            let mut cursor = self.unchecked_methods;
            while !(*cursor).is_null() {
                let name = format!("unchecked_methods[{}]", names.len());
                names.push(str_arg(*cursor, &name)?.to_owned());
                cursor = cursor.add(1);
            }
        }
        Ok(UncheckedMethods::new(names))
    }
}

/// How to reach a remote agent (`acp_connection_connect_url`). NULL, or
/// zero-initialised, means no token and the system's CA roots.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_remote_options {
    /// NULL, or sent as `Authorization: Bearer <token>`.
    pub token: *const c_char,
    /// NULL, or a PEM file of CA certificates to trust besides the
    /// system's (`wss://` and `https://` servers with a private CA).
    pub ca_file: *const c_char,
}

impl acp_remote_options {
    pub(crate) unsafe fn connect_options(&self) -> Result<acp_engine::remote::ConnectOptions, Failure> {
        let mut connect = acp_engine::remote::ConnectOptions::default();
        if !self.token.is_null() {
            connect.bearer_token = Some(str_arg(self.token, "token")?.to_owned());
        }
        if !self.ca_file.is_null() {
            connect.ca_file = Some(str_arg(self.ca_file, "ca_file")?.into());
        }
        Ok(connect)
    }
}
