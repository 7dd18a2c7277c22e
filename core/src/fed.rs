//! A transport whose bytes the host moves itself (`Transport::fed`): the
//! bytes of a stream the engine cannot reach (Node's Web Streams, a
//! caller's own async streams). The host feeds what the peer sent and takes
//! what to send it. With `HostOptions::host_reads` the fed input is read and
//! handled on the host's thread (`HostConnection::pump`), and a send from
//! the host's thread lands in the output there too: a round trip crosses no
//! thread, where a pipe to the engine's runtime would cost two wake-ups each
//! way.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Output the host has not taken yet, at most: beyond it the engine's writer
/// waits, and the connection's limits apply to a host that does not take.
const OUTPUT_CAPACITY: usize = 1024 * 1024;

/// The two ends' shared state, held by the transport's reader and writer
/// and by the host connection.
#[derive(Default)]
pub(crate) struct Fed {
    input: Mutex<Input>,
    output: Mutex<Output>,
    /// Called when output becomes available or ends (the host's wake).
    notify: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

#[derive(Default)]
struct Input {
    bytes: Vec<u8>,
    /// Bytes of `bytes` already read.
    read: usize,
    ended: bool,
    /// A reader task waiting for input (when the engine reads on a task).
    waiting: Option<Waker>,
}

#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    ended: bool,
    /// The writer waiting for the host to take output.
    waiting: Option<Waker>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Fed {
    pub fn set_notify(&self, notify: impl Fn() + Send + Sync + 'static) {
        let _ = self.notify.set(Box::new(notify));
    }

    fn notify(&self) {
        if let Some(notify) = self.notify.get() {
            notify();
        }
    }

    /// Bytes the peer sent; false once the input ended.
    pub fn feed(&self, bytes: &[u8]) -> bool {
        let waiting = {
            let mut input = locked(&self.input);
            if input.ended {
                return false;
            }
            input.bytes.extend_from_slice(bytes);
            input.waiting.take()
        };
        if let Some(waker) = waiting {
            waker.wake();
        }
        true
    }

    /// The peer's stream ended: the reader sees end of stream after what
    /// was fed.
    pub fn end_input(&self) {
        let waiting = {
            let mut input = locked(&self.input);
            input.ended = true;
            input.waiting.take()
        };
        if let Some(waker) = waiting {
            waker.wake();
        }
    }

    /// Bytes fed and not read yet (the reader is paused at the connection's
    /// limits, or has not pumped yet).
    pub fn input_backlog(&self) -> usize {
        let input = locked(&self.input);
        input.bytes.len() - input.read
    }

    /// What the engine wrote since the last take.
    pub fn take_output(&self) -> Option<Vec<u8>> {
        let (bytes, waiting) = {
            let mut output = locked(&self.output);
            if output.bytes.is_empty() {
                return None;
            }
            (std::mem::take(&mut output.bytes), output.waiting.take())
        };
        if let Some(waker) = waiting {
            waker.wake();
        }
        Some(bytes)
    }

    /// The engine will write nothing more, and everything was taken.
    pub fn output_ended(&self) -> bool {
        let output = locked(&self.output);
        output.ended && output.bytes.is_empty()
    }

    fn poll_read(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let mut input = locked(&self.input);
        let available = input.bytes.len() - input.read;
        if available == 0 {
            if !input.ended {
                input.waiting = Some(cx.waker().clone());
                return Poll::Pending;
            }
            return Poll::Ready(Ok(()));
        }
        let n = available.min(buf.remaining());
        let start = input.read;
        buf.put_slice(&input.bytes[start..start + n]);
        input.read += n;
        if input.read == input.bytes.len() {
            input.bytes.clear();
            input.read = 0;
        }
        Poll::Ready(Ok(()))
    }

    fn poll_write(&self, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        let was_empty = {
            let mut output = locked(&self.output);
            if output.ended {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            if output.bytes.len() >= OUTPUT_CAPACITY {
                output.waiting = Some(cx.waker().clone());
                return Poll::Pending;
            }
            let was_empty = output.bytes.is_empty();
            output.bytes.extend_from_slice(bytes);
            was_empty
        };
        if was_empty {
            self.notify();
        }
        Poll::Ready(Ok(bytes.len()))
    }

    /// No more output: the writer shut down, or the connection is closed
    /// (a writer that gave up on a stalled host never shuts down; the host
    /// connection ends the output then).
    pub fn end_output(&self) {
        let waiting = {
            let mut output = locked(&self.output);
            if output.ended {
                return;
            }
            output.ended = true;
            output.waiting.take()
        };
        if let Some(waker) = waiting {
            waker.wake();
        }
        self.notify();
    }
}

/// The engine's reader of fed input.
pub(crate) struct FedReader(pub Arc<Fed>);

impl AsyncRead for FedReader {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.0.poll_read(cx, buf)
    }
}

/// The engine's writer into the output the host takes.
pub(crate) struct FedWriter(pub Arc<Fed>);

impl AsyncWrite for FedWriter {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        self.0.poll_write(cx, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.end_output();
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn fed_bytes_are_read_then_end_of_stream() {
        let fed = Arc::new(Fed::default());
        let mut reader = FedReader(fed.clone());
        assert!(fed.feed(b"one\n"));
        let mut buf = [0u8; 16];
        assert_eq!(reader.read(&mut buf).await.unwrap(), 4);
        assert_eq!(fed.input_backlog(), 0);
        fed.end_input();
        assert!(!fed.feed(b"late"));
        assert_eq!(reader.read(&mut buf).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_when_fed() {
        let fed = Arc::new(Fed::default());
        let mut reader = FedReader(fed.clone());
        let read = tokio::spawn(async move {
            let mut buf = [0u8; 16];
            reader.read(&mut buf).await.unwrap()
        });
        tokio::task::yield_now().await;
        fed.feed(b"abc");
        assert_eq!(read.await.unwrap(), 3);
    }

    #[tokio::test]
    async fn output_notifies_once_per_take_and_holds_the_writer_when_full() {
        let fed = Arc::new(Fed::default());
        let notified = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = notified.clone();
        fed.set_notify(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let mut writer = FedWriter(fed.clone());
        writer.write_all(b"a").await.unwrap();
        writer.write_all(b"b").await.unwrap();
        assert_eq!(notified.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(fed.take_output().unwrap(), b"ab");
        assert!(fed.take_output().is_none());

        let big = vec![b'x'; OUTPUT_CAPACITY];
        writer.write_all(&big).await.unwrap();
        let blocked = tokio::spawn(async move {
            writer.write_all(b"more").await.unwrap();
            writer.shutdown().await.unwrap();
        });
        tokio::task::yield_now().await;
        assert!(!blocked.is_finished());
        assert_eq!(fed.take_output().unwrap().len(), OUTPUT_CAPACITY);
        blocked.await.unwrap();
        assert_eq!(fed.take_output().unwrap(), b"more");
        assert!(fed.output_ended());
    }
}
