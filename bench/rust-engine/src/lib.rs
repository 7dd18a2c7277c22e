//! What the engine's benchmark agent and client share.

/// The text of every streamed chunk (the same in every implementation).
pub const CHUNK_TEXT: &str = "chunk of agent text";
pub const SESSION_ID: &str = "bench-session";

/// `"<scenario> <n>"` from a prompt's first text block.
pub fn parse_scenario(text: &str) -> Option<(String, u64)> {
    let (scenario, n) = text.trim().split_once(' ')?;
    Some((scenario.to_owned(), n.parse().ok()?))
}
