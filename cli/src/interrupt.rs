//! Ctrl-C, SIGTERM and SIGHUP for the commands that run agents: the work
//! in progress is dropped (every agent's process tree is killed with it,
//! see `acp_engine::ProcessTree`) and the command exits 128 + the signal,
//! as a shell reports a process killed by it.

use std::future::Future;

use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::args::Failure;

/// The stop signals, listened to (from then on they no longer end the
/// process by themselves): SIGINT, SIGTERM and SIGHUP.
pub struct Stops {
    pub interrupt: Signal,
    pub terminate: Signal,
    pub hangup: Signal,
}

impl Stops {
    pub fn listen() -> Result<Self, Failure> {
        let listen =
            |kind| signal(kind).map_err(|error| Failure::Run(format!("cannot handle signals: {error}")));
        Ok(Self {
            interrupt: listen(SignalKind::interrupt())?,
            terminate: listen(SignalKind::terminate())?,
            hangup: listen(SignalKind::hangup())?,
        })
    }

    /// The next of any of them: its number.
    pub async fn any(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => libc::SIGINT,
            _ = self.terminate.recv() => libc::SIGTERM,
            _ = self.hangup.recv() => libc::SIGHUP,
        }
    }
}

/// Run `work` unless a stop signal comes first.
pub async fn unless_interrupted<T>(work: impl Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    let mut stops = Stops::listen()?;
    tokio::select! {
        outcome = work => outcome,
        signal = stops.any() => Err(Failure::Exit(128 + signal as u8)),
    }
}
