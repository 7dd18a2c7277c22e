//! A conformance case, as data (`cli/cases/agent/*.json`), and how one is
//! run against a fresh agent process.
//!
//! A case is a list of steps. Messages to send may use `"$NAME"` for a
//! value captured earlier (`${NAME}` inside a longer string) and
//! `{"$repeat": [TEXT, N]}` for a long string.
//! A pattern matches a message when every key it names matches (objects
//! are matched in part, arrays and scalars exactly); in a pattern, `"*"`
//! matches any value that is present, `"$capture:NAME"` captures the value,
//! `"$NAME"` must equal a captured one, `{"$one_of": [...]}` any of them
//! and `{"$absent": true}` a key that is not there.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::peer::{AgentUnderTest, Incoming};

#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    pub name: String,
    /// The defect class it guards against (handshake, validation, ...).
    pub class: String,
    pub description: String,
    /// Run the prelude's handshake (and authentication) first; a case that
    /// says false starts on a fresh connection.
    #[serde(default = "yes")]
    pub handshake: bool,
    /// Run the prelude's session steps too (a session id in `$session`).
    #[serde(default)]
    pub session: bool,
    /// Hold the agent's permission requests instead of answering them.
    #[serde(default)]
    pub hold_permissions: bool,
    /// The `clientCapabilities` the handshake's `initialize` advertises,
    /// instead of the prelude's (every capability).
    #[serde(default)]
    pub client_capabilities: Option<Value>,
    /// The `protocolVersion` the handshake's `initialize` asks for, and
    /// the pattern its answer's `protocolVersion` must match, instead of
    /// the prelude's (1 and 1).
    #[serde(default)]
    pub protocol_version: Option<VersionAsked>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VersionAsked {
    pub ask: Value,
    pub answer: Value,
}

/// The steps every case starts with (`cli/cases/agent/_prelude.json`).
/// `$cwd` is the case's own fresh directory, `$auth` the `--auth` method.
#[derive(Debug, Clone, Deserialize)]
pub struct Prelude {
    pub handshake: Vec<Step>,
    /// After the handshake, with `--auth METHOD` only.
    pub authenticate: Vec<Step>,
    pub session: Vec<Step>,
    /// A request that must get an answer: the agent is still alive.
    pub alive: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Send a message.
    Send(Value),
    /// Send a line as it is (it need not be JSON).
    SendRaw(String),
    /// Wait for a message matching `message`.
    Expect(Expectation),
    /// No message matching `message` arrives for `for_ms`.
    Quiet { message: Value, for_ms: u64 },
    /// Answer the held permission requests `cancelled`.
    CancelHeld,
    /// The agent still answers a request (the prelude's `alive`).
    Alive,
    /// Close the agent's stdin.
    CloseStdin,
    /// The agent exits within `within_ms`.
    Exits { within_ms: u64 },
}

#[derive(Debug, Clone, Deserialize)]
pub struct Expectation {
    pub message: Value,
    #[serde(default = "default_wait")]
    pub within_ms: u64,
    /// A message matching this arriving first means the expectation
    /// cannot be met any more.
    #[serde(default)]
    pub unless: Option<Value>,
    /// Not met: the case is skipped for this reason instead of failed.
    #[serde(default)]
    pub else_skip: Option<String>,
}

fn yes() -> bool {
    true
}

fn default_wait() -> u64 {
    10_000
}

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Skip,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub verdict: Verdict,
    /// What was seen: the reason for a failure or skip, a summary otherwise.
    pub evidence: String,
    pub elapsed: Duration,
    /// Notifications from the peer that fail the schema (not a failure of
    /// the case: a client drops them; said so they are not lost silently).
    pub invalid_notifications: Vec<String>,
}

/// How `check agent` talks to the agent beyond the cases themselves.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Replaces the handshake's wait for the `initialize` answer.
    pub init_timeout: Option<Duration>,
    /// The `authenticate` method to use after `initialize`.
    pub auth: Option<String>,
    /// For a remote agent: `Authorization: Bearer` this.
    pub token: Option<String>,
    /// The ACP version the cases speak (1, or 2 for the draft): what the
    /// agent's notifications are checked as.
    pub version: u16,
}

impl Prelude {
    /// The prelude with `settings` applied.
    pub fn with(mut self, settings: &Settings) -> Self {
        if let Some(timeout) = settings.init_timeout {
            for step in &mut self.handshake {
                if let Step::Expect(expectation) = step {
                    expectation.within_ms = timeout.as_millis() as u64;
                }
            }
        }
        if settings.auth.is_none() {
            self.authenticate.clear();
        }
        self
    }
}

