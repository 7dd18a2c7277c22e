//! Ctrl-C, SIGTERM and SIGHUP for the commands that run agents: the work
//! in progress is dropped (every agent's process tree is killed with it,
//! see `acp_engine::ProcessTree`) and the command exits 128 + the signal,
//! as a shell reports a process killed by it.

use std::future::Future;

use tokio::signal::unix::{signal, SignalKind};

use crate::args::Failure;

/// Run `work` unless a stop signal comes first.
pub async fn unless_interrupted<T>(work: impl Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    let listen = |kind: SignalKind| {
        signal(kind).map_err(|error| Failure::Run(format!("cannot handle signals: {error}")))
    };
    let (mut interrupt, mut terminate, mut hangup) = (
        listen(SignalKind::interrupt())?,
        listen(SignalKind::terminate())?,
        listen(SignalKind::hangup())?,
    );
    let signal = tokio::select! {
        outcome = work => return outcome,
        _ = interrupt.recv() => libc::SIGINT,
        _ = terminate.recv() => libc::SIGTERM,
        _ = hangup.recv() => libc::SIGHUP,
    };
    Err(Failure::Exit(128 + signal as u8))
}
