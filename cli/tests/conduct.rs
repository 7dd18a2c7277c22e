//! `acp-engine conduct`: a chain of two of our proxies (examples/proxy.rs)
//! in front of a plain-JSON agent that records what reaches it
//! (peers/echo_agent.py), driven line by line as an editor would.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};
use support::{acp_engine, example, here, Scratch};

struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Editor {
    /// Two proxies, "one" and "two", before the echo agent.
    fn start(log: &std::path::Path) -> Editor {
        let proxy = example("proxy");
        let proxy = proxy.to_str().unwrap();
        Editor::chain(
            &[format!("{proxy} --prefix one"), format!("{proxy} --prefix two")],
            log,
        )
    }

    /// `acp-engine conduct PROXIES... <echo agent>`.
    fn chain(proxies: &[String], log: &std::path::Path) -> Editor {
        let agent = format!(
            "python3 {} {}",
            here("tests/peers/echo_agent.py").display(),
            log.display()
        );
        let mut child = acp_engine()
            .arg("conduct")
            .args(proxies)
            .arg(agent)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start acp-engine conduct");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let message = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Editor { child, stdin, lines }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a message from the conductor within 20 s")
    }

    /// Everything the conductor wrote on stderr (once it exited).
    fn stderr(&mut self) -> String {
        let mut stderr = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        stderr
    }

    fn exit_code(&mut self) -> Option<i32> {
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the conductor did not exit within 10 s");
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent_received(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn messages_cross_two_proxies_both_ways_in_order_and_unchanged() {
    let scratch = Scratch::new("conduct-chain");
    let log = scratch.join("agent.jsonl");
    let mut editor = Editor::start(&log);

    editor.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    assert_eq!(
        editor.next(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
    );
    editor.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
    );
    assert_eq!(editor.next()["result"], json!({"sessionId": "s1"}));

    // Each proxy puts its text first: the agent gets "two one hi". The
    // update comes before the permission request, which reaches the editor
    // plain; its answer goes back down, and the turn's answer carries it.
    editor.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}}));
    let update = editor.next();
    assert_eq!(update["method"], "session/update", "{update}");
    assert_eq!(update["params"]["update"]["content"]["text"], "two one hi");
    let permission = editor.next();
    assert_eq!(permission["method"], "session/request_permission", "{permission}");
    assert_eq!(permission["params"]["options"][0]["optionId"], "allow");
    let outcome = json!({"outcome": {"outcome": "selected", "optionId": "allow"}});
    editor.send(json!({"jsonrpc": "2.0", "id": permission["id"], "result": outcome}));
    assert_eq!(
        editor.next(),
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn", "_meta": {"permission": outcome}}})
    );

    // An error passes up unchanged, data and all.
    editor.send(json!({"jsonrpc": "2.0", "id": 4, "method": "x/fail", "params": {}}));
    assert_eq!(
        editor.next(),
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32042, "message": "nope", "data": {"why": "because"}}})
    );

    // proxy/* from the editor is refused; the chain works on.
    editor.send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "proxy/successor", "params": {"method": "x/fail"}}),
    );
    let refused = editor.next();
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(5), json!(-32600)),
        "{refused}"
    );

    // Cancelling a request cancels it on every hop, each with its own id.
    editor.send(json!({"jsonrpc": "2.0", "id": 6, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "wait"}]}}));
    std::thread::sleep(Duration::from_millis(300));
    editor.send(json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 6}}));
    let cancelled = editor.next();
    assert_eq!(
        (cancelled["id"].clone(), cancelled["error"]["code"].clone()),
        (json!(6), json!(-32800)),
        "{cancelled}"
    );
    let mut agent_cancel = None;
    for _ in 0..100 {
        agent_cancel = agent_received(&log)
            .into_iter()
            .find(|m| m["method"] == "$/cancel_request");
        if agent_cancel.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let agent_cancel = agent_cancel.expect("the agent got $/cancel_request");
    let waiting_prompt = agent_received(&log)
        .into_iter()
        .find(|m| m["params"]["prompt"][2]["text"] == "wait")
        .unwrap();
    assert_eq!(agent_cancel["params"]["requestId"], waiting_prompt["id"]);

    // The agent saw plain ACP: initialize as itself, never proxy/*.
    let received = agent_received(&log);
    assert_eq!(received[0]["method"], "initialize");
    assert_eq!(
        received[0]["params"],
        json!({"protocolVersion": 1, "clientCapabilities": {}})
    );
    assert!(
        received
            .iter()
            .all(|m| !m["method"].as_str().unwrap_or("").starts_with("proxy/")),
        "{received:?}"
    );

    // The editor closing its side ends the chain: exit 0.
    editor.stdin.take();
    assert_eq!(editor.exit_code(), Some(0));
}

