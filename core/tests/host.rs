//! The host-binding surface (`acp_engine::host`): events in wire order as
//! one JSON array per drain, one wake per burst, answers by token,
//! cancellation and close, over a real socket pair.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_engine::host::{kind, HostConnection, HostOptions, Side};
use acp_engine::RequestError;
use acp_engine::Transport;
use serde_json::{json, Value};
use support::{raw_fd_transport, raw_socket, raw_transport, RawPeer};

struct Host {
    connection: Arc<HostConnection>,
    wakes: Arc<AtomicUsize>,
}

/// Who reads the connection's input, and from where.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// A socket, read by an engine task.
    EngineReads,
    /// A socket's fd, read by the host (`host_reads`: the test's thread
    /// pumps, as Python's loop does).
    HostReads,
    /// `Transport::fed`: the host moves the socket's bytes itself (as Node
    /// does for Web Streams) and pumps them.
    HostFeeds,
    /// `Transport::fed`, read by an engine task.
    HostFeedsEngineReads,
}

/// The tests of one mode, in a module of its own.
macro_rules! mode_tests {
    ($module:ident, $mode:ident, [$($name:ident),*]) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Mode::$mode).await
                }
            )*
        }
    };
}

/// Every test runs in every mode.
macro_rules! every_mode {
    ($($name:ident),* $(,)?) => {
        mode_tests!(engine_reads, EngineReads, [$($name),*]);
        mode_tests!(host_reads, HostReads, [$($name),*]);
        mode_tests!(host_feeds, HostFeeds, [$($name),*]);
        mode_tests!(host_feeds_engine_reads, HostFeedsEngineReads, [$($name),*]);
    };
}

every_mode!(
    a_burst_arrives_in_order_in_few_drains,
    requests_both_ways,
    cancellation_both_ways,
    a_cancelled_request_is_answered_by_the_host_when_asked,
    a_request_cancelled_before_the_host_took_it_never_reaches_it,
    a_request_cancelled_in_its_read_reaches_the_host_when_not_withdrawn,
    eof_fails_pending_requests_then_closes,
    typed_sides_check_both_ways,
    pretty_printed_json_from_the_host_stays_one_line,
    an_invalid_notification_is_told_and_an_unknown_one_is_not,
    unknown_properties_are_stripped_when_asked,
);

impl Host {
    fn new(side: Side, mode: Mode) -> (Self, RawPeer) {
        Self::connect(
            mode,
            HostOptions {
                side,
                ..HostOptions::default()
            },
        )
    }

    /// A host connection given params without unknown properties.
    fn stripping(side: Side, mode: Mode) -> (Self, RawPeer) {
        let options = HostOptions {
            side,
            strip_unknown_fields: true,
            ..HostOptions::default()
        };
        Self::connect(mode, options)
    }

    /// A host connection whose handlers answer a peer's `$/cancel_request`.
    fn answering_cancelled(mode: Mode) -> (Self, RawPeer) {
        let options = HostOptions {
            handler_answers_cancelled: true,
            ..HostOptions::default()
        };
        Self::connect(mode, options)
    }

