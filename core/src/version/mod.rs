//! Which ACP versions a connection speaks, and the one `initialize`
//! negotiates: the rule of the official SDKs' protocol routers (TypeScript
//! `agentProtocolRouter`), once for every binding.
//!
//! - A side that speaks only v1 (the default) negotiates nothing: every
//!   message is checked against v1, as before v2 existed; the client and
//!   the agent settle the version in their `initialize` handlers. A
//!   `protocolVersion` that is a string (a client from before ACP numbered
//!   its versions: "2024-11-05") reaches the agent's handler as the number
//!   it spells, else 1, as the official Python SDK reads it (the official
//!   Rust SDK reads it as 0, to which an agent answers its latest version:
//!   1); the official TypeScript SDK refuses it (-32602).
//! - An agent that speaks v2 selects, for a client requesting version `n`,
//!   v2 when `n >= 2`, else v1 when it speaks v1 (and `n >= 1`); no such
//!   version is -32022 (Unsupported protocol version). A `protocolVersion`
//!   that is not an integer in 0..=65535 is -32602. The selection stands for
//!   the connection's life: a repeated `initialize` on v2 that asks for less
//!   than 2 is -32600.
//! - A client that speaks v2 and sends `initialize` for `n >= 2` checks
//!   what it sends as v2 from then on; the agent's answer settles it (an
//!   agent answering 1 turns the connection to v1, if the client speaks it).
//! - Until `initialize` settles it, a connection checks as its lowest
//!   version.
//! - A connection that speaks v2 (alone, or v1 and v2: a router) admits
//!   nothing from its peer before `initialize` but the agent's `initialize`
//!   itself: a request is -32600 (its handler never runs), a notification is
//!   dropped, as the official SDKs' v2 connections and protocol router do.
//!   Once `initialize` is on its way (sent by the client, received by the
//!   agent) the peer's messages go through.
//! - The agent's handler gets `initialize` params for the version selected
//!   (`version/initialize.rs`): a v2 `initialize` in v1's shape when v1 was selected
//!   (a v1-only agent too, when the params have v2's shape), a newer one as
//!   v2's.

mod initialize;

use std::sync::atomic::{AtomicU16, Ordering};

use serde::Deserialize;

use crate::error::RequestError;

/// ACP version 1.
pub const V1: u16 = 1;
/// ACP version 2 (draft).
pub const V2: u16 = 2;

/// The method that negotiates the version (the same name in v1 and v2).
const INITIALIZE: &str = crate::schema::v2::method::INITIALIZE;

/// Which ACP versions a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProtocolVersions {
    v1: bool,
    v2: bool,
}

impl ProtocolVersions {
    /// Version 1 only: the default; nothing is negotiated by the engine.
    pub const V1: Self = Self { v1: true, v2: false };
    /// The version 2 draft only.
    pub const V2: Self = Self { v1: false, v2: true };
    /// Both: an agent serves each client the version it asks for (a v1/v2
    /// router); a client asks for v2 and falls back to v1 if the agent does.
    pub const V1_AND_V2: Self = Self { v1: true, v2: true };

    /// The versions in `versions` (1 and 2 are known; None if it holds
    /// another, or nothing).
    pub fn from_list(versions: &[u16]) -> Option<Self> {
        let mut speaks = Self { v1: false, v2: false };
        for &version in versions {
            match version {
                V1 => speaks.v1 = true,
                V2 => speaks.v2 = true,
                _ => return None,
            }
        }
        (speaks.v1 || speaks.v2).then_some(speaks)
    }

    /// Whether `version` is one of them.
    pub fn speaks(self, version: u16) -> bool {
        (version == V1 && self.v1) || (version == V2 && self.v2)
    }

    /// The versions, lowest first.
    pub fn list(self) -> Vec<u16> {
        [V1, V2]
            .into_iter()
            .filter(|&version| self.speaks(version))
            .collect()
    }

    fn lowest(self) -> u16 {
        if self.v1 {
            V1
        } else {
            V2
        }
    }

    /// The version an agent speaking these selects for a client that
    /// requests `requested`; None: none fits.
    pub fn select(self, requested: u16) -> Option<u16> {
        if self.v2 && requested >= V2 {
            Some(V2)
        } else if self.v1 && (requested >= V1 || !self.v2) {
            Some(V1)
        } else {
            None
        }
    }
}

