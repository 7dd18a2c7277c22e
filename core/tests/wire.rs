//! The engine rules, checked byte for byte: a raw peer on a real Unix
//! socket talks to a `Connection` and asserts what comes back on the wire.

mod support;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_engine::{
    to_raw, Connection, Direction, IncomingNotification, IncomingRequest, RawJson, RequestError, RequestId,
};
use serde_json::{json, Value};
use support::{connect_raw, PATIENCE};
use tokio::sync::Notify;

/// A handler that echoes params for `echo`, and -32601 otherwise.
async fn echo(request: IncomingRequest) -> Result<RawJson, RequestError> {
    match request.method.as_str() {
        "echo" => Ok(request.params.unwrap_or_else(|| to_raw(&Value::Null).unwrap())),
        _ => Err(RequestError::method_not_found(&request.method)),
    }
}

fn echo_connection() -> (Connection, support::RawPeer) {
    connect_raw(Connection::builder().on_request(echo))
}

/// The connection still answers a normal request.
async fn assert_still_answers(peer: &mut support::RawPeer, id: u64) {
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":{{"ok":true}}}}"#
    ))
    .await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":id,"result":{"ok":true}})
    );
}

#[tokio::test]
async fn a_request_is_answered_with_its_id_and_result() {
    let (_conn, mut peer) = echo_connection();
    peer.send(r#"{"jsonrpc":"2.0","id":"abc","method":"echo","params":{"x":[1,2]}}"#)
        .await;
    assert_eq!(
        peer.recv_line().await,
        r#"{"jsonrpc":"2.0","id":"abc","result":{"x":[1,2]}}"#
    );
}

#[tokio::test]
async fn non_json_gets_parse_error_with_null_id_and_the_stream_goes_on() {
    let (_conn, mut peer) = echo_connection();
    peer.send("{this is not json").await;
    let reply = peer.recv().await;
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["error"]["message"], "Parse error");
    peer.send_bytes(b"\xff\xfe{\"jsonrpc\":\"2.0\"}\n").await;
    assert_eq!(peer.recv().await["error"]["code"], -32700);
    assert_still_answers(&mut peer, 1).await;
}

#[tokio::test]
async fn batches_and_non_objects_get_invalid_request() {
    let (_conn, mut peer) = echo_connection();
    for line in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"echo"}]"#,
        "42",
        r#""text""#,
        "null",
    ] {
        peer.send(line).await;
        let reply = peer.recv().await;
        assert_eq!(reply["id"], Value::Null, "{line}");
        assert_eq!(reply["error"]["code"], -32600, "{line}");
    }
    assert_still_answers(&mut peer, 2).await;
}

