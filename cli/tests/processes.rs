//! No agent process outlives its connection: `serve`, `trace` and `run`
//! stop an agent that ignores the end of its input, with the grandchild it
//! started (its process group); `connect` delivers every answer it owes
//! before it exits at the end of its input.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{acp_engine, here, kill_all, pids_in, wait_gone, Scratch};

/// The deaf agent (see `broken_agent.py tree`) writing its pids to `pids`.
fn deaf_agent() -> Vec<String> {
    vec![
        "python3".to_owned(),
        here("tests/peers/broken_agent.py").display().to_string(),
        "tree".to_owned(),
    ]
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;

fn session_new(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/tmp","mcpServers":[]}}}}"#
    )
}

/// `acp-engine serve` on a free loopback port: the process and its two URLs.
fn serve(agent: &[String], pids: &std::path::Path) -> (Child, String, String) {
    let mut server = acp_engine()
        .args(["serve", "--listen", "127.0.0.1:0", "--"])
        .args(agent)
        .env("BROKEN_AGENT_PIDS", pids)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let ws = lines.next().unwrap().unwrap();
    let http = lines.next().unwrap().unwrap();
    (server, ws, http)
}

/// `acp-engine connect URL` with `input` piped in and its stdin then closed:
/// the lines it printed.
fn connect(url: &str, input: &[String]) -> Vec<String> {
    let mut client = acp_engine()
        .args(["connect", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = client.stdin.take().unwrap();
    for line in input {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let output = client.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn connect_delivers_every_answer_owed_when_its_input_ends() {
    let scratch = Scratch::new("connect-owed");
    let agent = vec![
        "python3".to_owned(),
        here("tests/peers/broken_agent.py").display().to_string(),
    ];
    let (mut server, ws, http) = serve(&agent, &scratch.join("pids"));
    let input = vec![INIT.to_owned(), session_new(2), session_new(3)];
    for url in [&ws, &http] {
        let answers = connect(url, &input);
        let ids: Vec<i64> = answers
            .iter()
            .map(|line| {
                serde_json::from_str::<serde_json::Value>(line).unwrap()["id"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        assert_eq!(ids, [1, 2, 3], "{url}: {answers:?}");
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn connect_fails_when_the_server_does_not_take_the_connection_in_time() {
    // A listener that never accepts: the kernel takes the TCP connection,
    // and nothing answers the WebSocket upgrade.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/acp", silent.local_addr().unwrap());
    let started = std::time::Instant::now();
    let output = acp_engine()
        .args(["connect", "--connect-timeout-ms", "300", &url])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "cannot connect to {url}: the server did not take the connection within 300 ms"
        )),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn serve_stops_an_agent_and_its_children_when_the_client_leaves() {
    let scratch = Scratch::new("serve-tree");
    let pids = scratch.join("pids");
    let (mut server, ws, http) = serve(&deaf_agent(), &pids);
    for url in [&ws, &http] {
        let before = pids_in(&pids).len();
        let answers = connect(url, &[INIT.to_owned()]);
        assert_eq!(answers.len(), 1, "{url}: {answers:?}");
        let started = pids_in(&pids)[before..].to_vec();
        assert_eq!(started.len(), 2, "an agent and its grandchild: {started:?}");
        // Grace 2 s, SIGTERM (ignored), SIGKILL 1 s later.
        let left = wait_gone(&started, Duration::from_secs(10));
        kill_all(&left);
        assert!(
            left.is_empty(),
            "{url}: still running after the client left: {left:?}"
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// `acp-engine trace` in front of the deaf agent, past `initialize`: the
/// process and its stdin (still open).
fn trace_past_initialize(scratch: &Scratch) -> (Child, std::process::ChildStdin) {
    let mut trace = acp_engine()
        .args(["trace", "--out"])
        .arg(scratch.join("trace.jsonl"))
        .arg("--")
        .args(deaf_agent())
        .env("BROKEN_AGENT_PIDS", scratch.join("pids"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = trace.stdin.take().unwrap();
    writeln!(stdin, "{INIT}").unwrap();
    let mut answers = BufReader::new(trace.stdout.take().unwrap()).lines();
    assert!(answers.next().unwrap().unwrap().contains("protocolVersion"));
    (trace, stdin)
}

#[test]
fn trace_stops_the_agent_tree_when_the_editor_leaves() {
    let scratch = Scratch::new("trace-tree");
    let (mut trace, stdin) = trace_past_initialize(&scratch);
    drop(stdin);
    let status = trace.wait().unwrap();
    let started = pids_in(&scratch.join("pids"));
    let left = wait_gone(&started, Duration::from_secs(2));
    kill_all(&left);
    assert_eq!(started.len(), 2, "{started:?}");
    assert!(left.is_empty(), "still running after trace exited: {left:?}");
    // Killed: "1 if it was killed by a signal".
    assert_eq!(status.code(), Some(1));
}

#[test]
fn trace_stopped_by_sigterm_stops_the_agent_tree() {
    let scratch = Scratch::new("trace-term");
    let pids = scratch.join("pids");
    let (mut trace, _stdin) = trace_past_initialize(&scratch);
    let started = pids_in(&pids);
    assert_eq!(started.len(), 2, "{started:?}");
    Command::new("kill")
        .args(["-TERM", &trace.id().to_string()])
        .status()
        .unwrap();
    let status = trace.wait().unwrap();
    let left = wait_gone(&started, Duration::from_secs(2));
    kill_all(&left);
    assert!(left.is_empty(), "still running after trace was stopped: {left:?}");
    assert_eq!(status.code(), Some(128 + 15));
}

#[test]
fn run_stops_the_agent_tree_when_its_input_ends() {
    let scratch = Scratch::new("run-tree");
    let pids = scratch.join("pids");
    let output = acp_engine()
        .args(["run", "--cwd"])
        .arg(scratch.path())
        .arg("--")
        .args(deaf_agent())
        .env("BROKEN_AGENT_PIDS", &pids)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let started = pids_in(&pids);
    let left = wait_gone(&started, Duration::from_secs(2));
    kill_all(&left);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(started.len(), 2, "{started:?}");
    assert!(left.is_empty(), "still running after run exited: {left:?}");
}

#[test]
fn serve_refuses_a_missing_agent_and_a_token_that_is_the_separator() {
    let output = acp_engine()
        .args(["serve", "--listen", "127.0.0.1:0", "--", "/nonexistent/agent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a program"));
    let output = acp_engine()
        .args(["serve", "--listen", "127.0.0.1:0", "--token", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--token needs a value") && stderr.contains("serve --help"),
        "{stderr}"
    );
}

#[test]
fn serve_logs_the_requests_it_refuses() {
    let scratch = Scratch::new("serve-refusals");
    let log = std::fs::File::create(scratch.join("log")).unwrap();
    let mut server = acp_engine()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token",
            "secret",
            "--",
            "true",
        ])
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let ws = BufReader::new(server.stdout.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    // No token, and a path that is not the endpoint.
    for url in [ws.clone(), ws.replace("/acp", "/elsewhere")] {
        let output = acp_engine()
            .args(["connect", &url])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{url}");
    }
    let _ = server.kill();
    let _ = server.wait();
    let logged = std::fs::read_to_string(scratch.join("log")).unwrap();
    assert!(
        logged.contains("refused: 401 (a valid bearer token is required)"),
        "{logged}"
    );
    assert!(logged.contains("refused: 404 (no ACP endpoint here)"), "{logged}");
}

#[test]
fn serve_keeps_serving_when_nobody_reads_its_output_or_log() {
    let agent = support::example("agent").display().to_string();
    let mut server = acp_engine()
        .args(["serve", "--listen", "127.0.0.1:0", "--", &agent])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // Whoever started it took the URL and closed both pipes: every line
    // serve writes from now on meets a closed pipe.
    drop(server.stderr.take());
    let ws = first.trim().to_owned();
    for round in 0..3 {
        let answers = connect(&ws, &[INIT.to_owned(), session_new(2)]);
        assert_eq!(answers.len(), 2, "round {round}: {answers:?}");
    }
    assert!(
        server.try_wait().unwrap().is_none(),
        "serve ended: {:?}",
        server.try_wait()
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn check_finishes_when_its_reader_left() {
    // `acp-engine check agent -- ... | head -1`: the reader is gone before
    // the report is written; the check still runs to its verdict (it used
    // to panic on the first line it printed, exit status 101).
    let agent = support::example("agent").display().to_string();
    let mut check = acp_engine()
        .args(["check", "agent", "--", &agent])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(check.stdout.take());
    let mut log = String::new();
    std::io::Read::read_to_string(&mut check.stderr.take().unwrap(), &mut log).unwrap();
    let status = check.wait().unwrap();
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(status.code(), Some(0), "{log}");
}

/// Lines from a child's stdout, each within a bound (a hang guard).
fn next_line(lines: &std::sync::mpsc::Receiver<String>) -> serde_json::Value {
    let line = lines
        .recv_timeout(Duration::from_secs(20))
        .expect("a line from connect in time");
    serde_json::from_str(&line).unwrap()
}

/// The status line of `GET path` on the server of `url`.
fn status_of(url: &str, path: &str) -> Option<String> {
    use std::io::Read;
    let address = url.split("://").nth(1)?.split('/').next()?;
    let mut socket = std::net::TcpStream::connect(address).ok()?;
    write!(
        socket,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    socket.read_to_string(&mut response).ok()?;
    response.lines().next().map(str::to_owned)
}

#[test]
fn serve_drains_on_sigterm_letting_a_turn_finish() {
    // The agent's turn sends a chunk, asks one permission and ends when it is answered.
    let agent = vec![
        "python3".to_owned(),
        here("tests/peers/broken_agent.py").display().to_string(),
    ];
    for transport in ["ws", "http"] {
        let mut server = acp_engine()
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--drain-timeout-ms",
                "60000",
                "--log-json",
                "--",
            ])
            .args(&agent)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut urls = BufReader::new(server.stdout.take().unwrap()).lines();
        let (ws, http) = (urls.next().unwrap().unwrap(), urls.next().unwrap().unwrap());
        let url = if transport == "ws" { ws } else { http };
        let mut client = acp_engine()
            .args(["connect", &url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut to_agent = client.stdin.take().unwrap();
        let (sender, from_agent) = std::sync::mpsc::channel();
        let stdout = client.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        writeln!(to_agent, "{INIT}\n{}", session_new(2)).unwrap();
        assert_eq!(next_line(&from_agent)["id"], 1);
        let session = next_line(&from_agent)["result"]["sessionId"].clone();
        let prompt = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}});
        writeln!(to_agent, "{prompt}").unwrap();
        let permission = loop {
            let message = next_line(&from_agent);
            if message["method"] == "session/request_permission" {
                break message;
            }
        };

        // Mid-turn: SIGTERM. serve stays up, says it is draining, takes no one new.
        unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while status_of(&url, "/readyz").as_deref() != Some("HTTP/1.1 503 Service Unavailable") {
            assert!(
                std::time::Instant::now() < deadline,
                "{transport}: /readyz never said draining"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            server.try_wait().unwrap().is_none(),
            "{transport}: serve waits for the turn"
        );

        // The turn finishes; then the connection ends and serve exits 0.
        let option = &permission["params"]["options"][0]["optionId"];
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": permission["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option}}});
        writeln!(to_agent, "{answer}").unwrap();
        let ended = loop {
            let message = next_line(&from_agent);
            if message["id"] == 3 {
                break message;
            }
        };
        assert_eq!(ended["result"]["stopReason"], "end_turn", "{transport}: {ended}");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = server.try_wait().unwrap() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{transport}: serve did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{transport}: {status}");
        // Its log: one JSON object per line, the events in order.
        let mut log = String::new();
        std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut log).unwrap();
        let events: Vec<serde_json::Value> = log
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
            .collect();
        let names: Vec<&str> = events
            .iter()
            .map(|event| event["event"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["connected", "draining", "disconnected"],
            "{transport}: {log}"
        );
        assert!(events.iter().all(|event| event["time"].as_f64().unwrap() > 1.0e9));
        assert_eq!(events[0]["agent_pid"], events[2]["agent_pid"]);
        assert_eq!(events[1]["timeout_ms"], 60000);
        drop(to_agent);
        let _ = client.kill();
        let _ = client.wait();
    }
}
