//! `acp-engine run`: a terminal client, to try an agent in ten seconds.
//! Each line typed is a prompt; the agent's reply, thoughts, plan and tool
//! calls stream in as they arrive; a permission request is answered with a
//! number; Ctrl-C cancels the turn (a second one, or one between turns,
//! quits); Ctrl-D quits.

mod client;
mod model;
mod terminals;

use std::collections::VecDeque;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use acp_engine::schema::*;
use acp_engine::{remote, spawn_agent, ClientSideConnection, SpawnOptions};
use tokio::sync::mpsc;

use crate::args::{self, Args, Failure};
use crate::interrupt::Stops;
use client::{Ask, RunClient};

const HELP: &str = "\
usage: acp-engine run [options] -- AGENT_COMMAND [ARGS...]
       acp-engine run [options] -- URL   (ws://, wss://, http://, https://)

A terminal client for any agent. Type a prompt and press Enter: the
agent's message, thoughts, plan and tool calls appear as they stream in. A
permission request lists its options: type the number of one. Ctrl-C
cancels the running turn (between turns it quits); Ctrl-D quits. Prompts
may be piped in, one per line.

Exit status: 0 when every turn ended (cancelled ones too), 1 when a turn
failed with an error, the agent went away or could not be started, 2 a
usage error.

The agent may read and write files inside the working directory only, and
run commands there (terminals). Colour only on a terminal.

options:
  --cwd DIR       the session's working directory (default: the current one)
  --yes           answer every permission request with its allow-once option
                  (allow-always when there is none)
  --auth METHOD   authenticate with this method (an id from the agent's authMethods)
                  before the session; without it, an agent that requires
                  authentication lists its methods (on a terminal: pick one by number)
  --model ID      switch the session to this model (one the agent offers: a config
                  option of category model, or the legacy `models` and session/set_model)
  --token TOKEN   for a remote agent: `Authorization: Bearer TOKEN`; or set ACP_ENGINE_TOKEN
  -h, --help      this text
";

/// How output is painted: ANSI colour on a terminal, plain otherwise.
#[derive(Clone, Copy)]
pub struct Style {
    colour: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    pub fn tool(self, text: &str) -> String {
        self.paint("36", text)
    }
    fn ask(self, text: &str) -> String {
        self.paint("33", text)
    }
}

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let args = Args::parse_with_flags(argv, &["cwd", "token", "auth", "model"], &["yes"])?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    if args.rest.is_empty() {
        return Err(Failure::Usage(
            "run needs the agent's command (or URL) after --".to_owned(),
        ));
    }
    let cwd = match args.value("cwd") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::env::current_dir().map_err(|error| Failure::Run(error.to_string()))?,
    };
    let cwd = cwd
        .canonicalize()
        .map_err(|error| Failure::Run(format!("no working directory {}: {error}", cwd.display())))?;
    let style = Style {
        colour: std::io::stdout().is_terminal(),
    };
    let options = Options {
        agent: args.rest.clone(),
        token: args::token(&args),
        yes: args.flag("yes"),
        auth: args.value("auth").map(str::to_owned),
        model: args.value("model").map(str::to_owned),
        cwd,
        style,
    };
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(run(options));
    // The thread reading stdin must not keep the process alive.
    runtime.shutdown_background();
    outcome
}

struct Options {
    agent: Vec<String>,
    token: Option<String>,
    yes: bool,
    auth: Option<String>,
    model: Option<String>,
    cwd: std::path::PathBuf,
    style: Style,
}

async fn run(options: Options) -> Result<(), Failure> {
    let Options {
        agent,
        token,
        yes,
        auth,
        model,
        cwd,
        style,
    } = options;
    let (asks_tx, asks) = mpsc::unbounded_channel();
    let terminals = Arc::new(terminals::Terminals::default());
    let make_client = {
        let (cwd, terminals) = (cwd.clone(), terminals.clone());
        move |_: ClientSideConnection| RunClient {
            cwd,
            style,
            asks: asks_tx,
            yes,
            terminals,
            titles: Default::default(),
            streaming: Default::default(),
        }
    };
    // From the start Ctrl-C is ours: one while the agent starts must stop
    // it, not leave it running in its own process group.
    let mut stops = Stops::listen()?;
    let remote = agent.len() == 1 && remote::is_url(&agent[0]);
    let connection = if remote {
        let options = remote::ConnectOptions {
            bearer_token: token,
            ..Default::default()
        };
        ClientSideConnection::new(make_client, remote::dial(&agent[0], &options))
    } else {
        crate::agent_command::require(&agent)?;
        // Its own process group (the default): Ctrl-C here cancels a turn, it
        // does not kill the agent; closing stops the agent's whole tree.
        let spawn = SpawnOptions::new(&agent[0]).args(&agent[1..]);
        spawn_agent(spawn, make_client).map_err(|error| Failure::Run(error.to_string()))?
    };
    let started = tokio::select! {
        started = start(&connection, &agent, &cwd, auth, model) => started,
        signal = stops.any() => Err(Failure::Exit(128 + signal as u8)),
    };
    let (name, session, models) = match started {
        Ok(started) => started,
        Err(failure) => {
            connection.close();
            connection.closed().await;
            return Err(failure);
        }
    };
    outln!(
        "{}",
        style.dim(&format!(
            "connected to {name}, session {session} in {}{}\ntype a prompt and press Enter; Ctrl-C cancels a turn, Ctrl-D quits",
            cwd.display(),
            models.current().map(|model| format!(", model {model}")).unwrap_or_default()
        ))
    );
    let outcome = converse(&connection, session, style, &mut stops, asks).await;
    connection.close();
    connection.closed().await;
    outln!();
    outcome
}