#[tokio::test]
async fn malformed_envelopes_get_invalid_request_with_their_id() {
    let (_conn, mut peer) = echo_connection();
    let cases = [
        (r#"{"id":7,"method":"echo"}"#, json!(7)),
        (r#"{"jsonrpc":"1.0","id":8,"method":"echo"}"#, json!(8)),
        (r#"{"jsonrpc":"2.0","id":9,"method":42}"#, json!(9)),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"echo","params":"scalar"}"#,
            json!(10),
        ),
        (r#"{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"echo"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0"}"#, Value::Null),
    ];
    for (line, id) in cases {
        peer.send(line).await;
        let reply = peer.recv().await;
        assert_eq!(reply["id"], id, "{line}");
        assert_eq!(reply["error"]["code"], -32600, "{line}");
        assert!(reply["error"]["data"]["reason"].is_string(), "{line}: {reply}");
    }
    assert_still_answers(&mut peer, 3).await;
}

#[tokio::test]
async fn empty_lines_crlf_and_bom_are_tolerated() {
    let (_conn, mut peer) = echo_connection();
    peer.send_bytes(
        b"\n\r\n\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[]}\r\n\r\n",
    )
    .await;
    assert_eq!(peer.recv_line().await, r#"{"jsonrpc":"2.0","id":1,"result":[]}"#);
    // A lone CR is an empty line too.
    peer.send_bytes(b"\r\n").await;
    assert_still_answers(&mut peer, 2).await;
}

#[tokio::test]
async fn a_line_split_across_writes_is_reassembled() {
    let (_conn, mut peer) = echo_connection();
    let line = br#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{"split":true}}"#;
    for piece in line.chunks(7) {
        peer.send_bytes(piece).await;
        tokio::task::yield_now().await;
    }
    peer.send_bytes(b"\n").await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":5,"result":{"split":true}})
    );
}

#[tokio::test]
async fn unknown_requests_get_method_not_found_and_unknown_notifications_are_ignored() {
    let (_conn, mut peer) = echo_connection();
    peer.send(r#"{"jsonrpc":"2.0","method":"_vendor/unknown","params":{}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#).await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"method":"no/such"}}})
    );
    // The notification produced nothing.
    peer.expect_silence(100).await;
}

#[tokio::test]
async fn without_a_request_handler_every_request_is_method_not_found() {
    let (_conn, mut peer) = connect_raw(Connection::builder());
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .await;
    assert_eq!(peer.recv().await["error"]["code"], -32601);
}

#[tokio::test]
async fn an_oversized_line_is_rejected_and_the_stream_goes_on() {
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(echo).max_message_size(1024));
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{"pad":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    peer.send(&huge).await;
    let reply = peer.recv().await;
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32600);
    let reason = reply["error"]["data"]["reason"].as_str().unwrap();
    assert!(reason.contains("exceeds the limit of 1024 bytes"), "{reason}");
    assert_still_answers(&mut peer, 2).await;
}

#[tokio::test]
async fn handler_errors_go_out_as_themselves_and_failures_hide_their_details() {
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(
        |request: IncomingRequest| async move {
            match request.method.as_str() {
                "auth" => Err(RequestError::auth_required().with_data(json!({"methods": ["oauth"]}))),
                "fail" => Err(RequestError::internal("db password=hunter2 at /srv/secret")),
                "panic" => panic!("secret panic text"),
                _ => Err(RequestError::method_not_found(&request.method)),
            }
        },
    ));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"auth"}"#).await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required","data":{"methods":["oauth"]}}})
    );
    for (id, method) in [(2, "fail"), (3, "panic")] {
        peer.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#))
            .await;
        let line = peer.recv_line().await;
        assert_eq!(
            line,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"Internal error"}}}}"#)
        );
    }
    // The panic did not take the connection down.
    peer.send(r#"{"jsonrpc":"2.0","id":4,"method":"other"}"#).await;
    assert_eq!(peer.recv().await["error"]["code"], -32601);
}

#[tokio::test]
async fn invalid_params_carry_the_reason() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Params {
        count: u32,
    }
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(
        |request: IncomingRequest| async move {
            let params: Params = request.params()?;
            Ok(to_raw(&params.count).unwrap())
        },
    ));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"count","params":{"count":"seven"}}"#)
        .await;
    let reply = peer.recv().await;
    assert_eq!(reply["error"]["code"], -32602);
    assert!(
        reply["error"]["data"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid type"),
        "{reply}"
    );
}

#[tokio::test]
async fn requests_are_handled_concurrently() {
    let gate = Arc::new(Notify::new());
    let handler_gate = gate.clone();
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(move |request: IncomingRequest| {
        let gate = handler_gate.clone();
        async move {
            match request.method.as_str() {
                // Waits until a later request opens the gate.
                "wait" => gate.notified().await,
                "open" => gate.notify_one(),
                _ => {}
            }
            Ok(to_raw(&request.method).unwrap())
        }
    }));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#).await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"open"}"#).await;
    assert_eq!(peer.recv().await, json!({"jsonrpc":"2.0","id":2,"result":"open"}));
    assert_eq!(peer.recv().await, json!({"jsonrpc":"2.0","id":1,"result":"wait"}));
}

#[tokio::test]
async fn duplicate_inflight_request_ids_are_rejected() {
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(
        |request: IncomingRequest| async move {
            if request.method == "hang" {
                std::future::pending::<()>().await;
            }
            Ok(to_raw(&1).unwrap())
        },
    ));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"hang"}"#).await;
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"quick"}"#).await;
    let reply = peer.recv().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["error"]["code"], -32600);
}

