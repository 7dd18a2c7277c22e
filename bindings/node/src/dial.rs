//! A remote agent's address and how to reach it (`RemoteSettings`), and
//! `NativeDial`: the agent dialled before any connection runs on it, for
//! the official SDK's client streams read and written by hand
//! (`createWebSocketStream(url).readable`), on the core's `HostDial`.

use acp_engine::host::{DialOutcome, HostDial};
use acp_engine::remote::ConnectOptions;
use napi::bindgen_prelude::Function;
use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::{engine_runtime, Waker};

/// A header a remote client sends.
#[napi(object)]
pub struct RequestHeader {
    /// Its name (`x-api-key`).
    pub name: String,
    /// Its value.
    pub value: String,
}

/// A remote agent (`ws://`, `wss://`, `http://` or `https://`) and how to
/// reach it.
#[napi(object)]
pub struct RemoteSettings {
    /// The agent's URL.
    pub url: String,
    /// Sent as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// A PEM file of CA certificates trusted besides the system's.
    pub ca_file: Option<String>,
    /// Resume a broken connection for up to this long; 0 or absent, off.
    pub reconnect_timeout_ms: Option<u32>,
    /// More headers for the handshake or every HTTP request.
    pub headers: Option<Vec<RequestHeader>>,
    /// Absent, the default; 0, wait for ever.
    pub connect_timeout_ms: Option<u32>,
}

impl RemoteSettings {
    pub(crate) fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            bearer_token: self.token.clone(),
            headers: self
                .headers
                .iter()
                .flatten()
                .map(|header| (header.name.clone(), header.value.clone()))
                .collect(),
            ca_file: self.ca_file.clone().map(Into::into),
            reconnect_timeout: self
                .reconnect_timeout_ms
                .filter(|ms| *ms > 0)
                .map(|ms| std::time::Duration::from_millis(ms.into())),
            connect_timeout: ConnectOptions::connect_timeout_millis(self.connect_timeout_ms.map(u64::from)),
            ..Default::default()
        }
    }
}

/// How a dial ended.
#[napi(object)]
pub struct DialEnd {
    /// Why it could not connect; absent once connected.
    pub failed: Option<String>,
    /// The `Set-Cookie` values of the handshake's answer.
    pub set_cookies: Vec<String>,
}

/// A remote agent dialled in the background; `done` is called on Node's
/// thread once it connected or failed (and keeps Node alive until then).
#[napi]
pub struct NativeDial {
    dial: HostDial,
    done: Waker,
}

fn taken() -> Error {
    Error::new(
        Status::GenericFailure,
        "acp-engine: the dialled connection was taken already",
    )
}

#[napi]
impl NativeDial {
    /// Dial `remote`.
    #[napi(factory)]
    pub fn start(remote: RemoteSettings, done: Function<(), ()>) -> Result<Self> {
        let done = Waker::new(done)?;
        let signal = done.clone();
        let options = remote.connect_options();
        let dial = HostDial::start(&remote.url, options, engine_runtime(), move || signal.wake());
        Ok(Self { dial, done })
    }

    /// Null while it dials; afterwards, how it ended.
    #[napi]
    pub fn outcome(&self) -> Result<Option<DialEnd>> {
        let end = match self.dial.outcome() {
            None => return Ok(None),
            Some(DialOutcome::Connected(set_cookies)) => DialEnd {
                failed: None,
                set_cookies,
            },
            Some(DialOutcome::Failed(why)) => DialEnd {
                failed: Some(why),
                set_cookies: Vec::new(),
            },
            Some(DialOutcome::Taken) => return Err(taken()),
        };
        self.done.release();
        Ok(Some(end))
    }

    /// What was dialled as one end of a Unix socket, for the package to
    /// read and write messages itself (it owns the descriptor); once.
    #[napi]
    pub fn take_socket(&self) -> Result<i32> {
        use std::os::fd::IntoRawFd;
        let transport = self.dial.take_transport().ok_or_else(taken)?;
        let _runtime = engine_runtime().enter();
        let socket = transport
            .into_socket()
            .map_err(|error| Error::new(Status::GenericFailure, error.to_string()))?;
        Ok(socket.into_raw_fd())
    }

    /// Stop dialling, or close what was dialled unless it was taken.
    #[napi]
    pub fn close(&self) {
        self.done.release();
        self.dial.stop();
        drop(self.dial.take_transport());
    }
}
