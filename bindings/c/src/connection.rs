//! The handle C holds for a connection (its calls: `calls.rs`, `awaited.rs`).

/// A connection to a peer. Opaque; every function on it may be called from
/// any thread, except that `acp_connection_free` must be the last call. The
/// pointer callbacks receive is the same one the constructor returned.
pub struct acp_connection {
    _private: [u8; 0],
}
