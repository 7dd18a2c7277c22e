//! Benchmark client on acp-engine's typed `Client` API (see bench/README.md):
//! `engine-client --scenario stream|rpc|perm|concurrent|large|setup --n N -- <agent command...>`,
//! or `-- <ws:// or http:// URL>` for an agent that serves remote clients (bench/remote.py).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::schema::*;
use acp_engine::{spawn_agent, Client, ClientSideConnection, RequestError, SpawnOptions};
use acp_engine_bench::{large_content, LARGE_SIZE};
use serde_json::json;

#[path = "../../../latency/latency.rs"]
mod latency;
use latency::Arrivals;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    acp_engine_bench::runtime(&args).block_on(run());
}

async fn run() {
    let t0 = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let scenario = flag("--scenario").expect("--scenario");
    let n: u64 = flag("--n").expect("--n").parse().expect("N");
    let agent_argv = &args[args.iter().position(|a| a == "--").expect("-- <agent command>") + 1..];

    let count = Arc::new(AtomicU64::new(0));
    let arrivals = Arc::new(Arrivals::for_scenario(&scenario));
    let client = BenchClient {
        count: count.clone(),
        large: (scenario == "large").then(large_content),
        arrivals: arrivals.clone(),
    };
    let agent = if remote::is_url(&agent_argv[0]) {
        ClientSideConnection::new(
            |_| client,
            remote::dial(&agent_argv[0], &ConnectOptions::default()),
        )
    } else {
        spawn_agent(SpawnOptions::new(&agent_argv[0]).args(&agent_argv[1..]), |_| {
            client
        })
        .expect("spawn agent")
    };
    let init = InitializeRequest {
        client_capabilities: Some(ClientCapabilities {
            fs: Some(FileSystemCapabilities {
                read_text_file: Some(true),
                write_text_file: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..InitializeRequest::new(1)
    };
    agent.initialize(init).await.expect(method::INITIALIZE);
    let session = agent
        .new_session(NewSessionRequest::new("/tmp", vec![]))
        .await
        .expect(method::SESSION_NEW);
    let setup_s = t0.elapsed().as_secs_f64();

    let (run_s, count, ok) = if scenario == "setup" {
        (setup_s, n, true)
    } else {
        let t1 = Instant::now();
        let text = TextContent::new(format!("{scenario} {n}"));
        let prompt = PromptRequest::new(session.session_id, vec![ContentBlock::Text(text)]);
        let outcome = agent.prompt(prompt).await;
        let run_s = t1.elapsed().as_secs_f64();
        let count = count.load(Ordering::Relaxed);
        let ended = match outcome {
            Ok(response) => response.stop_reason == StopReason::EndTurn,
            Err(error) => {
                eprintln!("engine-client: session/prompt failed: {error}");
                false
            }
        };
        (run_s, count, ended && count == n)
    };
    agent.close();
    agent.closed().await;
    let line = json!({"client": "acp-engine-rust", "scenario": scenario, "n": n, "setup_s": setup_s,
                      "run_s": run_s, "count": count, "ok": ok})
    .to_string();
    println!("{}{}}}", &line[..line.len() - 1], arrivals.json_fields());
    std::process::exit(if ok { 0 } else { 1 });
}

/// Counts what it serves: updates (`stream`), permission requests (`perm`),
/// file reads (`rpc`, `concurrent`) or 16 MiB file writes (`large`).
struct BenchClient {
    count: Arc<AtomicU64>,
    /// The `large` scenario's read answer; `None` in the others.
    large: Option<String>,
    arrivals: Arc<Arrivals>,
}

impl Client for BenchClient {
    async fn request_permission(
        &self,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        self.arrivals.arrived();
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow")),
        ))
    }

    async fn session_update(&self, _: SessionNotification) -> Result<(), RequestError> {
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn read_text_file(&self, _: ReadTextFileRequest) -> Result<ReadTextFileResponse, RequestError> {
        match &self.large {
            Some(content) => Ok(ReadTextFileResponse::new(content.clone())),
            None => {
                self.arrivals.arrived();
                self.count.fetch_add(1, Ordering::Relaxed);
                Ok(ReadTextFileResponse::new("hello"))
            }
        }
    }

    async fn write_text_file(
        &self,
        params: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, RequestError> {
        if params.content.len() == LARGE_SIZE {
            self.count.fetch_add(1, Ordering::Relaxed);
        }
        Ok(WriteTextFileResponse::new())
    }
}
