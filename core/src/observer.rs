//! Observing the wire: every line read or written, for logging and
//! tracing. A leaf: the engine's state holds an observer, and nothing here
//! knows the engine.

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Received from the peer.
    Inbound,
    /// Sent to the peer.
    Outbound,
}

/// Sees every line read from and written to the wire (for logging and
/// tracing). Called on the engine's reader and writer tasks: keep it quick.
pub trait Observer: Send + Sync + 'static {
    /// One message, as the bytes of its line (without the newline).
    fn on_message(&self, direction: Direction, line: &[u8]);
}

impl<F> Observer for F
where
    F: Fn(Direction, &[u8]) + Send + Sync + 'static,
{
    fn on_message(&self, direction: Direction, line: &[u8]) {
        self(direction, line)
    }
}
