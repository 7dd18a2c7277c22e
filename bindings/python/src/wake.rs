//! The wake-up signal: an eventfd the asyncio loop watches with
//! `loop.add_reader`. Engine threads write to it (never touching Python);
//! the drain resets it before it takes the queue, so no wake-up is lost.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    pub fn new() -> io::Result<Self> {
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Make the fd readable (from any thread).
    pub fn signal(&self) {
        let one: u64 = 1;
        // EAGAIN only when the counter is saturated: readable anyway.
        unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
    }

    /// Make the fd unreadable again.
    pub fn reset(&self) {
        let mut count: u64 = 0;
        unsafe { libc::read(self.raw(), (&mut count as *mut u64).cast(), 8) };
    }
}
