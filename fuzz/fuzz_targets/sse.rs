//! The Streamable HTTP client's server-sent event reader on arbitrary
//! bytes from a server, read in arbitrary chunks.
//!
//! Input layout:
//! - byte 0: the event size limit (0..=255), small so the limit is hit;
//! - byte 1: how many chunk-size bytes follow (1..=8);
//! - those bytes: the size of each chunk, cycled;
//! - the rest: the stream.
//!
//! Whatever the chunking, the reader must find the same events as when it
//! gets the stream in one piece (a CR ending one chunk and an LF starting
//! the next are one line end), refuse the stream the same way when an
//! event is over the limit, and never report an event over the limit.

#![no_main]

use acp_engine::fuzzing::sse_events;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [limit, count, rest @ ..] = data else {
        return;
    };
    let count = usize::from(count % 8) + 1;
    if rest.len() < count {
        return;
    }
    let (sizes, stream) = rest.split_at(count);
    let max_event = usize::from(*limit);
    let chunked = sse_events(stream, sizes, max_event);
    let whole = sse_events(stream, &[], max_event);
    assert_eq!(chunked, whole, "the chunking changed the events");
    if let Some(events) = chunked {
        assert!(events.iter().all(|event| event.len() <= max_event));
    }
});
