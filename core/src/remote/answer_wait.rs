//! Waiting for an answer awake: after a transport hands the engine a message,
//! the task that carries the engine's output stays awake briefly for the
//! answer, yielding to the runtime's other tasks (the engine's reader among
//! them) instead of parking. An answer written by a host's thread (Node's,
//! Python's, a C program's) then finds it awake: waking a parked worker
//! thread costs more than the exchange on a virtual machine. Answers
//! written on the runtime (a Rust agent's) wake it cheaply either way.

use std::io;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// How long the engine's output is waited for awake.
const ANSWER_WAIT: Duration = Duration::from_micros(50);

/// A message this long is not scanned: it is taken to want an answer.
const SCANNED: usize = 64 * 1024;

/// Whether the engine's answer may follow `line` at once: a request (its
/// answer) or a response (the host's next request, as in a loop of calls);
/// not a notification, after which nothing is due (a stream of updates
/// would otherwise keep the writer awake for none).
pub(crate) fn answer_may_follow(line: &[u8]) -> bool {
    if line.len() > SCANNED {
        return true;
    }
    crate::json_scan::envelope_fields(line).is_none_or(|fields| fields.id.is_some())
}

/// Read the next line of the engine's output if one comes within
/// [`ANSWER_WAIT`]; None when nothing came. A line begun meanwhile stays
/// in `line` for the next read.
pub(crate) async fn answer_within<R>(
    lines: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> Option<io::Result<usize>>
where
    R: AsyncRead + Unpin,
{
    use futures_util::FutureExt;
    let deadline = Instant::now() + ANSWER_WAIT;
    loop {
        if let Some(read) = lines.read_until(b'\n', line).now_or_never() {
            return Some(read);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn an_answer_may_follow_a_request_or_a_response_not_a_notification() {
        assert!(answer_may_follow(
            br#"{"jsonrpc":"2.0","id":1,"method":"a","params":{}}"#
        ));
        assert!(answer_may_follow(br#"{"jsonrpc":"2.0","result":{},"id":"a"}"#));
        assert!(!answer_may_follow(
            br#"{"jsonrpc":"2.0","method":"b","params":{"id":1}}"#
        ));
        // Not JSON the scan reads: the engine answers it, maybe.
        assert!(answer_may_follow(b"not json"));
    }

    #[tokio::test]
    async fn an_answer_within_the_wait_is_read_and_a_line_begun_in_it_is_kept() {
        let (mut engine, bridge_end) = tokio::io::duplex(1024);
        let mut lines = BufReader::new(bridge_end);
        let mut line = Vec::new();
        // Nothing comes: no line, after the wait.
        assert!(answer_within(&mut lines, &mut line).await.is_none());
        // Half a line comes: still none, and its bytes are kept.
        engine.write_all(b"{\"id\":").await.unwrap();
        assert!(answer_within(&mut lines, &mut line).await.is_none());
        assert_eq!(line, b"{\"id\":");
        // The rest, written from a thread outside the runtime while the
        // wait goes on (as a host's answer is): read within it.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(10));
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            runtime.block_on(engine.write_all(b"1}\n")).unwrap();
            engine
        });
        let mut read = None;
        while read.is_none() {
            read = answer_within(&mut lines, &mut line).await;
        }
        assert_eq!(read.unwrap().unwrap(), 3);
        assert_eq!(line, b"{\"id\":1}\n");
        drop(writer.join().unwrap());
        // The end: an empty read.
        line.clear();
        assert_eq!(lines.read_until(b'\n', &mut line).await.unwrap(), 0);
    }
}