/// Sets a flag when dropped: proves a handler's future was dropped.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn inbound_cancel_request_drops_the_handler_and_answers_request_cancelled() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(move |request: IncomingRequest| {
        let flag = flag.clone();
        async move {
            let _guard = DropFlag(flag);
            if request.method == "hang" {
                std::future::pending::<()>().await;
            }
            Ok(to_raw(&"done").unwrap())
        }
    }));
    peer.send(r#"{"jsonrpc":"2.0","id":"h1","method":"hang"}"#).await;
    peer.expect_silence(50).await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"h1"}}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":"h1","error":{"code":-32800,"message":"Request cancelled"}})
    );
    assert!(dropped.load(Ordering::SeqCst), "the handler's future was dropped");
    // Cancelling an unknown id is harmless.
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":999}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"quick"}"#).await;
    assert_eq!(peer.recv().await, json!({"jsonrpc":"2.0","id":2,"result":"done"}));
}

/// `handler_answers_cancelled`: the handler is not dropped; it sees its
/// token fire and its answer, a result here, is what the peer gets.
#[tokio::test]
async fn a_handler_that_answers_its_cancellation_is_heard() {
    let builder = Connection::builder().handler_answers_cancelled(true).on_request(
        |request: IncomingRequest| async move {
            request.cancellation.cancelled().await;
            match request.method.as_str() {
                "partial" => Ok(to_raw(&json!({"stopReason": "cancelled"})).unwrap()),
                _ => Err(RequestError::request_cancelled()),
            }
        },
    );
    let (_conn, mut peer) = connect_raw(builder);
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"partial"}"#).await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"gives_up"}"#).await;
    peer.expect_silence(30).await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}})
    );
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}"#)
        .await;
    assert_eq!(peer.recv().await["error"]["code"], -32800);
    peer.expect_silence(20).await;
}

#[tokio::test]
async fn outbound_requests_and_notifications_have_the_exact_wire_shape() {
    let (conn, mut peer) = echo_connection();
    let call = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.send_request::<_, Value>("fs/read_text_file", &json!({"path": "/a"}))
                .await
        }
    });
    assert_eq!(
        peer.recv_line().await,
        r#"{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"path":"/a"}}"#
    );
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":{"content":"hi"}}"#)
        .await;
    assert_eq!(call.await.unwrap().unwrap(), json!({"content": "hi"}));

    conn.send_notification("session/update", &json!({"sessionId": "s"}))
        .await
        .unwrap();
    assert_eq!(
        peer.recv_line().await,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}"#
    );
    // No params: the member is left out, not sent as null.
    conn.send_notification("ping", &()).await.unwrap();
    assert_eq!(peer.recv_line().await, r#"{"jsonrpc":"2.0","method":"ping"}"#);

    // An error response rejects the call with that error.
    let failing = tokio::spawn({
        let conn = conn.clone();
        async move { conn.send_request::<_, Value>("x", &json!({})).await }
    });
    let request = peer.recv().await;
    assert_eq!(request["id"], 1, "ids are unique and increasing");
    peer.send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"/a"}}}"#)
        .await;
    let error = failing.await.unwrap().unwrap_err();
    assert_eq!(error, RequestError::resource_not_found(Some("/a")));
}

/// An answered request completes when polled even in a task that used up
/// tokio's cooperative budget: otherwise a task awaiting thousands of
/// requests at once (`join_all`) re-polls every one of them on each turn.
#[tokio::test]
async fn an_answered_request_completes_in_a_task_out_of_its_coop_budget() {
    let (conn, mut peer) = echo_connection();
    let pending = conn.start_request("slow", &json!({})).await.unwrap();
    assert_eq!(peer.recv().await["method"], "slow");
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":"done"}"#).await;
    // The reader handles lines in order: once a later request is answered,
    // the answer reached the pending request.
    assert_still_answers(&mut peer, 50).await;

    let mut pending = std::pin::pin!(pending);
    let outcome = std::future::poll_fn(|cx| {
        while let std::task::Poll::Ready(progress) = tokio::task::coop::poll_proceed(cx) {
            progress.made_progress();
        }
        assert!(!tokio::task::coop::has_budget_remaining());
        std::task::Poll::Ready(pending.as_mut().poll(cx))
    })
    .await;
    match outcome {
        std::task::Poll::Ready(result) => assert_eq!(result.unwrap().get(), r#""done""#),
        std::task::Poll::Pending => panic!("an answered request stayed pending once the budget ran out"),
    }
}

#[tokio::test]
async fn cancel_pending_request_rejects_the_waiter_notifies_the_peer_and_drops_the_late_response() {
    let (conn, mut peer) = echo_connection();
    let pending = conn.start_request("slow", &json!({})).await.unwrap();
    let id = pending.id().clone();
    assert_eq!(id, RequestId::Number(0));
    let waiter = tokio::spawn(pending);
    assert_eq!(peer.recv().await["method"], "slow");

    assert!(
        conn.cancel_pending_request(&id, Some(json!({"reason": "user"})))
            .await
    );
    let error = waiter.await.unwrap().unwrap_err();
    assert_eq!(error.code, -32800);
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0,"_meta":{"reason":"user"}}})
    );
    // Not pending any more.
    assert!(!conn.cancel_pending_request(&id, None).await);
    // The late response is dropped quietly; the connection goes on.
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":"late"}"#).await;
    assert_still_answers(&mut peer, 50).await;
    assert!(!conn.is_closed());
}

