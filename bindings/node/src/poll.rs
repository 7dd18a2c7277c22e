//! Host-driven reading on Node's own thread: a libuv poll handle watches the
//! stream's fd (`HostConnection::read_fd`); when it is readable the callback
//! pumps the engine right there (read, frame, validate, inline handlers),
//! drains the events and hands them to JS through `napi_make_callback`, so
//! Node runs the microtask queue (promise continuations) afterwards. No
//! thread hop per message: on virtual machines waking an idle thread costs
//! more than a whole request/response exchange.
//!
//! - Backpressure: JS stops the poll while a notification handler's promise
//!   is pending (`pause`) and restarts it when its queue is empty (`resume`);
//!   the input waits in the pipe meanwhile.
//! - After each batch the callback pumps again before returning to the loop
//!   (a response sent from a promise continuation is often back already).
//! - Spin (50 µs by default; `ACP_ENGINE_SPIN_US`, 0 turns it off): after
//!   a batch, while JS has requests of its own pending (it keeps their count
//!   in a shared `Int32Array`), pump that long without sleeping
//!   (`HostConnection::pump_for`): a sleeping loop costs more per message
//!   than the exchange (docs/performance.md). The spin is bounded per batch
//!   and happens only while an answer is due.
//! - Lifetime: the handle is active (and so keeps Node alive) only while the
//!   connection is open; at EOF, `close()` or `release()` it is stopped and
//!   closed. Its memory is freed in the close callback.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use acp_engine::host::HostConnection;
use napi::sys;

/// `uv_handle_type::UV_POLL`.
const UV_POLL: c_int = 8;
/// `uv_poll_event::UV_READABLE`.
const UV_READABLE: c_int = 1;

type PollCb = unsafe extern "C" fn(handle: *mut c_void, status: c_int, events: c_int);
type CloseCb = unsafe extern "C" fn(handle: *mut c_void);

// libuv, exported by the node binary.
extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(uv_loop: *mut sys::uv_loop_s, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, cb: PollCb) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_close(handle: *mut c_void, cb: CloseCb);
}

thread_local! {
    /// Set while this thread pumps: the events it queues are drained right
    /// after, so the engine's wake-up (a call back into JS later) is not
    /// needed for them.
    static PUMPING: Cell<bool> = const { Cell::new(false) };
}

/// True while the current thread is inside `pump` / `pump_for` of a poll
/// (or `while_pumping`).
pub fn pumping() -> bool {
    PUMPING.with(Cell::get)
}

/// Run `work` on the JS thread as a pump: what it queues or writes wakes no
/// one, since the caller drains and takes the output right after.
pub fn while_pumping<T>(work: impl FnOnce() -> T) -> T {
    let was = PUMPING.with(|p| p.replace(true));
    let result = work();
    PUMPING.with(|p| p.set(was));
    result
}

/// How long to pump without sleeping while a response is expected.
pub fn spin() -> Duration {
    static SPIN: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *SPIN.get_or_init(|| {
        let micros = std::env::var("ACP_ENGINE_SPIN_US")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(50);
        Duration::from_micros(micros)
    })
}

/// Batches handled per callback at most, so other I/O gets its turn (the
/// poll is level-triggered: it fires again if input is left).
const MAX_ROUNDS: usize = 64;

/// The JS side of a poll: references kept while it is open.
struct Js {
    env: sys::napi_env,
    callback: sys::napi_ref,
    hint: sys::napi_ref,
    /// The first element of the `Int32Array` behind `hint` (its backing
    /// store never moves): how many of our requests are pending.
    pending: *const i32,
    async_context: sys::napi_async_context,
}

impl Js {
    /// Release the references (on the JS thread).
    fn release(self) {
        // SAFETY: created by this env on this thread, released once.
        unsafe {
            sys::napi_delete_reference(self.env, self.callback);
            sys::napi_delete_reference(self.env, self.hint);
            sys::napi_async_destroy(self.env, self.async_context);
        }
    }
}

/// A poll's state, shared by the connection and the handle (whose `data`
/// holds one `Rc` until the close callback).
pub struct Poll {
    host: Arc<HostConnection>,
    /// The `uv_poll_t`; null once closed.
    handle: Cell<*mut c_void>,
    layout: Layout,
    /// Watching for readability now.
    active: Cell<bool>,
    /// JS asked to stop reading (a notification handler is busy).
    paused_by_js: Cell<bool>,
    /// The engine is at its limits (`HostConnection::reading_paused`): not
    /// watched until its wake, after which `check_limits` resumes.
    paused_by_limits: Cell<bool>,
    js: RefCell<Option<Js>>,
}

