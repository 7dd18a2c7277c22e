//! The threaded driver of the host contract, for hosts whose threads may
//! block (the C library, and Go and Kotlin through it): the engine's
//! [`HostConnection`](crate::host::HostConnection) taken by the host's own
//! threads, events decoded once ([`decode`]), and a [`Handler`] that says
//! what the host does with them.
//!
//! ```text
//! decode.rs    a drained batch as events whose strings stay in place (NUL-terminated)
//! answers.rs   how our requests want their answers; slots for waiting threads
//! stream.rs    driving: drain, read the stream on this thread, poll
//! driver.rs    the state: who drives, the backlog, waiters; Handler
//! monitor.rs   the monitor thread: callbacks blocked in the host's code are handed off
//! dispatch.rs  the dispatch thread: callbacks in wire order, hand-offs
//! events.rs    next_events, for hosts without callbacks
//! text.rs      a text connection: events as the engine's JSON batches, sends never block
//! request.rs   requests the caller's thread waits for; waiting for the close
//! connect.rs   starting a driven connection
//! serve.rs     a server of driven connections (accept, release when finished)
//! ```
//!
//! The ordering rules hold as for every host: notifications one at a time
//! in wire order; an answer after the notifications before it; a callback
//! that blocks does not stop the events behind it; a closed connection
//! fails every waiting request at once.

mod answers;
mod connect;
mod decode;
mod dispatch;
mod driver;
mod events;
mod monitor;
mod request;
#[cfg(feature = "remote")]
mod serve;
mod stream;
mod text;

pub use answers::{Answer, Slot, Waiting};
pub use decode::{decode, Event, Item, Text};
pub use dispatch::WouldDeadlock;
pub use driver::{Driver, DriverOptions, Handler};
pub use request::WaitError;
#[cfg(feature = "remote")]
pub use serve::Serving;
pub use stream::{Stream, READ_SPIN};
pub use text::TextConnection;
