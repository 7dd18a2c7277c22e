//! The framing decoder (`acp_engine::framing::LineReader`) on arbitrary
//! bytes, read in arbitrary chunks.
//!
//! Input layout:
//! - byte 0: the line limit (0..=255), small so the oversize path is hit;
//! - byte 1: how many chunk-size bytes follow (1..=8);
//! - those bytes: the size of each read, cycled (0 = the read is Pending
//!   once, n = at most n bytes);
//! - the rest: the stream.
//!
//! The reader is polled by hand with a no-op waker (our stream wakes
//! nothing: a Pending read is simply polled again). What it reports must
//! equal what a one-pass reference splitter makes of the whole stream, for
//! every chunking: lines within the limit, without '\n', none blank,
//! oversized lines reported with their full length (> limit), nothing lost.

#![no_main]

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use acp_engine::framing::{LineEvent, LineReader};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncRead, ReadBuf};

/// An in-memory stream that hands out `data` in the given read sizes.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [u8],
    next: usize,
    /// Set once a zero-size slot has returned Pending.
    pended: bool,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.data.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let size = self.sizes[self.next % self.sizes.len()] as usize;
        if size == 0 && !self.pended {
            self.pended = true;
            return Poll::Pending;
        }
        self.pended = false;
        self.next += 1;
        let n = size.max(1).min(buf.remaining()).min(self.data.len());
        let (head, tail) = self.data.split_at(n);
        buf.put_slice(head);
        self.data = tail;
        Poll::Ready(Ok(()))
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Event {
    Line(Vec<u8>),
    TooLong(usize),
}

/// What the reader should report, computed on the whole stream at once.
fn reference(stream: &[u8], max: usize) -> Vec<Event> {
    let mut events = Vec::new();
    let mut segments: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // The piece after the last '\n' is an unterminated last line.
    let tail = segments.pop().unwrap_or_default();
    for (line, terminated) in segments.into_iter().map(|s| (s, true)).chain([(tail, false)]) {
        if !terminated && line.is_empty() {
            continue;
        }
        if line.len() > max {
            events.push(Event::TooLong(line.len()));
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            events.push(Event::Line(line.to_vec()));
        }
    }
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&max, rest)) = data.split_first() else {
        return;
    };
    let Some((&count, rest)) = rest.split_first() else {
        return;
    };
    let count = (count as usize % 8) + 1;
    if rest.len() < count {
        return;
    }
    let (sizes, stream) = rest.split_at(count);
    let max = max as usize;

    let source = Chunked {
        data: stream,
        sizes,
        next: 0,
        pended: false,
    };
    let mut reader = LineReader::new(source, max);
    let mut events = Vec::new();
    let mut context = Context::from_waker(Waker::noop());
    // Each read takes at least one byte or ends the stream; a Pending read
    // is followed by a ready one. So this many polls always suffice.
    let mut budget = 2 * stream.len() + 4;
    loop {
        budget = budget
            .checked_sub(1)
            .expect("the reader kept polling after the stream ended");
        let mut read = std::pin::pin!(reader.read_batch(|event| match event {
            LineEvent::Line(line) => {
                assert!(
                    line.len() <= max,
                    "line of {} bytes over the limit {max}",
                    line.len()
                );
                assert!(!line.contains(&b'\n'), "line contains a newline: {line:?}");
                assert!(
                    !line.iter().all(u8::is_ascii_whitespace),
                    "blank line handed out: {line:?}"
                );
                events.push(Event::Line(line.to_vec()));
            }
            LineEvent::TooLong { len } => {
                assert!(len > max, "TooLong of {len} bytes within the limit {max}");
                events.push(Event::TooLong(len));
            }
        }));
        match read.as_mut().poll(&mut context) {
            Poll::Pending => continue,
            Poll::Ready(Ok(true)) => continue,
            Poll::Ready(Ok(false)) => break,
            Poll::Ready(Err(error)) => panic!("in-memory read failed: {error}"),
        }
    }
    // Once ended, it stays ended.
    let mut again = std::pin::pin!(reader.read_batch(|event| panic!("event after the end: {event:?}")));
    assert!(matches!(
        again.as_mut().poll(&mut context),
        Poll::Ready(Ok(false))
    ));

    // Accounting: every byte is a newline, part of a reported line (or its
    // stripped CR / BOM, or a skipped blank line), or counted as dropped.
    let reported: usize = events
        .iter()
        .map(|e| match e {
            Event::Line(line) => line.len(),
            Event::TooLong(len) => *len,
        })
        .sum();
    let newlines = stream.iter().filter(|&&b| b == b'\n').count();
    assert!(
        reported + newlines <= stream.len(),
        "more bytes reported than read"
    );

    let expected = reference(stream, max);
    assert_eq!(
        events, expected,
        "events differ from the reference (limit {max}, sizes {sizes:?})"
    );
});
