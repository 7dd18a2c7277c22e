//! `NativeServer`: the engine's remote server (WebSocket and Streamable
//! HTTP) for Node. A connection arriving to an empty queue calls the wake
//! function; JS then takes each with `accept` and starts an agent on it
//! (node/src/server.ts).

use std::sync::Arc;
use std::time::Duration;

use acp_engine::host::HostServer;
use acp_engine::remote::{ServeOptions, ServerTls};
use napi::bindgen_prelude::Function;
use napi::{Error, Result, Status};
use napi_derive::napi;

use crate::{engine_runtime, enter, options, NativeConnection, NativeSettings, Waker};

/// A server's settings from JS (absent: the default; a timeout of 0: none).
#[napi(object)]
pub struct NativeServeOptions {
    /// The endpoint (default `/acp`).
    pub path: Option<String>,
    /// Required as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Connections open at once (default 1024).
    pub max_connections: Option<u32>,
    /// The largest message a client may send, in bytes.
    pub max_message_size: Option<u32>,
    /// Drop a client that takes nothing this long while output waits.
    pub output_stall_timeout_ms: Option<u32>,
    /// Streamable HTTP: output held per connection for its client.
    pub max_buffered_bytes: Option<f64>,
    /// Streamable HTTP: output kept per connection after sending, for resumes.
    pub max_replay_bytes: Option<f64>,
    /// Streamable HTTP: end a connection quiet this long.
    pub idle_timeout_ms: Option<u32>,
    /// Streamable HTTP: the longest session or request id a client may send.
    pub max_id_length: Option<u32>,
    /// Streamable HTTP: sessions holding output no client reads, at most.
    pub max_buffered_session_streams: Option<u32>,
    /// PEM certificate chain, to serve `wss://` and `https://`.
    pub tls_cert: Option<String>,
    /// Its PEM private key.
    pub tls_key: Option<String>,
    /// Let several clients share a session (default false).
    pub attach: Option<bool>,
}

fn serve_options(settings: NativeServeOptions) -> Result<ServeOptions> {
    let mut options = ServeOptions::default();
    let timeout = |ms: u32| (ms > 0).then(|| Duration::from_millis(ms.into()));
    if let Some(path) = settings.path {
        options.path = path;
    }
    options.bearer_token = settings.token;
    if let Some(max) = settings.max_connections {
        options.max_connections = max as usize;
    }
    if let Some(max) = settings.max_message_size {
        options.max_message_size = max as usize;
    }
    if let Some(ms) = settings.output_stall_timeout_ms {
        options.output_stall_timeout = timeout(ms);
    }
    if let Some(max) = settings.max_buffered_bytes {
        options.max_buffered_bytes = max.max(1.0) as usize;
    }
    if let Some(max) = settings.max_replay_bytes {
        options.max_replay_bytes = max.max(0.0) as usize;
    }
    if let Some(ms) = settings.idle_timeout_ms {
        options.idle_timeout = timeout(ms);
    }
    if let Some(max) = settings.max_id_length {
        options.max_id_length = max as usize;
    }
    if let Some(max) = settings.max_buffered_session_streams {
        options.max_buffered_session_streams = max as usize;
    }
    options.attach = settings.attach.unwrap_or(false);
    match (settings.tls_cert, settings.tls_key) {
        (Some(cert), Some(key)) => {
            let tls = ServerTls::from_pem_files(cert, key)
                .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
            options.tls = Some(tls);
        }
        (None, None) => {}
        _ => return Err(Error::new(Status::InvalidArg, "tlsCert and tlsKey go together")),
    }
    Ok(options)
}

/// A listening server; its connections are taken with `accept`.
#[napi]
pub struct NativeServer {
    server: Arc<HostServer>,
    waker: Waker,
}

#[napi]
impl NativeServer {
    /// Listen on `address` (`HOST:PORT`). `wake` is called when connections
    /// wait to be accepted; it keeps Node alive until `close`.
    #[napi(factory)]
    pub fn bind(address: String, options: NativeServeOptions, wake: Function<(), ()>) -> Result<Self> {
        let options = serve_options(options)?;
        let waker = Waker::new(wake)?;
        let signal = waker.clone();
        let server = HostServer::bind(&address, options, engine_runtime(), move || signal.wake()).map_err(
            |error| {
                Error::new(
                    Status::GenericFailure,
                    format!("cannot listen on {address}: {error}"),
                )
            },
        )?;
        Ok(Self {
            server: Arc::new(server),
            waker,
        })
    }

    /// Connections accepted and not taken yet.
    #[napi]
    pub fn waiting(&self) -> u32 {
        self.server.waiting() as u32
    }

    /// The next waiting connection, started with `settings` (see
    /// `NativeConnection`), or null.
    #[napi]
    pub fn accept(
        &self,
        settings: NativeSettings,
        wake: Function<(), ()>,
    ) -> Result<Option<NativeConnection>> {
        let Some(accepted) = self.server.accept() else {
            return Ok(None);
        };
        let options = options(&settings)?;
        let waker = Waker::new(wake)?;
        let _guard = enter();
        Ok(Some(NativeConnection::start(accepted.transport, options, waker)))
    }

    /// `ws://` (or `wss://`) URL of the endpoint.
    #[napi(getter)]
    pub fn websocket_url(&self) -> String {
        self.server.websocket_url().to_owned()
    }

    /// `http://` (or `https://`) URL of the endpoint.
    #[napi(getter)]
    pub fn http_url(&self) -> String {
        self.server.http_url().to_owned()
    }

    /// The port served (with port 0, the one the system chose).
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        self.server.local_addr().port().into()
    }

    /// Connections open now.
    #[napi]
    pub fn connections(&self) -> u32 {
        self.server.connections() as u32
    }

    /// Stop accepting and end every connection (on a thread of its own:
    /// JS waits for its connections' `closed`). Node is no longer kept alive
    /// by the server.
    #[napi]
    pub fn close(&self) {
        self.waker.release();
        let server = self.server.clone();
        std::thread::spawn(move || server.shutdown());
    }

    /// Drain, then stop (on a thread of its own: JS waits for its
    /// connections' `closed`): no new connection; each ends once its agent
    /// has answered its client's requests, the rest after `timeout_ms`.
    #[napi]
    pub fn drain(&self, timeout_ms: u32) {
        self.waker.release();
        let server = self.server.clone();
        std::thread::spawn(move || server.drain(Duration::from_millis(timeout_ms.into())));
    }
}
