//! Message dispatch: arbitrary bytes as the inbound stream of a real
//! connection (an `AgentSideConnection` or a `ClientSideConnection` with
//! trivial handlers, over an in-memory duplex), then a valid `initialize`
//! request that must be answered within a bounded time.
//!
//! Input layout: byte 0 picks the side (bit 0) and the message size limit
//! (bits 1..: the default 64 MiB, or a small one so oversized lines are hit);
//! the rest is the stream.
//!
//! Checks: no panic; the connection stays open and answers the probe;
//! everything it writes is one JSON-RPC 2.0 object per line; it tears down.

#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use acp_engine::framing::{LineEvent, LineReader};
use acp_engine::schema::*;
use acp_engine::{
    Agent, AgentSideConnection, Client, ClientSideConnection, Connection, RequestError, Transport,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

/// An id the fuzzer is unlikely to reuse, so the probe's answer is ours.
const PROBE_ID: &str = "fuzz-probe-7f3a9c";
const PROBE: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-probe-7f3a9c\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
const PROBE_DEADLINE: Duration = Duration::from_secs(5);

struct MinimalAgent;

impl Agent for MinimalAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        Ok(InitializeResponse::new(1))
    }
    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        Ok(NewSessionResponse::new("s"))
    }
    async fn prompt(&self, _: PromptRequest) -> Result<PromptResponse, RequestError> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
    async fn cancel(&self, _: CancelNotification) -> Result<(), RequestError> {
        Ok(())
    }
}

struct MinimalClient;

impl Client for MinimalClient {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        Ok(RequestPermissionResponse::new(
            RequestPermissionOutcome::Cancelled,
        ))
    }
    async fn session_update(&self, _: SessionNotification) -> Result<(), RequestError> {
        Ok(())
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// Read the engine's output until the probe's answer; check every frame.
async fn await_probe(output: tokio::io::ReadHalf<tokio::io::DuplexStream>) -> Result<Value, String> {
    let mut lines = LineReader::new(output, usize::MAX);
    let mut answer = None;
    let mut bad = None;
    loop {
        let more = lines
            .read_batch(|event| {
                let LineEvent::Line(line) = event else {
                    unreachable!("no limit")
                };
                let message: Value = match serde_json::from_slice(line) {
                    Ok(message) => message,
                    Err(error) => {
                        bad.get_or_insert(format!("not JSON ({error}): {}", String::from_utf8_lossy(line)));
                        return;
                    }
                };
                if message.get("jsonrpc") != Some(&Value::from("2.0")) {
                    bad.get_or_insert(format!("not JSON-RPC 2.0: {message}"));
                }
                if message.get("id") == Some(&Value::from(PROBE_ID)) {
                    answer.get_or_insert(message);
                }
            })
            .await
            .map_err(|error| format!("read error: {error}"))?;
        if let Some(bad) = bad {
            return Err(bad);
        }
        if let Some(answer) = answer {
            return Ok(answer);
        }
        if !more {
            return Err("the engine closed its output".into());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    let agent_side = mode & 1 == 0;
    // Room for the probe (about 100 bytes) in the smallest limit.
    let limit = match mode >> 1 {
        0..=63 => None,
        n => Some(128 + 8 * n as usize),
    };

    runtime().block_on(async {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let mut builder = Connection::builder().read_spin(Duration::ZERO);
        if let Some(limit) = limit {
            builder = builder.max_message_size(limit);
        }
        let transport = Transport::from_stream(theirs);
        let connection = if agent_side {
            AgentSideConnection::with_builder(builder, |_| MinimalAgent, transport)
                .connection()
                .clone()
        } else {
            ClientSideConnection::with_builder(builder, |_| MinimalClient, transport)
                .connection()
                .clone()
        };
        let (output, mut input_stream) = tokio::io::split(ours);
        // Drain the output concurrently, so a chatty engine never blocks.
        let probe = tokio::spawn(await_probe(output));
        input_stream
            .write_all(input)
            .await
            .expect("the engine stopped reading");
        // End a partial last line, so the probe is a line of its own.
        input_stream
            .write_all(b"\n")
            .await
            .expect("the engine stopped reading");
        input_stream
            .write_all(PROBE)
            .await
            .expect("the engine stopped reading");
        let answer = match tokio::time::timeout(PROBE_DEADLINE, probe).await {
            Err(_) => panic!(
                "no answer to initialize within {PROBE_DEADLINE:?} (closed: {:?})",
                connection.close_reason()
            ),
            Ok(Err(join)) => std::panic::resume_unwind(join.into_panic()),
            Ok(Ok(Err(why))) => panic!("{why} (close reason: {:?})", connection.close_reason()),
            Ok(Ok(Ok(answer))) => answer,
        };
        if agent_side {
            assert_eq!(
                answer["result"]["protocolVersion"], 1,
                "unexpected answer: {answer}"
            );
        } else {
            // A client does not serve initialize: method not found.
            assert_eq!(answer["error"]["code"], -32601, "unexpected answer: {answer}");
        }
        assert!(!connection.is_closed(), "closed: {:?}", connection.close_reason());

        connection.close();
        tokio::time::timeout(Duration::from_secs(5), connection.closed())
            .await
            .expect("the connection did not tear down within 5 s");
        drop(input_stream);
    });
});