    fn connect(mode: Mode, options: HostOptions) -> (Self, RawPeer) {
        let host_reads = matches!(mode, Mode::HostReads | Mode::HostFeeds);
        let (transport, peer, fed_socket) = match mode {
            Mode::EngineReads => {
                let (transport, peer) = raw_transport();
                (transport, peer, None)
            }
            Mode::HostReads => {
                let (transport, peer) = raw_fd_transport();
                (transport, peer, None)
            }
            Mode::HostFeeds | Mode::HostFeedsEngineReads => {
                let (socket, peer) = raw_socket();
                (Transport::fed(), peer, Some(socket))
            }
        };
        let wakes = Arc::new(AtomicUsize::new(0));
        let counter = wakes.clone();
        let options = HostOptions {
            host_reads,
            ..options
        };
        let connection = HostConnection::connect(
            transport,
            options,
            &tokio::runtime::Handle::current(),
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
        );
        assert_eq!(connection.read_fd().is_some(), mode == Mode::HostReads);
        let host = Self {
            connection: Arc::new(connection),
            wakes,
        };
        if let Some(socket) = fed_socket {
            host.move_bytes(socket);
        }
        if host_reads {
            // What the host's loop does: pump whenever input may be there.
            let connection = host.connection.clone();
            tokio::spawn(async move {
                while connection.pump() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
        }
        (host, peer)
    }

    /// What a host with streams of its own does on a fed transport: feed
    /// what the socket brings (more only once the last was read), write
    /// what the engine wrote, end each side when its stream ends.
    fn move_bytes(&self, socket: tokio::net::UnixStream) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut read, mut write) = socket.into_split();
        let input = self.connection.clone();
        tokio::spawn(async move {
            let mut buffer = vec![0u8; 4096];
            loop {
                let n = read.read(&mut buffer).await.unwrap_or(0);
                if n == 0 {
                    input.end_input();
                    return;
                }
                assert!(input.feed(&buffer[..n]));
                while input.input_backlog() > 0 && !input.is_closed() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        });
        let output = self.connection.clone();
        tokio::spawn(async move {
            loop {
                if let Some(bytes) = output.take_output() {
                    if write.write_all(&bytes).await.is_err() {
                        return;
                    }
                } else if output.output_ended() {
                    let _ = write.shutdown().await;
                    return;
                } else {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        });
    }

    /// Wait for events and return them (one or more drains).
    async fn events(&self, at_least: usize) -> Vec<Value> {
        self.events_until(|events| events.len() >= at_least).await
    }

    async fn events_until(&self, mut done: impl FnMut(&[Value]) -> bool) -> Vec<Value> {
        let mut events = Vec::new();
        for _ in 0..500 {
            self.connection.pump();
            if let Some(text) = self.connection.drain() {
                let batch: Vec<Value> = serde_json::from_str(&text).unwrap();
                events.extend(batch);
            }
            if done(&events) {
                return events;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("expected more events, got {events:?}");
    }
}

async fn a_burst_arrives_in_order_in_few_drains(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Raw, mode);
    let mut burst = String::new();
    for i in 0..1000 {
        burst.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"tick\",\"params\":{{\"i\":{i}}}}}\n"
        ));
    }
    peer.send_bytes(burst.as_bytes()).await;
    let events = host.events(1000).await;
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event, &json!([kind::NOTIFICATION, "tick", {"i": i}]));
    }
    // One wake per drain that found the queue empty, not one per message.
    assert!(
        host.wakes.load(Ordering::SeqCst) < 100,
        "{} wakes",
        host.wakes.load(Ordering::SeqCst)
    );
}