/// Run the prelude alone (handshake, authentication, a session) once
/// before the cases: an agent that cannot start, or that wants
/// authentication, is one clear error instead of a failure per case.
pub async fn preflight(prelude: &Prelude, agent: &[String], settings: &Settings) -> Result<(), Refused> {
    let probe = Case {
        name: "preflight".to_owned(),
        class: String::new(),
        description: String::new(),
        handshake: true,
        session: true,
        hold_permissions: false,
        client_capabilities: None,
        protocol_version: None,
        steps: Vec::new(),
    };
    let (outcome, answers) = run_case(&probe, prelude, agent, settings).await;
    if outcome.verdict == Verdict::Pass {
        return Ok(());
    }
    if speaks_only_v2(answers.get("check-init")) {
        return Err(Refused::OnlyV2);
    }
    let session_error = answers
        .get("check-session")
        .and_then(|answer| answer.get("error"));
    let code = session_error
        .and_then(|error| error.get("code"))
        .and_then(Value::as_i64);
    if code == Some(acp_engine::error::codes::AUTH_REQUIRED) {
        let offered = answers
            .get("check-init")
            .and_then(|answer| answer.pointer("/result/authMethods"))
            .and_then(Value::as_array)
            .map(|methods| {
                methods
                    .iter()
                    .filter_map(|method| {
                        let id = method.get("id")?.as_str()?;
                        let name = method.get("name").and_then(Value::as_str).unwrap_or(id);
                        Some(format!("{id} ({name})"))
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        return Err(Refused::Failed(match (&settings.auth, offered.is_empty()) {
            (Some(method), _) => format!(
                "authentication required: session/new was refused after authenticating with {method:?}"
            ),
            (None, true) => "authentication required, and the agent offers no authMethods".to_owned(),
            (None, false) => format!(
                "authentication required; the agent offers: {}; pass --auth METHOD",
                offered.join(", ")
            ),
        }));
    }
    Err(Refused::Failed(outcome.evidence))
}

/// Why an agent did not get through the prelude.
#[derive(Debug)]
pub enum Refused {
    /// It answered `initialize` for version 1 with -32022, naming 2 alone.
    OnlyV2,
    Failed(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::OnlyV2 => f.write_str("it speaks only ACP v2 (pass --protocol-version 2)"),
            Refused::Failed(reason) => f.write_str(reason),
        }
    }
}

/// Whether the answer to `initialize` is -32022 naming version 2 alone.
fn speaks_only_v2(answer: Option<&Value>) -> bool {
    let Some(error) = answer.and_then(|answer| answer.get("error")) else {
        return false;
    };
    let code = error.get("code").and_then(Value::as_i64);
    let supported = error.pointer("/data/supported").and_then(Value::as_array);
    code == Some(acp_engine::error::codes::UNSUPPORTED_PROTOCOL_VERSION)
        && supported.is_some_and(|versions| versions.iter().map(Value::as_u64).eq([Some(2)]))
}

impl Outcome {
    /// A case that failed before it could run.
    fn failed(evidence: String, started: Instant) -> Self {
        Self {
            verdict: Verdict::Fail,
            evidence,
            elapsed: started.elapsed(),
            invalid_notifications: Vec::new(),
        }
    }
}

/// Run `case` against a fresh `agent`.
pub async fn run(case: &Case, prelude: &Prelude, agent: &[String], settings: &Settings) -> Outcome {
    run_case(case, prelude, agent, settings).await.0
}

/// Run `case`; also the answers to the prelude's requests, by id.
async fn run_case(
    case: &Case,
    prelude: &Prelude,
    agent: &[String],
    settings: &Settings,
) -> (Outcome, HashMap<String, Value>) {
    let started = Instant::now();
    // Each case in a directory of its own: no case sees another's files.
    let cwd = std::env::temp_dir().join(format!("acp-engine-check-{}-{}", std::process::id(), case.name));
    let _ = std::fs::remove_dir_all(&cwd);
    if let Err(error) = std::fs::create_dir_all(&cwd) {
        let evidence = format!("cannot make the case's directory {}: {error}", cwd.display());
        return (Outcome::failed(evidence, started), HashMap::new());
    }
    let outcome = run_in(case, prelude, agent, settings, &cwd, started).await;
    let _ = std::fs::remove_dir_all(&cwd);
    outcome
}

async fn run_in(
    case: &Case,
    prelude: &Prelude,
    agent: &[String],
    settings: &Settings,
    cwd: &std::path::Path,
    started: Instant,
) -> (Outcome, HashMap<String, Value>) {
    let mut peer = match AgentUnderTest::start(agent, settings.token.as_deref(), settings.version).await {
        Ok(peer) => peer,
        Err(error) => {
            let doing = if agent.len() == 1 && acp_engine::remote::is_url(&agent[0]) {
                "cannot connect to the agent"
            } else {
                "cannot start the agent"
            };
            let evidence = format!("{doing}: {error}");
            return (Outcome::failed(evidence, started), HashMap::new());
        }
    };
    let mut vars = HashMap::new();
    vars.insert(
        "cwd".to_owned(),
        Value::String(cwd.to_string_lossy().into_owned()),
    );
    if let Some(method) = &settings.auth {
        vars.insert("auth".to_owned(), Value::String(method.clone()));
    }
    let mut run = Run {
        peer: &mut peer,
        vars,
        alive: &prelude.alive,
        sent: 0,
        answers: HashMap::new(),
    };
    let handshake = if case.handshake {
        handshake_for(case, prelude)
    } else {
        Vec::new()
    };
    let mut steps: Vec<(&str, &Step)> = handshake.iter().map(|step| ("handshake", step)).collect();
    if case.handshake {
        steps.extend(prelude.authenticate.iter().map(|step| ("authentication", step)));
    }
    if case.session {
        steps.extend(prelude.session.iter().map(|step| ("session", step)));
    }
    let before = steps.len();
    steps.extend(case.steps.iter().map(|step| ("case", step)));
    let mut outcome = Ok(());
    for (number, (part, step)) in steps.into_iter().enumerate() {
        if number == before {
            run.peer.hold_permissions = case.hold_permissions;
        }
        if let Err(end) = run.step(step).await {
            outcome = Err(match end {
                End::Skip(reason) => (Verdict::Skip, reason),
                End::Fail(reason) => {
                    let label = if part == "case" {
                        format!("step {}", number - before + 1)
                    } else {
                        format!("the {part} before the case")
                    };
                    (Verdict::Fail, format!("{label}: {reason}"))
                }
            });
            break;
        }
    }
    let (sent, answers) = (run.sent, std::mem::take(&mut run.answers));
    let (verdict, evidence) = match outcome {
        Ok(()) => (Verdict::Pass, format!("{sent} messages sent")),
        Err((Verdict::Fail, reason)) => {
            let mut evidence = reason;
            run.peer.gather(Duration::from_millis(300)).await;
            if let Some(status) = run.peer.exit() {
                evidence.push_str(&format!("; the agent exited ({status})"));
            }
            if !peer.recent.is_empty() {
                evidence.push_str(&format!(
                    "; last from the agent: {}",
                    Vec::from(peer.recent.clone()).join(" / ")
                ));
            }
            let stderr = peer.stderr_tail();
            if !stderr.is_empty() {
                evidence.push_str(&format!("; its stderr: {stderr}"));
            }
            (Verdict::Fail, evidence)
        }
        Err((verdict, reason)) => (verdict, reason),
    };
    let invalid_notifications = std::mem::take(&mut peer.invalid_notifications);
    peer.stop().await;
    let outcome = Outcome {
        verdict,
        evidence,
        elapsed: started.elapsed(),
        invalid_notifications,
    };
    (outcome, answers)
}

/// The prelude's handshake, advertising the case's client capabilities
/// and asking for its protocol version when it names them.
fn handshake_for(case: &Case, prelude: &Prelude) -> Vec<Step> {
    let mut handshake = prelude.handshake.clone();
    let mut init_id = None;
    for step in &mut handshake {
        match step {
            Step::Send(message)
                if message.get("method").and_then(Value::as_str)
                    == Some(acp_engine::schema::method::INITIALIZE) =>
            {
                init_id = message.get("id").cloned();
                if let Some(capabilities) = &case.client_capabilities {
                    message["params"]["clientCapabilities"] = capabilities.clone();
                }
                if let Some(version) = &case.protocol_version {
                    message["params"]["protocolVersion"] = version.ask.clone();
                }
            }
            Step::Expect(expectation) if expectation.message.get("id") == init_id.as_ref() => {
                if let Some(version) = &case.protocol_version {
                    expectation.message["result"]["protocolVersion"] = version.answer.clone();
                }
            }
            _ => {}
        }
    }
    handshake
}

enum End {
    Fail(String),
    Skip(String),
}

struct Run<'a> {
    peer: &'a mut AgentUnderTest,
    vars: HashMap<String, Value>,
    alive: &'a Value,
    sent: usize,
    /// Answers to the prelude's requests (ids `check-*`), by id.
    answers: HashMap<String, Value>,
}

impl Run<'_> {
    async fn step(&mut self, step: &Step) -> Result<(), End> {
        match step {
            Step::Send(message) => {
                let message = substitute(message, &self.vars);
                self.send(&message.to_string()).await
            }
            Step::SendRaw(line) => self.send(line).await,
            Step::Expect(expectation) => self.expect(expectation).await,
            Step::Quiet { message, for_ms } => self.quiet(message, Duration::from_millis(*for_ms)).await,
            Step::CancelHeld => {
                self.peer.cancel_held().await;
                Ok(())
            }
            Step::Alive => {
                let probe = substitute(self.alive, &self.vars);
                self.send(&probe.to_string()).await?;
                let expectation = Expectation {
                    message: serde_json::json!({ "id": probe.get("id").cloned().unwrap_or(Value::Null) }),
                    within_ms: default_wait(),
                    unless: None,
                    else_skip: None,
                };
                self.expect(&expectation)
                    .await
                    .map_err(|_| End::Fail("the agent no longer answers requests".to_owned()))
            }
            Step::CloseStdin => {
                self.peer.close_stdin();
                Ok(())
            }
            Step::Exits { .. } if self.peer.is_remote() => Err(End::Skip(
                "a remote agent: its process is its server's to stop".to_owned(),
            )),
            Step::Exits { within_ms } => self
                .peer
                .exits_within(Duration::from_millis(*within_ms))
                .await
                .map(drop)
                .map_err(|reason| End::Fail(format!("does not exit when its stdin closes: {reason}"))),
        }
    }

    async fn send(&mut self, line: &str) -> Result<(), End> {
        self.sent += 1;
        self.peer.send_line(line).await.map_err(End::Fail)
    }

    async fn expect(&mut self, expectation: &Expectation) -> Result<(), End> {
        let deadline = Instant::now() + Duration::from_millis(expectation.within_ms);
        let unmet = |why: String| match &expectation.else_skip {
            Some(reason) => End::Skip(reason.clone()),
            None => End::Fail(why),
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.peer.next(left).await {
                None => {
                    return Err(unmet(format!(
                        "expected {} within {} ms; it did not come",
                        expectation.message, expectation.within_ms
                    )))
                }
                Some(Incoming::Closed) => {
                    let running = self.peer.running();
                    let ended = match self.peer.failure() {
                        Some(failure) => format!("the connection failed: {failure}"),
                        None if running || self.peer.is_remote() => "the agent closed its output".to_owned(),
                        None => "the agent closed its output and exited".to_owned(),
                    };
                    return Err(unmet(format!("expected {}; {ended}", expectation.message)));
                }
                Some(Incoming::Unreadable(_)) => continue,
                Some(Incoming::Message(message)) => {
                    if let Some(id) = message.get("id").and_then(Value::as_str) {
                        if id.starts_with("check-") && message.get("method").is_none() {
                            self.answers.insert(id.to_owned(), message.clone());
                        }
                    }
                    let mut captured = HashMap::new();
                    if matches(&expectation.message, &message, &self.vars, &mut captured) {
                        self.vars.extend(captured);
                        return Ok(());
                    }
                    // The answer to the request awaited, and not the one expected.
                    let answers = message.get("method").is_none()
                        && message.get("id").is_some()
                        && expectation.message.get("id") == message.get("id");
                    if answers {
                        return Err(unmet(format!("expected {}, got {message}", expectation.message)));
                    }
                    if let Some(unless) = &expectation.unless {
                        if matches(unless, &message, &self.vars, &mut HashMap::new()) {
                            return Err(unmet(format!(
                                "expected {}, but got {message} first",
                                expectation.message
                            )));
                        }
                    }
                }
            }
        }
    }

    async fn quiet(&mut self, pattern: &Value, wait: Duration) -> Result<(), End> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.peer.next(left).await {
                None | Some(Incoming::Closed) => return Ok(()),
                Some(Incoming::Unreadable(_)) => continue,
                Some(Incoming::Message(message)) => {
                    if matches(pattern, &message, &self.vars, &mut HashMap::new()) {
                        return Err(End::Fail(format!("{message} arrived where none may")));
                    }
                }
            }
        }
    }
}

