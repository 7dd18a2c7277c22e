//! `acp-engine trace` over real processes: byte-for-byte transparent both
//! ways, the right verdict on every message of a scripted conversation,
//! and a whole session of our example client and agent recorded clean.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
use support::{acp_engine, example, here, Scratch};

const PATIENCE: Duration = Duration::from_secs(60);

fn records(trace: &Path) -> Vec<Value> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn rules(record: &Value) -> Vec<String> {
    record["problems"]
        .as_array()
        .map(|problems| {
            problems
                .iter()
                .map(|problem| problem["rule"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Run `work` on a thread; fail the test rather than hang.
fn within<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(work());
    });
    result.recv_timeout(PATIENCE).expect("finished in time")
}

#[test]
fn every_byte_passes_through_unchanged_both_ways() {
    // What the editor sends: messages and everything a proxy could get
    // wrong (CRLF, blank lines, bytes that are not UTF-8, a 1 MiB line, a
    // last line without its newline), written in uneven pieces.
    let mut sent = Vec::new();
    sent.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
    );
    sent.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"_x/y\"}\r\n\n   \n");
    sent.extend_from_slice(b"not json \xff\xfe\n");
    let big_start: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"_x/big\",\"params\":{\"text\":\"";
    sent.extend_from_slice(big_start);
    sent.extend(std::iter::repeat_n(b'a', 1 << 20));
    sent.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"method\":\"_x/last\"}");
    // What the agent sends back.
    let mut played = Vec::new();
    for i in 0..2000 {
        played.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"_x/tick\",\"params\":{{\"i\":{i}}}}}\n").as_bytes(),
        );
    }
    played.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1}}\n\xff\n");
    let scratch = Scratch::new("trace-transparent");
    let (recv, play, trace) = (
        scratch.join("recv.bin"),
        scratch.join("play.bin"),
        scratch.join("transparent.jsonl"),
    );
    std::fs::write(&play, &played).unwrap();
    let mut proxy = acp_engine()
        .arg("trace")
        .arg("--out")
        .arg(&trace)
        .arg("--")
        .arg("python3")
        .arg(here("tests/peers/record_and_play.py"))
        .arg(&recv)
        .arg(&play)
        .arg("3")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = proxy.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut received = Vec::new();
        stdout.read_to_end(&mut received).unwrap();
        received
    });
    let pieces = sent.clone();
    let status = within(move || {
        for piece in pieces.chunks(4099) {
            stdin.write_all(piece).unwrap();
            stdin.flush().unwrap();
        }
        drop(stdin);
        proxy.wait().unwrap()
    });
    let received = reader.join().unwrap();
    assert_eq!(status.code(), Some(3), "the agent's exit status is passed on");
    assert!(received == played, "the editor got exactly what the agent wrote");
    assert!(
        std::fs::read(&recv).unwrap() == sent,
        "the agent got exactly what the editor wrote"
    );

    let records = records(&trace);
    let from_editor: Vec<_> = records.iter().filter(|r| r["dir"] == "client_to_agent").collect();
    let from_agent: Vec<_> = records.iter().filter(|r| r["dir"] == "agent_to_client").collect();
    // Blank lines are no messages; the last line counts without its newline.
    assert_eq!(from_editor.len(), 5, "{from_editor:#?}");
    assert_eq!(from_agent.len(), 2002);
    assert_eq!(from_editor[2]["kind"], "invalid");
    assert_eq!(rules(from_editor[2]), ["malformed"]);
    assert_eq!(
        from_editor[3]["bytes"].as_u64().unwrap(),
        (big_start.len() + (1 << 20) + 4) as u64
    );
    assert_eq!(from_editor[4]["method"], "_x/last");
    assert!(
        from_agent[2000]["latency_us"].is_u64(),
        "the response is paired with its request"
    );
    assert_eq!(rules(from_agent[2001]), ["malformed"]);
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=records.len() as u64).collect::<Vec<_>>());
}

#[test]
fn each_message_of_a_scripted_conversation_gets_the_right_verdict() {
    let records = verdicts("verdicts.jsonl");
    // Responses carry their request's method and session.
    let prompt_answer = &records[16];
    assert_eq!(prompt_answer["method"], "session/prompt");
    assert_eq!(prompt_answer["session"], "s1");
}

/// The version 2 draft, once `initialize` selected it: v2's messages are
/// checked as v2's (an update after the prompt's answer is how v2 reports a
/// turn), and v1's methods are unknown.
#[test]
fn a_v2_conversation_is_judged_by_v2s_schema() {
    verdicts("verdicts_v2.jsonl");
}

