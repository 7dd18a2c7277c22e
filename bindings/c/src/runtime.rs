//! The library's own tokio runtime: started on first use, stopped by
//! `acp_shutdown`.

use std::sync::Mutex;
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// The runtime's handle, starting it if needed.
pub(crate) fn handle() -> Handle {
    let mut runtime = RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    runtime
        .get_or_insert_with(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("acp-engine")
                .enable_all()
                .build()
                .expect("start the acp-engine runtime")
        })
        .handle()
        .clone()
}

/// Stop the library's threads (for a clean exit, e.g. under valgrind). Call
/// it after every connection was freed; connections still open are cut
/// off. A later call to any acp_* function starts a new runtime.
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
