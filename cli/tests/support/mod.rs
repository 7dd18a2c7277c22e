//! What the tool's tests share: the binary under test and the engine's
//! example programs.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// `acp-engine`, the binary under test.
pub fn acp_engine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_acp-engine"))
}

/// A file of this crate (`tests/peers/...`, `tests/fixtures/...`).
pub fn here(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// An example program of the engine crate, built if needed.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let target = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    let path = target.join("examples").join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            // `make build`'s command: the same packages resolve the same
            // features, so nothing already built compiles again.
            .args(["build", "-q", "--workspace", "--lib", "--bins", "--examples"])
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building example {name}");
    }
    path
}

/// (case, verdict) from the `--json` lines of `acp-engine check`.
pub fn verdicts(output: &Output) -> Vec<(String, String)> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            (
                case["case"].as_str().unwrap().to_owned(),
                case["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The cases `acp-engine check` failed.
pub fn failed(output: &Output) -> BTreeSet<String> {
    verdicts(output)
        .into_iter()
        .filter(|(_, verdict)| verdict == "fail")
        .map(|(case, _)| case)
        .collect()
}

/// A directory of the test's own under the system's temp dir, removed with
/// everything in it when dropped, also when the test fails.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("acp-engine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether process `pid` is still running (a zombie, waiting for a parent
/// that does not reap it, has stopped running).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // "pid (name) STATE ...": the state follows the last ')'.
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// The pids `broken_agent.py tree` wrote to `file` (agent, grandchild, ...).
pub fn pids_in(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Wait (up to `limit`) until none of `pids` runs; the ones still running.
pub fn wait_gone(pids: &[u32], limit: std::time::Duration) -> Vec<u32> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&pid| running(pid)).collect();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Kill whatever of `pids` still runs (a failed test leaves nothing behind).
pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if running(pid) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}