impl Default for ProtocolVersions {
    fn default() -> Self {
        Self::V1
    }
}

/// The version a connection speaks now (see the module docs).
#[derive(Debug)]
pub(crate) struct Negotiation {
    speaks: ProtocolVersions,
    /// The version `initialize` selected; 0 until then.
    selected: AtomicU16,
}

/// What the engine reads of `initialize` params and its result.
#[derive(Deserialize)]
struct VersionOnly {
    #[serde(rename = "protocolVersion")]
    protocol_version: serde_json::Value,
}

/// `protocolVersion` in `text`: Some(Ok(n)) for a valid version, Some(Err)
/// for an invalid one, None when it is absent (or `text` is no object).
fn protocol_version(text: Option<&str>) -> Option<Result<u16, ()>> {
    let read: VersionOnly = serde_json::from_str(text?).ok()?;
    Some(
        read.protocol_version
            .as_u64()
            .and_then(|version| u16::try_from(version).ok())
            .ok_or(()),
    )
}

/// The `protocolVersion` of `initialize` params or of its result (JSON text),
/// when it is a valid version: for tools that follow a conversation
/// (`acp-engine trace`) as the engine does.
pub fn protocol_version_in(text: &str) -> Option<u16> {
    protocol_version(Some(text))?.ok()
}

impl Negotiation {
    pub fn new(speaks: ProtocolVersions) -> Self {
        Self {
            speaks,
            selected: AtomicU16::new(0),
        }
    }

    /// The version messages are checked as now.
    pub fn current(&self) -> u16 {
        match self.selected.load(Ordering::Acquire) {
            0 => self.speaks.lowest(),
            selected => selected,
        }
    }

    /// The version a request the agent receives is checked as, and the
    /// params to hand its handler instead, if any: its `initialize` selects
    /// the version first (or fails as the module docs say), and is rewritten
    /// for it.
    pub fn agent_receives(
        &self,
        method: &str,
        params: Option<&str>,
    ) -> Result<(u16, Option<String>), RequestError> {
        if method != INITIALIZE {
            self.admits(method)?;
            return Ok((self.current(), None));
        }
        // The params with a legacy string version made a number (v1 alone).
        let mut legacy = None;
        let requested = match protocol_version(params) {
            Some(Ok(requested)) => requested,
            Some(Err(())) if self.speaks.v2 => {
                return Err(RequestError::invalid_params()
                    .with_message_detail("initialize.protocolVersion must be a valid ACP protocol version"))
            }
            Some(Err(())) => match params.and_then(initialize::legacy_as_number) {
                Some((numbered, requested)) => {
                    legacy = Some(numbered);
                    requested
                }
                // Not a string: the schema check says what is wrong.
                None => return Ok((self.current(), None)),
            },
            // Absent: the schema check names the missing property.
            None => return Ok((self.current(), None)),
        };
        if self.speaks.v2 {
            self.select_for_client(requested)?;
        }
        let rewritten = legacy
            .as_deref()
            .or(params)
            .and_then(|params| initialize::for_selected(params, requested, self.current(), !self.speaks.v2))
            .or(legacy);
        Ok((self.current(), rewritten))
    }

    /// The version any other message from the peer (a request the client
    /// receives, a notification) is checked as, once admitted.
    pub fn peer_sends(&self, method: &str) -> Result<u16, RequestError> {
        self.admits(method)?;
        Ok(self.current())
    }

    /// Refuses the peer's `method` on a connection that speaks v2 before `initialize`.
    fn admits(&self, method: &str) -> Result<(), RequestError> {
        if !self.speaks.v2 || self.selected.load(Ordering::Acquire) != 0 {
            return Ok(());
        }
        Err(RequestError::invalid_request().with_message_detail(format_args!(
            "an ACP v2 connection must be initialized before '{method}'"
        )))
    }

    fn select_for_client(&self, requested: u16) -> Result<(), RequestError> {
        let previous = self.selected.load(Ordering::Acquire);
        if previous == V2 && requested < V2 {
            return Err(RequestError::invalid_request()
                .with_message_detail("a repeated initialize must request the version already selected"));
        }
        if previous != 0 {
            return Ok(());
        }
        match self.speaks.select(requested) {
            Some(selected) => {
                self.selected.store(selected, Ordering::Release);
                Ok(())
            }
            None => Err(RequestError::unsupported_protocol_version(
                requested,
                &self.speaks.list(),
            )),
        }
    }

