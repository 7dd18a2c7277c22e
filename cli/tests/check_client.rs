//! `acp-engine check client` against real processes: a correct client and
//! our example client pass every case; a client broken in one way fails
//! exactly the case that guards against it.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use support::{example, failed, verdicts};

fn check_client(client: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acp-engine"))
        .args(["check", "client", "--json", "--"])
        .args(client)
        .output()
        .expect("run acp-engine check client")
}

fn broken(defect: &str) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/broken_client.py");
    vec![
        "python3".to_owned(),
        script.display().to_string(),
        defect.to_owned(),
    ]
}

#[test]
fn a_correct_client_and_our_example_client_pass_every_case() {
    for client in [broken(""), vec![example("client").display().to_string()]] {
        let output = check_client(&client);
        let verdicts = verdicts(&output);
        assert!(verdicts.len() >= 9, "{verdicts:?}");
        assert!(
            verdicts.iter().all(|(_, verdict)| verdict == "pass"),
            "{client:?}: {verdicts:?}"
        );
        assert!(output.status.success());
    }
}

#[test]
fn each_broken_client_fails_the_case_for_its_defect() {
    for (defect, case) in [
        ("bad-permission", "permission"),
        ("no-method-not-found", "unknown-method"),
        ("no-invalid-params", "invalid-params"),
        ("crash-on-garbage", "parse-error"),
        ("hang-on-agent-death", "agent-dies"),
    ] {
        let output = check_client(&broken(defect));
        assert_eq!(
            failed(&output),
            BTreeSet::from([case.to_owned()]),
            "{defect}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        assert_eq!(output.status.code(), Some(1), "{defect}");
    }
}