/// `"$NAME"` replaced by its captured value, `{"$repeat": [TEXT, N]}` by
/// the text N times.
pub(super) fn substitute(template: &Value, vars: &HashMap<String, Value>) -> Value {
    match template {
        Value::String(text) => match text.strip_prefix('$').and_then(|name| vars.get(name)) {
            Some(value) => value.clone(),
            None => Value::String(vars.iter().fold(text.clone(), |text, (name, value)| match value {
                Value::String(value) => text.replace(&format!("${{{name}}}"), value),
                _ => text,
            })),
        },
        Value::Array(items) => Value::Array(items.iter().map(|item| substitute(item, vars)).collect()),
        Value::Object(fields) => {
            if let Some(Value::Array(repeat)) = fields.get("$repeat") {
                if let [Value::String(text), Value::Number(count)] = repeat.as_slice() {
                    return Value::String(text.repeat(count.as_u64().unwrap_or(0) as usize));
                }
            }
            Value::Object(
                fields
                    .iter()
                    .map(|(key, value)| (key.clone(), substitute(value, vars)))
                    .collect::<Map<_, _>>(),
            )
        }
        other => other.clone(),
    }
}

/// Whether `actual` matches `pattern` (see the module docs); captures go
/// to `captured`.
pub(super) fn matches(
    pattern: &Value,
    actual: &Value,
    vars: &HashMap<String, Value>,
    captured: &mut HashMap<String, Value>,
) -> bool {
    match pattern {
        Value::String(text) if text == "*" => true,
        Value::String(text) if text.starts_with("$capture:") => {
            captured.insert(text["$capture:".len()..].to_owned(), actual.clone());
            true
        }
        Value::String(text) if text.starts_with('$') => vars.get(&text[1..]) == Some(actual),
        Value::Object(fields) if fields.contains_key("$one_of") => match &fields["$one_of"] {
            Value::Array(options) => options
                .iter()
                .any(|option| matches(option, actual, vars, captured)),
            _ => false,
        },
        Value::Object(fields) => {
            let Value::Object(actual) = actual else {
                return false;
            };
            fields.iter().all(|(key, expected)| match actual.get(key) {
                None => expected.get("$absent") == Some(&Value::Bool(true)),
                Some(_) if expected.get("$absent").is_some() => false,
                Some(value) => matches(expected, value, vars, captured),
            })
        }
        Value::Array(items) => match actual {
            Value::Array(actual) => {
                items.len() == actual.len()
                    && items
                        .iter()
                        .zip(actual)
                        .all(|(item, value)| matches(item, value, vars, captured))
            }
            _ => false,
        },
        other => other == actual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_match_in_part_capture_and_compare() {
        let mut vars = HashMap::new();
        let mut captured = HashMap::new();
        let message = json!({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1", "extra": [1]}});
        assert!(matches(
            &json!({"id": 2, "result": {"sessionId": "$capture:session"}}),
            &message,
            &vars,
            &mut captured
        ));
        vars.extend(captured);
        assert_eq!(vars["session"], "s1");
        assert!(matches(
            &json!({"result": {"sessionId": "$session"}}),
            &message,
            &vars,
            &mut HashMap::new()
        ));
        assert!(!matches(&json!({"id": 3}), &message, &vars, &mut HashMap::new()));
        assert!(matches(
            &json!({"error": {"$absent": true}}),
            &message,
            &vars,
            &mut HashMap::new()
        ));
        assert!(!matches(
            &json!({"result": {"$absent": true}}),
            &message,
            &vars,
            &mut HashMap::new()
        ));
        assert!(matches(
            &json!({"id": {"$one_of": [1, 2]}, "result": "*"}),
            &message,
            &vars,
            &mut HashMap::new()
        ));
        assert!(!matches(
            &json!({"result": {"extra": []}}),
            &message,
            &vars,
            &mut HashMap::new()
        ));
    }

    #[test]
    fn sends_take_captured_values_and_repeats() {
        let vars = HashMap::from([("session".to_owned(), json!("s1"))]);
        let sent = substitute(
            &json!({"sessionId": "$session", "text": {"$repeat": ["ab", 3]}, "other": "$none"}),
            &vars,
        );
        assert_eq!(
            sent,
            json!({"sessionId": "s1", "text": "ababab", "other": "$none"})
        );
    }
}
