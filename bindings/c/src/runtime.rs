//! `acp_shutdown`: stop the library's threads (the engine's runtime) for a
//! clean exit.

/// Stop the library's threads (for a clean exit, e.g. under valgrind). Call
/// it after every connection was freed; a connection still open is cut off
/// (it reports closed, its calls fail with ACP_ERR_CLOSED): its pending
/// requests fail, and its close is delivered as any close is (`on_close`
/// on the dispatch thread, or a `CLOSED` event to a thread waiting for
/// events), with the reason "the engine's runtime was shut down". A later
/// new connection starts a new runtime.
#[no_mangle]
pub extern "C" fn acp_shutdown() {
    crate::ffi::guard_value((), acp_engine::host::shutdown_runtime)
}