impl Poll {
    /// Start watching `host`'s read fd on the loop of `env`; `callback`
    /// gets each batch of events (JSON array text), `hint` is an
    /// `Int32Array` whose first element JS keeps at its pending-request
    /// count. None when the engine reads by itself (no fd).
    ///
    /// # Safety
    /// `env` is the current env, `callback` a function and `hint` an
    /// `Int32Array` of it; called on the JS thread.
    pub unsafe fn start(
        host: Arc<HostConnection>,
        env: sys::napi_env,
        callback: sys::napi_value,
        hint: sys::napi_value,
    ) -> napi::Result<Option<Rc<Self>>> {
        let Some(fd) = host.read_fd() else {
            return Ok(None);
        };
        let check = |status: sys::napi_status, what: &str| {
            if status == sys::Status::napi_ok {
                Ok(())
            } else {
                Err(napi::Error::new(
                    napi::Status::GenericFailure,
                    format!("acp-engine: {what} failed ({status})"),
                ))
            }
        };
        let mut kind = 0;
        let mut length = 0usize;
        let mut data = std::ptr::null_mut();
        let mut buffer = std::ptr::null_mut();
        let mut offset = 0usize;
        check(
            sys::napi_get_typedarray_info(
                env,
                hint,
                &mut kind,
                &mut length,
                &mut data,
                &mut buffer,
                &mut offset,
            ),
            "reading the hint array",
        )?;
        if kind != sys::TypedarrayType::int32_array || length < 1 || data.is_null() {
            return Err(napi::Error::new(
                napi::Status::InvalidArg,
                "acp-engine: the hint must be an Int32Array".to_owned(),
            ));
        }
        let mut uv_loop = std::ptr::null_mut();
        check(
            sys::napi_get_uv_event_loop(env, &mut uv_loop),
            "napi_get_uv_event_loop",
        )?;
        let mut callback_ref = std::ptr::null_mut();
        check(
            sys::napi_create_reference(env, callback, 1, &mut callback_ref),
            "napi_create_reference",
        )?;
        let mut hint_ref = std::ptr::null_mut();
        check(
            sys::napi_create_reference(env, hint, 1, &mut hint_ref),
            "napi_create_reference",
        )?;
        let mut name = std::ptr::null_mut();
        let label = "acp-engine:read";
        sys::napi_create_string_utf8(env, label.as_ptr().cast(), label.len() as isize, &mut name);
        let mut resource = std::ptr::null_mut();
        check(sys::napi_create_object(env, &mut resource), "napi_create_object")?;
        let mut async_context = std::ptr::null_mut();
        check(
            sys::napi_async_init(env, resource, name, &mut async_context),
            "napi_async_init",
        )?;
        let js = Js {
            env,
            callback: callback_ref,
            hint: hint_ref,
            pending: data.cast::<i32>(),
            async_context,
        };

        let size = uv_handle_size(UV_POLL).max(256);
        let layout = Layout::from_size_align(size, 16).expect("valid layout");
        let handle = std::alloc::alloc_zeroed(layout).cast::<c_void>();
        if handle.is_null() {
            js.release();
            std::alloc::handle_alloc_error(layout);
        }
        if uv_poll_init(uv_loop, handle, fd) != 0 {
            std::alloc::dealloc(handle.cast(), layout);
            js.release();
            return Ok(None);
        }
        let poll = Rc::new(Self {
            host,
            handle: Cell::new(handle),
            layout,
            active: Cell::new(false),
            paused_by_js: Cell::new(false),
            paused_by_limits: Cell::new(false),
            js: RefCell::new(Some(js)),
        });
        // `data` is the first field of every uv handle.
        *handle.cast::<*const Self>() = Rc::into_raw(poll.clone());
        poll.watch();
        Ok(Some(poll))
    }

    /// Watch the fd again after `pause`.
    pub fn resume(&self) {
        self.paused_by_js.set(false);
        self.watch();
    }

    /// Stop watching for now (JS is busy: backpressure).
    pub fn pause(&self) {
        self.paused_by_js.set(true);
        self.unwatch();
    }

    /// After the engine's wake: watch again if reading was held at the
    /// connection's limits and may go on now.
    pub fn check_limits(&self) {
        if self.paused_by_limits.get() && !self.host.reading_paused() {
            self.paused_by_limits.set(false);
            self.watch();
        }
    }

    fn watch(&self) {
        if self.paused_by_js.get() || self.paused_by_limits.get() {
            return;
        }
        let handle = self.handle.get();
        if !handle.is_null() && !self.active.get() {
            // SAFETY: an initialized, not closed poll handle.
            if unsafe { uv_poll_start(handle, UV_READABLE, on_readable) } == 0 {
                self.active.set(true);
            }
        }
    }

    fn unwatch(&self) {
        let handle = self.handle.get();
        if !handle.is_null() && self.active.get() {
            // SAFETY: an initialized, not closed poll handle.
            unsafe { uv_poll_stop(handle) };
            self.active.set(false);
        }
    }

