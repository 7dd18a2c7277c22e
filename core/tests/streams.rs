//! Write batching, backpressure, and two engines talking over in-memory and
//! OS-level streams.

mod support;

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use acp_engine::{
    to_raw, Connection, IncomingNotification, IncomingRequest, RawJson, RequestError, Transport,
};
use serde_json::{json, Value};
use support::{connect_raw, PATIENCE};
use tokio::io::AsyncWrite;

/// An `AsyncWrite` that counts write calls and keeps the bytes.
#[derive(Clone, Default)]
struct CountingWriter {
    writes: Arc<AtomicUsize>,
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl AsyncWrite for CountingWriter {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.bytes.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_burst_is_written_in_a_few_batches_not_one_write_per_message() {
    let writer = CountingWriter::default();
    let (_keep_open, reader) = tokio::io::duplex(64);
    let conn = Connection::builder().connect(Transport::new(reader, writer.clone()));
    for n in 0..1000 {
        conn.send_notification("session/update", &json!({"n": n}))
            .await
            .unwrap();
    }
    tokio::time::timeout(PATIENCE, async {
        while writer
            .bytes
            .lock()
            .unwrap()
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            < 1000
        {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .unwrap();
    let writes = writer.writes.load(Ordering::SeqCst);
    assert!(writes <= 20, "1000 messages took {writes} writes");
    // In order, one per line.
    let bytes = writer.bytes.lock().unwrap().clone();
    let ns: Vec<u64> = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["params"]["n"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(ns, (0..1000).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_peer_that_stops_reading_makes_senders_wait_and_nothing_is_dropped() {
    let (conn, mut peer) = connect_raw(Connection::builder().write_queue_capacity(8));
    let sent = Arc::new(AtomicUsize::new(0));
    let sender = tokio::spawn({
        let (conn, sent) = (conn.clone(), sent.clone());
        async move {
            // ~20 MB: far more than the socket buffer and the queue hold.
            let pad = "x".repeat(1000);
            for n in 0..20_000u64 {
                conn.send_notification("fill", &json!({"n": n, "pad": pad}))
                    .await
                    .unwrap();
                sent.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stalled_at = sent.load(Ordering::SeqCst);
    assert!(
        stalled_at < 20_000,
        "the sender should be waiting for the peer to read"
    );
    assert!(!sender.is_finished());
    // Now read everything: all of it arrives, in order.
    for n in 0..20_000u64 {
        assert_eq!(peer.recv().await["params"]["n"], n);
    }
    tokio::time::timeout(PATIENCE, sender).await.unwrap().unwrap();
}

async fn echo(request: IncomingRequest) -> Result<RawJson, RequestError> {
    match request.method.as_str() {
        "echo" => Ok(request.params.unwrap()),
        "ask_back" => {
            // Call the other side from inside a handler.
            let answer: Value = request
                .connection
                .send_request("echo", &json!({"nested": true}))
                .await?;
            Ok(to_raw(&json!({"peer_said": answer})).unwrap())
        }
        _ => Err(RequestError::method_not_found(&request.method)),
    }
}

#[tokio::test]
async fn two_engines_talk_both_ways_over_an_in_memory_pair() {
    let (a, b) = Transport::memory_pair();
    let left = Connection::builder().on_request(echo).connect(a);
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let right = Connection::builder()
        .on_request(echo)
        .on_notification(move |_n: IncomingNotification| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        })
        .connect(b);
    let r: Value = left.send_request("echo", &json!({"x": 1})).await.unwrap();
    assert_eq!(r, json!({"x": 1}));
    let r: Value = right.send_request("ask_back", &json!({})).await.unwrap();
    assert_eq!(r, json!({"peer_said": {"nested": true}}));
    for _ in 0..100 {
        left.send_notification("tick", &json!({})).await.unwrap();
    }
    // The ordering rule: a response after the notifications waits for them.
    let _: Value = left.send_request("echo", &json!({})).await.unwrap();
    let _: Value = right.send_request("echo", &json!({})).await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 100);
    left.close();
    tokio::time::timeout(PATIENCE, right.closed())
        .await
        .expect("the other side sees EOF");
}

#[tokio::test]
async fn many_requests_in_flight_at_once_all_complete() {
    let (a, b) = Transport::memory_pair();
    let client = Connection::builder().connect(a);
    let _server = Connection::builder()
        .on_request(|request: IncomingRequest| async move {
            let n: Value = request.params()?;
            tokio::task::yield_now().await;
            Ok::<_, RequestError>(to_raw(&n["n"]).unwrap())
        })
        .connect(b);
    let calls: Vec<_> = (0..2000u64)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move {
                (
                    n,
                    client
                        .send_request::<_, u64>("n", &json!({"n": n}))
                        .await
                        .unwrap(),
                )
            })
        })
        .collect();
    for call in calls {
        let (n, got) = call.await.unwrap();
        assert_eq!(n, got);
    }
}

#[tokio::test]
async fn raw_peer_sees_clean_lines_under_concurrent_senders() {
    let (conn, mut peer) = connect_raw(Connection::builder());
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let conn = conn.clone();
            tokio::spawn(async move {
                for n in 0..250 {
                    conn.send_notification("t", &json!({"t": t, "n": n}))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    let mut last = [-1i64; 8];
    for _ in 0..2000 {
        let msg = peer.recv().await;
        let (t, n) = (
            msg["params"]["t"].as_u64().unwrap() as usize,
            msg["params"]["n"].as_i64().unwrap(),
        );
        assert_eq!(n, last[t] + 1, "per-sender order holds");
        last[t] = n;
    }
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test]
async fn handlers_that_hold_the_connection_are_dropped_when_it_closes() {
    // A handler that keeps a clone of its own connection (an agent holding
    // its client) must not keep the connection's state alive forever.
    let sentinel = Arc::new(());
    let (a, b) = Transport::memory_pair();
    let held = sentinel.clone();
    let conn = Connection::builder().connect_with(a, move |conn: &Connection| {
        let conn = conn.clone();
        let held = held.clone();
        let request = move |request: IncomingRequest| {
            let (_conn, _held) = (conn.clone(), held.clone());
            async move { Err::<RawJson, _>(RequestError::method_not_found(&request.method)) }
        };
        let notification = |_n: IncomingNotification| async { Ok(()) };
        (request, notification)
    });
    let peer = Connection::builder().connect(b);
    let error = peer.send_request::<_, Value>("x", &json!({})).await.unwrap_err();
    assert_eq!(error.code, -32601);
    assert_eq!(Arc::strong_count(&sentinel), 2);
    conn.close();
    tokio::time::timeout(PATIENCE, conn.closed()).await.unwrap();
    assert_eq!(
        Arc::strong_count(&sentinel),
        1,
        "the handlers were dropped with the tasks"
    );
}
