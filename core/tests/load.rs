//! Load, CI-sized (ACP_LOAD_SCALE=5 for the long run): thousands of
//! requests in flight each way, a long notification burst, a hundred
//! connections in one process; everything completes, correct and in order.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use acp_engine::{to_raw, Connection, IncomingNotification, IncomingRequest, RequestError, Transport};
use futures_util::future::join_all;
use serde_json::{json, Value};
use support::PATIENCE;
use tokio::net::UnixStream;

fn scale() -> u64 {
    std::env::var("ACP_LOAD_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Two engines over a socket pair; both echo requests (after a yield, so
/// they really are in flight together) and count notifications in order.
fn pair(notified: Arc<AtomicU64>) -> (Connection, Connection) {
    let (a, b) = UnixStream::pair().unwrap();
    let echo = |request: IncomingRequest| async move {
        tokio::task::yield_now().await;
        to_raw(&json!({"echo": request.params().map(|p: Value| p["i"].clone())?})).map_err(RequestError::from)
    };
    let counted = move |notification: IncomingNotification| {
        let notified = notified.clone();
        async move {
            let i: Value = notification.params()?;
            // In order: the n-th notification carries n.
            let expected = notified.fetch_add(1, Ordering::SeqCst);
            assert_eq!(i["i"], expected, "notifications out of order");
            Ok(())
        }
    };
    let left = Connection::builder()
        .on_request(echo)
        .connect(Transport::from_stream(a));
    let right = Connection::builder()
        .on_request(echo)
        .on_notification(counted)
        .connect(Transport::from_stream(b));
    (left, right)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_requests_in_flight_each_way() {
    let n = 10_000 * scale();
    let (left, right) = pair(Arc::new(AtomicU64::new(0)));
    let calls = |from: Connection| async move {
        let calls = (0..n).map(|i| {
            let from = from.clone();
            async move {
                from.send_request::<_, Value>("echo", &json!({"i": i}))
                    .await
                    .unwrap()
            }
        });
        join_all(calls).await
    };
    let (one_way, other_way) = tokio::time::timeout(PATIENCE * 6, async {
        tokio::join!(calls(left.clone()), calls(right.clone()))
    })
    .await
    .expect("all requests complete");
    for answers in [one_way, other_way] {
        assert_eq!(answers.len() as u64, n);
        for (i, answer) in answers.iter().enumerate() {
            assert_eq!(answer["echo"], i as u64);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_burst_arrives_whole_and_in_order() {
    let n = 200_000 * scale();
    let notified = Arc::new(AtomicU64::new(0));
    let (left, right) = pair(notified.clone());
    for i in 0..n {
        left.send_notification("tick", &json!({"i": i})).await.unwrap();
    }
    // A request after the burst is answered only after every notification
    // before it was handled.
    let _: Value = left.send_request("echo", &json!({"i": 0})).await.unwrap();
    assert_eq!(notified.load(Ordering::SeqCst), n);
    drop(right);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_connections_in_one_process() {
    let pairs: Vec<_> = (0..100).map(|_| pair(Arc::new(AtomicU64::new(0)))).collect();
    let calls = pairs.iter().enumerate().flat_map(|(c, (left, _))| {
        (0..20).map(move |k| {
            let left = left.clone();
            async move {
                let answer: Value = left
                    .send_request("echo", &json!({"i": c * 100 + k}))
                    .await
                    .unwrap();
                assert_eq!(answer["echo"], c * 100 + k);
            }
        })
    });
    tokio::time::timeout(PATIENCE, join_all(calls))
        .await
        .expect("all complete");
    for (left, right) in &pairs {
        left.close();
        tokio::time::timeout(PATIENCE, right.closed())
            .await
            .expect("the other end sees the close");
    }
}