/// `initialize`, `authenticate` (with `--auth`, or when the agent asks for
/// it and the person picks a method), `session/new` and the model (with
/// `--model`): the agent's name, the session and its models.
async fn start(
    connection: &ClientSideConnection,
    agent: &[String],
    cwd: &std::path::Path,
    auth: Option<String>,
    model: Option<String>,
) -> Result<(String, SessionId, model::Models), Failure> {
    let failed = |error: acp_engine::RequestError| Failure::Run(format!("the agent failed: {error}"));

    let mut init = InitializeRequest::new(1);
    init.client_capabilities = Some(ClientCapabilities {
        fs: Some(FileSystemCapabilities {
            read_text_file: Some(true),
            write_text_file: Some(true),
            ..Default::default()
        }),
        terminal: Some(true),
        ..Default::default()
    });
    init.client_info = Some(Implementation::new("acp-engine run", env!("CARGO_PKG_VERSION")));
    let initialized = connection
        .initialize(init)
        .await
        .map_err(|error| Failure::Run(format!("the agent did not answer initialize: {error}")))?;
    let name = initialized
        .agent_info
        .map(|info| format!("{} {}", info.name, info.version))
        .unwrap_or_else(|| agent.join(" "));
    let methods: Vec<(String, String)> = initialized
        .auth_methods
        .unwrap_or_default()
        .into_iter()
        .map(|method| match method {
            AuthMethod::Agent(method) => (method.id.to_string(), method.name),
            AuthMethod::Terminal(method) => (method.id.to_string(), method.name),
        })
        .collect();
    if let Some(method) = auth {
        authenticate(connection, &method).await?;
    }
    let new_session = || connection.new_session(NewSessionRequest::new(cwd.display().to_string(), vec![]));
    let session = match new_session().await {
        Ok(session) => session,
        Err(error) if error.code == acp_engine::error::codes::AUTH_REQUIRED => {
            let method = choose_auth(&methods).await?;
            authenticate(connection, &method).await?;
            new_session().await.map_err(failed)?
        }
        Err(error) => return Err(failed(error)),
    };
    let mut models = model::Models::of(&session);
    if let Some(model) = model {
        models
            .choose(connection, &session.session_id, &model)
            .await
            .map_err(Failure::Run)?;
    }
    Ok((name, session.session_id, models))
}

async fn authenticate(connection: &ClientSideConnection, method: &str) -> Result<(), Failure> {
    connection
        .authenticate(AuthenticateRequest::new(method.to_owned()))
        .await
        .map(drop)
        .map_err(|error| Failure::Run(format!("authentication with {method:?} failed: {error}")))
}

/// The agent requires authentication: the method the person picks (on a
/// terminal), else a failure that lists the methods offered.
async fn choose_auth(methods: &[(String, String)]) -> Result<String, Failure> {
    let listed: Vec<String> = methods
        .iter()
        .map(|(id, name)| format!("{id} ({name})"))
        .collect();
    if methods.is_empty() {
        return Err(Failure::Run(
            "the agent requires authentication and offers no authMethods".to_owned(),
        ));
    }
    if !std::io::stdin().is_terminal() {
        return Err(Failure::Run(format!(
            "the agent requires authentication; it offers: {}; pass --auth METHOD",
            listed.join(", ")
        )));
    }
    let mut text = String::from("the agent requires authentication:\n");
    for (number, method) in listed.iter().enumerate() {
        text.push_str(&format!("  {}) {method}\n", number + 1));
    }
    out!("{text}choose a number: ");
    let _ = std::io::stdout().flush();
    let count = methods.len();
    let chosen = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).ok()?;
        line.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=count).contains(n))
    })
    .await
    .ok()
    .flatten()
    .ok_or_else(|| Failure::Run("no authentication method chosen".to_owned()))?;
    Ok(methods[chosen - 1].0.clone())
}

