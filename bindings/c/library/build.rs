//! The shared library's soname, `libacp_engine.so.N`, with N the
//! `ACP_ENGINE_ABI_VERSION` of bindings/c/src/version.rs (one number for the header's
//! macro, `acp_engine_abi_version()` and the soname). Linux only.
//!
//! A program linked with `-L target/debug -lacp_engine` records the soname
//! and looks for `libacp_engine.so.N` when it starts: the build leaves
//! `target/<profile>/libacp_engine.so.N -> libacp_engine.so` next to the
//! library, so that programs built against the build tree (the test suites,
//! the benchmarks) run as before. `make install` installs the library as
//! `libacp_engine.so.N`, with `libacp_engine.so` a link to it.

use std::path::{Path, PathBuf};
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-changed=../src/version.rs");
    let source = fs::read_to_string("../src/version.rs").expect("read ../src/version.rs");
    let abi = source
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("pub const ACP_ENGINE_ABI_VERSION: u32 = ")?
                .strip_suffix(';')?
                .parse::<u32>()
                .ok()
        })
        .expect("bindings/c/src/version.rs defines `pub const ACP_ENGINE_ABI_VERSION: u32 = N;`");
    let soname = format!("libacp_engine.so.{abi}");
    println!("cargo:rustc-env=ACP_ENGINE_SONAME={soname}");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    if let Some(profile) = out.ancestors().nth(3) {
        link_soname(&profile.join(&soname));
    }
}

/// `link` -> `libacp_engine.so` (the library cargo writes next to it).
fn link_soname(link: &Path) {
    let target = Path::new("libacp_engine.so");
    if fs::read_link(link).is_ok_and(|existing| existing == target) {
        return;
    }
    let _ = fs::remove_file(link);
    if let Err(error) = std::os::unix::fs::symlink(target, link) {
        println!(
            "cargo:warning=cannot link {} to libacp_engine.so: {error}",
            link.display()
        );
    }
}