async fn requests_both_ways(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Raw, mode);
    let (id, ticket) = host.connection.send_request("ping", Some(r#"{"n":1}"#)).unwrap();
    assert_eq!(ticket, None);
    let request = peer.recv().await;
    assert_eq!(request["params"], json!({"n": 1}));
    peer.reply(&request, json!({"pong": true})).await;
    assert_eq!(
        host.events(1).await,
        vec![json!([kind::RESULT, id, {"pong": true}])]
    );

    peer.request(json!("abc"), "echo", json!({"x": [1, 2]})).await;
    let events = host.events(1).await;
    assert_eq!(events[0][0], kind::REQUEST);
    assert_eq!(events[0][2], "echo");
    let token = events[0][1].as_u64().unwrap();
    assert!(host.connection.respond(token, Ok(r#"{"y":3}"#)).unwrap());
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc": "2.0", "id": "abc", "result": {"y": 3}})
    );
    // Once only.
    assert!(!host.connection.respond(token, Ok("null")).unwrap());

    peer.request(json!(2), "fail", json!({})).await;
    let token = host.events(1).await[0][1].as_u64().unwrap();
    let error = RequestError::new(-32001, "nope").with_data(json!({"why": 1}));
    host.connection.respond(token, Err(error)).unwrap();
    let answer = peer.recv().await;
    assert_eq!(
        answer["error"],
        json!({"code": -32001, "message": "nope", "data": {"why": 1}})
    );
}

/// A host may hand over pretty-printed JSON: its line breaks are whitespace,
/// and must not end the frame early.
async fn pretty_printed_json_from_the_host_stays_one_line(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Raw, mode);
    let params = "{\n  \"a\": [1,\r\n 2],\n  \"s\": \"x\\ny\"\n}\n";
    host.connection.send_notification("n", Some(params)).unwrap();
    host.connection.send_request("r", Some("[\n1\n]")).unwrap();
    assert_eq!(peer.recv().await["params"], json!({"a": [1, 2], "s": "x\ny"}));
    assert_eq!(peer.recv().await["params"], json!([1]));
    peer.request(json!(7), "q", json!({})).await;
    let token = host.events(1).await[0][1].as_u64().unwrap();
    host.connection.respond(token, Ok("{\n\"ok\":\r\ntrue}")).unwrap();
    assert_eq!(peer.recv().await["result"], json!({"ok": true}));
    peer.expect_silence(20).await;
}

async fn cancellation_both_ways(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Raw, mode);
    peer.request(json!(9), "slow", json!({})).await;
    let token = host.events(1).await[0][1].as_u64().unwrap();
    peer.notify("$/cancel_request", json!({"requestId": 9})).await;
    assert_eq!(host.events(1).await, vec![json!([kind::CANCELLED, token])]);
    assert_eq!(peer.recv().await["error"]["code"], -32800);
    assert!(!host.connection.respond(token, Ok("1")).unwrap());

    let (id, _) = host.connection.send_request("long", None).unwrap();
    let _ = peer.recv().await;
    assert!(host.connection.cancel_pending_request(id));
    let events = host.events(1).await;
    assert_eq!(events[0][0], kind::ERROR);
    assert_eq!(events[0][2]["code"], -32800);
    assert_eq!(peer.recv().await["method"], "$/cancel_request");
}

/// `handler_answers_cancelled`: the host hears of the cancellation once,
/// the request stays in flight, and what the host answers is sent (a result
/// or its -32800), as the official TypeScript and Python SDKs do.
async fn a_cancelled_request_is_answered_by_the_host_when_asked(mode: Mode) {
    let (host, mut peer) = Host::answering_cancelled(mode);
    peer.request(json!(9), "slow", json!({})).await;
    let token = host.events(1).await[0][1].as_u64().unwrap();
    peer.notify("$/cancel_request", json!({"requestId": 9})).await;
    assert_eq!(host.events(1).await, vec![json!([kind::CANCELLED, token])]);
    // Told once, however often the peer asks; nothing answered meanwhile.
    peer.notify("$/cancel_request", json!({"requestId": 9})).await;
    peer.expect_silence(30).await;
    host.connection.pump();
    assert_eq!(host.connection.drain(), None);
    // Still in flight: the id cannot be used again.
    peer.request(json!(9), "again", json!({})).await;
    assert_eq!(peer.recv().await["error"]["code"], -32600);
    assert!(host
        .connection
        .respond(token, Ok(r#"{"stopReason":"cancelled"}"#))
        .unwrap());
    assert_eq!(
        peer.recv().await,
        json!({"jsonrpc": "2.0", "id": 9, "result": {"stopReason": "cancelled"}})
    );

    peer.request(json!("b"), "slow", json!({})).await;
    let token = host.events(1).await[0][1].as_u64().unwrap();
    peer.notify("$/cancel_request", json!({"requestId": "b"})).await;
    assert_eq!(host.events(1).await, vec![json!([kind::CANCELLED, token])]);
    assert!(host
        .connection
        .respond(token, Err(RequestError::request_cancelled()))
        .unwrap());
    assert_eq!(peer.recv().await["error"]["code"], -32800);
    peer.expect_silence(20).await;
}

/// A request and its `$/cancel_request` read before the host took the
/// request: the host never sees it (no handler starts), and the engine
/// answers -32800, as the official SDKs do, whoever answers cancellations.
async fn a_request_cancelled_before_the_host_took_it_never_reaches_it(mode: Mode) {
    for answering in [false, true] {
        let (host, mut peer) = if answering {
            Host::answering_cancelled(mode)
        } else {
            Host::new(Side::Raw, mode)
        };
        let request = json!({"jsonrpc": "2.0", "id": 5, "method": "slow", "params": {}});
        let cancel = json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}});
        peer.send_bytes(format!("{request}\n{cancel}\n").as_bytes()).await;
        let answer = peer.recv().await;
        assert_eq!(answer["id"], 5);
        assert_eq!(answer["error"]["code"], -32800);
        host.connection.pump();
        assert_eq!(host.connection.drain(), None);
        // The id is free again, and the next request reaches the host.
        peer.request(json!(5), "next", json!({})).await;
        let events = host.events(1).await;
        assert_eq!(events[0][0], kind::REQUEST);
        assert_eq!(events[0][2], "next");
        peer.expect_silence(20).await;
    }
}

