//! One direction of the proxy: bytes are written on as soon as they are
//! read, unchanged, after a copy stamped with the time it was read went to
//! the recorder.

use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::Direction;

const CHUNK: usize = 64 * 1024;

/// What was read, for the recorder; `bytes` empty: that direction ended.
pub struct Chunk {
    pub direction: Direction,
    pub at: Instant,
    pub bytes: Vec<u8>,
}

/// Copy `from` to `to` until `from` ends or `to` fails; then shut `to`
/// (the agent sees EOF on its stdin, the editor on ours).
pub async fn forward(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    direction: Direction,
    tap: mpsc::Sender<Chunk>,
) {
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let bytes = &buffer[..read];
        // The copy goes first: the trace then lists a message before any
        // the other side sends in reply to it.
        let chunk = Chunk {
            direction,
            at: Instant::now(),
            bytes: bytes.to_vec(),
        };
        // A recorder that failed (it said why) does not stop the traffic.
        let _ = tap.send(chunk).await;
        if to.write_all(bytes).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
    let _ = tap
        .send(Chunk {
            direction,
            at: Instant::now(),
            bytes: Vec::new(),
        })
        .await;
}
