//! The verdict on each message of a conversation: what the engine's own
//! reader would say about it (malformed, unknown method, params that do not
//! fit the schema), plus what only a view of both directions can see:
//! request ids used twice, responses to no request, and updates after the
//! turn they belong to was answered.

use std::collections::HashMap;
use std::time::Instant;

use acp_engine::error::codes;
use acp_engine::message::{classify, Inbound};
use acp_engine::schema::{self as v1, method, SessionId, SessionUpdate};
use acp_engine::validate::{self, Protocol, Receiver};
use acp_engine::version::{V1, V2};
use acp_engine::{from_raw, legacy, RawJson, RequestError, RequestId, UncheckedMethods};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    ClientToAgent,
    AgentToClient,
}

impl Direction {
    fn receiver(self) -> Receiver {
        match self {
            Direction::ClientToAgent => Receiver::Agent,
            Direction::AgentToClient => Receiver::Client,
        }
    }

    fn reverse(self) -> Direction {
        match self {
            Direction::ClientToAgent => Direction::AgentToClient,
            Direction::AgentToClient => Direction::ClientToAgent,
        }
    }
}

/// What kind of line it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Request,
    Notification,
    Response,
    /// A response carrying an error.
    Error,
    /// Not a JSON-RPC message.
    Invalid,
}

/// One rule a message broke, and how.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub rule: &'static str,
    pub detail: String,
}

/// What the inspector found out about one message.
#[derive(Debug, Default)]
pub struct Finding {
    pub kind: Option<Kind>,
    pub id: Option<RequestId>,
    pub method: Option<String>,
    pub session: Option<SessionId>,
    /// For a response: how long after its request it came.
    pub latency: Option<std::time::Duration>,
    /// Accepted only by the unstable schema.
    pub unstable: bool,
    /// A method the schema dropped that real programs still use
    /// (`acp_engine::legacy`): not checked, not a problem.
    pub legacy: bool,
    pub problems: Vec<Problem>,
}

/// A request waiting for its response.
struct Open {
    method: String,
    session: Option<SessionId>,
    at: Instant,
}

/// What is known of a session's turns.
#[derive(Default)]
struct Session {
    prompts_pending: usize,
    /// `session/load` replays history as updates while it is pending.
    loads_pending: usize,
    /// A prompt was answered and no other is pending.
    turn_ended: bool,
}

#[derive(Default)]
pub struct Inspector {
    /// By the direction the request went, and its id.
    open: HashMap<(Direction, RequestId), Open>,
    sessions: HashMap<SessionId, Session>,
    /// The ACP version the agent's answer to `initialize` named (1 until then).
    version: Option<u16>,
}

/// Whether an error response's `error` has its string `message`.
fn error_has_message(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line)
        .is_ok_and(|response| response["error"]["message"].is_string())
}

/// `protocolVersion` of `initialize` params or its result, when it is one.
fn protocol_version(json: Option<&serde_json::value::RawValue>) -> Option<u16> {
    acp_engine::version::protocol_version_in(json?.get())
}

impl Inspector {
    /// Judge one line (without its newline), read at `at`.
    pub fn inspect(&mut self, direction: Direction, line: &[u8], at: Instant) -> Finding {
        match classify(line) {
            Inbound::Request { id, method, params } => self.request(direction, id, method, params, at),
            Inbound::Notification { method, params } => self.notification(direction, method, params),
            Inbound::Response { id, outcome } => {
                let message_missing = outcome.is_err() && !error_has_message(line);
                let mut finding = self.response(direction, id, outcome, at);
                // The engine reads such an answer; JSON-RPC still requires the message.
                if message_missing {
                    finding.problems.push(Problem {
                        rule: "malformed",
                        detail: "the response's \"error\" has no \"message\"".to_owned(),
                    });
                }
                finding
            }
            Inbound::Invalid { id, error } | Inbound::InvalidResponse { id, error } => Finding {
                kind: Some(Kind::Invalid),
                id: (id != RequestId::Null).then_some(id),
                problems: vec![Problem {
                    rule: "malformed",
                    detail: describe(&error),
                }],
                ..Finding::default()
            },
        }
    }

