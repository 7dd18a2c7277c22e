//! Embeds the conformance cases (`cases/{agent,agent-v2,client}/*.json`) in the binary, so
//! that adding a case is adding a file.

// Cargo reads a build script's instructions from its stdout.
#![allow(clippy::disallowed_macros)]

use std::fmt::Write;
use std::path::Path;

fn main() {
    for side in ["agent", "agent-v2", "client"] {
        embed(side);
    }
}

/// `$OUT_DIR/{side}_cases.rs` (`-` as `_`): the (file name, text) of each case file.
fn embed(side: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases").join(side);
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("cli/cases/<side>")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut code = String::from("&[\n");
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    code.push(']');
    let name = side.replace('-', "_");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join(format!("{name}_cases.rs"));
    std::fs::write(out, code).unwrap();
}
