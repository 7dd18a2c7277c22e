//! The agent side of `check client`: the hidden command `acp-engine
//! check-peer CASE REPORT`, which the client under test starts as its
//! agent. It answers the handshake, plays the case's steps during the
//! first prompt turn and writes its verdict to REPORT (after every step, so
//! a client that is killed still leaves one).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use acp_engine::schema::method;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::case::{matches, substitute};
use crate::args::Failure;

/// A client case (`cli/cases/client/*.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct ClientCase {
    pub name: String,
    pub class: String,
    pub description: String,
    /// A client capability the case needs: `fs` or `terminal`.
    #[serde(default)]
    pub requires: Option<String>,
    /// The agent is gone after the steps: the client must exit.
    #[serde(default)]
    pub agent_dies: bool,
    pub steps: Vec<PeerStep>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerStep {
    /// Send a request to the client and wait for its response.
    Request {
        request: Value,
        expect: Value,
        #[serde(default = "default_wait")]
        within_ms: u64,
    },
    /// Send a line as it is; the client answers it (an error with id null).
    SendRaw {
        line: String,
        expect: Value,
        #[serde(default = "default_wait")]
        within_ms: u64,
    },
    /// Send a notification.
    Notify(Value),
    /// Exit at once, mid-turn.
    Die,
}

fn default_wait() -> u64 {
    10_000
}

/// What the peer writes to REPORT.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    pub verdict: String,
    pub evidence: String,
}

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let [case, report] = argv.as_slice() else {
        return Err(Failure::Usage("check-peer CASE REPORT".to_owned()));
    };
    let case = super::client_cases()?
        .into_iter()
        .find(|candidate| &candidate.name == case)
        .ok_or_else(|| Failure::Run(format!("no client case {case}")))?;
    let mut peer = Peer::new(report.clone());
    peer.report("fail", "the client never sent initialize");
    peer.run(&case);
    Ok(())
}

struct Peer {
    report_path: String,
    lines: mpsc::Receiver<String>,
    vars: HashMap<String, Value>,
    next_id: u64,
    /// The id of the prompt whose turn the case plays, until answered.
    open_prompt: Option<Value>,
}

/// Why a step did not hold.
enum Stop {
    Fail(String),
    Skip(String),
}

