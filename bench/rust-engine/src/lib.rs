//! What the engine's benchmark agent and client share: the scenario a
//! prompt names, and the ~150-byte update every implementation streams.

use serde::Serialize;

/// The text of every streamed chunk (the same in every implementation).
pub const CHUNK_TEXT: &str = "chunk of agent text";
pub const SESSION_ID: &str = "bench-session";

#[derive(Serialize)]
pub struct Text<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Update<'a> {
    pub session_update: &'static str,
    pub content: Text<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotification<'a> {
    pub session_id: &'a str,
    pub update: Update<'a>,
}

/// `"<scenario> <n>"` from a prompt's first text block.
pub fn parse_scenario(text: &str) -> Option<(String, u64)> {
    let (scenario, n) = text.trim().split_once(' ')?;
    Some((scenario.to_owned(), n.parse().ok()?))
}