/// Without `withdraw_cancelled_requests` (Node, as the official TypeScript
/// SDK): the host gets the request and then its cancellation, and its
/// handler's answer is sent.
async fn a_request_cancelled_in_its_read_reaches_the_host_when_not_withdrawn(mode: Mode) {
    let options = HostOptions {
        handler_answers_cancelled: true,
        withdraw_cancelled_requests: false,
        ..HostOptions::default()
    };
    let (host, mut peer) = Host::connect(mode, options);
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "slow", "params": {}});
    let cancel = json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}});
    peer.send_bytes(format!("{request}\n{cancel}\n").as_bytes()).await;
    let events = host.events(2).await;
    assert_eq!(events[0][0], kind::REQUEST);
    let token = events[0][1].as_u64().unwrap();
    assert_eq!(events[1], json!([kind::CANCELLED, token]));
    assert!(host.connection.respond(token, Ok(r#"{"partial":true}"#)).unwrap());
    assert_eq!(peer.recv().await["result"], json!({"partial": true}));
}

async fn eof_fails_pending_requests_then_closes(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Raw, mode);
    let (a, _) = host.connection.send_request("a", None).unwrap();
    let (b, _) = host.connection.send_request("b", None).unwrap();
    peer.request(json!(1), "handler", json!({})).await;
    let _ = host.events(1).await;
    peer.hang_up();
    let events = host
        .events_until(|events| events.last().is_some_and(|e| e[0] == kind::CLOSED))
        .await;
    let errors: Vec<i64> = events
        .iter()
        .filter(|e| e[0] == kind::ERROR)
        .map(|e| e[1].as_i64().unwrap())
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(errors.contains(&a) && errors.contains(&b));
    assert!(events.iter().any(|e| e[0] == kind::CANCELLED));
    assert_eq!(events.last().unwrap()[0], kind::CLOSED);
    assert!(host.connection.send_notification("late", None).is_err());
    // CLOSED is the last event: the handler's end reports nothing after it.
    tokio::time::sleep(Duration::from_millis(50)).await;
    host.connection.pump();
    assert_eq!(host.connection.drain(), None);
}

async fn typed_sides_check_both_ways(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Agent, mode);
    // Inbound: bad params never reach the host.
    peer.request(json!(1), "session/new", json!({"cwd": 5})).await;
    assert_eq!(peer.recv().await["error"]["code"], -32602);
    peer.request(json!(2), "no/such", json!({})).await;
    assert_eq!(peer.recv().await["error"]["code"], -32601);
    assert!(host.connection.drain().is_none());
    // Outbound: an agent sends client methods with fitting params.
    let error = host
        .connection
        .send_notification("session/update", Some(r#"{"sessionId":1}"#))
        .unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(host.connection.send_request("session/new", Some("{}")).is_err());
    assert!(host.connection.send_notification("x", Some("{not json")).is_err());
    let update = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#;
    assert_eq!(
        host.connection
            .send_notification("session/update", Some(update))
            .unwrap(),
        None
    );
    assert_eq!(peer.recv().await["params"]["update"]["content"]["text"], "hi");
}

async fn unknown_properties_are_stripped_when_asked(mode: Mode) {
    // What the official TypeScript SDK's test sends ("strips unknown properties on known incoming params").
    let initialize = json!({
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false, "experimentalFs": true},
            "customCapability": {"enabled": true}},
        "extraTopLevel": "keep me",
        "_meta": {"vendor": {"kept": true}},
    });
    let update = json!({
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"},
            "extraUpdateField": {"keep": true}},
        "extraNotificationField": "keep this too",
    });
    for strip in [true, false] {
        let (agent, mut client) = if strip {
            Host::stripping(Side::Agent, mode)
        } else {
            Host::new(Side::Agent, mode)
        };
        client.request(json!(1), "initialize", initialize.clone()).await;
        let events = agent.events(1).await;
        assert_eq!(events[0][0], kind::REQUEST);
        let params = &events[0][3];
        if strip {
            assert_eq!(
                params,
                &json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}},
                    "_meta": {"vendor": {"kept": true}}}),
                "unknown properties are gone at every depth; _meta stays whole"
            );
        } else {
            assert_eq!(params, &initialize, "received as sent");
        }
        let (client_host, mut agent_peer) = if strip {
            Host::stripping(Side::Client, mode)
        } else {
            Host::new(Side::Client, mode)
        };
        agent_peer.notify("session/update", update.clone()).await;
        let events = client_host.events(1).await;
        assert_eq!(events[0][0], kind::NOTIFICATION);
        let params = &events[0][2];
        assert_eq!(params.get("extraNotificationField").is_none(), strip, "{params}");
        assert_eq!(
            params["update"].get("extraUpdateField").is_none(),
            strip,
            "{params}"
        );
        assert_eq!(params["update"]["content"]["text"], "hi");
    }
}

