//! A wake-up signal a host can wait on with `poll`, `epoll` or its event
//! loop: an eventfd. Engine threads write to it; the host resets it before
//! it drains the queue, so no wake-up is lost.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An eventfd (non-blocking, close-on-exec).
pub struct EventFd(OwnedFd);

impl EventFd {
    /// A new, unsignalled eventfd.
    pub fn new() -> io::Result<Self> {
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// The descriptor to watch for readability.
    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Make the fd readable (from any thread).
    pub fn signal(&self) {
        let one: u64 = 1;
        // EAGAIN only when the counter is saturated: readable anyway.
        // SAFETY: an 8-byte write from a live local to our own descriptor.
        unsafe { libc::write(self.raw(), (&one as *const u64).cast(), 8) };
    }

    /// Make the fd unreadable again.
    pub fn reset(&self) {
        let mut count: u64 = 0;
        // SAFETY: an 8-byte read into a live local from our own descriptor.
        unsafe { libc::read(self.raw(), (&mut count as *mut u64).cast(), 8) };
    }
}
