//! The settings of a host connection.

use std::sync::Arc;

use super::Side;
use crate::{Limits, Protocol, ProtocolVersions, UncheckedMethods};

/// What `HostOptions::block_when_full` runs on the sending thread before
/// it waits for room in the write queue (a binding that runs callbacks on a
/// thread of its own hands that thread's work to another one first).
#[derive(Clone)]
pub struct BlockWhenFull(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for BlockWhenFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockWhenFull(..)")
    }
}

/// Settings for [`HostConnection::connect`](super::HostConnection::connect).
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Which side of ACP the connection plays.
    pub side: Side,
    /// Speak the unstable protocol too (its methods are unknown otherwise).
    pub protocol: Protocol,
    /// Which ACP versions the connection speaks (v1 by default); with v2,
    /// `initialize` negotiates the version (see [`crate::version`]).
    pub protocol_versions: ProtocolVersions,
    /// Methods outside the schema sent and received as they are (see
    /// [`UncheckedMethods`]).
    pub unchecked_methods: UncheckedMethods,
    /// Inbound notifications and requests the host may leave undrained
    /// before the engine stops reading (backpressure).
    pub queue_capacity: usize,
    /// The largest inbound message, in bytes.
    pub max_message_size: usize,
    /// See `ConnectionBuilder::read_spin`.
    pub read_spin: std::time::Duration,
    /// Let the host read the stream on its own thread: it watches
    /// `HostConnection::read_fd` and calls `pump` (the fastest path: no
    /// thread hop per message). Only for pipes and sockets; otherwise, or
    /// when false, an engine task reads and `wake` signals events.
    pub host_reads: bool,
    /// Collect outbound frames until `flush` (or 64 KiB) and write them
    /// with one call: a host thread sending a burst then costs one write per
    /// batch, and no wake-up of the writer task. The host must call `flush`
    /// before it waits (Python: `loop.call_soon`).
    pub buffer_output: bool,
    /// The most events one `drain` returns (the host then drains until
    /// `None`). A garbage-collected host that parses a drained batch into
    /// objects keeps them all alive until the batch is handled; CPython
    /// collects every 700 new objects and promotes what is alive, so a
    /// batch of hundreds of messages paid for collections that a batch
    /// small enough to be freed first never triggers.
    pub drain_chunk: usize,
    /// Block SIGPIPE around writes made on the host's threads (a C host does
    /// not ignore it; Python and Node do).
    pub guard_sigpipe: bool,
    /// When the write queue is full, make the sender wait for room (after
    /// running the hook) instead of parking the send with a ticket: for
    /// hosts whose sending threads may block (C). None: park.
    pub block_when_full: Option<BlockWhenFull>,
    /// What the connection may hold for a peer that is not reading.
    pub limits: Limits,
    /// Hand the host each inbound request's and notification's params
    /// without the properties their schema type does not describe, as the
    /// official TypeScript SDK's handlers get them (its parse strips them).
    pub strip_unknown_fields: bool,
    /// Queue an `OBSERVED` event for every message read from or written to
    /// the peer (its line's text), for the host's stream observers.
    pub observe: bool,
    /// On a peer's `$/cancel_request`, tell the host (`CANCELLED`) and send
    /// the answer its handler then gives, as the official TypeScript and
    /// Python SDKs do (see `ConnectionBuilder::handler_answers_cancelled`);
    /// otherwise the engine answers -32800 at once and drops the host's.
    pub handler_answers_cancelled: bool,
    /// A request whose `$/cancel_request` arrives while it still waits in
    /// the queue (typically both in one read) is taken back out: its
    /// handler never starts, and the engine answers -32800, as the official
    /// Python SDK does (default). Off: the host gets it and then
    /// `CANCELLED`, as the official TypeScript SDK starts every request's
    /// handler as it reads it.
    pub withdraw_cancelled_requests: bool,
}

impl Default for HostOptions {
    fn default() -> Self {
        Self {
            side: Side::Raw,
            protocol: Protocol::Stable,
            protocol_versions: ProtocolVersions::V1,
            unchecked_methods: UncheckedMethods::default(),
            queue_capacity: 4096,
            max_message_size: crate::framing::DEFAULT_MAX_MESSAGE_SIZE,
            // No read spin: the host's own thread needs the core
            // (docs/performance.md).
            read_spin: std::time::Duration::ZERO,
            host_reads: false,
            buffer_output: false,
            drain_chunk: usize::MAX,
            guard_sigpipe: false,
            block_when_full: None,
            limits: Limits::default(),
            strip_unknown_fields: false,
            observe: false,
            handler_answers_cancelled: false,
            withdraw_cancelled_requests: true,
        }
    }
}
