//! Benchmark client on acp-engine's Connection (see bench/README.md):
//! `engine-client --scenario stream|rpc --n N -- <agent command...>`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use acp_engine::{
    to_raw, Connection, IncomingNotification, IncomingRequest, RequestError, SpawnOptions, Transport,
};
use serde_json::{json, Value};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let scenario = flag("--scenario").expect("--scenario");
    let n: u64 = flag("--n").expect("--n").parse().expect("N");
    let agent = &args[args.iter().position(|a| a == "--").expect("-- <agent command>") + 1..];

    let t0 = Instant::now();
    let transport = Transport::spawn(SpawnOptions::new(&agent[0]).args(&agent[1..])).expect("spawn agent");
    let count = Arc::new(AtomicU64::new(0));
    let (updates, reads) = (count.clone(), count.clone());
    let connection = Connection::builder()
        .on_notification(move |_n: IncomingNotification| {
            updates.fetch_add(1, Ordering::Relaxed);
            async { Ok(()) }
        })
        .on_request(move |request: IncomingRequest| {
            let reads = reads.clone();
            async move {
                if request.method != "fs/read_text_file" {
                    return Err(RequestError::method_not_found(&request.method));
                }
                reads.fetch_add(1, Ordering::Relaxed);
                to_raw(&json!({"content": "hello"})).map_err(RequestError::internal)
            }
        })
        .connect(transport);
    let init = json!({
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}
    });
    let _: Value = connection
        .send_request("initialize", &init)
        .await
        .expect("initialize");
    let session: Value = connection
        .send_request("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .expect("session/new");
    let setup_s = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let prompt = json!({
        "sessionId": session["sessionId"],
        "prompt": [{"type": "text", "text": format!("{scenario} {n}")}]
    });
    let outcome: Value = connection
        .send_request("session/prompt", &prompt)
        .await
        .expect("prompt");
    let run_s = t1.elapsed().as_secs_f64();
    let count = count.load(Ordering::Relaxed);
    let ok = count == n && outcome["stopReason"] == "end_turn";
    connection.close();
    connection.closed().await;
    println!(
        "{}",
        json!({"client": "acp-engine-rust", "scenario": scenario, "n": n, "setup_s": setup_s,
               "run_s": run_s, "count": count, "ok": ok})
    );
    std::process::exit(if ok { 0 } else { 1 });
}
