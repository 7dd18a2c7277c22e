//! Starting a driven connection: the engine's host connection with the
//! settings a driver needs (it reads on its own thread, drains whole
//! batches, and a send waits for room after handing a callback's job off).

use std::sync::Arc;

use tokio::runtime::Handle;

use super::dispatch::{self, before_send_blocks};
use super::driver::{Driver, DriverOptions, Handler};
use super::stream::{Stream, READ_SPIN};
use crate::host::{BlockWhenFull, HostOptions};
use crate::transport::Transport;

impl<H: Handler> Driver<H> {
    /// Connect over `transport` on `runtime`. With callbacks, call `start`
    /// once the host may receive them.
    pub fn connect(
        transport: Transport,
        host_options: HostOptions,
        handler: H,
        options: DriverOptions,
        runtime: &Handle,
    ) -> std::io::Result<Arc<Self>> {
        let host_options = HostOptions {
            // The dispatch thread reads the stream itself: no hop per
            // message. A host taking events leaves reading to the engine,
            // so that a host busy elsewhere (writing a burst to a peer that
            // is writing back) does not stop it (up to the queue's bound).
            host_reads: options.callbacks,
            // The host's queue is bounded in events: so is a batch.
            drain_chunk: usize::MAX,
            // Threads may block: a send waits for room rather than parking.
            block_when_full: Some(BlockWhenFull(Arc::new(before_send_blocks))),
            ..host_options
        };
        let (host, stream) = Stream::connect(transport, host_options, runtime, READ_SPIN)?;
        Ok(Arc::new(Self::new(host, handler, options, stream)))
    }

    /// Start the dispatch thread (with callbacks; nothing otherwise).
    pub fn start(self: &Arc<Self>) {
        if self.options.callbacks {
            dispatch::start(self);
        }
    }
}