impl Peer {
    fn new(report_path: String) -> Self {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            report_path,
            lines,
            vars: HashMap::new(),
            next_id: 0,
            open_prompt: None,
        }
    }

    fn report(&self, verdict: &str, evidence: &str) {
        let report = Report {
            verdict: verdict.to_owned(),
            evidence: evidence.to_owned(),
        };
        // Whole or not at all: the checker may read it at any moment.
        let partial = format!("{}.partial", self.report_path);
        if std::fs::write(&partial, serde_json::to_vec(&report).unwrap_or_default()).is_ok() {
            let _ = std::fs::rename(&partial, &self.report_path);
        }
    }

    fn send(&self, message: &Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }

    fn answer(&self, id: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    /// The next message from the client within `wait`.
    fn next(&self, wait: Duration) -> Result<Value, Stop> {
        let line = self.lines.recv_timeout(wait).map_err(|error| match error {
            mpsc::RecvTimeoutError::Timeout => {
                Stop::Fail(format!("nothing from the client for {} ms", wait.as_millis()))
            }
            mpsc::RecvTimeoutError::Disconnected => Stop::Fail("the client closed the connection".to_owned()),
        })?;
        serde_json::from_str(&line)
            .map_err(|_| Stop::Fail(format!("the client sent a line that is not JSON: {line}")))
    }

    /// Wait for a request of `method` from the client (answering nothing else).
    fn request_of(&self, called: &str, wait: Duration) -> Result<Value, Stop> {
        let deadline = Instant::now() + wait;
        loop {
            let message = self.next(deadline.saturating_duration_since(Instant::now()))?;
            if message.get("method").and_then(Value::as_str) == Some(called) {
                return Ok(message);
            }
        }
    }

    fn run(&mut self, case: &ClientCase) {
        let outcome = self.play(case);
        let (verdict, evidence) = match outcome {
            Ok(()) if case.agent_dies => ("pass", "the agent died mid-turn as planned".to_owned()),
            Ok(()) => ("pass", format!("{} steps held", case.steps.len())),
            Err(Stop::Fail(reason)) => ("fail", reason),
            Err(Stop::Skip(reason)) => ("skip", reason),
        };
        // The verdict first: once its turn ends the client may exit at once.
        self.report(verdict, &evidence);
        if case.agent_dies {
            std::process::exit(0);
        }
        if let Some(prompt) = self.open_prompt.take() {
            self.answer(&prompt, json!({ "stopReason": "end_turn" }));
        }
        // Then an ordinary agent until the client hangs up: every prompt
        // ends at once, requests are refused.
        while let Ok(line) = self.lines.recv() {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if let (Some(id), Some(called)) =
                (message.get("id"), message.get("method").and_then(Value::as_str))
            {
                match called {
                    method::SESSION_PROMPT => self.answer(id, json!({ "stopReason": "end_turn" })),
                    method::SESSION_NEW => self.answer(id, json!({ "sessionId": "check-session" })),
                    _ => self.send(&json!({ "jsonrpc": "2.0", "id": id, "error": acp_engine::RequestError::method_not_found(called) })),
                }
            }
        }
    }

    /// The handshake, then the case's steps inside the first prompt turn.
    fn play(&mut self, case: &ClientCase) -> Result<(), Stop> {
        let wait = Duration::from_secs(20);
        let initialize = self.request_of(method::INITIALIZE, wait)?;
        let handshake = json!({ "params": { "protocolVersion": 1, "clientCapabilities": "*" } });
        if !matches(&handshake, &initialize, &self.vars, &mut HashMap::new()) {
            return Err(Stop::Fail(format!(
                "initialize does not carry protocolVersion 1 and clientCapabilities: {initialize}"
            )));
        }
        let capabilities = initialize["params"]["clientCapabilities"].clone();
        self.answer(
            &initialize["id"],
            json!({ "protocolVersion": 1, "agentCapabilities": {} }),
        );
        self.report("fail", "the client never sent session/new");
        let new_session = self.request_of(method::SESSION_NEW, wait)?;
        let cwd = new_session["params"]["cwd"].clone();
        if !cwd.as_str().is_some_and(|cwd| cwd.starts_with('/')) {
            return Err(Stop::Fail(format!(
                "session/new without an absolute cwd: {new_session}"
            )));
        }
        self.vars.insert("cwd".to_owned(), cwd);
        self.vars.insert("session".to_owned(), json!("check-session"));
        self.answer(&new_session["id"], json!({ "sessionId": "check-session" }));
        let supported = match case.requires.as_deref() {
            Some("fs") => {
                capabilities["fs"]["readTextFile"] == json!(true)
                    && capabilities["fs"]["writeTextFile"] == json!(true)
            }
            Some("terminal") => capabilities["terminal"] == json!(true),
            _ => true,
        };
        self.report("fail", "the client never sent session/prompt");
        let prompt = self.request_of(method::SESSION_PROMPT, wait)?;
        // Answered once the verdict is written (`run`).
        self.open_prompt = Some(prompt["id"].clone());
        if !supported {
            return Err(Stop::Skip(format!(
                "the client does not advertise {}",
                case.requires.as_deref().unwrap_or_default()
            )));
        }
        for (number, step) in case.steps.iter().enumerate() {
            self.report(
                "fail",
                &format!("the client ended before step {} held", number + 1),
            );
            self.step(step).map_err(|stop| match stop {
                Stop::Fail(reason) => Stop::Fail(format!("step {}: {reason}", number + 1)),
                skip => skip,
            })?;
        }
        Ok(())
    }

    fn step(&mut self, step: &PeerStep) -> Result<(), Stop> {
        match step {
            PeerStep::Request {
                request,
                expect,
                within_ms,
            } => {
                self.next_id += 1;
                let id = json!(self.next_id);
                let mut request = substitute(request, &self.vars);
                request["jsonrpc"] = json!("2.0");
                request["id"] = id.clone();
                self.send(&request);
                self.expect_response(&id, expect, Duration::from_millis(*within_ms))
            }
            PeerStep::SendRaw {
                line,
                expect,
                within_ms,
            } => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
                drop(out);
                self.expect_response(&Value::Null, expect, Duration::from_millis(*within_ms))
            }
            PeerStep::Notify(notification) => {
                let mut notification = substitute(notification, &self.vars);
                notification["jsonrpc"] = json!("2.0");
                self.send(&notification);
                Ok(())
            }
            PeerStep::Die => Ok(()),
        }
    }

    /// The client's response to `id`, which must match `expect`.
    fn expect_response(&mut self, id: &Value, expect: &Value, wait: Duration) -> Result<(), Stop> {
        let deadline = Instant::now() + wait;
        loop {
            let message = self.next(deadline.saturating_duration_since(Instant::now()))?;
            let is_response = message.get("method").is_none() && message.get("id") == Some(id);
            if !is_response {
                continue;
            }
            let mut captured = HashMap::new();
            if matches(expect, &message, &self.vars, &mut captured) {
                self.vars.extend(captured);
                return Ok(());
            }
            return Err(Stop::Fail(format!("expected {expect}, got {message}")));
        }
    }
}
