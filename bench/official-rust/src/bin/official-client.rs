//! Benchmark ACP client built on the official Rust SDK (`agent-client-protocol` v5, protocol v1).
//!
//! Usage: official-client --scenario <stream|rpc|perm|concurrent|large|setup> --n <N> --
//!        <agent command> [agent args...]
//!
//! Spawns the agent with the SDK's `AcpAgent`, runs initialize + session/new (timed as
//! setup), then (unless the scenario is `setup`) one session/prompt "<scenario> <N>" (timed
//! as run), and prints one JSON line on stdout. Logs go to stderr.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, InitializeRequest, NewSessionRequest,
    PromptRequest, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification,
    StopReason, TextContent, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{on_receive_notification, on_receive_request, AcpAgent, Client, LineDirection};

#[path = "../../../latency/latency.rs"]
mod latency;
use latency::Arrivals;

/// The `large` scenario's file size: 16 MiB of ASCII.
const LARGE_SIZE: usize = 16 * 1024 * 1024;

struct Args {
    scenario: String,
    n: u64,
    agent: Vec<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: official-client --scenario <stream|rpc|perm|concurrent|large|setup> --n <N> -- <agent command> [args...]"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut scenario = None;
    let mut n = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--scenario" => scenario = args.next(),
            "--n" => n = args.next().and_then(|v| v.parse().ok()),
            "--" => break,
            _ => usage(),
        }
    }
    let agent: Vec<String> = args.collect();
    match (scenario, n) {
        (Some(scenario), Some(n)) if !agent.is_empty() => Args { scenario, n, agent },
        _ => usage(),
    }
}

// The SDK is executor-agnostic (child pipes are driven by async-io's reactor thread);
// a single-threaded tokio executor measured much faster than multi-thread here.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let t0 = Instant::now();
    let args = parse_args();

    // Counters shared with the handlers (which run in the SDK's dispatch loop).
    let updates = Arc::new(AtomicU64::new(0));
    let reads = Arc::new(AtomicU64::new(0));
    let permissions = Arc::new(AtomicU64::new(0));
    let arrivals = Arc::new(Arrivals::for_scenario(&args.scenario));
    let large_writes = Arc::new(AtomicU64::new(0));
    // The `large` scenario answers every read with 16 MiB; the others with "hello".
    let read_content = if args.scenario == "large" {
        "x".repeat(LARGE_SIZE)
    } else {
        "hello".to_string()
    };

    // `AcpAgent` spawns the command with piped stdin/stdout/stderr; forward the agent's
    // stderr lines to ours so agent logs stay visible.
    let agent = match AcpAgent::from_args(&args.agent) {
        Ok(agent) => agent.with_debug(|line, direction| {
            if direction == LineDirection::Stderr {
                eprintln!("{line}");
            }
        }),
        Err(e) => {
            eprintln!("official-client: bad agent command: {e:?}");
            std::process::exit(2);
        }
    };

    let result = Client
        .v1()
        .name("official-client")
        .on_receive_notification(
            {
                let updates = updates.clone();
                async move |_n: SessionNotification, _cx| {
                    updates.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            {
                let reads = reads.clone();
                let arrivals = arrivals.clone();
                async move |_req: ReadTextFileRequest, responder, _cx| {
                    arrivals.arrived();
                    reads.fetch_add(1, Ordering::Relaxed);
                    responder.respond(ReadTextFileResponse::new(read_content.clone()))
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let large_writes = large_writes.clone();
                async move |req: WriteTextFileRequest, responder, _cx| {
                    if req.content.len() == LARGE_SIZE {
                        large_writes.fetch_add(1, Ordering::Relaxed);
                    }
                    responder.respond(WriteTextFileResponse::new())
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let permissions = permissions.clone();
                let arrivals = arrivals.clone();
                async move |_req: RequestPermissionRequest, responder, _cx| {
                    arrivals.arrived();
                    permissions.fetch_add(1, Ordering::Relaxed);
                    responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow")),
                    ))
                }
            },
            on_receive_request!(),
        )
        .connect_with(agent, async |cx| {
            let fs = FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true);
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1)
                    .client_capabilities(ClientCapabilities::new().fs(fs)),
            )
            .block_task()
            .await?;
            let session = cx
                .send_request(NewSessionRequest::new("/tmp").mcp_servers(vec![]))
                .block_task()
                .await?;
            let setup_s = t0.elapsed().as_secs_f64();
            if args.scenario == "setup" {
                return Ok((setup_s, setup_s, args.n, true));
            }

            let t1 = Instant::now();
            let prompt = format!("{} {}", args.scenario, args.n);
            let response = cx
                .send_request(PromptRequest::new(
                    session.session_id,
                    vec![ContentBlock::Text(TextContent::new(prompt))],
                ))
                .block_task()
                .await;
            let run_s = t1.elapsed().as_secs_f64();
            // An error response (the agent failed the turn) is a failed run, not a failed client.
            let ended = match response {
                Ok(response) => {
                    eprintln!("official-client: stop reason {:?}", response.stop_reason);
                    response.stop_reason == StopReason::EndTurn
                }
                Err(e) => {
                    eprintln!("official-client: session/prompt failed: {e:?}");
                    false
                }
            };

            // Handlers run in order in the dispatch loop, so every message that
            // preceded the prompt response has been counted by now.
            let count = match args.scenario.as_str() {
                "stream" => updates.load(Ordering::Relaxed),
                "perm" => permissions.load(Ordering::Relaxed),
                "large" => large_writes.load(Ordering::Relaxed),
                _ => reads.load(Ordering::Relaxed),
            };
            Ok((setup_s, run_s, count, ended))
        })
        .await;
    // connect_with returned: the SDK closed the agent's stdin and waited for it to exit
    // (SIGTERM/SIGKILL after a grace period). Nothing after the prompt is measured.

    match result {
        Ok((setup_s, run_s, count, ended)) => {
            let ok = ended && count == args.n;
            println!(
                "{{\"client\":\"official-rust\",\"scenario\":\"{}\",\"n\":{},\"setup_s\":{:.6},\"run_s\":{:.6},\"count\":{},\"ok\":{}{}}}",
                args.scenario, args.n, setup_s, run_s, count, ok, arrivals.json_fields()
            );
            std::process::exit(if ok { 0 } else { 1 });
        }
        Err(e) => {
            eprintln!("official-client: error: {e:?}");
            println!(
                "{{\"client\":\"official-rust\",\"scenario\":\"{}\",\"n\":{},\"setup_s\":null,\"run_s\":null,\"count\":0,\"ok\":false}}",
                args.scenario, args.n
            );
            std::process::exit(1);
        }
    }
}