async fn an_invalid_notification_is_told_and_an_unknown_one_is_not(mode: Mode) {
    let (host, mut peer) = Host::new(Side::Client, mode);
    // claude-agent-acp 0.23's usage_update: "used" must be a number.
    let bad =
        json!({"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": null, "size": 10}});
    peer.notify("session/update", bad).await;
    peer.notify("no/such_notification", json!({})).await;
    let good = json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"}}});
    peer.notify("session/update", good).await;
    let events = host.events(2).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0][0], kind::INVALID_NOTIFICATION);
    assert_eq!(events[0][1], "session/update");
    assert_eq!(events[0][2]["code"], -32602);
    assert!(events[0][2]["data"].to_string().contains("used"), "{events:?}");
    assert_eq!(events[1][0], kind::NOTIFICATION);
    assert_eq!(events[1][2]["update"]["content"]["text"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_output_goes_out_on_flush_in_order() {
    let (transport, mut peer) = raw_fd_transport();
    let options = HostOptions {
        buffer_output: true,
        host_reads: true,
        ..HostOptions::default()
    };
    let host = HostConnection::connect(transport, options, &tokio::runtime::Handle::current(), || {});
    for i in 0..3 {
        let params = format!("{{\"i\":{i}}}");
        assert_eq!(host.send_notification("n", Some(&params)).unwrap(), None);
    }
    peer.expect_silence(50).await;
    host.flush().unwrap();
    for i in 0..3 {
        assert_eq!(peer.recv().await["params"]["i"], i);
    }
    // A batch that reaches 64 KiB is written without waiting for a flush.
    let big = format!("{{\"s\":\"{}\"}}", "x".repeat(70_000));
    host.send_notification("big", Some(&big)).unwrap();
    assert_eq!(peer.recv().await["method"], "big");
    // Closing flushes what is left.
    host.send_notification("last", None).unwrap();
    host.close();
    assert_eq!(peer.recv().await["method"], "last");
}

/// A host that stops taking a fed connection's output holds it at its
/// limits; the stall timeout closes it, and its output still ends (what
/// the writer left can be taken), so the host learns it may stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fed_output_the_host_never_takes_stalls_closes_and_ends() {
    let options = HostOptions {
        host_reads: true,
        limits: acp_engine::Limits {
            max_buffered_bytes: 64 * 1024,
            output_stall_timeout: Some(Duration::from_millis(200)),
            ..acp_engine::Limits::default()
        },
        ..HostOptions::default()
    };
    let host = HostConnection::connect(
        Transport::fed(),
        options,
        &tokio::runtime::Handle::current(),
        || {},
    );
    let big = format!("{{\"s\":\"{}\"}}", "x".repeat(60_000));
    // More than the fed output (1 MiB) holds: the rest waits in the engine.
    for _ in 0..32 {
        host.send_notification("big", Some(&big)).unwrap();
    }
    // Reading now waits for the host to take output, and nothing moves.
    assert!(host.feed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n"));
    support::eventually(|| {
        host.pump();
        host.is_closed()
    })
    .await;
    assert!(host.input_backlog() > 0, "the request was read past the limits");
    // The engine's writer gives up on the host after its close grace (1 s),
    // still holding bytes it could not write.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let reason = host.close_reason().unwrap_or_default();
    assert!(reason.contains("stalled"), "{reason}");
    let mut taken = 0;
    support::eventually(|| {
        while let Some(bytes) = host.take_output() {
            taken += bytes.len();
        }
        host.output_ended()
    })
    .await;
    assert!(taken >= 1024 * 1024, "took {taken} bytes");
}
