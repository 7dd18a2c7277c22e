//! Real child processes: the example agent spawned over stdio pipes.

mod support;

use std::time::Duration;

use acp_engine::{
    to_raw, Connection, IncomingNotification, IncomingRequest, RawJson, RequestError, SpawnOptions, Transport,
};
use serde_json::{json, Value};
use support::{example, process_gone, process_running, PATIENCE};

fn spawn_agent(options: impl FnOnce(SpawnOptions) -> SpawnOptions) -> (Connection, u32) {
    let transport = Transport::spawn(options(SpawnOptions::new(example("json_agent")))).expect("spawn agent");
    let pid = transport.child_pid().expect("pid");
    (Connection::builder().connect(transport), pid)
}

#[tokio::test]
async fn a_spawned_agent_answers_over_its_stdio() {
    let (conn, pid) = spawn_agent(|o| o);
    let init: Value = conn
        .send_request("initialize", &json!({"protocolVersion": 1}))
        .await
        .unwrap();
    assert_eq!(init["protocolVersion"], 1);
    let error = conn
        .send_request::<_, Value>("no/such", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32601);
    conn.close();
    tokio::time::timeout(PATIENCE, conn.closed()).await.unwrap();
    assert!(process_gone(pid), "the agent was reaped");
}

#[tokio::test]
async fn the_child_inherits_the_environment_and_gets_env_and_cwd() {
    let dir = std::env::temp_dir();
    let (conn, _pid) = spawn_agent(|o| o.env("ACP_DEMO_ENV", "from-the-test").cwd(&dir));
    let who: Value = conn.send_request("_demo/whoami", &json!({})).await.unwrap();
    assert_eq!(who["env"], "from-the-test");
    assert_eq!(
        std::fs::canonicalize(who["cwd"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(&dir).unwrap()
    );
    conn.close();
    conn.closed().await;

    // Without env: the variable is not there; PATH is inherited.
    let (conn, _pid) = spawn_agent(|o| o);
    let who: Value = conn.send_request("_demo/whoami", &json!({})).await.unwrap();
    assert_eq!(who["env"], Value::Null);
    conn.close();
    conn.closed().await;
}

#[tokio::test]
async fn a_prompt_turn_streams_updates_and_calls_back_into_the_client() {
    let transport = Transport::spawn(SpawnOptions::new(example("json_agent"))).unwrap();
    let updates = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = updates.clone();
    let conn = Connection::builder()
        .on_request(|request: IncomingRequest| async move {
            assert_eq!(request.method, "fs/read_text_file");
            let params: Value = request.params()?;
            assert_eq!(params["path"], "Cargo.toml");
            Ok::<RawJson, RequestError>(to_raw(&json!({"content": "first line"})).unwrap())
        })
        .on_notification(move |notification: IncomingNotification| {
            let sink = sink.clone();
            async move {
                let params: Value = notification.params()?;
                sink.lock()
                    .unwrap()
                    .push(params["update"]["content"]["text"].as_str().unwrap().to_owned());
                Ok(())
            }
        })
        .connect(transport);
    let outcome: Value = conn
        .send_request(
            "session/prompt",
            &json!({"sessionId": "demo-session", "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await
        .unwrap();
    assert_eq!(outcome["stopReason"], "end_turn");
    // Every update sent before the turn ended was delivered before it.
    assert_eq!(
        updates.lock().unwrap().concat(),
        "You said: hi. Your Cargo.toml starts with \"first line\"."
    );
    conn.close();
    conn.closed().await;
}

#[tokio::test]
async fn a_killed_agent_fails_every_pending_request_and_is_reaped() {
    let (conn, pid) = spawn_agent(|o| o);
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let conn = conn.clone();
            tokio::spawn(async move { conn.send_request::<_, Value>("_demo/hang", &json!({})).await })
        })
        .collect();
    // Make sure the agent is up and the requests went out.
    let _: Value = conn.send_request("_demo/whoami", &json!({})).await.unwrap();
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    for call in calls {
        let error = tokio::time::timeout(PATIENCE, call)
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert!(error.is_connection_closed(), "{error}");
        // Why, with how the process ended (not a bare EOF or broken pipe).
        assert!(
            error
                .to_string()
                .contains("the peer process killed by signal 9 (SIGKILL)"),
            "{error}"
        );
    }
    tokio::time::timeout(PATIENCE, conn.closed()).await.unwrap();
    assert!(process_gone(pid));
}

#[tokio::test]
async fn a_peer_that_ignores_eof_is_killed_after_the_grace_period_and_reaped() {
    // `sleep` never reads its stdin: closing our side does not end it.
    let transport = Transport::spawn(
        SpawnOptions::new("sleep")
            .args(["300"])
            .exit_grace(Duration::from_millis(100)),
    )
    .unwrap();
    let pid = transport.child_pid().unwrap();
    let conn = Connection::builder().connect(transport);
    assert!(process_running(pid));
    conn.close();
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed() resolves");
    assert!(process_gone(pid), "killed and reaped");
}

#[tokio::test]
async fn a_peer_that_exits_on_its_own_closes_the_connection() {
    let transport = Transport::spawn(SpawnOptions::new("true")).unwrap();
    let pid = transport.child_pid().unwrap();
    let conn = Connection::builder().connect(transport);
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed() resolves");
    assert_eq!(
        conn.close_reason().as_deref(),
        Some("peer closed the connection; the peer process exited with status 0")
    );
    assert!(process_gone(pid));
}

#[tokio::test]
async fn a_crashing_agent_closes_with_its_exit_status() {
    let transport = Transport::spawn(SpawnOptions::new("sh").args(["-c", "read line; exit 3"])).unwrap();
    let conn = Connection::builder().connect(transport);
    let error = conn
        .send_request::<_, Value>("_demo/whoami", &json!({}))
        .await
        .unwrap_err();
    assert!(error.is_connection_closed(), "{error}");
    assert!(
        error
            .to_string()
            .contains("the peer process exited with status 3"),
        "{error}"
    );
}

#[test]
fn dropping_the_runtime_kills_the_child() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let pid = runtime.block_on(async {
        let transport = Transport::spawn(SpawnOptions::new("sleep").args(["300"])).unwrap();
        let pid = transport.child_pid().unwrap();
        let _conn = Connection::builder().connect(transport);
        pid
    });
    assert!(process_running(pid));
    drop(runtime);
    let deadline = std::time::Instant::now() + PATIENCE;
    while process_running(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "child still running after its runtime was dropped"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
async fn spawning_a_missing_command_is_an_error_not_a_panic() {
    let error = Transport::spawn(SpawnOptions::new("/definitely/not/here"))
        .err()
        .expect("spawn fails");
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test]
async fn an_agent_on_stdio_exits_by_itself_when_its_client_hangs_up() {
    let (conn, pid) = spawn_agent(|o| o.exit_grace(Duration::from_secs(30)));
    let _: Value = conn.send_request("_demo/whoami", &json!({})).await.unwrap();
    conn.close();
    // With a 30 s grace, only the agent's own exit on EOF can be this prompt.
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("agent exited on EOF");
    assert!(process_gone(pid));
}

/// Spawn a child that starts a grandchild, both deaf to SIGTERM and to the
/// end of their input (what `npx` in front of such an agent looks like):
/// the connection, the child's pid and the grandchild's.
async fn spawn_tree(options: SpawnOptions) -> (Connection, u32, u32) {
    let file = std::env::temp_dir().join(format!(
        "acp-engine-tree-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    let script = format!(
        "trap '' TERM; (exec sleep 300) & echo $! > {}.tmp && mv {0}.tmp {0}; exec sleep 300",
        file.display()
    );
    let transport = Transport::spawn(options.args(["-c", &script])).unwrap();
    let child = transport.child_pid().unwrap();
    let conn = Connection::builder().connect(transport);
    let deadline = std::time::Instant::now() + PATIENCE;
    let grandchild = loop {
        if let Some(pid) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the grandchild never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let _ = std::fs::remove_file(&file);
    (conn, child, grandchild)
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

#[tokio::test]
async fn closing_stops_the_whole_process_tree_of_a_spawned_agent() {
    let (conn, child, grandchild) =
        spawn_tree(SpawnOptions::new("sh").exit_grace(Duration::from_millis(100))).await;
    assert!(process_running(child) && process_running(grandchild));
    conn.close();
    tokio::time::timeout(PATIENCE, conn.closed())
        .await
        .expect("closed() resolves");
    // SIGKILL is sent by now; give the kernel a moment to carry it out.
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while [child, grandchild].iter().any(|&pid| process_running(pid)) && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let alive = [child, grandchild]
        .into_iter()
        .filter(|&pid| process_running(pid))
        .collect::<Vec<_>>();
    for &pid in &alive {
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    assert!(alive.is_empty(), "still running after close: {alive:?}");
}

#[test]
fn dropping_the_runtime_kills_the_whole_process_tree() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (child, grandchild) = runtime.block_on(async {
        let (conn, child, grandchild) = spawn_tree(SpawnOptions::new("sh")).await;
        std::mem::forget(conn);
        (child, grandchild)
    });
    drop(runtime);
    let deadline = std::time::Instant::now() + PATIENCE;
    while process_running(child) || process_running(grandchild) {
        if std::time::Instant::now() > deadline {
            for pid in [child, grandchild] {
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            panic!("still running after the runtime was dropped");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
