//! `check client`: each case starts the client under test with this
//! program as its agent (`acp-engine check-peer CASE REPORT` appended to
//! the client's command), waits for the client to finish, and reads the
//! verdict the agent side wrote.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::Command;

use super::case::{Outcome, Verdict};
use super::peer_agent::{ClientCase, Report};

/// How long a client may run one case.
const CASE_TIME: Duration = Duration::from_secs(40);
/// How long a client may take to exit once its agent died.
const AFTER_DEATH: Duration = Duration::from_secs(10);

pub async fn run(case: &ClientCase, client: &[String]) -> Outcome {
    let started = Instant::now();
    let report = std::env::temp_dir().join(format!(
        "acp-engine-check-{}-{}.json",
        std::process::id(),
        case.name
    ));
    let _ = std::fs::remove_file(&report);
    let me = std::env::current_exe().unwrap_or_else(|_| "acp-engine".into());
    let spawned = Command::new(&client[0])
        .args(&client[1..])
        .arg(me)
        .arg("check-peer")
        .arg(&case.name)
        .arg(&report)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let outcome = |verdict, evidence: String| Outcome {
        verdict,
        evidence,
        elapsed: started.elapsed(),
        invalid_notifications: Vec::new(),
    };
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => return outcome(Verdict::Fail, format!("cannot start the client: {error}")),
    };
    let limit = if case.agent_dies { AFTER_DEATH } else { CASE_TIME };
    let exited = match tokio::time::timeout(limit, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            let _ = child.kill().await;
            None
        }
    };
    let read = std::fs::read(&report)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Report>(&bytes).ok());
    let _ = std::fs::remove_file(&report);
    let Some(report) = read else {
        return outcome(Verdict::Fail, "the client never started its agent".to_owned());
    };
    let verdict = match report.verdict.as_str() {
        "pass" => Verdict::Pass,
        "skip" => Verdict::Skip,
        _ => Verdict::Fail,
    };
    if case.agent_dies && verdict == Verdict::Pass && exited.is_none() {
        return outcome(
            Verdict::Fail,
            format!(
                "the client was still running {} s after its agent died",
                AFTER_DEATH.as_secs()
            ),
        );
    }
    if exited.is_none() && verdict != Verdict::Pass {
        return outcome(
            verdict,
            format!("{} (the client hung and was stopped)", report.evidence),
        );
    }
    outcome(verdict, report.evidence)
}
