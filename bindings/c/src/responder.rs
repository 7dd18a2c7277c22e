//! The handle C holds for an inbound request (answered through `answer.rs`).

/// An inbound request waiting for its answer. Opaque: answer it exactly
/// once with `acp_responder_ok` or `acp_responder_error`.
pub struct acp_responder {
    _private: [u8; 0],
}
