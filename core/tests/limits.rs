//! Admission control against a peer that stops reading: the connection
//! holds no more than its limits (it stops reading instead), loses and
//! duplicates no answer once the peer reads again, and with a stall timeout
//! closes a connection whose peer never reads.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::{Connection, Limits, SpawnOptions, Transport};
use serde_json::{json, Value};
use support::PATIENCE;

/// The peer that stops reading (reliability/flood_peer.py): it writes
/// `count` requests without reading (until its writes stall for a second),
/// then reads every answer and reports what it saw in a `flood/report`
/// notification; with `read` false it never reads.
fn flooding_peer(count: usize, read: bool) -> Transport {
    let peer = concat!(env!("CARGO_MANIFEST_DIR"), "/../reliability/flood_peer.py");
    let mut args = vec![peer.to_owned(), count.to_string()];
    if read {
        args.push("--read".to_owned());
    }
    Transport::spawn(SpawnOptions::new("python3").args(args).inherit_stderr(false)).expect("spawn python3")
}

/// Every request is answered with a 1 KiB result.
async fn answer(_: acp_engine::IncomingRequest) -> Result<acp_engine::RawJson, acp_engine::RequestError> {
    Ok(acp_engine::to_raw(&json!({ "padding": "x".repeat(1024) })).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stops_reading_is_held_at_the_limits_and_gets_every_answer() {
    let limits = Limits {
        max_in_flight_requests: 64,
        max_buffered_bytes: 256 * 1024,
        output_stall_timeout: None,
    };
    let (report_tx, mut report_rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let conn = Connection::builder()
        .limits(limits)
        .on_request(answer)
        .on_notification(move |notification: acp_engine::IncomingNotification| {
            let report_tx = report_tx.clone();
            async move {
                let params = acp_engine::from_raw::<Value>(notification.params.as_deref()).unwrap();
                let _ = report_tx.send(params);
                Ok(())
            }
        })
        .connect(flooding_peer(200_000, true));
    let (most_bytes, most_running) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let sampler = {
        let (conn, most_bytes, most_running) = (conn.clone(), most_bytes.clone(), most_running.clone());
        tokio::spawn(async move {
            while !conn.is_closed() {
                most_bytes.fetch_max(conn.queued_output_bytes(), Ordering::Relaxed);
                most_running.fetch_max(conn.running_requests(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    let report = tokio::time::timeout(PATIENCE * 4, report_rx.recv())
        .await
        .expect("the peer reports")
        .expect("a report");
    let sent = report["sent"].as_u64().unwrap();
    assert_eq!(
        report["stalled"],
        json!(true),
        "the connection stopped taking requests: {report}"
    );
    assert!(sent < 200_000, "{report}");
    assert_eq!(report["answered"].as_u64(), Some(sent), "{report}");
    assert_eq!(report["duplicates"], json!(0), "{report}");
    // One read's worth of answers (64 KiB of requests) may land beyond the bound.
    let (bytes, running) = (
        most_bytes.load(Ordering::Relaxed),
        most_running.load(Ordering::Relaxed),
    );
    assert!(bytes < 256 * 1024 + 1024 * 1100, "held {bytes} bytes of output");
    assert!(running <= 64 + 1024, "{running} requests in flight");
    // Still working: a request of ours is answered (the peer answers nothing,
    // so use a notification round: the connection is open and reads).
    assert!(!conn.is_closed());
    conn.close();
    sampler.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stall_timeout_closes_a_connection_whose_peer_never_reads() {
    let conn = Connection::builder()
        .max_buffered_bytes(64 * 1024)
        .output_stall_timeout(Some(Duration::from_millis(300)))
        .on_request(answer)
        .connect(flooding_peer(100_000, false));
    let ours = {
        let conn = conn.clone();
        tokio::spawn(async move { conn.send_request::<_, Value>("flood/never", &json!({})).await })
    };
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed by the stall timeout");
    let reason = conn.close_reason().unwrap();
    assert!(reason.contains("output stalled"), "{reason}");
    assert!(reason.contains("max_buffered_bytes"), "{reason}");
    let error = tokio::time::timeout(PATIENCE, ours)
        .await
        .expect("no hang")
        .unwrap()
        .unwrap_err();
    assert!(error.is_connection_closed(), "{error}");
}

/// Two engines that both hold their peer's requests at the in-flight limit
/// while each sends the other far more: an answer that waits for room to
/// be written no longer counts as in flight (it is held output), so both
/// keep reading and every request is answered. Counted as in flight, the
/// two would stop reading at once with full pipes both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_flooding_each_other_past_the_in_flight_limit_do_not_deadlock() {
    let n: u64 = 5_000;
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    let echo = |request: acp_engine::IncomingRequest| async move {
        tokio::task::yield_now().await;
        acp_engine::to_raw(
            &json!({ "echo": request.params::<Value>()?["i"].clone(), "padding": "x".repeat(512) }),
        )
        .map_err(acp_engine::RequestError::from)
    };
    let side = |stream| {
        Connection::builder()
            .max_in_flight_requests(4)
            .write_queue_capacity(2)
            .on_request(echo)
            .connect(Transport::from_stream(stream))
    };
    let (left, right) = (side(a), side(b));
    let calls = |from: Connection| async move {
        let calls = (0..n).map(|i| {
            let from = from.clone();
            async move {
                let answer: Value = from.send_request("echo", &json!({ "i": i })).await.unwrap();
                assert_eq!(answer["echo"], i);
            }
        });
        futures_util::future::join_all(calls).await
    };
    tokio::time::timeout(PATIENCE * 3, async {
        tokio::join!(calls(left.clone()), calls(right.clone()))
    })
    .await
    .expect("every request answered both ways");
}

/// Two engines whose many sending threads (a host language's, blocked in
/// `blocking_send_notification` while the write queue is full) outnumber
/// the in-flight limit both ways: a thread waiting to send its own message
/// holds no request of the peer's, so both keep reading and everything
/// arrives. Counted as in flight, each side stopped reading once enough of
/// its threads waited, and the pipes stayed full both ways.
#[test]
fn threads_blocked_sending_their_own_messages_do_not_stop_reading() {
    const THREADS: usize = 16;
    const EACH: usize = 300;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    let received = Arc::new(AtomicUsize::new(0));
    let side = |stream| {
        let received = received.clone();
        Connection::builder()
            .max_in_flight_requests(4)
            .write_queue_capacity(2)
            .on_notification(move |_: acp_engine::IncomingNotification| {
                received.fetch_add(1, Ordering::Relaxed);
                async { Ok(()) }
            })
            .connect_on(Transport::from_stream(stream), runtime.handle())
    };
    let (left, right) = (side(a), side(b));
    let padding = "x".repeat(2048);
    let senders: Vec<_> = [left.clone(), right.clone()]
        .into_iter()
        .flat_map(|from| (0..THREADS).map(move |t| (from.clone(), t)))
        .map(|(from, t)| {
            let padding = padding.clone();
            std::thread::spawn(move || {
                for i in 0..EACH {
                    from.blocking_send_notification("flood", &json!({ "t": t, "i": i, "padding": padding }))
                        .unwrap();
                }
            })
        })
        .collect();
    let deadline = std::time::Instant::now() + PATIENCE * 3;
    while received.load(Ordering::Relaxed) < 2 * THREADS * EACH {
        assert!(
            std::time::Instant::now() < deadline,
            "deadlock: {} of {} arrived",
            received.load(Ordering::Relaxed),
            2 * THREADS * EACH
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    for sender in senders {
        sender.join().unwrap();
    }
}

/// Frames larger than the socket's buffer, each written straight by its
/// sender while nothing is queued: the part the stream did not take waits
/// for the writer task and counts as held output until written, then no
/// longer. Left counted, every such frame moved the connection closer to
/// its limit, and after a few it stopped reading for good (two engines
/// exchanging 16 MiB files hung on the fifth).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_written_in_parts_is_no_longer_held_once_written() {
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    let limits = Limits {
        max_in_flight_requests: 64,
        max_buffered_bytes: 1024 * 1024,
        output_stall_timeout: None,
    };
    let sender = Connection::builder()
        .limits(limits)
        .connect(Transport::from_stream(a));
    let _receiver = Connection::builder()
        .on_request(|request: acp_engine::IncomingRequest| async move {
            let size = request.params::<Value>()?["data"].as_str().map_or(0, str::len);
            acp_engine::to_raw(&json!({ "size": size })).map_err(acp_engine::RequestError::from)
        })
        .connect(Transport::from_stream(b));
    let data = "x".repeat(512 * 1024);
    tokio::time::timeout(PATIENCE, async {
        for _ in 0..20 {
            let answer: Value = sender
                .send_request("take", &json!({ "data": data }))
                .await
                .unwrap();
            assert_eq!(answer["size"], data.len());
        }
    })
    .await
    .expect("every request answered: the connection kept reading");
    assert_eq!(
        sender.queued_output_bytes(),
        0,
        "nothing is held once everything was written"
    );
}
