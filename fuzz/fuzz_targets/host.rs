//! The host contract: arbitrary bytes fed to a `HostConnection` (the one
//! every binding drives) in arbitrary chunks, with the host pumping,
//! draining and answering its requests at arbitrary points, as a binding's
//! thread does; then end of input.
//!
//! Input layout: byte 0 picks the settings (bit 0: handlers answer their
//! cancellation; bits 1-2: the drain chunk; bit 3: cancelled requests are
//! not withdrawn); byte 1 is the number of
//! script bytes that follow; the rest is the peer's stream. Each script
//! byte is one step: feed the next 1..=64 bytes of the stream and pump,
//! drain, answer the oldest request owed, or let the runtime's tasks run.
//!
//! Checks: no panic; every drain is a JSON array of events the host can
//! read; a request reaches the host once, and `CANCELLED` only names one it
//! got first (a request cancelled before the host took it is withdrawn,
//! never announced); `CLOSED` comes last, and it does come once the input
//! ended and the host answered what it owed; everything the engine wrote
//! is one JSON-RPC 2.0 object per line.

#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use acp_engine::host::{kind, HostConnection, HostOptions, Side};
use acp_engine::{RequestError, Transport};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// What the host knows of its connection.
#[derive(Default)]
struct Host {
    /// Tokens of the requests it got.
    seen: HashSet<u64>,
    /// Those it has not answered yet, oldest first.
    owed: Vec<u64>,
    closed: bool,
}

impl Host {
    /// Take every event, checking each.
    fn drain(&mut self, connection: &HostConnection) {
        while let Some(text) = connection.drain() {
            let events: Vec<Value> = serde_json::from_str(&text).expect("a drain is a JSON array");
            assert!(!events.is_empty(), "an empty drain: {text}");
            for event in events {
                assert!(!self.closed, "an event after CLOSED: {event}");
                let token = || event[1].as_u64().expect("a token");
                let event_kind = event[0].as_u64().and_then(|k| u8::try_from(k).ok());
                match event_kind.expect("an event kind") {
                    kind::REQUEST => {
                        assert!(self.seen.insert(token()), "a request twice: {event}");
                        self.owed.push(token());
                    }
                    kind::CANCELLED => assert!(
                        self.seen.contains(&token()),
                        "CANCELLED for a request the host never got: {event}"
                    ),
                    kind::CLOSED => self.closed = true,
                    kind::NOTIFICATION
                    | kind::INVALID_NOTIFICATION
                    | kind::RESULT
                    | kind::ERROR
                    | kind::WRITTEN => {}
                    other => panic!("unknown event kind {other}: {event}"),
                }
            }
        }
    }

    fn answer_oldest(&mut self, connection: &HostConnection, as_error: bool) {
        if self.owed.is_empty() {
            return;
        }
        let token = self.owed.remove(0);
        let outcome = if as_error {
            Err(RequestError::internal_error())
        } else {
            Ok("{}")
        };
        // False when cancelled or closed meanwhile: nothing is sent then.
        let _ = connection.respond(token, outcome);
    }
}

/// Check what the engine wrote: one JSON-RPC 2.0 object per line.
fn check_output(connection: &HostConnection, pending: &mut Vec<u8>) {
    while let Some(bytes) = connection.take_output() {
        pending.extend_from_slice(&bytes);
    }
    while let Some(end) = pending.iter().position(|&byte| byte == b'\n') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        let message: Value = serde_json::from_slice(&line[..end]).expect("an output line is JSON");
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC 2.0: {message}");
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, script_len, rest @ ..] = data else {
        return;
    };
    let (script, mut stream) = rest.split_at((*script_len as usize).min(rest.len()));
    runtime().block_on(async {
        let options = HostOptions {
            side: Side::Raw,
            host_reads: true,
            handler_answers_cancelled: mode & 1 != 0,
            drain_chunk: [usize::MAX, 1, 3, 64][usize::from(mode >> 1 & 3)],
            withdraw_cancelled_requests: mode & 8 == 0,
            ..HostOptions::default()
        };
        let connection = HostConnection::connect(
            Transport::fed(),
            options,
            &tokio::runtime::Handle::current(),
            || {},
        );
        let (mut host, mut output) = (Host::default(), Vec::new());
        for &step in script {
            match step % 4 {
                0 => {
                    let (chunk, later) = stream.split_at((1 + usize::from(step >> 2)).min(stream.len()));
                    stream = later;
                    connection.feed(chunk);
                    connection.pump();
                }
                1 => host.drain(&connection),
                2 => host.answer_oldest(&connection, step & 4 != 0),
                _ => tokio::task::yield_now().await,
            }
            check_output(&connection, &mut output);
        }
        connection.feed(stream);
        connection.end_input();
        for _ in 0..1000 {
            connection.pump();
            host.drain(&connection);
            while !host.owed.is_empty() {
                host.answer_oldest(&connection, false);
            }
            check_output(&connection, &mut output);
            if host.closed {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(host.closed, "no CLOSED after the input ended");
    });
});
