//! `acp-engine check agent` and `check client`: conformance suites run
//! against any agent or client. The cases are data (`cli/cases/agent/`,
//! `cli/cases/agent-v2/` for agents of the v2 draft, and `cli/cases/client/`,
//! embedded at build time; `--cases DIR` adds agent cases); each runs
//! against a fresh process.

mod case;
mod client;
mod peer;
pub mod peer_agent;
mod report;

use std::path::Path;

use case::{Case, Prelude, Verdict};
use peer_agent::ClientCase;

use crate::args::{Args, Failure};

const HELP: &str = "\
usage: acp-engine check agent [options] -- AGENT_COMMAND [ARGS...]
       acp-engine check agent [options] -- URL   (ws://, wss://, http://, https://)
       acp-engine check client [options] -- CLIENT_COMMAND [ARGS...]

check agent runs the agent cases against the agent, each against a fresh
agent process (the prelude: initialize, and session/new where the case
needs a session), acting as a client that grants permissions, serves file
reads and writes, and runs terminal commands as one line of output and
exit 0. Cases: the handshake; -32601 on an unknown method, -32602 on bad
params, -32700 / -32600 on malformed lines, each with the agent still
answering after; a prompt turn with no turn content after its answer;
session/cancel ending a turn `cancelled`; $/cancel_request answered; a
1 MiB prompt; garbage then a working turn; exit when stdin closes; no
fs/* or terminal/* request to a client that advertised neither.

check client starts the client once per case as `CLIENT_COMMAND [ARGS...]
acp-engine check-peer CASE REPORT` (the agent command last, as clients
that spawn their agent take it); that agent plays the case in the first
prompt turn. Cases: the handshake; a permission request answered with an
offered option; fs write then read; a terminal's whole life; -32601,
-32602, -32700 with the client answering on; an update of an unknown kind
tolerated; the client exits within 10 s when its agent dies mid-turn.

Prints a table with a verdict and the evidence per case; exits 0 when no
case failed, 1 otherwise.

options:
  --json          one JSON object per case on stdout instead of the table
  --junit FILE    also write a JUnit XML report (for CI)
  --cases DIR     (agent) add the cases in DIR/*.json (same format as cli/cases/agent)
  --only NAME     run only the cases whose name contains NAME (none matching: exit 2)
  --init-timeout-ms N
                  (agent) how long the agent may take to answer initialize (default 15000)
  --auth METHOD   (agent) send authenticate with this method id after initialize
  --protocol-version N
                  (agent) 1 or 2: the ACP version the cases speak (default: 1, or 2
                  when the agent refuses 1 and names 2 as the one it speaks)
  --token TOKEN   (agent at a URL) `Authorization: Bearer TOKEN`; or set ACP_ENGINE_TOKEN
  -h, --help      this text

Before the cases, check agent runs the prelude once (initialize, authenticate
with --auth, session/new): an agent that cannot start, speaks no JSON-RPC,
or requires authentication is reported once (with the methods it offers)
and check exits 1. Each case's sessions get a fresh empty directory as
their cwd, removed after the case.

An agent of the ACP v2 draft gets the v2 cases: the handshake asking for 2
(and for 99, answered 2); a request before initialize refused -32600; a
prompt acknowledged with a messageId, its turn ending with a state_update
to idle; cancellation, malformed lines, validation, a 1 MiB prompt and exit
on EOF as above.

At a URL (`acp-engine serve`, or any ACP server), each case gets a
connection of its own; the case that watches the agent exit when its
input ends is skipped (the process is the server's). The directories are
made here: give the server's agent the same file system.
";

const EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/agent_cases.rs"));
const EMBEDDED_V2: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/agent_v2_cases.rs"));
const CLIENT_CASES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/client_cases.rs"));
const PRELUDE_FILE: &str = "_prelude.json";

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let mut argv = argv.into_iter();
    let side = match argv.next().as_deref() {
        Some("agent") => Side::Agent,
        Some("client") => Side::Client,
        Some("-h" | "--help") => {
            out!("{HELP}");
            return Ok(());
        }
        None => {
            return Err(Failure::Usage(
                "check what? (check agent or check client)".to_owned(),
            ))
        }
        Some(other) => return Err(Failure::Usage(format!("check what? {other:?} (agent or client)"))),
    };
    let args = Args::parse_with_flags(
        argv.collect(),
        &[
            "junit",
            "cases",
            "only",
            "init-timeout-ms",
            "auth",
            "token",
            "protocol-version",
        ],
        &["json"],
    )?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    if args.rest.is_empty() {
        return Err(Failure::Usage(
            format!("check {side:?} needs the command after --").to_lowercase(),
        ));
    }
    let json = args.flag("json");
    let command = args.rest.clone();
    let remote = command.len() == 1 && acp_engine::remote::is_url(&command[0]);
    if remote && matches!(side, Side::Client) {
        return Err(Failure::Usage(
            "check client needs a command, not a URL".to_owned(),
        ));
    }
    if !remote {
        crate::agent_command::require(&command)?;
    }
    let only = args.value("only").map(str::to_owned);
    let asked_version = match args.number("protocol-version")? {
        None => None,
        Some(version @ 1..=2) => Some(version as u16),
        Some(other) => return Err(Failure::Usage(format!("--protocol-version {other}: 1 or 2"))),
    };
    let mut settings = case::Settings {
        init_timeout: args
            .number("init-timeout-ms")?
            .map(|ms| std::time::Duration::from_millis(ms as u64)),
        auth: args.value("auth").map(str::to_owned),
        token: crate::args::token(&args),
        version: asked_version.unwrap_or(acp_engine::version::V1),
    };
    if let Some(only) = &only {
        // A name no case has is a usage error, found before any agent runs.
        let mut names = match side {
            Side::Agent => [acp_engine::version::V1, acp_engine::version::V2]
                .into_iter()
                .map(|version| agent_cases_of(version, &args, &settings))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flat_map(|(_, cases)| cases.into_iter().map(|case| case.name))
                .collect::<Vec<_>>(),
            Side::Client => client_cases()?.into_iter().map(|case| case.name).collect(),
        };
        names.retain(|name| name.contains(only.as_str()));
        if names.is_empty() {
            return Err(Failure::Usage(format!("no case matches --only {only:?}")));
        }
    }
    let runtime = crate::runtime()?;
    let results = runtime.block_on(crate::interrupt::unless_interrupted(async {
        let (prelude, cases) = match side {
            Side::Agent => {
                let (prelude, cases) = agent_cases(&args, &mut settings, asked_version, &command).await?;
                (
                    Some(prelude),
                    cases.into_iter().map(Checked::Agent).collect::<Vec<_>>(),
                )
            }
            Side::Client => (None, client_cases()?.into_iter().map(Checked::Client).collect()),
        };
        let cases: Vec<Checked> = cases
            .into_iter()
            .filter(|case| {
                only.as_ref()
                    .is_none_or(|only| case.describe().0.contains(only.as_str()))
            })
            .collect();
        if cases.is_empty() {
            return Err(Failure::Usage(format!(
                "no case of ACP v{} matches --only {:?}",
                settings.version,
                only.clone().unwrap_or_default()
            )));
        }
        let mut results = Vec::new();
        for case in cases {
            let (name, class, description) = case.describe();
            let outcome = match (&case, &prelude) {
                (Checked::Agent(case), Some(prelude)) => case::run(case, prelude, &command, &settings).await,
                (Checked::Client(case), _) => client::run(case, &command).await,
                (Checked::Agent(_), None) => unreachable!("agent cases come with their prelude"),
            };
            let row = report::Row {
                name,
                class,
                description,
                outcome,
            };
            report::progress(&row, json);
            results.push(row);
        }
        Ok(results)
    }));
    runtime.shutdown_background();
    let results = results?;
    if !json {
        report::table(&results);
    }
    if let Some(path) = args.value("junit") {
        let title = format!(
            "acp-engine check {}: {}",
            format!("{side:?}").to_lowercase(),
            command.join(" ")
        );
        std::fs::write(path, report::junit(&title, &results))
            .map_err(|error| Failure::Run(format!("cannot write {path}: {error}")))?;
    }
    if results.iter().any(|row| row.outcome.verdict == Verdict::Fail) {
        return Err(Failure::Exit(1));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Side {
    Agent,
    Client,
}

/// A case of either side.
enum Checked {
    Agent(Case),
    Client(ClientCase),
}

impl Checked {
    /// Its name, class and description.
    fn describe(&self) -> (String, String, String) {
        match self {
            Checked::Agent(case) => (case.name.clone(), case.class.clone(), case.description.clone()),
            Checked::Client(case) => (case.name.clone(), case.class.clone(), case.description.clone()),
        }
    }
}

/// The prelude and the agent cases for the ACP version the agent speaks,
/// once the prelude went through: `asked` (`--protocol-version`), else 1,
/// or 2 when the agent refuses 1 and names 2 as the version it speaks.
async fn agent_cases(
    args: &Args,
    settings: &mut case::Settings,
    asked: Option<u16>,
    command: &[String],
) -> Result<(Prelude, Vec<Case>), Failure> {
    let mut loaded = agent_cases_of(settings.version, args, settings)?;
    let mut passed = case::preflight(&loaded.0, command, settings).await;
    if let (None, Err(case::Refused::OnlyV2)) = (asked, &passed) {
        errln!(
            "acp-engine: the agent speaks only ACP v2 (it refused version 1): checking it with the v2 cases"
        );
        settings.version = acp_engine::version::V2;
        loaded = agent_cases_of(settings.version, args, settings)?;
        passed = case::preflight(&loaded.0, command, settings).await;
    }
    passed
        .map_err(|refused| Failure::Run(format!("the agent did not get through the prelude: {refused}")))?;
    Ok(loaded)
}

/// The embedded prelude and cases of ACP `version` (`cli/cases/agent/`, or
/// `cli/cases/agent-v2/`), and those of `--cases`.
fn agent_cases_of(
    version: u16,
    args: &Args,
    settings: &case::Settings,
) -> Result<(Prelude, Vec<Case>), Failure> {
    let embedded = if version == acp_engine::version::V2 {
        EMBEDDED_V2
    } else {
        EMBEDDED
    };
    let (prelude, mut cases) = load(
        embedded
            .iter()
            .map(|(name, text)| (name.to_string(), text.to_string())),
    )?;
    if let Some(dir) = args.value("cases") {
        cases.extend(load_extra(Path::new(dir))?);
    }
    Ok((prelude.with(settings), cases))
}

/// The client cases, embedded.
pub fn client_cases() -> Result<Vec<ClientCase>, Failure> {
    CLIENT_CASES
        .iter()
        .map(|(name, text)| {
            serde_json::from_str(text).map_err(|error| Failure::Run(format!("case file {name}: {error}")))
        })
        .collect()
}

/// The cases in `dir` (the prelude stays the embedded one).
fn load_extra(dir: &Path) -> Result<Vec<Case>, Failure> {
    read_dir(dir)?
        .into_iter()
        .map(|(name, text)| {
            serde_json::from_str(&text).map_err(|error| Failure::Run(format!("case file {name}: {error}")))
        })
        .collect()
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