    fn request(
        &mut self,
        direction: Direction,
        id: RequestId,
        method: String,
        params: Option<RawJson>,
        at: Instant,
    ) -> Finding {
        let mut finding = Finding {
            kind: Some(Kind::Request),
            id: Some(id.clone()),
            ..Finding::default()
        };
        // A client asking for the version 2 draft sends v2's initialize.
        let mut version = self.version();
        if method == method::INITIALIZE && protocol_version(params.as_deref()).is_some_and(|v| v >= V2) {
            version = V2;
        }
        check(
            &mut finding,
            version,
            direction,
            false,
            &method,
            params.as_deref(),
        );
        let session = session_of(&method, params.as_deref());
        if let Some(session) = &session {
            let turns = self.sessions.entry(session.clone()).or_default();
            match method.as_str() {
                method::SESSION_PROMPT => {
                    turns.prompts_pending += 1;
                    turns.turn_ended = false;
                }
                method::SESSION_LOAD => turns.loads_pending += 1,
                _ => {}
            }
        }
        let open = Open {
            method: method.clone(),
            session: session.clone(),
            at,
        };
        if self.open.insert((direction, id.clone()), open).is_some() {
            finding.problems.push(Problem {
                rule: "duplicate_request_id",
                detail: format!("request id {id} is still waiting for its response"),
            });
        }
        finding.method = Some(method);
        finding.session = session;
        finding
    }

    fn notification(&mut self, direction: Direction, method: String, params: Option<RawJson>) -> Finding {
        let mut finding = Finding {
            kind: Some(Kind::Notification),
            ..Finding::default()
        };
        check(
            &mut finding,
            self.version(),
            direction,
            true,
            &method,
            params.as_deref(),
        );
        finding.session = session_of(&method, params.as_deref());
        // v1's turns end with the prompt's answer; v2's with an idle state update, which may
        // come after it.
        if method == method::SESSION_UPDATE && direction == Direction::AgentToClient && self.version() == V1 {
            if let Some(update) = parse::<v1::SessionNotification>(params.as_deref()) {
                self.check_turn(&update, &mut finding);
            }
        }
        finding.method = Some(method);
        finding
    }

    /// Turn content (message, thoughts, tool calls, plan) belongs before
    /// the turn's response.
    fn check_turn(&self, notification: &v1::SessionNotification, finding: &mut Finding) {
        let turn_content = matches!(
            notification.update,
            SessionUpdate::UserMessageChunk(_)
                | SessionUpdate::AgentMessageChunk(_)
                | SessionUpdate::AgentThoughtChunk(_)
                | SessionUpdate::ToolCall(_)
                | SessionUpdate::ToolCallUpdate(_)
                | SessionUpdate::Plan(_)
        );
        let Some(turns) = self.sessions.get(&notification.session_id) else {
            return;
        };
        if turn_content && turns.turn_ended && turns.prompts_pending == 0 && turns.loads_pending == 0 {
            finding.problems.push(Problem {
                rule: "update_after_turn",
                detail: format!(
                    "turn content for session {} after its session/prompt was answered",
                    notification.session_id
                ),
            });
        }
    }

    /// The version messages are checked as: what `initialize` settled, else 1.
    fn version(&self) -> u16 {
        self.version.unwrap_or(V1)
    }

