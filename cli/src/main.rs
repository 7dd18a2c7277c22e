//! `acp-engine`: the command-line tool for people who build ACP agents and
//! clients. `serve` puts any stdio agent behind a WebSocket server;
//! `connect` bridges this process's stdio to a remote agent; `trace`
//! records what an editor and an agent say to each other, `view` shows it;
//! `conduct` runs a proxy chain as one agent.
//!
//! Exit status: 0 done, 1 a failure at run time (printed on stderr), 2 a
//! usage error; `trace` passes on its agent's.

#[macro_use]
mod out;

mod agent_command;
mod args;
mod check;
mod conduct;
mod connect;
mod interrupt;
mod run;
mod serve;
mod trace;
mod view;

use std::process::ExitCode;

const USAGE: &str = "\
acp-engine: tools for Agent Client Protocol agents and clients

usage: acp-engine <command> [options]

commands:
  serve     serve a stdio agent over WebSocket and Streamable HTTP, one agent
            process per connection
  connect   bridge this process's stdin/stdout to a remote agent (ws://, wss://,
            http://, https://)
  trace     pass an editor's stdio through to an agent, recording every message
            with its verdict against the ACP schema (JSON lines)
  view      a trace as one self-contained HTML page: a timeline with filters
  check     run the conformance cases against an agent or a client
            (`check agent -- AGENT`, `check client -- CLIENT`)
  run       a terminal client: type prompts to any agent, watch it work
  conduct   run a proxy chain (proxies in front of an agent) as one agent on stdio

`acp-engine <command> --help` says more. Exit status: 0 done, 1 failed, 2 usage error.
";

/// The commands a user types.
const COMMANDS: &[&str] = &["serve", "connect", "trace", "view", "check", "run", "conduct"];

fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let command = argv.next();
    let rest: Vec<String> = argv.collect();
    let outcome = match command.as_deref() {
        Some("serve") => serve::main(rest),
        Some("connect") => connect::main(rest),
        Some("trace") => trace::main(rest),
        Some("view") => view::main(rest),
        Some("check") => check::main(rest),
        // The agent side of `check client` (started by the client under test).
        Some("check-peer") => check::peer_agent::main(rest),
        Some("run") => run::main(rest),
        Some("conduct") => conduct::main(rest),
        Some("-h" | "--help" | "help") => {
            out!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some("-V" | "--version") => {
            outln!("acp-engine {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(args::Failure::Usage(format!("unknown command {other:?}"))),
        None => Err(args::Failure::Usage("a command is required".to_owned())),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // A command's usage error points at that command's help, not the list
        // of commands.
        Err(args::Failure::Usage(message)) => {
            match command.as_deref().filter(|command| COMMANDS.contains(command)) {
                Some(command) => {
                    errln!(
                        "acp-engine {command}: {message}\n(`acp-engine {command} --help` lists its options)"
                    )
                }
                None => errln!("acp-engine: {message}\n\n{USAGE}"),
            }
            ExitCode::from(2)
        }
        Err(args::Failure::Run(message)) => {
            errln!("acp-engine: {message}");
            ExitCode::from(1)
        }
        Err(args::Failure::Exit(status)) => ExitCode::from(status),
    }
}

/// A runtime for one command.
fn runtime() -> Result<tokio::runtime::Runtime, args::Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| args::Failure::Run(format!("cannot start the runtime: {error}")))
}
