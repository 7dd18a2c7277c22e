//! What the engine's benchmark agent and client share.

/// The text of every streamed chunk (the same in every implementation).
pub const CHUNK_TEXT: &str = "chunk of agent text";
pub const SESSION_ID: &str = "bench-session";
/// The path of every benchmark file read and write.
pub const FILE_PATH: &str = "/bench/file.txt";
/// The size of a `large` scenario's file contents: 16 MiB.
pub const LARGE_SIZE: usize = 16 * 1024 * 1024;

/// `"<scenario> <n>"` from a prompt's first text block.
pub fn parse_scenario(text: &str) -> Option<(String, u64)> {
    let (scenario, n) = text.trim().split_once(' ')?;
    Some((scenario.to_owned(), n.parse().ok()?))
}

/// The `large` scenario's file contents: `LARGE_SIZE` ASCII bytes.
pub fn large_content() -> String {
    "x".repeat(LARGE_SIZE)
}
