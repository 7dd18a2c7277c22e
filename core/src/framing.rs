//! Newline-delimited JSON framing: one JSON value per line.
//!
//! The reader hands out whole lines from a reusable buffer, skips empty
//! ones, tolerates CRLF and a UTF-8 BOM, and discards a line longer than the
//! limit as it streams past, so memory stays bounded by the limit whatever
//! the peer sends. The writer coalesces queued frames into one write.

use std::collections::VecDeque;
use std::future::Future;
use std::task::Poll;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Default bound on one message (the tables' `defaults`).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = crate::tables::defaults::MAX_MESSAGE_SIZE;

const READ_CHUNK: usize = 64 * 1024;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What the reader found in the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum LineEvent<'a> {
    /// One complete line, without its line ending.
    Line(&'a [u8]),
    /// A line longer than the limit was discarded.
    TooLong {
        /// How many bytes were dropped.
        len: usize,
    },
}

/// Splits a byte stream into lines.
pub struct LineReader<R> {
    reader: R,
    max_line: usize,
    buf: Vec<u8>,
    /// Start of the first unconsumed byte in `buf`.
    start: usize,
    /// Where the newline search resumes (everything before has none).
    scanned: usize,
    /// Bytes of an oversized line dropped so far, while discarding it.
    discarding: Option<usize>,
    eof: bool,
    /// How long to keep polling for more input before parking (see
    /// `with_spin`).
    spin: Duration,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Read lines of at most `max_line` bytes from `reader`.
    pub fn new(reader: R, max_line: usize) -> Self {
        Self {
            reader,
            max_line,
            buf: Vec::with_capacity(READ_CHUNK),
            start: 0,
            scanned: 0,
            discarding: None,
            eof: false,
            spin: Duration::ZERO,
        }
    }

    /// After each read, keep polling for more input for up to `spin` before
    /// parking the task. On virtual machines an idle vCPU takes tens of
    /// microseconds to wake, which dominates a request/response exchange;
    /// a short bounded spin while messages are flowing avoids that, and
    /// costs nothing once the connection goes quiet.
    pub fn with_spin(mut self, spin: Duration) -> Self {
        self.spin = spin;
        self
    }

    /// Read once from the stream and hand every complete line to `on_line`.
    /// Returns `Ok(false)` at end of stream (after the last, unterminated
    /// line, if any, was handed out).
    pub async fn read_batch(&mut self, mut on_line: impl FnMut(LineEvent<'_>)) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.make_room();
        let read = self.read_more().await?;
        if read == 0 {
            self.eof = true;
            self.finish(&mut on_line);
            return Ok(false);
        }
        self.split_lines(&mut on_line);
        Ok(true)
    }

    async fn read_more(&mut self) -> std::io::Result<usize> {
        if self.spin.is_zero() {
            return self.reader.read_buf(&mut self.buf).await;
        }
        let deadline = Instant::now() + self.spin;
        loop {
            let mut read = std::pin::pin!(self.reader.read_buf(&mut self.buf));
            let ready = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
            match ready {
                Poll::Ready(result) => return result,
                Poll::Pending if Instant::now() < deadline => {}
                Poll::Pending => return read.await,
            }
            // Let the runtime poll its I/O driver (without blocking) and
            // run other tasks, then look again.
            tokio::task::yield_now().await;
        }
    }

    /// Compact consumed bytes away and make sure a full chunk fits.
    fn make_room(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        self.buf.reserve(READ_CHUNK);
    }

    fn split_lines(&mut self, on_line: &mut impl FnMut(LineEvent<'_>)) {
        while let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
            let end = self.scanned + offset;
            if let Some(dropped) = self.discarding.take() {
                on_line(LineEvent::TooLong {
                    len: dropped + (end - self.start),
                });
            } else if end - self.start > self.max_line {
                on_line(LineEvent::TooLong {
                    len: end - self.start,
                });
            } else {
                emit(&self.buf[self.start..end], on_line);
            }
            self.start = end + 1;
            self.scanned = self.start;
        }
        self.scanned = self.buf.len();
        let pending = self.buf.len() - self.start;
        if let Some(dropped) = &mut self.discarding {
            *dropped += pending;
            self.forget_pending();
        } else if pending > self.max_line {
            self.discarding = Some(pending);
            self.forget_pending();
        }
    }

    fn forget_pending(&mut self) {
        self.buf.clear();
        self.start = 0;
        self.scanned = 0;
        if self.buf.capacity() > 4 * READ_CHUNK {
            self.buf.shrink_to(READ_CHUNK);
        }
    }

    fn finish(&mut self, on_line: &mut impl FnMut(LineEvent<'_>)) {
        if let Some(dropped) = self.discarding.take() {
            on_line(LineEvent::TooLong { len: dropped });
        } else if self.start < self.buf.len() {
            emit(&self.buf[self.start..], on_line);
        }
        self.forget_pending();
    }
}

/// Hand out a line unless it is blank; strip CR and a BOM.
fn emit(line: &[u8], on_line: &mut impl FnMut(LineEvent<'_>)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(BOM).unwrap_or(line);
    if !line.iter().all(u8::is_ascii_whitespace) {
        on_line(LineEvent::Line(line));
    }
}

/// Writes frames (each already ending in `\n`), coalescing a burst into one
/// `write_all` + `flush`. A large frame is kept whole, not copied into the
/// batch: copying a 16 MiB file's frame costs more than the extra write.
pub struct FrameWriter<W> {
    writer: W,
    /// Frames to write before `batch`, in order: large frames (from their
    /// first unwritten byte) and the batches that were open before them.
    owned: VecDeque<(Vec<u8>, usize)>,
    batch: Vec<u8>,
}

/// A batch is written once it holds this much, even if more frames wait.
pub const MAX_WRITE_BATCH: usize = 256 * 1024;

/// A frame (or a rest of one) at least this long is written from its own
/// buffer rather than copied into the batch.
const OWNED_FRAME: usize = 64 * 1024;

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// Write frames to `writer`, batched.
    pub fn new(writer: W) -> Self {
        Self {
            writer,
            owned: VecDeque::new(),
            batch: Vec::with_capacity(MAX_WRITE_BATCH),
        }
    }

    /// Queue a frame; returns true when the batch is full and should be
    /// flushed before taking more.
    pub fn push(&mut self, frame: &[u8]) -> bool {
        self.batch.extend_from_slice(frame);
        self.batch.len() >= MAX_WRITE_BATCH
    }

    /// Queue `frame` from byte `start` on (the bytes before went out
    /// already), keeping its buffer when it is large; true as `push`.
    pub fn push_owned(&mut self, frame: Vec<u8>, start: usize) -> bool {
        if frame.len() - start < OWNED_FRAME {
            return self.push(&frame[start..]);
        }
        if !self.batch.is_empty() {
            let open = std::mem::replace(&mut self.batch, Vec::with_capacity(MAX_WRITE_BATCH));
            self.owned.push_back((open, 0));
        }
        self.owned.push_back((frame, start));
        true
    }

    /// Whether nothing is waiting to be written.
    pub fn is_empty(&self) -> bool {
        self.owned.is_empty() && self.batch.is_empty()
    }

    /// Write `frame` now, from any thread, as far as the stream takes it
    /// without waiting (a no-op waker is registered; the writer task
    /// registers its own on its next write). Returns how many bytes went
    /// out and whether the stream still needs a flush.
    pub fn try_write_now(&mut self, frame: &[u8]) -> std::io::Result<(usize, bool)> {
        use std::pin::Pin;
        use std::task::{Context, Waker};
        let mut context = Context::from_waker(Waker::noop());
        let mut written = 0;
        while written < frame.len() {
            match Pin::new(&mut self.writer).poll_write(&mut context, &frame[written..]) {
                Poll::Ready(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => written += n,
                Poll::Ready(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(error)) => return Err(error),
                Poll::Pending => return Ok((written, true)),
            }
        }
        match Pin::new(&mut self.writer).poll_flush(&mut context) {
            Poll::Ready(Ok(())) => Ok((written, false)),
            Poll::Ready(Err(error)) => Err(error),
            Poll::Pending => Ok((written, true)),
        }
    }

    /// Write the batch with one write call (more only if the OS takes it in
    /// pieces) and flush it.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        while let Some((frame, start)) = self.owned.front_mut() {
            while *start < frame.len() {
                let written = self.writer.write(&frame[*start..]).await?;
                if written == 0 {
                    return Err(std::io::ErrorKind::WriteZero.into());
                }
                *start += written;
            }
            self.owned.pop_front();
        }
        if !self.batch.is_empty() {
            self.writer.write_all(&self.batch).await?;
            self.batch.clear();
            if self.batch.capacity() > 4 * MAX_WRITE_BATCH {
                self.batch.shrink_to(MAX_WRITE_BATCH);
            }
        }
        self.writer.flush().await
    }

    /// Write what is batched, then shut the stream down (the peer sees EOF).
    pub async fn shutdown(&mut self) -> std::io::Result<()> {
        self.flush().await?;
        self.writer.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `chunks` through a reader with the given limit, one chunk per
    /// read, and collect what it reports.
    async fn lines_of(chunks: &[&[u8]], max: usize) -> Vec<Result<String, usize>> {
        let mut builder = tokio_test_reader(chunks);
        let mut reader = LineReader::new(&mut builder, max);
        let mut out = Vec::new();
        loop {
            let more = reader
                .read_batch(|event| match event {
                    LineEvent::Line(line) => out.push(Ok(String::from_utf8_lossy(line).into_owned())),
                    LineEvent::TooLong { len } => out.push(Err(len)),
                })
                .await
                .unwrap();
            if !more {
                return out;
            }
        }
    }

    fn tokio_test_reader(chunks: &[&[u8]]) -> tokio::io::DuplexStream {
        // A duplex pipe written chunk by chunk, so reads see the same splits.
        let (mut tx, rx) = tokio::io::duplex(1 << 20);
        let chunks: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
        tokio::spawn(async move {
            for chunk in chunks {
                tx.write_all(&chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        rx
    }

    #[tokio::test]
    async fn splits_lines_across_reads() {
        let got = lines_of(&[b"{\"a\":", b"1}\n{\"b\"", b":2}\n"], 1024).await;
        assert_eq!(got, vec![Ok("{\"a\":1}".into()), Ok("{\"b\":2}".into())]);
    }

    #[tokio::test]
    async fn skips_blank_lines_and_strips_crlf_and_bom() {
        let got = lines_of(&[b"\n\r\n  \n\xEF\xBB\xBF{}\r\n\r\n[]\n"], 1024).await;
        assert_eq!(got, vec![Ok("{}".into()), Ok("[]".into())]);
    }

    #[tokio::test]
    async fn hands_out_an_unterminated_last_line() {
        let got = lines_of(&[b"{}\n{\"tail\":1}"], 1024).await;
        assert_eq!(got, vec![Ok("{}".into()), Ok("{\"tail\":1}".into())]);
    }

    #[tokio::test]
    async fn discards_an_oversized_line_and_goes_on() {
        let big = vec![b'x'; 5000];
        let got = lines_of(
            &[b"{}\n", &big[..2500], &big[2500..], b"yy\n{\"after\":1}\n"],
            1000,
        )
        .await;
        assert_eq!(got, vec![Ok("{}".into()), Err(5002), Ok("{\"after\":1}".into())]);
    }

    #[tokio::test]
    async fn an_oversized_line_within_one_read_is_discarded_too() {
        let mut input = vec![b'x'; 1500];
        input.extend_from_slice(b"\n{}\n");
        let got = lines_of(&[&input], 1000).await;
        assert_eq!(got, vec![Err(1500), Ok("{}".into())]);
    }

    #[tokio::test]
    async fn oversized_line_at_eof_is_reported() {
        let big = vec![b'x'; 3000];
        let got = lines_of(&[&big], 1000).await;
        assert_eq!(got, vec![Err(3000)]);
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_passes() {
        let line = vec![b'7'; 1000];
        let mut input = line.clone();
        input.push(b'\n');
        let got = lines_of(&[&input], 1000).await;
        assert_eq!(got, vec![Ok(String::from_utf8(line).unwrap())]);
    }

    #[tokio::test]
    async fn large_frames_keep_their_place_among_batched_ones() {
        // A small pipe: the large frames go out in many writes.
        let (writer, mut reader) = tokio::io::duplex(4096);
        let large = |byte: u8, len: usize| {
            let mut frame = vec![byte; len];
            frame.push(b'\n');
            frame
        };
        // The first large frame comes with its first 100 bytes already
        // written (a direct write the stream took part of).
        let frames = [
            (b"small-1\n".to_vec(), 0),
            (large(b'a', 3 * OWNED_FRAME), 100),
            (b"small-2\n".to_vec(), 0),
            (large(b'b', OWNED_FRAME), 0),
            (b"small-3\n".to_vec(), 0),
        ];
        let expected: Vec<u8> = frames
            .iter()
            .flat_map(|(frame, start)| frame[*start..].to_vec())
            .collect();
        let read = tokio::spawn(async move {
            let mut all = Vec::new();
            reader.read_to_end(&mut all).await.unwrap();
            all
        });
        let mut out = FrameWriter::new(writer);
        for (frame, start) in frames {
            out.push_owned(frame, start);
        }
        out.shutdown().await.unwrap();
        let written = read.await.unwrap();
        assert_eq!(written.len(), expected.len());
        assert!(written == expected, "frames out of order or damaged");
    }
}