/// Prompts from stdin, one turn at a time, until stdin ends or a signal
/// says to quit.
async fn converse(
    connection: &ClientSideConnection,
    session: SessionId,
    style: Style,
    stops: &mut Stops,
    mut asks: mpsc::UnboundedReceiver<Ask>,
) -> Result<(), Failure> {
    let mut lines = read_lines();
    // Lines that arrived during a turn: each is the next prompt, in order.
    let mut queued: VecDeque<String> = VecDeque::new();
    let mut turn: Option<tokio::task::JoinHandle<_>> = None;
    let mut asking: Option<Ask> = None;
    let mut cancelling = false;
    let mut input_ended = false;
    // A failed turn is shown and the session goes on; the exit status says so.
    let mut a_turn_failed = false;
    prompt_marker(style);
    loop {
        tokio::select! {
            line = lines.recv(), if !input_ended => {
                let Some(line) = line else {
                    // Input ended: nobody is left to answer a permission request
                    // (it is answered `cancelled`); the running turn and the
                    // queued prompts go on first.
                    input_ended = true;
                    if asking.take().is_some() {
                        outln!("{}", style.dim("[input ended: permission cancelled]"));
                    }
                    if turn.is_none() && queued.is_empty() {
                        break;
                    }
                    continue;
                };
                if let Some(ask) = asking.take() {
                    asking = answer(ask, line.trim(), style);
                    continue;
                }
                if line.trim().is_empty() {
                    if turn.is_none() {
                        prompt_marker(style);
                    }
                    continue;
                }
                if turn.is_some() {
                    queued.push_back(line);
                    if std::io::stdin().is_terminal() {
                        outln!("{}", style.dim("(queued: sent when this turn ends)"));
                    }
                    continue;
                }
                turn = Some(send_prompt(connection, &session, &line));
                cancelling = false;
            }
            ask = asks.recv() => {
                let Some(ask) = ask else { continue };
                show(&ask, style);
                if input_ended {
                    // Nobody is left to answer: dropped, it is answered `cancelled`.
                    outln!("{}", style.dim("[input ended: permission cancelled]"));
                    continue;
                }
                asking = Some(ask);
            }
            ended = async { turn.as_mut().expect("a turn").await }, if turn.is_some() => {
                turn = None;
                asking = None;
                match ended {
                    Ok(Ok(response)) => outln!("\n{}", style.dim(&format!("[{}]", response.stop_reason))),
                    Ok(Err(error)) => {
                        a_turn_failed = true;
                        outln!("\n{}", style.ask(&format!("[the turn failed: {error}]")));
                    }
                    Err(_) => break,
                }
                if let Some(line) = queued.pop_front() {
                    prompt_marker(style);
                    outln!("{}", line.trim_end());
                    turn = Some(send_prompt(connection, &session, &line));
                    cancelling = false;
                    continue;
                }
                if input_ended {
                    break;
                }
                prompt_marker(style);
            }
            _ = stops.terminate.recv() => return Err(Failure::Exit(128 + libc::SIGTERM as u8)),
            _ = stops.hangup.recv() => return Err(Failure::Exit(128 + libc::SIGHUP as u8)),
            _ = stops.interrupt.recv() => {
                if turn.is_none() || cancelling {
                    break;
                }
                cancelling = true;
                // Pending permission requests are answered `cancelled` too.
                asking = None;
                outln!("\n{}", style.dim("[cancelling: Ctrl-C again quits]"));
                let _ = connection.cancel(CancelNotification::new(session.clone())).await;
            }
            _ = connection.closed() => {
                let reason = connection.connection().close_reason().unwrap_or_default();
                outln!("\n{}", style.ask(&format!("[the agent went away: {reason}]")));
                return Err(Failure::Exit(1));
            }
        }
    }
    if a_turn_failed {
        return Err(Failure::Exit(1));
    }
    Ok(())
}

/// Start a turn with `line` as its prompt.
fn send_prompt(
    connection: &ClientSideConnection,
    session: &SessionId,
    line: &str,
) -> tokio::task::JoinHandle<Result<PromptResponse, acp_engine::RequestError>> {
    let request = PromptRequest::new(
        session.clone(),
        vec![ContentBlock::Text(TextContent::new(line.trim_end()))],
    );
    let connection = connection.clone();
    tokio::spawn(async move { connection.prompt(request).await })
}

fn prompt_marker(style: Style) {
    out!("{}", style.ask("> "));
    let _ = std::io::stdout().flush();
}

/// A permission request, with its options numbered.
fn show(ask: &Ask, style: Style) {
    let title = ask
        .request
        .tool_call
        .title
        .clone()
        .unwrap_or_else(|| ask.request.tool_call.tool_call_id.to_string());
    let mut text = format!("\npermission: {title}\n");
    for (number, option) in ask.request.options.iter().enumerate() {
        text.push_str(&format!("  {}) {} ({})\n", number + 1, option.name, option.kind));
    }
    text.push_str("choose a number: ");
    out!("{}", style.ask(&text));
    let _ = std::io::stdout().flush();
}

/// The person typed `choice`: answer, or ask again.
fn answer(ask: Ask, choice: &str, style: Style) -> Option<Ask> {
    let chosen = choice
        .parse::<usize>()
        .ok()
        .and_then(|number| number.checked_sub(1))
        .and_then(|index| ask.request.options.get(index));
    match chosen {
        Some(option) => {
            let outcome =
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()));
            let _ = ask.answer.send(outcome);
            None
        }
        None => {
            out!("{}", style.ask(&format!("1 to {}: ", ask.request.options.len())));
            let _ = std::io::stdout().flush();
            Some(ask)
        }
    }
}

/// Lines typed on stdin, read on a thread of their own.
fn read_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