/// An error response without a `message` is still the answer (as the
/// official SDKs read it): the caller gets its code, the peer no complaint;
/// a late one to a cancelled request is dropped quietly.
#[tokio::test]
async fn an_error_response_without_a_message_is_read() {
    let (conn, mut peer) = echo_connection();
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.send_request::<_, Value>("slow", &json!({})).await }
    });
    assert_eq!(peer.recv().await["id"], 0);
    peer.send(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"data":{"uri":"/a"}}}"#)
        .await;
    let error = tokio::time::timeout(PATIENCE, call)
        .await
        .expect("the answer is read")
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code, -32002);
    assert_eq!(error.message, "error -32002 (the response had no message)");
    assert_eq!(error.data, Some(json!({"uri": "/a"})));

    let pending = conn.start_request("slow", &json!({})).await.unwrap();
    let id = pending.id().clone();
    let waiter = tokio::spawn(pending);
    assert_eq!(peer.recv().await["id"], 1);
    assert!(conn.cancel_pending_request(&id, None).await);
    assert_eq!(waiter.await.unwrap().unwrap_err().code, -32800);
    assert_eq!(peer.recv().await["method"], "$/cancel_request");
    peer.send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800}}"#)
        .await;
    // Nothing comes back for it: the next line is the echo's answer.
    assert_still_answers(&mut peer, 50).await;
}

/// A response that is not one (both `result` and `error`, an `error`
/// without a code) fails the request it answers at once, rather than leave
/// it waiting for ever, and the peer hears why.
#[tokio::test]
async fn an_invalid_response_fails_the_request_it_answers() {
    let (conn, mut peer) = echo_connection();
    for (id, line) in [
        (
            0,
            r#"{"jsonrpc":"2.0","id":0,"result":1,"error":{"code":1,"message":"m"}}"#,
        ),
        (1, r#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#),
    ] {
        let call = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send_request::<_, Value>("slow", &json!({})).await }
        });
        assert_eq!(peer.recv().await["id"], id);
        peer.send(line).await;
        let reply = peer.recv().await;
        assert_eq!(reply["id"], id, "{line}");
        assert_eq!(reply["error"]["code"], -32600, "{line}");
        let error = tokio::time::timeout(PATIENCE, call)
            .await
            .expect("the request fails at once")
            .unwrap()
            .unwrap_err();
        assert_eq!(error.code, -32603, "{line}");
        let reason = error.data.unwrap()["reason"].as_str().unwrap().to_owned();
        assert!(
            reason.starts_with("the peer's response was invalid: "),
            "{reason}"
        );
    }
    assert_still_answers(&mut peer, 50).await;
}

#[tokio::test]
async fn dropping_a_pending_request_cancels_it_on_the_wire() {
    let (conn, mut peer) = echo_connection();
    let params = json!({});
    let call = conn.send_request::<_, Value>("slow", &params);
    // Time out the call: the future is dropped mid-flight.
    let outcome = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(outcome.is_err());
    assert_eq!(peer.recv().await["method"], "slow");
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}})
    );
}

#[tokio::test]
async fn send_cancel_request_notification_has_the_protocol_shape() {
    let (conn, mut peer) = echo_connection();
    conn.send_cancel_request_notification(&RequestId::Str("r-9".into()), None)
        .await
        .unwrap();
    assert_eq!(
        peer.recv_line().await,
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r-9"}}"#
    );
}

