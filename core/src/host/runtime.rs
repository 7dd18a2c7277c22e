//! The engine's own tokio runtime for host-language bindings: started on
//! first use, shared by every connection of the process, never stopped (its
//! threads do not keep a host process alive; the host's own handles do).

use std::sync::OnceLock;

use tokio::runtime::{Handle, Runtime};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The shared runtime's handle (two workers: the engine's I/O is light and
/// the host's own thread needs a core).
pub fn runtime() -> &'static Handle {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("acp-engine")
                .enable_all()
                .build()
                .expect("start the acp-engine runtime")
        })
        .handle()
}
