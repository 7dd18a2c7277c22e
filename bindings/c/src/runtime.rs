//! The library's own tokio runtime: started on first use, stopped by
//! `acp_shutdown`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);
/// Bumped by every `acp_shutdown`: a connection made under an older
/// generation has lost its runtime.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The runtime's handle and generation, starting it if needed.
pub(crate) fn handle() -> (Handle, u64) {
    let mut runtime = RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let handle = runtime
        .get_or_insert_with(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                // C callbacks run on blocking threads; thousands of requests
                // in flight must not mean thousands of threads (callbacks
                // beyond this wait their turn).
                .max_blocking_threads(64)
                .thread_name("acp-engine")
                .on_thread_start(block_sigpipe)
                .enable_all()
                .build()
                .expect("start the acp-engine runtime")
        })
        .handle()
        .clone();
    (handle, GENERATION.load(Ordering::Acquire))
}

/// False once `acp_shutdown` stopped the runtime `generation` ran on.
pub(crate) fn alive(generation: u64) -> bool {
    GENERATION.load(Ordering::Acquire) == generation
}

/// A write to a peer that is gone raises SIGPIPE in the writing thread, and
/// a C host (unlike a Rust program) does not ignore it: its default action
/// would kill the host. Block it on the library's threads: the write then
/// fails with EPIPE and the connection closes. (Spawned children get a
/// clean signal mask from the standard library.)
fn block_sigpipe() {
    // SAFETY: plain libc calls on a local, initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Stop the library's threads (for a clean exit, e.g. under valgrind). Call
/// it after every connection was freed; a connection still open is cut off
/// (it reports closed, its calls fail with ACP_ERR_CLOSED). A later new
/// connection starts a new runtime.
#[no_mangle]
pub extern "C" fn acp_shutdown() {
    crate::ffi::guard_value((), || {
        let runtime = RUNTIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(runtime) = runtime {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    })
}
