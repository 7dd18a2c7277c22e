//! `acp-engine check agent` against real processes: a correct agent and
//! our example agent pass every case; an agent broken in one way fails
//! exactly the case that guards against it; the JUnit report and the exit
//! status say so.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use support::{example, failed, verdicts, Scratch};

fn check(agent: &[&str], extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["check", "agent", "--json"])
        .args(extra)
        .arg("--")
        .args(agent)
        .output()
        .expect("run acp-engine check")
}

/// `tests/peers/broken_agent.py DEFECT`: a v1 agent broken one way.
fn broken(defect: &str) -> Vec<String> {
    peer_script("broken_agent.py", defect)
}

/// `tests/peers/broken_v2_agent.py DEFECT`: a v2 agent broken one way.
fn broken_v2(defect: &str) -> Vec<String> {
    peer_script("broken_v2_agent.py", defect)
}

fn peer_script(name: &str, defect: &str) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name);
    let mut command = vec!["python3".to_owned(), script.display().to_string()];
    if !defect.is_empty() {
        command.push(defect.to_owned());
    }
    command
}

#[test]
fn a_correct_agent_passes_every_case() {
    // bare-init answers initialize without agentCapabilities, which the
    // schema makes optional.
    for traits in ["", "bare-init"] {
        let agent = broken(traits);
        let output = check(&agent.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        let verdicts = verdicts(&output);
        assert!(verdicts.len() >= 13, "{traits}: {verdicts:?}");
        assert!(
            verdicts.iter().all(|(_, verdict)| verdict == "pass"),
            "{traits}: {verdicts:?}"
        );
        assert!(output.status.success());
    }
}

#[test]
fn our_example_agent_passes_every_case() {
    let agent = example("agent");
    let output = check(&[agent.to_str().unwrap()], &[]);
    let verdicts = verdicts(&output);
    assert!(
        verdicts.iter().all(|(_, verdict)| verdict == "pass"),
        "{verdicts:?}"
    );
    assert!(output.status.success());
}

#[test]
fn an_agent_at_a_url_is_checked_one_connection_per_case() {
    let token = "check-token";
    let mut server = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["serve", "--listen", "127.0.0.1:0", "--token", token, "--"])
        .arg(example("agent"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(server.stdout.take().unwrap()));
    let urls = [lines.next().unwrap().unwrap(), lines.next().unwrap().unwrap()];
    for url in &urls {
        let output = check(&[url], &["--token", token]);
        let verdicts = verdicts(&output);
        assert!(verdicts.len() >= 13, "{url}: {verdicts:?}");
        for (case, verdict) in &verdicts {
            // Its process is the server's: that one case cannot be watched.
            let expected = if case == "exit-on-eof" { "skip" } else { "pass" };
            assert_eq!(verdict, expected, "{url}: {case}: {verdicts:?}");
        }
        assert!(output.status.success(), "{url}");
        // Without the token the server refuses before any agent starts.
        let refused = check(&[url], &[]);
        assert_eq!(refused.status.code(), Some(1), "{url}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("401"),
            "{url}: {}",
            String::from_utf8_lossy(&refused.stderr)
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn each_broken_agent_fails_the_case_for_its_defect() {
    fail_exactly_side_by_side(
        broken,
        &[
            ("ordering", &["prompt-turn-order"]),
            ("no-invalid-params", &["invalid-params"]),
            ("crash-on-garbage", &["garbage-then-turn", "parse-error"]),
            ("no-cancel", &["session-cancel"]),
            ("ignores-capabilities", &["client-capabilities"]),
            ("echoes-version", &["version-negotiation"]),
        ],
    );
}

/// Each `agent(defect)` fails exactly its cases, checked side by side: a
/// run waits out the time limit of every case its agent fails, mostly idle.
fn fail_exactly_side_by_side(agent: fn(&str) -> Vec<String>, defects: &[(&str, &[&str])]) {
    std::thread::scope(|scope| {
        for &(defect, cases) in defects {
            scope.spawn(move || fails_exactly(&agent(defect), cases));
        }
    });
}

/// `agent` fails exactly `cases`, and check exits 1.
fn fails_exactly(agent: &[String], cases: &[&str]) {
    let output = check(&agent.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let expected: BTreeSet<String> = cases.iter().map(|case| case.to_string()).collect();
    assert_eq!(
        failed(&output),
        expected,
        "{agent:?}: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(output.status.code(), Some(1), "{agent:?}");
}

#[test]
fn an_agent_that_speaks_only_v2_gets_the_v2_cases() {
    let agent = broken_v2("");
    let output = check(&agent.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let found = verdicts(&output);
    assert!(found.len() >= 14, "{found:?}");
    assert!(found.iter().all(|(_, verdict)| verdict == "pass"), "{found:?}");
    let names: BTreeSet<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
    assert!(
        names.contains("before-initialize") && names.contains("prompt-turn"),
        "{names:?}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("speaks only ACP v2"), "{stderr}");
    assert!(output.status.success());

    // Ours: found as v2, and the router's v2 side when asked for.
    let ours = example("v2_agent");
    let ours = ours.to_str().unwrap();
    for (agent, extra) in [
        (vec![ours], vec![]),
        (vec![ours, "--router"], vec!["--protocol-version", "2"]),
    ] {
        let rows = verdicts(&check(&agent, &extra));
        assert!(
            rows.iter().all(|(_, verdict)| verdict != "fail") && rows.len() >= 14,
            "{agent:?}: {rows:?}"
        );
    }
}

#[test]
fn each_broken_v2_agent_fails_the_case_for_its_defect() {
    fail_exactly_side_by_side(
        broken_v2,
        &[
            ("ordering", &["prompt-turn"]),
            ("no-idle", &["prompt-turn", "session-cancel"]),
            ("no-cancel", &["session-cancel"]),
            ("early", &["before-initialize"]),
        ],
    );
    // Answering version 1 to a v2 initialize stops it at the prelude.
    let agent = broken_v2("answers-v1");
    let output = check(&agent.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("did not get through the prelude"), "{stderr}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn the_junit_report_and_the_table_name_the_failure() {
    let scratch = Scratch::new("check-junit");
    let junit = scratch.join("report.xml");
    let agent = broken("no-cancel");
    let output = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["check", "agent", "--junit"])
        .arg(&junit)
        .arg("--")
        .args(&agent)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let table = String::from_utf8_lossy(&output.stdout);
    let row = table
        .lines()
        .find(|line| line.starts_with("session-cancel"))
        .unwrap();
    assert!(row.contains("FAIL") && row.contains("end_turn"), "{row}");
    assert!(table.contains("13 passed, 1 failed, 0 skipped"), "{table}");
    assert!(!table.contains('\x1b'), "no colour when stdout is not a terminal");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"cancellation\" name=\"session-cancel\""),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure ").count(), 1);
}

#[test]
fn cases_can_be_added_as_files_and_chosen_by_name() {
    let dir = Scratch::new("check-cases");
    std::fs::write(
        dir.join("extension.json"),
        r#"{"name": "extra-extension-method", "class": "validation",
            "description": "an unknown extension request is answered -32601",
            "steps": [{"send": {"jsonrpc": "2.0", "id": "x1", "method": "_vendor/unknown", "params": {}}},
                      {"expect": {"message": {"id": "x1", "error": {"code": -32601}}}}]}"#,
    )
    .unwrap();
    let agent = broken("");
    let output = check(
        &agent.iter().map(String::as_str).collect::<Vec<_>>(),
        &["--cases", dir.path().to_str().unwrap(), "--only", "extension"],
    );
    assert_eq!(
        verdicts(&output),
        [("extra-extension-method".to_owned(), "pass".to_owned())]
    );
}

#[test]
fn usage_errors_exit_2() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_acp-engine"))
            .args(args)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(run(&["check", "agent"]), Some(2));
    assert_eq!(run(&["check"]), Some(2));
    assert_eq!(run(&["check", "nothing"]), Some(2));
    assert_eq!(
        run(&["check", "agent", "--only", "no-such-case", "--", "true"]),
        Some(2)
    );
    assert_eq!(run(&["check", "--help"]), Some(0));
    assert_eq!(run(&["check", "agent", "--bogus", "--", "true"]), Some(2));
    assert_eq!(
        run(&["check", "agent", "--protocol-version", "3", "--", "true"]),
        Some(2)
    );
}

#[test]
fn each_case_runs_in_a_fresh_directory() {
    // one-dir fails session/new in a directory another agent process used.
    let agent = broken("one-dir");
    let output = check(&agent.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert!(
        failed(&output).is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(output.status.success());
}

#[test]
fn authentication_required_is_reported_once_with_the_methods_offered() {
    let agent = broken("needs-auth");
    let agent: Vec<&str> = agent.iter().map(String::as_str).collect();
    let output = check(&agent, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        verdicts(&output).is_empty(),
        "no case ran: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(stderr.matches("authentication required").count(), 1, "{stderr}");
    assert!(
        stderr.contains("key (API key)") && stderr.contains("--auth"),
        "{stderr}"
    );

    let output = check(&agent, &["--auth", "key"]);
    let verdicts = verdicts(&output);
    assert!(verdicts.len() >= 12, "{verdicts:?}");
    assert!(
        verdicts.iter().all(|(_, verdict)| verdict == "pass"),
        "{verdicts:?}"
    );
}

#[test]
fn an_agent_that_cannot_start_is_one_clear_error() {
    let output = check(&["/nonexistent/agent"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"/nonexistent/agent\" is not a program"),
        "{stderr}"
    );

    // Prints a line that is not JSON-RPC and exits.
    let output = check(&["sh", "-c", "echo hello; exit 3"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(verdicts(&output).is_empty());
    assert!(
        stderr.contains("did not get through the prelude") && stderr.contains("hello"),
        "{stderr}"
    );
}

#[test]
fn no_agent_process_outlives_a_case() {
    let scratch = Scratch::new("check-tree");
    let pids = scratch.join("pids");
    let agent = broken("tree");
    let output = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["check", "agent", "--json", "--only", "handshake", "--"])
        .args(&agent)
        .env("BROKEN_AGENT_PIDS", &pids)
        .output()
        .unwrap();
    let started = support::pids_in(&pids);
    let left: Vec<u32> = started
        .iter()
        .copied()
        .filter(|&pid| support::running(pid))
        .collect();
    support::kill_all(&left);
    // The preflight's agent and the case's, each with its grandchild.
    assert_eq!(started.len(), 4, "{started:?}");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(left.is_empty(), "still running after check exited: {left:?}");
}

#[test]
fn notifications_that_fail_the_schema_are_counted_not_failed() {
    let agent = broken("bad-update");
    let output = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["check", "agent", "--only", "prompt-turn-order", "--"])
        .args(&agent)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{table}");
    assert!(
        table.contains("warning: 1 notification(s) from the peer fail the schema")
            && table.contains("session/update usage_update"),
        "{table}"
    );
    let output = check(
        &agent.iter().map(String::as_str).collect::<Vec<_>>(),
        &["--only", "prompt-turn-order"],
    );
    let row: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let invalid = row["invalid_notifications"].as_array().unwrap();
    assert_eq!(invalid.len(), 1, "{row}");
    assert!(invalid[0].as_str().unwrap().contains("usage_update"), "{row}");
}
