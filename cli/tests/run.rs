//! `acp-engine run` driven through a pseudo-terminal (`peers/pty_run.py`)
//! against our example agent: a prompt whose permission request is answered
//! with a number (the agent reads and writes files in the working directory
//! and runs a terminal command through it), a turn cancelled with Ctrl-C
//! while its permission request waits, and Ctrl-D to quit.

mod support;

use std::path::Path;
use std::process::Command;

use support::{example, Scratch};

#[test]
fn a_person_prompts_answers_a_permission_cancels_and_quits() {
    let cwd = Scratch::new("run-test");
    std::fs::write(cwd.join("hello.txt"), "Hello from the client's file\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/pty_run.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_acp-engine"))
        .arg(cwd.path())
        .arg(example("agent"))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(shown.starts_with("ok:"), "{shown}");
}

#[test]
fn piped_prompts_run_to_the_end_and_files_outside_the_working_directory_are_refused() {
    let cwd = Scratch::new("run-files");
    std::fs::write(cwd.join("inside.txt"), "the inside file\n").unwrap();
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/files_agent.py");
    let mut run = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["run", "--yes", "--cwd"])
        .arg(cwd.path())
        .args(["--", "python3"])
        .arg(agent)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The input ends at once: the turn still runs to its end.
    std::io::Write::write_all(run.stdin.as_mut().unwrap(), b"read two files\n").unwrap();
    drop(run.stdin.take());
    let output = run.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("read 1 gave: the inside file"), "{shown}");
    assert!(
        shown.contains("read 2 refused") && shown.contains("outside the working directory"),
        "{shown}"
    );
    assert!(shown.contains("[end_turn]"), "{shown}");
    assert!(!shown.contains('\x1b'), "no colour when stdout is not a terminal");
}

#[test]
fn usage_errors_exit_2() {
    let usage = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .arg("run")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
    let help = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: acp-engine run"));
}

/// `acp-engine run ARGS -- broken_agent.py TRAITS` with `input` piped in
/// (then closed): its exit code and what it printed. Killed after 60 s (a
/// hang is a failure, not a stuck test).
fn run_broken(args: &[&str], traits: &str, input: &str) -> (Option<i32>, String) {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/broken_agent.py");
    let cwd = Scratch::new(&format!("run-broken-{}", traits.replace(',', "-")));
    let mut run = Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .arg("run")
        .args(args)
        .arg("--cwd")
        .arg(cwd.path())
        .args(["--", "python3"])
        .arg(agent)
        .args((!traits.is_empty()).then_some(traits))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(run.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    drop(run.stdin.take());
    let pid = run.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    });
    let output = run.wait_with_output().unwrap();
    drop(watchdog);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), shown)
}

#[test]
fn lines_piped_during_a_turn_are_the_next_prompts() {
    // Both lines arrive while the first turn runs; each is a turn.
    let (code, shown) = run_broken(&["--yes"], "", "first\nsecond\nthird\n");
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(shown.matches("[end_turn]").count(), 3, "{shown}");
    assert_eq!(shown.matches("[--yes: allowed").count(), 3, "{shown}");
}

#[test]
fn a_permission_request_left_when_the_input_ends_is_cancelled() {
    let (code, shown) = run_broken(&[], "", "go\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("permission cancelled"), "{shown}");
    assert!(shown.contains("[cancelled]"), "{shown}");
}

#[test]
fn a_failed_turn_shows_and_makes_the_exit_status_1() {
    // The session goes on after it; the status says a turn failed.
    let (code, shown) = run_broken(&["--yes"], "failing-turns", "fail\nhello\n");
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("[the turn failed: Internal error (-32603)"),
        "{shown}"
    );
    assert!(shown.contains("[end_turn]"), "{shown}");
    let (code, shown) = run_broken(&["--yes"], "failing-turns", "hello\n");
    assert_eq!(code, Some(0), "{shown}");
}

#[test]
fn an_agent_that_requires_authentication() {
    // Not on a terminal: the methods it offers, and exit 1.
    let (code, shown) = run_broken(&[], "needs-auth", "");
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("requires authentication; it offers: key (API key); pass --auth METHOD"),
        "{shown}"
    );
    let (code, shown) = run_broken(&["--auth", "key", "--yes"], "needs-auth", "hello\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("[end_turn]"), "{shown}");
    let (code, shown) = run_broken(&["--auth", "other"], "needs-auth", "");
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.contains("authentication with \"other\" failed"), "{shown}");
}