    /// Stop for good: close the handle (freed in its close callback) and
    /// drop the JS references. Before the fd itself is closed.
    pub fn close(&self) {
        let handle = self.handle.replace(std::ptr::null_mut());
        if handle.is_null() {
            return;
        }
        self.active.set(false);
        // SAFETY: an initialized poll handle, closed once.
        unsafe {
            uv_poll_stop(handle);
            uv_close(handle, on_closed);
        }
        if let Some(js) = self.js.borrow_mut().take() {
            js.release();
        }
    }

    fn is_closed(&self) -> bool {
        self.handle.get().is_null()
    }

    /// Requests of ours pending, as JS last said.
    fn expecting(&self) -> bool {
        match self.js.borrow().as_ref() {
            // SAFETY: the array is kept alive by `hint`; JS writes it only
            // on this thread.
            Some(js) => unsafe { std::ptr::read_volatile(js.pending) > 0 },
            None => false,
        }
    }

    /// Pump once; false at the end of the stream.
    fn pump(&self) -> bool {
        while_pumping(|| self.host.pump())
    }

    fn pump_for(&self, spin: Duration) -> bool {
        while_pumping(|| self.host.pump_for(spin))
    }

    /// The fd is readable: pump, drain, call JS; repeat while input (or,
    /// with our requests pending, an answer within the spin) comes.
    fn on_readable(&self) {
        let _runtime = crate::engine_runtime().enter();
        let mut open = true;
        // Every pump is followed by a drain: what a pump queues wakes no
        // one (see `pumping`).
        for _ in 0..MAX_ROUNDS {
            open = self.pump();
            let text = match self.host.drain() {
                Some(text) => text,
                None if open && !spin().is_zero() && self.expecting() => {
                    // A response (or the peer's next request) is due:
                    // wait for it a moment without sleeping.
                    self.pump_for(spin());
                    match self.host.drain() {
                        Some(text) => text,
                        None => break,
                    }
                }
                None => break,
            };
            let delivered = self.deliver(&text);
            // What JS sent while handling the batch goes out in one write,
            // before anything waits.
            let _ = self.host.flush();
            if !delivered || !self.active.get() || !open {
                // Closed or paused by JS meanwhile, or the stream ended.
                break;
            }
        }
        // At the end of the stream (here or within a spin) the reader let
        // its fd go: stop watching it. Closing from elsewhere ends in
        // `release()`.
        if !open || self.host.is_closed() {
            self.close();
        } else if self.host.reading_paused() {
            // At the connection's limits: the engine wakes us when the peer
            // read (an fd left watched would fire in a loop).
            self.paused_by_limits.set(true);
            self.unwatch();
        }
    }

    /// Call the JS callback with `text` (through `napi_make_callback`, so
    /// microtasks run after it). False if the poll was closed meanwhile.
    fn deliver(&self, text: &str) -> bool {
        let (env, callback, async_context) = match self.js.borrow().as_ref() {
            Some(js) => (js.env, js.callback, js.async_context),
            None => return false,
        };
        // SAFETY: on the JS thread, inside a handle scope opened here.
        unsafe {
            let mut scope = std::ptr::null_mut();
            if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
                return false;
            }
            let mut function = std::ptr::null_mut();
            let mut receiver = std::ptr::null_mut();
            let mut argument = std::ptr::null_mut();
            sys::napi_get_reference_value(env, callback, &mut function);
            // napi_make_callback wants an object receiver.
            sys::napi_get_global(env, &mut receiver);
            sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut argument);
            let mut result = std::ptr::null_mut();
            let status =
                sys::napi_make_callback(env, async_context, receiver, function, 1, &argument, &mut result);
            if status == sys::Status::napi_pending_exception {
                let mut error = std::ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut error);
                sys::napi_fatal_exception(env, error);
            }
            sys::napi_close_handle_scope(env, scope);
        }
        !self.is_closed()
    }
}

unsafe extern "C" fn on_readable(handle: *mut c_void, _status: c_int, _events: c_int) {
    // SAFETY: `data` holds an Rc until the close callback.
    let poll = unsafe { &*(*handle.cast::<*const Poll>()) };
    // Keep it alive through JS calls that may close it.
    let poll = unsafe {
        Rc::increment_strong_count(poll as *const Poll);
        Rc::from_raw(poll as *const Poll)
    };
    // A panic must not unwind into libuv (that aborts the process): the
    // connection closes instead, and JS sees it close.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll.on_readable()));
    if read.is_err() {
        eprintln!("acp-engine: internal error while reading; closing the connection");
        poll.host.close();
        poll.close();
    }
}

unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: the Rc stored at start; the handle is not used any more.
    let poll = unsafe { Rc::from_raw(*handle.cast::<*const Poll>()) };
    let layout = poll.layout;
    drop(poll);
    unsafe { std::alloc::dealloc(handle.cast(), layout) };
}
