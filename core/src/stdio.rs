//! This process's stdin and stdout as async streams.
//!
//! When they are pipes or sockets, which is how a client spawns an agent,
//! they are switched to non-blocking mode and driven by tokio's reactor:
//! no thread hop per read or write. Otherwise (a terminal, a file) stdin is
//! read on a dedicated thread and stdout written through tokio's `stdout()`.
//! A plain thread rather than tokio's blocking pool for stdin, because a
//! runtime cannot shut down while a blocking-pool read is parked: an agent
//! that closes its connection before its client closes the pipe would hang
//! at exit.
//!
//! Consequence of non-blocking mode: code in this process must not write to
//! stdout on its own (it would corrupt the protocol stream anyway).

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

const CHUNK: usize = 64 * 1024;

type BoxReader = Box<dyn AsyncRead + Send + Unpin>;
type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// A reader and a writer over file descriptors, and the descriptor the
/// reader reads when the reactor drives it (a host may read it itself).
pub(crate) struct FdStreams {
    pub reader: BoxReader,
    pub writer: BoxWriter,
    pub read_fd: Option<std::os::fd::RawFd>,
}

/// This process's stdin and stdout.
pub(crate) fn stdio_streams() -> FdStreams {
    let (reader, read_fd) = match duplicate(0).and_then(reactor_reader_fd) {
        Some((reader, fd)) => (reader, Some(fd)),
        None => (Box::new(ThreadStdin::new()) as BoxReader, None),
    };
    let writer = duplicate(1)
        .and_then(reactor_writer)
        .unwrap_or_else(|| Box::new(tokio::io::stdout()));
    FdStreams {
        reader,
        writer,
        read_fd,
    }
}

/// `reactor_reader`, with the raw fd it reads.
fn reactor_reader_fd(fd: OwnedFd) -> Option<(BoxReader, std::os::fd::RawFd)> {
    let raw = fd.as_raw_fd();
    reactor_reader(fd).map(|reader| (reader, raw))
}

/// Reads a non-blocking fd from whichever thread polls it; never registers
/// a waker (the host polls again when its own loop sees the fd readable).
pub(crate) struct NonBlockingReader(File);

impl NonBlockingReader {
    pub(crate) fn new(fd: OwnedFd) -> Self {
        Self(File::from(fd))
    }
}

impl AsyncRead for NonBlockingReader {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        loop {
            // Straight into the spare capacity: zeroing it first (what a safe
            // `read` needs) would cost more than the read for a long line,
            // whose buffer has megabytes of it.
            // SAFETY: `read` writes at most `unfilled.len()` bytes there, and
            // exactly the `n` it returns are marked initialized.
            let result = unsafe {
                let unfilled = buf.unfilled_mut();
                libc::read(self.0.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len())
            };
            if result >= 0 {
                let n = result as usize;
                unsafe { buf.assume_init(n) };
                buf.advance(n);
                return std::task::Poll::Ready(Ok(()));
            }
            let error = std::io::Error::last_os_error();
            return match error.kind() {
                std::io::ErrorKind::Interrupted => continue,
                std::io::ErrorKind::WouldBlock => std::task::Poll::Pending,
                _ => std::task::Poll::Ready(Err(error)),
            };
        }
    }
}

/// Streams over two file descriptors the caller hands over (pipes,
/// sockets, or anything else, such as a regular file).
pub(crate) fn fd_streams(read: OwnedFd, write: OwnedFd) -> FdStreams {
    let read = File::from(read);
    let write = File::from(write);
    let (reader, read_fd) = match read
        .try_clone()
        .ok()
        .map(OwnedFd::from)
        .and_then(reactor_reader_fd)
    {
        Some((reader, fd)) => (reader, Some(fd)),
        None => (Box::new(tokio::fs::File::from_std(read)) as BoxReader, None),
    };
    let writer = write
        .try_clone()
        .ok()
        .map(OwnedFd::from)
        .and_then(reactor_writer)
        .unwrap_or_else(|| Box::new(tokio::fs::File::from_std(write)));
    FdStreams {
        reader,
        writer,
        read_fd,
    }
}

/// A duplicate of one of this process's standard descriptors.
fn duplicate(fd: i32) -> Option<OwnedFd> {
    // SAFETY: fds 0 and 1 stay open for the life of the process; we only
    // borrow them long enough to duplicate them.
    unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned().ok()
}

/// `fd` driven by the reactor, if it is a pipe or a Unix socket.
fn reactor_reader(fd: OwnedFd) -> Option<BoxReader> {
    match reactor_stream(fd)? {
        Stream::Pipe(file) => tokio::net::unix::pipe::Receiver::from_file(file)
            .ok()
            .map(|pipe| Box::new(pipe) as BoxReader),
        Stream::Socket(socket) => Some(Box::new(socket)),
    }
}

fn reactor_writer(fd: OwnedFd) -> Option<BoxWriter> {
    match reactor_stream(fd)? {
        Stream::Pipe(file) => tokio::net::unix::pipe::Sender::from_file(file)
            .ok()
            .map(|pipe| Box::new(pipe) as BoxWriter),
        Stream::Socket(socket) => Some(Box::new(socket)),
    }
}

enum Stream {
    Pipe(File),
    Socket(tokio::net::UnixStream),
}

fn reactor_stream(fd: OwnedFd) -> Option<Stream> {
    let file = File::from(fd);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        Some(Stream::Pipe(file))
    } else if kind.is_socket() {
        let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        socket.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(socket).ok().map(Stream::Socket)
    } else {
        tracing::debug!(
            fd = file.as_raw_fd(),
            "not a pipe or socket; using blocking I/O threads"
        );
        None
    }
}

/// Stdin read on a dedicated thread, for when it is not a pipe or socket.
pub(crate) struct ThreadStdin {
    chunks: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    current: Vec<u8>,
    offset: usize,
}

impl ThreadStdin {
    pub(crate) fn new() -> Self {
        let (tx, chunks) = mpsc::channel(4);
        std::thread::Builder::new()
            .name("acp-engine-stdin".into())
            .spawn(move || {
                let mut stdin = std::io::stdin().lock();
                loop {
                    let mut chunk = vec![0; CHUNK];
                    let item = match stdin.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            chunk.truncate(n);
                            Ok(chunk)
                        }
                        Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(error) => Err(error),
                    };
                    let failed = item.is_err();
                    if tx.blocking_send(item).is_err() || failed {
                        break;
                    }
                }
            })
            .expect("spawn the stdin thread");
        Self {
            chunks,
            current: Vec::new(),
            offset: 0,
        }
    }
}

impl Default for ThreadStdin {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.offset == self.current.len() {
            match self.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(error)),
                Poll::Ready(Some(Ok(chunk))) => {
                    self.current = chunk;
                    self.offset = 0;
                }
            }
        }
        let n = buf.remaining().min(self.current.len() - self.offset);
        let start = self.offset;
        buf.put_slice(&self.current[start..start + n]);
        self.offset += n;
        Poll::Ready(Ok(()))
    }
}
