//! `acp-engine check agent`: a conformance suite run against any agent.
//! The cases are data (`cli/cases/agent/*.json`, embedded at build time,
//! plus `--cases DIR`); each runs against a fresh agent process.

mod case;
mod peer;
mod report;

use std::path::Path;

use case::{Case, Outcome, Prelude, Verdict};

use crate::args::{Args, Failure};

const HELP: &str = "\
usage: acp-engine check agent [options] -- AGENT_COMMAND [ARGS...]

Runs the conformance cases against the agent, each against a fresh agent
process (the prelude: initialize, and session/new where the case needs a
session), acting as a client that grants permissions, serves file reads
and writes, and runs terminal commands as one line of output and exit 0.
Prints a table with a verdict and the evidence per case; exits 0 when no
case failed, 1 otherwise.

Cases (cli/cases/agent/*.json): the handshake; -32601 on an unknown
method, -32602 on bad params, -32700 / -32600 on malformed lines, each
with the agent still answering after; a prompt turn with no turn content
after its answer; session/cancel ending a turn `cancelled`;
$/cancel_request answered; a 1 MiB prompt; garbage then a working turn;
exit when stdin closes.

options:
  --json          one JSON object per case on stdout instead of the table
  --junit FILE    also write a JUnit XML report (for CI)
  --cases DIR     add the cases in DIR/*.json (same format)
  --only NAME     run only the cases whose name contains NAME
  -h, --help      this text
";

const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/agent_cases.rs"));
const PRELUDE_FILE: &str = "_prelude.json";

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let mut argv = argv.into_iter();
    match argv.next().as_deref() {
        Some("agent") => {}
        Some("-h" | "--help") | None => {
            print!("{HELP}");
            return Ok(());
        }
        Some("client") => {
            return Err(Failure::Run(
                "check client is not built yet: only `check agent`".to_owned(),
            ))
        }
        Some(other) => return Err(Failure::Usage(format!("check what? {other:?} (agent)"))),
    }
    let args = Args::parse_with_flags(argv.collect(), &["junit", "cases", "only"], &["json"])?;
    if args.help {
        print!("{HELP}");
        return Ok(());
    }
    if args.rest.is_empty() {
        return Err(Failure::Usage(
            "check agent needs the agent's command after --".to_owned(),
        ));
    }
    let (prelude, mut cases) = load(
        EMBEDDED
            .iter()
            .map(|(name, text)| (name.to_string(), text.to_string())),
    )?;
    if let Some(dir) = args.value("cases") {
        let (_, extra) = load(
            read_dir(Path::new(dir))?.into_iter().chain([(
                PRELUDE_FILE.to_owned(),
                EMBEDDED
                    .iter()
                    .find(|(name, _)| *name == PRELUDE_FILE)
                    .map(|(_, text)| text.to_string())
                    .unwrap_or_default(),
            )]),
        )?;
        cases.extend(extra);
    }
    if let Some(only) = args.value("only") {
        cases.retain(|case| case.name.contains(only));
    }
    let json = args.flag("json");
    let agent = args.rest.clone();
    let runtime = crate::runtime()?;
    let results: Vec<(Case, Outcome)> = runtime.block_on(async {
        let mut results = Vec::new();
        for case in cases {
            let outcome = case::run(&case, &prelude, &agent).await;
            report::progress(&case, &outcome, json);
            results.push((case, outcome));
        }
        results
    });
    runtime.shutdown_background();
    if !json {
        report::table(&results);
    }
    if let Some(path) = args.value("junit") {
        std::fs::write(path, report::junit(&agent, &results))
            .map_err(|error| Failure::Run(format!("cannot write {path}: {error}")))?;
    }
    if results
        .iter()
        .any(|(_, outcome)| outcome.verdict == Verdict::Fail)
    {
        return Err(Failure::Exit(1));
    }
    Ok(())
}

/// The prelude and the cases among `files` (name, text).
fn load(files: impl Iterator<Item = (String, String)>) -> Result<(Prelude, Vec<Case>), Failure> {
    let mut prelude = None;
    let mut cases = Vec::new();
    for (name, text) in files {
        let invalid = |error: serde_json::Error| Failure::Run(format!("case file {name}: {error}"));
        if name == PRELUDE_FILE {
            prelude = Some(serde_json::from_str::<Prelude>(&text).map_err(invalid)?);
        } else {
            cases.push(serde_json::from_str::<Case>(&text).map_err(invalid)?);
        }
    }
    let prelude = prelude.ok_or_else(|| Failure::Run(format!("no {PRELUDE_FILE} among the cases")))?;
    Ok((prelude, cases))
}

fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, Failure> {
    let failed = |error: std::io::Error| Failure::Run(format!("cannot read {}: {error}", dir.display()));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(failed)? {
        let path = entry.map_err(failed)?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".json") && name != PRELUDE_FILE {
            files.push((name, std::fs::read_to_string(&path).map_err(failed)?));
        }
    }
    files.sort();
    Ok(files)
}
