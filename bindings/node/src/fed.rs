//! What a pipe connection's calls hand the JS that moves its bytes
//! (`web-streams.ts`): the state after a `pump()`, in the call it makes
//! anyway (each crossing into the addon costs about as much as reading a
//! line), and the output as a `Buffer`.

use acp_engine::host::HostConnection;
use napi::bindgen_prelude::{Buffer, ToNapiValue};
use napi::sys;
use napi_derive::napi;

const OPEN: u32 = 1;
const INPUT_LEFT: u32 = 2;
/// A wake-up says when reading may go on.
const READING_PAUSED: u32 = 4;

/// The bits of `pump()`'s answer.
#[napi(object)]
pub struct PumpStates {
    /// The connection reads on (its input has not ended).
    pub open: u32,
    /// Fed bytes are left unread.
    pub input_left: u32,
    /// Reading waits at the connection's limits.
    pub reading_paused: u32,
}

/// The bits of `pump()`'s answer.
#[napi]
pub fn pump_states() -> PumpStates {
    PumpStates {
        open: OPEN,
        input_left: INPUT_LEFT,
        reading_paused: READING_PAUSED,
    }
}

/// `connection`'s state right after a pump that left it `open` (or not).
pub(crate) fn pump_state(connection: &HostConnection, open: bool) -> u32 {
    let mut state = if open { OPEN } else { 0 };
    if connection.input_backlog() > 0 {
        state |= INPUT_LEFT;
    }
    if connection.reading_paused() {
        state |= READING_PAUSED;
    }
    state
}

/// Output this short is copied into a JS buffer: cheaper than handing JS
/// its allocation (an external buffer, with a finalizer), which pays off
/// for a large one.
const COPIED_OUTPUT: usize = 64 * 1024;

/// `bytes` as a JS `Buffer`.
///
/// # Safety
/// On the JS thread, with its `env`.
pub(crate) unsafe fn output_buffer(env: sys::napi_env, bytes: Vec<u8>) -> napi::Result<sys::napi_value> {
    if bytes.is_empty() || bytes.len() > COPIED_OUTPUT {
        return unsafe { Buffer::to_napi_value(env, bytes.into()) };
    }
    let mut buffer = std::ptr::null_mut();
    let status = unsafe {
        sys::napi_create_buffer_copy(
            env,
            bytes.len(),
            bytes.as_ptr().cast(),
            std::ptr::null_mut(),
            &mut buffer,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(napi::Error::new(
            napi::Status::from(status),
            "acp-engine: napi_create_buffer_copy failed".to_owned(),
        ));
    }
    Ok(buffer)
}