/// Plays the script of `fixture` through `trace` (the editor's part here,
/// the agent's by tests/peers/scripted_agent.py) and checks every record's
/// verdict against the script's.
fn verdicts(fixture: &str) -> Vec<Value> {
    let script_path = here(&format!("tests/fixtures/{fixture}"));
    let script: Vec<Value> = std::fs::read_to_string(&script_path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let scratch = Scratch::new(&format!("trace-{}", fixture.trim_end_matches(".jsonl")));
    let trace = scratch.join("verdicts.jsonl");
    let mut proxy = acp_engine()
        .arg("trace")
        .arg("--out")
        .arg(&trace)
        .arg("--")
        .arg("python3")
        .arg(here("tests/peers/scripted_agent.py"))
        .arg(&script_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let steps = script.clone();
    let status = within(move || {
        let mut stdin = proxy.stdin.take().unwrap();
        let mut stdout = BufReader::new(proxy.stdout.take().unwrap());
        // The editor's part, in lockstep with the agent's: the trace's
        // order is then the script's.
        for step in &steps {
            let line = match &step["line"] {
                Value::String(raw) => raw.clone(),
                message => message.to_string(),
            };
            if step["from"] == "client" {
                writeln!(stdin, "{line}").unwrap();
                stdin.flush().unwrap();
            } else {
                let mut got = String::new();
                stdout.read_line(&mut got).unwrap();
                let got: Value = serde_json::from_str(&got).unwrap();
                assert_eq!(got, step["line"], "the agent's line arrives as sent");
            }
        }
        drop(stdin);
        proxy.wait().unwrap()
    });
    assert!(status.success(), "the scripted agent saw every line as expected");
    let records = records(&trace);
    assert_eq!(records.len(), script.len());
    for (number, (step, record)) in script.iter().zip(&records).enumerate() {
        let expected: Vec<String> = serde_json::from_value(step["expect"].clone()).unwrap();
        assert_eq!(rules(record), expected, "step {}: {record}", number + 1);
        let verdict = if expected.is_empty() { "ok" } else { "violation" };
        assert_eq!(record["verdict"], verdict, "step {}", number + 1);
        let direction = if step["from"] == "client" {
            "client_to_agent"
        } else {
            "agent_to_client"
        };
        assert_eq!(record["dir"], direction, "step {}", number + 1);
        assert_eq!(
            record["unstable"].as_bool().unwrap_or(false),
            step["unstable"].as_bool().unwrap_or(false),
            "step {}",
            number + 1
        );
    }
    records
}

#[test]
fn a_whole_session_of_our_example_client_and_agent_is_recorded_clean() {
    let client = example("client");
    let agent = example("agent");
    let scratch = Scratch::new("trace-session");
    let trace = scratch.join("session.jsonl");
    let mut run = Command::new(client);
    run.arg(env!("CARGO_BIN_EXE_acp-engine"))
        .arg("trace")
        .arg("--out")
        .arg(&trace)
        .arg("--")
        .arg(agent)
        .stdout(Stdio::null());
    let status = within(move || run.status().unwrap());
    assert!(
        status.success(),
        "the client completed its session through the proxy"
    );
    let records = records(&trace);
    assert!(records.len() > 20, "{} records", records.len());
    for record in &records {
        assert_eq!(record["verdict"], "ok", "{record}");
    }
    let requests = records.iter().filter(|r| r["kind"] == "request").count();
    let answered = records.iter().filter(|r| r["latency_us"].is_u64()).count();
    assert_eq!(requests, answered, "every request was answered and paired");
    assert!(records
        .iter()
        .any(|r| r["method"] == "session/request_permission"));
}

#[test]
fn an_agent_that_exits_ends_the_proxy_while_the_editor_keeps_writing() {
    let scratch = Scratch::new("trace-exit");
    let mut proxy = acp_engine()
        .args(["trace", "--out"])
        .arg(scratch.join("exit.jsonl"))
        .args(["--", "sh", "-c", "exit 4"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Our end of its stdin stays open for as long as the test runs.
    let _stdin = proxy.stdin.take().unwrap();
    let status = within(move || proxy.wait().unwrap());
    assert_eq!(status.code(), Some(4));
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let missing = acp_engine().arg("trace").output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("after --"));
    let help = acp_engine().args(["trace", "--help"]).output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: acp-engine trace"));
    let unknown = acp_engine()
        .args(["trace", "--nope", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}