#[tokio::test]
async fn peer_eof_fails_every_pending_request_at_once_and_later_sends_fail_fast() {
    let (conn, mut peer) = echo_connection();
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let conn = conn.clone();
            tokio::spawn(async move { conn.send_request::<_, Value>("slow", &json!({"i": i})).await })
        })
        .collect();
    for _ in 0..3 {
        peer.recv().await;
    }
    peer.hang_up();
    for call in calls {
        let error = tokio::time::timeout(PATIENCE, call)
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert!(error.is_connection_closed(), "{error}");
    }
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed() resolves");
    assert!(conn.is_closed());
    assert_eq!(conn.close_reason().as_deref(), Some("peer closed the connection"));
    let error = conn
        .send_request::<_, Value>("late", &json!({}))
        .await
        .unwrap_err();
    assert!(error.is_connection_closed());
    assert!(conn
        .send_notification("late", &json!({}))
        .await
        .unwrap_err()
        .is_connection_closed());
    // The engine shut its writing side too.
    peer.expect_eof().await;
}

#[tokio::test]
async fn peer_eof_cancels_running_handlers() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let (conn, mut peer) = connect_raw(
        Connection::builder().on_request(move |_request: IncomingRequest| {
            let flag = flag.clone();
            async move {
                let _guard = DropFlag(flag);
                std::future::pending::<Result<RawJson, RequestError>>().await
            }
        }),
    );
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"hang"}"#).await;
    peer.expect_silence(50).await;
    peer.hang_up();
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed() resolves");
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn local_close_fails_pending_requests_and_shuts_the_stream() {
    let (conn, mut peer) = echo_connection();
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.send_request::<_, Value>("slow", &json!({})).await }
    });
    peer.recv().await;
    conn.close();
    let error = call.await.unwrap().unwrap_err();
    assert!(error.is_connection_closed());
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed() resolves");
    peer.expect_eof().await;
}

#[tokio::test]
async fn notifications_are_handled_one_at_a_time_in_arrival_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let (seen2, in_flight2, max2) = (seen.clone(), in_flight.clone(), max_in_flight.clone());
    let (_conn, mut peer) = connect_raw(Connection::builder().on_request(echo).on_notification(
        move |notification: IncomingNotification| {
            let (seen, in_flight, max) = (seen2.clone(), in_flight2.clone(), max2.clone());
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                max.fetch_max(now, Ordering::SeqCst);
                let n: Value = notification.params()?;
                // Uneven work: later ones would overtake if run concurrently.
                if n["n"].as_u64().unwrap() % 7 == 0 {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                tokio::task::yield_now().await;
                seen.lock().unwrap().push(n["n"].as_u64().unwrap());
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            }
        },
    ));
    let mut burst = String::new();
    for n in 0..200 {
        burst.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"tick\",\"params\":{{\"n\":{n}}}}}\n"
        ));
    }
    peer.send_bytes(burst.as_bytes()).await;
    // A request after the burst: answered while notifications may still run.
    assert_still_answers(&mut peer, 1).await;
    tokio::time::timeout(PATIENCE, async {
        while seen.lock().unwrap().len() < 200 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("all notifications handled");
    assert_eq!(*seen.lock().unwrap(), (0..200).collect::<Vec<_>>());
    assert_eq!(max_in_flight.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_response_is_released_only_after_the_notifications_before_it_were_handled() {
    let handled = Arc::new(AtomicUsize::new(0));
    let counter = handled.clone();
    let (conn, mut peer) = connect_raw(Connection::builder().on_notification(
        move |_notification: IncomingNotification| {
            let counter = counter.clone();
            async move {
                // A slow handler: the response must still wait for it.
                tokio::task::yield_now().await;
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        },
    ));
    for round in 0..5 {
        let before = handled.load(Ordering::SeqCst);
        let call = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send_request::<_, Value>("session/prompt", &json!({})).await }
        });
        let id = peer.recv().await["id"].clone();
        // The turn's updates and the turn's end, in one write.
        let mut turn = String::new();
        for n in 0..500 {
            turn.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"n\":{n}}}}}\n"
            ));
        }
        turn.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"stopReason\":\"end_turn\"}}}}\n"
        ));
        peer.send_bytes(turn.as_bytes()).await;
        let result = call.await.unwrap().unwrap();
        assert_eq!(result["stopReason"], "end_turn");
        assert_eq!(handled.load(Ordering::SeqCst) - before, 500, "round {round}");
    }
}

