//! One `acp-engine serve` holding 1,000 WebSocket connections at once, each
//! with its own agent process (the engine's example agent): every
//! connection initializes and opens a session while all are open, then all
//! close and every agent process is reaped. Prints the server's and the
//! agents' memory.

// A test prints to the harness, which reads to the end.
#![allow(clippy::disallowed_macros)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_engine::remote::{self, ConnectOptions};
use acp_engine::schema::method;
use acp_engine::Connection;
use serde_json::{json, Value};
use tokio::sync::Barrier;

const CONNECTIONS: usize = 1_000;
const PATIENCE: Duration = Duration::from_secs(120);

/// Kills `acp-engine serve` if the test fails midway.
struct Serve(Child, std::path::PathBuf);

impl Drop for Serve {
    fn drop(&mut self) {
        // On a failure: whether serve was still running, and what it said
        // (its log and its agents' stderr) besides the connection lines.
        let failed = std::thread::panicking();
        if failed {
            eprintln!("serve before the test stopped it: {:?}", self.0.try_wait());
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
        if failed {
            let log = std::fs::read_to_string(&self.1).unwrap_or_default();
            for line in log.lines().filter(|line| !line.contains(" connected over ")) {
                eprintln!("serve said: {line}");
            }
        }
        let _ = std::fs::remove_file(&self.1);
    }
}

/// `VmRSS` of a process, in KiB (0 once it is gone).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter_map(|child| child.parse().ok())
        .collect()
}

#[test]
fn a_thousand_websocket_connections_on_one_serve() {
    let agent = support::example("agent");
    let log = std::env::temp_dir().join(format!("acp-serve-load-{}.log", std::process::id()));
    let mut child = support::acp_engine()
        .args(["serve", "--listen", "127.0.0.1:0", "--"])
        .arg(&agent)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("serve's log"))
        .spawn()
        .expect("start acp-engine serve");
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let serve = Serve(child, log);
    let pid = serve.0.id();
    let url = url.trim().to_owned();
    assert!(url.starts_with("ws://"), "{url}");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let all_open = Arc::new(Barrier::new(CONNECTIONS + 1));
    let all_closing = Arc::new(Barrier::new(CONNECTIONS + 1));
    let (agents_at_peak, server_kib, agents_kib) = runtime.block_on(async {
        let mut runs = Vec::new();
        for i in 0..CONNECTIONS {
            let (url, all_open, all_closing) = (url.clone(), all_open.clone(), all_closing.clone());
            runs.push(tokio::spawn(async move {
                let transport = remote::connect(&url, &ConnectOptions::default())
                    .await
                    .expect("connect");
                let client = Connection::builder().connect(transport);
                let init: Value = client
                    .send_request(
                        method::INITIALIZE,
                        &json!({ "protocolVersion": 1, "clientCapabilities": {} }),
                    )
                    .await
                    .expect("initialize");
                assert_eq!(init["protocolVersion"], 1);
                let session: Value = client
                    .send_request(method::SESSION_NEW, &json!({ "cwd": "/tmp", "mcpServers": [] }))
                    .await
                    .expect("session/new");
                assert!(session["sessionId"].is_string(), "connection {i}: {session}");
                all_open.wait().await;
                all_closing.wait().await;
                client.close();
                client.closed().await;
            }));
        }
        tokio::time::timeout(PATIENCE, all_open.wait())
            .await
            .expect("all 1,000 connections open");
        let agents = children(pid);
        let agents_kib: u64 = agents.iter().map(|&agent| rss_kib(agent)).sum();
        let server_kib = rss_kib(pid);
        all_closing.wait().await;
        for run in runs {
            tokio::time::timeout(PATIENCE, run)
                .await
                .expect("no hang")
                .expect("a connection failed");
        }
        (agents.len(), server_kib, agents_kib)
    });
    assert_eq!(
        agents_at_peak, CONNECTIONS,
        "one agent process per open connection"
    );
    let deadline = Instant::now() + PATIENCE;
    while !children(pid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "agent processes left: {:?}",
            children(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    println!(
        "{CONNECTIONS} WebSocket connections open at once on one acp-engine serve, all complete in {:.1} s; \
         RSS with all open: serve {:.1} MiB ({:.0} KiB per connection), {agents_at_peak} agent processes \
         {:.0} MiB together; every agent reaped after",
        started.elapsed().as_secs_f64(),
        server_kib as f64 / 1024.0,
        server_kib as f64 / CONNECTIONS as f64,
        agents_kib as f64 / 1024.0,
    );
}