    fn response(
        &mut self,
        direction: Direction,
        id: RequestId,
        outcome: Result<RawJson, RequestError>,
        at: Instant,
    ) -> Finding {
        let failed = outcome.is_err();
        let mut finding = Finding {
            kind: Some(if failed { Kind::Error } else { Kind::Response }),
            id: Some(id.clone()),
            ..Finding::default()
        };
        let Some(open) = self.open.remove(&(direction.reverse(), id.clone())) else {
            // The answer to a line that had no readable id.
            if failed && id == RequestId::Null {
                return finding;
            }
            finding.problems.push(Problem {
                rule: "unknown_response_id",
                detail: format!("no request with id {id} is waiting for a response"),
            });
            return finding;
        };
        if let Some(turns) = open.session.as_ref().and_then(|s| self.sessions.get_mut(s)) {
            match open.method.as_str() {
                method::SESSION_PROMPT => {
                    turns.prompts_pending = turns.prompts_pending.saturating_sub(1);
                    turns.turn_ended = turns.prompts_pending == 0;
                }
                method::SESSION_LOAD => turns.loads_pending = turns.loads_pending.saturating_sub(1),
                _ => {}
            }
        }
        if open.method == method::INITIALIZE && direction == Direction::AgentToClient {
            if let Some(answered) = outcome.ok().and_then(|result| protocol_version(Some(&result))) {
                self.version = Some(answered);
            }
        }
        finding.latency = Some(at.saturating_duration_since(open.at));
        finding.method = Some(open.method);
        finding.session = open.session;
        finding
    }
}

/// The receiving side's schema check in ACP `version`: the stable
/// protocol, else the unstable one (then noted); problems if neither accepts.
fn check(
    finding: &mut Finding,
    version: u16,
    direction: Direction,
    notification: bool,
    method: &str,
    params: Option<&serde_json::value::RawValue>,
) {
    let receiver = direction.receiver();
    let none = UncheckedMethods::default();
    if legacy::unchecked_methods().contains(method) {
        finding.legacy = true;
        return;
    }
    let Err(stable) = validate::message_in(
        version,
        Protocol::Stable,
        &none,
        receiver,
        notification,
        method,
        params,
    ) else {
        return;
    };
    match validate::message_in(
        version,
        Protocol::Unstable,
        &none,
        receiver,
        notification,
        method,
        params,
    ) {
        Ok(_) => finding.unstable = true,
        Err(error) => finding.problems.push(Problem {
            rule: if error.code == codes::METHOD_NOT_FOUND {
                "unknown_method"
            } else {
                "invalid_params"
            },
            detail: describe(if error.code == stable.code {
                &stable
            } else {
                &error
            }),
        }),
    }
}

/// The session a message is about, for the methods that carry one.
fn session_of(method: &str, params: Option<&serde_json::value::RawValue>) -> Option<SessionId> {
    macro_rules! session {
        ($($method:ident => $params:ident),* $(,)?) => {
            match method {
                $(method::$method => parse::<v1::$params>(params).map(|p| p.session_id),)*
                _ => None,
            }
        };
    }
    session! {
        SESSION_PROMPT => PromptRequest,
        SESSION_LOAD => LoadSessionRequest,
        SESSION_RESUME => ResumeSessionRequest,
        SESSION_CLOSE => CloseSessionRequest,
        SESSION_SET_MODE => SetSessionModeRequest,
        SESSION_CANCEL => CancelNotification,
        SESSION_UPDATE => SessionNotification,
        SESSION_REQUEST_PERMISSION => RequestPermissionRequest,
        FS_READ_TEXT_FILE => ReadTextFileRequest,
        FS_WRITE_TEXT_FILE => WriteTextFileRequest,
        TERMINAL_CREATE => CreateTerminalRequest,
        TERMINAL_OUTPUT => TerminalOutputRequest,
        TERMINAL_RELEASE => ReleaseTerminalRequest,
        TERMINAL_WAIT_FOR_EXIT => WaitForTerminalExitRequest,
        TERMINAL_KILL => KillTerminalRequest,
    }
}

fn parse<T: DeserializeOwned>(params: Option<&serde_json::value::RawValue>) -> Option<T> {
    from_raw(params).ok()
}

/// An error in words: its message and, when there is one, its data.
fn describe(error: &RequestError) -> String {
    match &error.data {
        Some(data) => format!("{} ({data})", error.message),
        None => error.message.clone(),
    }
}
