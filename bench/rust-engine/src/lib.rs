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

/// The runtime a bench program runs on: tokio's current-thread one, or, with
/// `--runtime multi-thread` among `args` (the program's own, before any `--`),
/// the multi-thread one that `#[tokio::main]` makes, as the README's examples do.
pub fn runtime(args: &[String]) -> tokio::runtime::Runtime {
    let own = args.split(|arg| arg == "--").next().unwrap_or_default();
    let multi = own
        .windows(2)
        .any(|pair| pair[0] == "--runtime" && pair[1] == "multi-thread");
    let mut builder = if multi {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().expect("start the runtime")
}