    /// The version a request the client sends is checked as; its
    /// `initialize` asking for v2 turns the connection to v2 (the answer
    /// settles it: [`Self::initialize_answered`]).
    pub fn client_sends(&self, method: &str, params: Option<&str>) -> u16 {
        if self.speaks.v2 && method == INITIALIZE {
            if let Some(Ok(requested)) = protocol_version(params) {
                if let Some(selected) = self.speaks.select(requested) {
                    self.selected.store(selected, Ordering::Release);
                }
            }
        }
        self.current()
    }

    /// Whether the client must read the answer to its `method` request
    /// ([`Self::initialize_answered`]).
    pub fn client_reads_answer(&self, method: &str) -> bool {
        self.speaks.v2 && method == INITIALIZE
    }

    /// The agent answered the client's `initialize` with `result`: the
    /// version it names, if the client speaks it, is the connection's. A
    /// client that speaks v2 alone fails the answer naming another (-32600,
    /// as the official SDKs' v2 clients do).
    pub fn initialize_answered(&self, result: &str) -> Result<(), RequestError> {
        let Some(Ok(answered)) = protocol_version(Some(result)) else {
            return Ok(());
        };
        if self.speaks.speaks(answered) {
            self.selected.store(answered, Ordering::Release);
            return Ok(());
        }
        if self.speaks == ProtocolVersions::V2 {
            return Err(RequestError::invalid_request()
                .with_message_detail(format_args!(
                    "the agent answered protocol version {answered}, not {V2}"
                ))
                .with_data(
                    serde_json::json!({"expectedProtocolVersion": V2, "receivedProtocolVersion": answered}),
                ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::codes;

    #[test]
    fn an_agent_selects_as_the_official_router_does() {
        assert_eq!(ProtocolVersions::V1_AND_V2.select(2), Some(V2));
        assert_eq!(ProtocolVersions::V1_AND_V2.select(7), Some(V2));
        assert_eq!(ProtocolVersions::V1_AND_V2.select(1), Some(V1));
        assert_eq!(ProtocolVersions::V1_AND_V2.select(0), None);
        assert_eq!(ProtocolVersions::V2.select(1), None);
        // v1 alone keeps the legacy fallback: every client gets v1.
        assert_eq!(ProtocolVersions::V1.select(0), Some(V1));
        assert_eq!(ProtocolVersions::V1.select(2), Some(V1));
    }

    #[test]
    fn initialize_settles_the_agents_version_once() {
        let agent = Negotiation::new(ProtocolVersions::V1_AND_V2);
        assert_eq!(agent.current(), V1);
        let v2 = Some(r#"{"protocolVersion":2,"info":{"name":"c","version":"1"}}"#);
        assert_eq!(agent.agent_receives(INITIALIZE, v2), Ok((V2, None)));
        let v1 = Some(r#"{"protocolVersion":1}"#);
        let repeat = agent.agent_receives(INITIALIZE, v1).unwrap_err();
        assert_eq!(repeat.code, codes::INVALID_REQUEST);
        assert_eq!(agent.current(), V2);

        let v2_only = Negotiation::new(ProtocolVersions::V2);
        let refused = v2_only.agent_receives(INITIALIZE, v1).unwrap_err();
        assert_eq!(refused.code, codes::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            refused.data,
            Some(serde_json::json!({"requested": 1, "supported": [2]}))
        );
        let invalid = v2_only
            .agent_receives(INITIALIZE, Some(r#"{"protocolVersion":"2"}"#))
            .unwrap_err();
        assert_eq!(invalid.code, codes::INVALID_PARAMS);
    }

    #[test]
    fn a_v2_only_connection_admits_nothing_before_initialize() {
        use crate::schema::v2::method::{SESSION_CANCEL, SESSION_NEW, SESSION_UPDATE};
        let agent = Negotiation::new(ProtocolVersions::V2);
        let refused = agent.agent_receives(SESSION_NEW, Some("{}")).unwrap_err();
        assert_eq!(refused.code, codes::INVALID_REQUEST);
        assert!(
            refused.message.contains(&format!("'{SESSION_NEW}'")),
            "{}",
            refused.message
        );
        assert!(agent.peer_sends(SESSION_CANCEL).is_err());
        let v2 = Some(r#"{"protocolVersion":2,"info":{"name":"c","version":"1"}}"#);
        assert_eq!(agent.agent_receives(INITIALIZE, v2), Ok((V2, None)));
        assert_eq!(agent.agent_receives(SESSION_NEW, Some("{}")), Ok((V2, None)));

        let client = Negotiation::new(ProtocolVersions::V2);
        assert!(client.peer_sends(SESSION_UPDATE).is_err());
        client.client_sends(INITIALIZE, Some(r#"{"protocolVersion":2}"#));
        assert_eq!(client.peer_sends(SESSION_UPDATE), Ok(V2));

        // A v1/v2 router admits nothing before initialize either; v1 alone does.
        let router = Negotiation::new(ProtocolVersions::V1_AND_V2);
        assert!(router.agent_receives(SESSION_NEW, Some("{}")).is_err());
        let v1_only = Negotiation::new(ProtocolVersions::V1);
        assert_eq!(v1_only.agent_receives(SESSION_NEW, Some("{}")), Ok((V1, None)));

        // A v2 initialize reaching v1 alone arrives in v1's shape.
        let v2_shaped = Some(r#"{"protocolVersion":2,"info":{"name":"c","version":"1"}}"#);
        let (version, rewritten) = v1_only.agent_receives(INITIALIZE, v2_shaped).unwrap();
        assert_eq!(version, V1);
        let rewritten: serde_json::Value = serde_json::from_str(&rewritten.unwrap()).unwrap();
        assert_eq!(rewritten["protocolVersion"], 1);
        assert_eq!(rewritten["clientInfo"]["name"], "c");
    }

    #[test]
    fn a_legacy_string_version_reaches_a_v1_agent_as_a_number() {
        let v1_only = Negotiation::new(ProtocolVersions::V1);
        let read = |params: &str| {
            let (version, rewritten) = v1_only.agent_receives(INITIALIZE, Some(params)).unwrap();
            assert_eq!(version, V1);
            serde_json::from_str::<serde_json::Value>(&rewritten.expect("rewritten")).unwrap()
        };
        let dated = read(r#"{"protocolVersion":"2024-11-05","clientCapabilities":{"terminal":true}}"#);
        assert_eq!(
            dated,
            serde_json::json!({"protocolVersion": 1, "clientCapabilities": {"terminal": true}})
        );
        assert_eq!(read(r#"{"protocolVersion":"1"}"#)["protocolVersion"], 1);
        // A string spelling v2, in v2's shape, is rewritten for v1 as a v2 number would be.
        let v2_shaped = read(r#"{"protocolVersion":"2","info":{"name":"c","version":"1"}}"#);
        assert_eq!(v2_shaped["protocolVersion"], 1);
        assert_eq!(v2_shaped["clientInfo"]["name"], "c");
        // Not a string: left to the schema check (-32602).
        assert_eq!(
            v1_only.agent_receives(INITIALIZE, Some(r#"{"protocolVersion":true}"#)),
            Ok((V1, None))
        );
        // A connection that speaks v2 refuses it, as the official routers do.
        let router = Negotiation::new(ProtocolVersions::V1_AND_V2);
        let refused = router
            .agent_receives(INITIALIZE, Some(r#"{"protocolVersion":"2024-11-05"}"#))
            .unwrap_err();
        assert_eq!(refused.code, codes::INVALID_PARAMS);
    }

    #[test]
    fn a_client_asking_for_v2_falls_back_to_what_the_agent_answers() {
        let client = Negotiation::new(ProtocolVersions::V1_AND_V2);
        let asked = client.client_sends(INITIALIZE, Some(r#"{"protocolVersion":2}"#));
        assert_eq!(asked, V2);
        assert!(client.client_reads_answer(INITIALIZE));
        client
            .initialize_answered(r#"{"protocolVersion":1,"agentCapabilities":{}}"#)
            .unwrap();
        assert_eq!(client.current(), V1);

        let v2_only = Negotiation::new(ProtocolVersions::V2);
        v2_only.client_sends(INITIALIZE, Some(r#"{"protocolVersion":2}"#));
        let refused = v2_only
            .initialize_answered(r#"{"protocolVersion":1}"#)
            .unwrap_err();
        assert_eq!(refused.code, codes::INVALID_REQUEST);
        assert_eq!(
            refused.data,
            Some(serde_json::json!({"expectedProtocolVersion": 2, "receivedProtocolVersion": 1}))
        );
    }
}
