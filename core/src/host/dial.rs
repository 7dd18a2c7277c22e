//! A remote agent dialled for a host before any connection runs on it: the
//! official Python SDK's `create_websocket_stream` connects when it is
//! awaited, so a refused handshake fails there and the server's cookies
//! are in the caller's store at once. The host waits on its event loop
//! (`done` is called from an engine thread), then takes the transport for a
//! connection, or as a socket to read and write messages itself.

use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use crate::remote::{self, ConnectOptions, Connected};
use crate::transport::Transport;

/// Where a dial is.
enum Dialling {
    Pending,
    Connected(Box<Connected>),
    Failed(String),
    /// Its transport was taken.
    Taken,
}

/// One dial in the background; dropping it stops the dial, or closes the
/// transport nobody took.
pub struct HostDial {
    state: Arc<Mutex<Dialling>>,
    task: JoinHandle<()>,
}

/// How a dial ended, once it has.
pub enum DialOutcome {
    /// Connected: the `Set-Cookie` values of the handshake's answer.
    Connected(Vec<String>),
    /// Why it could not connect ("cannot connect to ...: HTTP 401").
    Failed(String),
    /// Its transport was taken already.
    Taken,
}

impl HostDial {
    /// Dial `url` on `runtime`; `done` is called once it connected or failed.
    pub fn start(
        url: &str,
        options: ConnectOptions,
        runtime: &Handle,
        done: impl FnOnce() + Send + 'static,
    ) -> Self {
        let state = Arc::new(Mutex::new(Dialling::Pending));
        let (url, settled) = (url.to_owned(), state.clone());
        let task = runtime.spawn(async move {
            let outcome = match remote::connect_for_cookies(&url, &options).await {
                Ok(connected) => Dialling::Connected(Box::new(connected)),
                Err(error) => Dialling::Failed(format!("cannot connect to {url}: {error}")),
            };
            *lock(&settled) = outcome;
            done();
        });
        Self { state, task }
    }

    /// None while it dials.
    pub fn outcome(&self) -> Option<DialOutcome> {
        match &*lock(&self.state) {
            Dialling::Pending => None,
            Dialling::Connected(connected) => Some(DialOutcome::Connected(connected.set_cookies.clone())),
            Dialling::Failed(why) => Some(DialOutcome::Failed(why.clone())),
            Dialling::Taken => Some(DialOutcome::Taken),
        }
    }

    /// Stop dialling (a dial that ended is not changed).
    pub fn stop(&self) {
        self.task.abort();
    }

    /// The connected transport (once: later calls, and calls before it
    /// connected, get None).
    pub fn take_transport(&self) -> Option<Transport> {
        let mut state = lock(&self.state);
        if !matches!(*state, Dialling::Connected(_)) {
            return None;
        }
        match std::mem::replace(&mut *state, Dialling::Taken) {
            Dialling::Connected(connected) => Some(connected.transport),
            _ => unreachable!("checked above"),
        }
    }
}

impl Drop for HostDial {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock(state: &Mutex<Dialling>) -> std::sync::MutexGuard<'_, Dialling> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
