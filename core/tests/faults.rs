//! Faults: the peer killed mid-burst and mid-write, a peer that closes its
//! stdin only, and cancellation racing responses. Pending calls fail at once
//! (the time from the peer's death is printed: run with --nocapture).

mod support;

use std::time::{Duration, Instant};

use acp_engine::{Connection, RequestId, SpawnOptions, Transport};
use serde_json::{json, Value};
use support::PATIENCE;

/// A Python peer running `script` (python3 is on every machine of ours).
fn python_peer(script: &str) -> (Connection, u32) {
    let transport =
        Transport::spawn(SpawnOptions::new("python3").args(["-c", script])).expect("spawn python3");
    let pid = transport.child_pid().unwrap();
    (Connection::builder().connect(transport), pid)
}

fn kill(pid: u32) -> Instant {
    let at = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    at
}

/// Pending calls fail with "connection closed"; returns how long after `since`.
async fn all_fail(
    calls: Vec<tokio::task::JoinHandle<Result<Value, acp_engine::RequestError>>>,
    since: Instant,
) -> Duration {
    let mut slowest = Duration::ZERO;
    for call in calls {
        let error = tokio::time::timeout(PATIENCE, call)
            .await
            .expect("no hang")
            .unwrap()
            .unwrap_err();
        assert!(error.is_connection_closed(), "{error}");
        slowest = slowest.max(since.elapsed());
    }
    slowest
}

fn pending_calls(
    conn: &Connection,
    n: usize,
) -> Vec<tokio::task::JoinHandle<Result<Value, acp_engine::RequestError>>> {
    (0..n)
        .map(|_| {
            let conn = conn.clone();
            tokio::spawn(async move { conn.send_request::<_, Value>("never/answered", &json!({})).await })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_killed_mid_burst_fails_every_pending_call_at_once() {
    let (conn, pid) = python_peer(
        "import sys\nline = b'{\"jsonrpc\":\"2.0\",\"method\":\"tick\",\"params\":{\"pad\":\"' + b'x' * 100 + b'\"}}\\n'\n\
         while True: sys.stdout.buffer.write(line * 100)",
    );
    let calls = pending_calls(&conn, 5);
    tokio::time::sleep(Duration::from_millis(200)).await; // the burst is flowing
    let killed = kill(pid);
    let after = all_fail(calls, killed).await;
    eprintln!("peer killed mid-burst: every pending call failed within {after:?}");
    tokio::time::timeout(PATIENCE, conn.closed()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_killed_while_we_write_a_large_message() {
    // The peer reads nothing: our 32 MiB request fills the pipe and waits.
    let (conn, pid) = python_peer("import time\ntime.sleep(60)");
    let big = "x".repeat(32 << 20);
    let writer = {
        let conn = conn.clone();
        tokio::spawn(async move {
            conn.send_request::<_, Value>("big", &json!({ "data": big }))
                .await
        })
    };
    // Wait until the big frame is being written (serializing 32 MiB takes a
    // while in a debug build), then queue a few calls behind it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let calls = pending_calls(&conn, 3);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let killed = kill(pid);
    let after = all_fail(calls, killed).await;
    eprintln!("peer killed mid-write: every pending call failed within {after:?}");
    let error = tokio::time::timeout(PATIENCE, writer)
        .await
        .expect("no hang")
        .unwrap()
        .unwrap_err();
    assert!(error.is_connection_closed(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_closes_its_stdin_only() {
    // It closes its stdin and keeps running (stdout open): our next write
    // fails, which closes the connection and fails what is pending.
    let (conn, pid) = python_peer("import os, time\nos.close(0)\ntime.sleep(60)");
    // Once it did (a loaded machine may take a while to start Python).
    let stdin = format!("/proc/{pid}/fd/0");
    let started = Instant::now();
    while std::path::Path::new(&stdin).exists() && started.elapsed() < PATIENCE {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let calls = pending_calls(&conn, 3);
    let since = Instant::now();
    let after = all_fail(calls, since).await;
    eprintln!("peer closed its stdin: pending calls failed within {after:?}");
    assert!(conn.send_notification("late", &json!({})).await.is_err());
    conn.close();
    tokio::time::timeout(PATIENCE, conn.closed()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_racing_the_response_never_hangs_or_leaks() {
    // The peer answers every request at once; we cancel each one right
    // away. Each call ends as a result or as -32800, nothing else, and
    // nothing stays pending.
    let (conn, _pid) = python_peer(
        "import sys, json\nfor line in iter(sys.stdin.readline, ''):\n    m = json.loads(line)\n    if 'id' in m and 'method' in m:\n\
         \x20       sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}) + '\\n'); sys.stdout.flush()",
    );
    let (mut answered, mut cancelled) = (0, 0);
    for i in 0..300u64 {
        let pending = conn.start_request("race", &json!({})).await.unwrap();
        let id: RequestId = pending.id().clone();
        let canceller = conn.clone();
        // Cancel after 0 to 4 ms: sometimes before the answer, sometimes after.
        let delay = Duration::from_micros((i % 100) * 40);
        let cancel = tokio::spawn(async move {
            let start = Instant::now();
            while start.elapsed() < delay {
                tokio::task::yield_now().await;
            }
            canceller.cancel_pending_request(&id, None).await
        });
        match tokio::time::timeout(PATIENCE, pending).await.expect("no hang") {
            Ok(_) => answered += 1,
            Err(error) => {
                assert_eq!(error.code, -32800, "{error}");
                cancelled += 1;
            }
        }
        cancel.await.unwrap();
    }
    eprintln!("cancel racing responses: {answered} answered, {cancelled} cancelled");
    assert_eq!(answered + cancelled, 300);
    // Still healthy afterwards.
    let _: Value = conn.send_request("race", &json!({})).await.unwrap();
}
