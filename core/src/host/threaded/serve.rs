//! A server of driven connections: a thread of its own takes each accepted
//! connection (`HostServer`), has the host start it, and lets go of it once
//! the host was told it closed; `stop` ends them all and waits for that.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::driver::{Driver, Handler};
use crate::host::{runtime, Accepted, EventFd, HostServer};
use crate::remote::ServeOptions;

/// How often the accepting thread lets go of finished connections when idle.
const SWEEP_EVERY: Duration = Duration::from_millis(200);

/// A listening server whose connections are driven.
pub struct Serving {
    host: Arc<HostServer>,
    stopping: Arc<AtomicBool>,
    accepting: Mutex<Option<JoinHandle<()>>>,
}

impl Serving {
    /// Listen on `address` (`HOST:PORT`; port 0 picks one) and serve:
    /// `start` makes a driven connection of each one accepted (None: it
    /// could not); `release` gets each back once it finished.
    pub fn listen<H: Handler>(
        address: &str,
        options: ServeOptions,
        start: impl FnMut(Accepted) -> Option<Arc<Driver<H>>> + Send + 'static,
        release: impl FnMut(Arc<Driver<H>>) + Send + 'static,
    ) -> io::Result<Self> {
        let wake = Arc::new(EventFd::new()?);
        let signal = wake.clone();
        let host = HostServer::bind(address, options, &runtime(), move || signal.signal())
            .map_err(|error| io::Error::new(error.kind(), format!("cannot listen on {address}: {error}")))?;
        let host = Arc::new(host);
        let stopping = Arc::new(AtomicBool::new(false));
        let (server, stop) = (host.clone(), stopping.clone());
        let accepting = std::thread::Builder::new()
            .name("acp-server".to_owned())
            .spawn(move || accept_loop(&server, &wake, &stop, start, release))?;
        Ok(Self {
            host,
            stopping,
            accepting: Mutex::new(Some(accepting)),
        })
    }

    /// The engine's server (its URLs, its connections).
    pub fn host(&self) -> &HostServer {
        &self.host
    }

    /// Stop accepting and end every connection, then return once each was
    /// released. Not from one of the server's own callbacks.
    pub fn stop(&self) {
        self.host.shutdown();
        self.release_all();
    }

    /// Drain ([`HostServer::drain`]: no new connection, each ends once its
    /// agent answered its client's requests, the rest after `deadline`),
    /// then return once each was released. Not from one of the server's
    /// own callbacks.
    pub fn drain(&self, deadline: Duration) {
        self.host.drain(deadline);
        self.release_all();
    }

    /// Once every connection ended: wait until the accepting thread has
    /// released them all.
    fn release_all(&self) {
        self.stopping.store(true, Ordering::Release);
        let accepting = self.accepting.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(accepting) = accepting {
            let _ = accepting.join();
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Start a connection for each accepted one; release those that finished.
fn accept_loop<H: Handler>(
    host: &HostServer,
    wake: &EventFd,
    stopping: &AtomicBool,
    mut start: impl FnMut(Accepted) -> Option<Arc<Driver<H>>>,
    mut release: impl FnMut(Arc<Driver<H>>),
) {
    let mut open: Vec<Arc<Driver<H>>> = Vec::new();
    loop {
        wake.reset();
        while let Some(accepted) = host.accept() {
            open.extend(start(accepted));
        }
        let (finished, still_open) = open.into_iter().partition(|conn| conn.is_finished());
        open = still_open;
        finished.into_iter().for_each(&mut release);
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
