//! A C connection is the core's threaded driver (`acp_engine::host::threaded`)
//! with C's handler (`callbacks.rs`), known to C by its `Arc`'s pointer.

use std::sync::Arc;

use acp_engine::host::{self, threaded::Driver};

use crate::connection::acp_connection;
use crate::ffi::acp_result::*;
use crate::ffi::Failure;
use crate::handlers::{acp_handlers, acp_response_callback, UserData};

pub(crate) type Conn = Driver<CHost>;

/// What the driver calls back into C with.
pub(crate) struct CHost {
    /// None: an event connection (`acp_connection_next_events`).
    pub handlers: Option<acp_handlers>,
    /// The runtime generation (see `acp_shutdown`).
    pub generation: u64,
}

/// How `acp_connection_send_request` with a callback wants its answer.
pub(crate) struct Reply(pub acp_response_callback, pub UserData);

/// The pointer C knows `conn` by.
pub(crate) fn c_pointer(conn: &Arc<Conn>) -> *const acp_connection {
    Arc::as_ptr(conn).cast()
}

/// The connection behind a C pointer, as a new reference.
pub(crate) unsafe fn connection_arg(connection: *const acp_connection) -> Result<Arc<Conn>, Failure> {
    if connection.is_null() {
        return Err(Failure::null("connection"));
    }
    let conn = connection.cast::<Conn>();
    // SAFETY: C holds a reference (the pointer is valid until
    // acp_connection_free, and callbacks run while a dispatch thread holds one).
    Arc::increment_strong_count(conn);
    Ok(Arc::from_raw(conn))
}

/// A connection whose runtime still runs (not cut off by `acp_shutdown`).
pub(crate) unsafe fn live_connection(connection: *const acp_connection) -> Result<Arc<Conn>, Failure> {
    let conn = connection_arg(connection)?;
    if host::runtime_alive(conn.handler.generation) {
        Ok(conn)
    } else {
        Err(Failure::new(
            ACP_ERR_CLOSED,
            "acp_shutdown stopped this connection's runtime",
        ))
    }
}
