//! The engine's own tokio runtime for host-language bindings: started on
//! first use and shared by every connection of the process. Its threads do
//! not keep a host process alive (the host's own handles do), and they block
//! SIGPIPE: a write to a peer that is gone then fails with EPIPE and closes
//! the connection instead of killing a host that does not ignore the signal
//! (a C program). [`shutdown_runtime`] stops it (C's `acp_shutdown`, for a
//! clean exit under valgrind); a later connection starts a new one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);
/// Bumped by every `shutdown_runtime`: a connection started under an older
/// generation has lost its runtime.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The shared runtime's handle (two workers: the engine's I/O is light and
/// the host's own thread needs a core), starting it if needed. A binding
/// that never calls [`shutdown_runtime`] may keep it for good.
pub fn runtime() -> Handle {
    runtime_and_generation().0
}

/// The runtime's handle and its generation (see [`runtime_alive`]).
pub fn runtime_and_generation() -> (Handle, u64) {
    let mut running = RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let runtime = running.get_or_insert_with(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("acp-engine")
            .on_thread_start(block_sigpipe)
            .enable_all()
            .build()
            .expect("start the acp-engine runtime")
    });
    (runtime.handle().clone(), GENERATION.load(Ordering::Acquire))
}

/// False once [`shutdown_runtime`] stopped the runtime of `generation`.
pub fn runtime_alive(generation: u64) -> bool {
    GENERATION.load(Ordering::Acquire) == generation
}

/// Stop the runtime and its threads (waiting up to two seconds for them).
/// Connections still open on it are cut off: each closes, and its host
/// hears of it as of any close (`closing.rs`).
pub fn shutdown_runtime() {
    let running = RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    if let Some(runtime) = running {
        GENERATION.fetch_add(1, Ordering::AcqRel);
        runtime.shutdown_timeout(Duration::from_secs(2));
    }
}

/// Block SIGPIPE on this thread. (Spawned children get a clean signal mask
/// from the standard library.)
fn block_sigpipe() {
    // SAFETY: plain libc calls on a local, initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