#[test]
fn an_agent_that_dies_fails_the_pending_request_and_ends_the_chain() {
    let scratch = Scratch::new("conduct-crash");
    let log = scratch.join("agent.jsonl");
    let mut editor = Editor::start(&log);
    editor.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}));
    assert_eq!(editor.next()["id"], 1);
    editor.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "crash"}]}}));
    let failed = editor.next();
    assert_eq!(failed["id"], 2, "{failed}");
    assert!(failed["error"]["code"].is_i64(), "{failed}");
    assert_eq!(editor.exit_code(), Some(1));
    let stderr = editor.stderr();
    assert!(stderr.contains("component 3 (python3) closed"), "{stderr}");
}

#[test]
fn a_proxy_that_dies_fails_what_is_pending_across_the_chain() {
    let scratch = Scratch::new("conduct-proxy-crash");
    let log = scratch.join("agent.jsonl");
    let proxy = example("proxy");
    // The second proxy takes the `proxy/initialize` the first passed on, and exits.
    let crashing = "sh -c 'head -n 1 >/dev/null; exit 3'".to_owned();
    let mut editor = Editor::chain(&[format!("{} --prefix one", proxy.display()), crashing], &log);
    editor.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}));
    let failed = editor.next();
    assert_eq!(failed["id"], 1, "{failed}");
    assert!(failed["error"]["code"].is_i64(), "{failed}");
    assert_eq!(editor.exit_code(), Some(1));
    let stderr = editor.stderr();
    assert!(stderr.contains("component 2 (sh) closed"), "{stderr}");
}

#[test]
fn a_component_that_cannot_start_is_one_clear_error() {
    let output = acp_engine()
        .args(["conduct", "no-such-proxy-program --x", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no-such-proxy-program"), "{stderr}");
    let output = acp_engine().args(["conduct"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_conductor_runs_nested_as_a_proxy() {
    let scratch = Scratch::new("conduct-nested");
    let log = scratch.join("agent.jsonl");
    let proxy = example("proxy");
    let proxy = proxy.to_str().unwrap();
    let tool = env!("CARGO_BIN_EXE_acp-engine");
    let nested = format!("{tool} conduct --proxy '{proxy} --prefix two' '{proxy} --prefix three'");
    let mut editor = Editor::chain(&[format!("{proxy} --prefix one"), nested], &log);
    editor.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}));
    assert_eq!(editor.next()["result"]["protocolVersion"], 1);
    editor.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}}));
    let update = editor.next();
    assert_eq!(
        update["params"]["update"]["content"]["text"], "three two one hi",
        "{update}"
    );
    let permission = editor.next();
    assert_eq!(permission["method"], "session/request_permission", "{permission}");
    editor.send(
        json!({"jsonrpc": "2.0", "id": permission["id"], "result": {"outcome": {"outcome": "cancelled"}}}),
    );
    let answer = editor.next();
    assert_eq!(
        answer["result"]["_meta"]["permission"],
        json!({"outcome": {"outcome": "cancelled"}}),
        "{answer}"
    );
    let received = agent_received(&log);
    assert_eq!(received[0]["method"], "initialize");
    editor.stdin.take();
    assert_eq!(editor.exit_code(), Some(0));
}
