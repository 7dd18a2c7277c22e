//! The typed examples as users run them: the example client spawns the
//! example agent and checks the whole scenario (prompt turn with
//! permission, file read/write, a real terminal, then a cancelled turn).

mod support;

use support::example;

#[test]
fn the_example_client_runs_the_example_agent_end_to_end() {
    let agent = example("agent");
    let output = std::process::Command::new(example("client"))
        .arg(&agent)
        .output()
        .expect("run the client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("Hello! ") && stdout.contains("Hello from the client's file"),
        "{stdout}"
    );
    assert!(stdout.contains("terminal said: hi"), "{stdout}");
    assert!(stdout.contains("stop reason: cancelled"), "{stdout}");
    assert!(stdout.trim_end().ends_with("interop ok"), "{stdout}");
}