#[tokio::test]
async fn the_observer_sees_every_message_in_both_directions() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let (conn, mut peer) = connect_raw(Connection::builder().on_request(echo).observer(
        move |direction: Direction, line: &[u8]| {
            sink.lock()
                .unwrap()
                .push((direction, String::from_utf8_lossy(line).into_owned()));
        },
    ));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}"#)
        .await;
    peer.recv().await;
    conn.send_notification("note", &json!({"a": 1})).await.unwrap();
    peer.recv().await;
    peer.send("garbage").await;
    peer.recv().await;
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            (Direction::Inbound, r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}"#.to_owned()),
            (Direction::Outbound, r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#.to_owned()),
            (Direction::Outbound, r#"{"jsonrpc":"2.0","method":"note","params":{"a":1}}"#.to_owned()),
            (Direction::Inbound, "garbage".to_owned()),
            (
                Direction::Outbound,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"message":"expected value at line 1 column 1"}}}"#
                    .to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn a_request_starts_only_after_the_notifications_before_it_were_handled() {
    // The client must see the tool call before the permission request
    // about it, even when its notification handler is slow.
    let log = Arc::new(Mutex::new(Vec::new()));
    let (notes, requests) = (log.clone(), log.clone());
    let (_conn, mut peer) = connect_raw(
        Connection::builder()
            .on_notification(move |n: IncomingNotification| {
                let log = notes.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    log.lock().unwrap().push(n.method);
                    Ok(())
                }
            })
            .on_request(move |r: IncomingRequest| {
                let log = requests.clone();
                async move {
                    log.lock().unwrap().push(r.method);
                    Ok(to_raw(&json!({})).unwrap())
                }
            }),
    );
    peer.send_bytes(
        concat!(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{}}"#,
            "\n"
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(peer.recv().await["id"], 1);
    assert_eq!(
        *log.lock().unwrap(),
        vec!["session/update", "session/request_permission"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_responder_answers_from_another_thread_once_and_before_what_follows() {
    let (tx, rx) = std::sync::mpsc::channel::<acp_engine::Responder>();
    let (conn, mut peer) = connect_raw(Connection::builder().on_request(move |request: IncomingRequest| {
        let tx = tx.clone();
        async move {
            tx.send(request.responder()).unwrap();
            // Stays pending: the answer comes from outside.
            std::future::pending::<Result<RawJson, RequestError>>().await
        }
    }));
    peer.send(r#"{"jsonrpc":"2.0","id":7,"method":"ask"}"#).await;
    let responder = tokio::task::spawn_blocking(move || rx.recv().unwrap())
        .await
        .unwrap();
    let conn2 = conn.clone();
    tokio::task::spawn_blocking(move || {
        responder
            .blocking_respond(Ok(to_raw(&json!({"ok": true})).unwrap()))
            .unwrap();
        conn2.blocking_send_notification("after", &json!({})).unwrap();
        assert_eq!(
            responder.blocking_respond(Ok(to_raw(&1).unwrap())),
            Err(acp_engine::RespondError::AlreadyAnswered)
        );
    })
    .await
    .unwrap();
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc":"2.0","id":7,"result":{"ok":true}})
    );
    assert_eq!(peer.recv().await["method"], "after");
}

#[tokio::test]
async fn a_response_callback_runs_in_wire_order_with_notifications() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let notes = log.clone();
    let (conn, mut peer) = connect_raw(Connection::builder().on_notification(
        move |n: IncomingNotification| {
            let log = notes.clone();
            async move {
                log.lock().unwrap().push(n.method);
                Ok(())
            }
        },
    ));
    let responses = log.clone();
    let conn2 = conn.clone();
    let id = tokio::task::spawn_blocking(move || {
        conn2
            .blocking_send_request_with("ask", &json!({}), move |id, outcome| {
                assert!(outcome.is_ok());
                responses.lock().unwrap().push(format!("response {id}"));
            })
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(peer.recv().await["id"], json!(0));
    peer.send_bytes(
        concat!(
            r#"{"jsonrpc":"2.0","method":"before"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":0,"result":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"after"}"#,
            "\n"
        )
        .as_bytes(),
    )
    .await;
    support::eventually(|| log.lock().unwrap().len() == 3).await;
    assert_eq!(
        *log.lock().unwrap(),
        vec!["before".to_owned(), format!("response {id}"), "after".to_owned()]
    );
}
