//! The library's version and ABI version: the header's `ACP_ENGINE_VERSION_*`
//! macros (cbindgen copies these consts, so they are literals; the tests
//! below hold them to the workspace's Cargo.toml; the header's trailer
//! makes the string `ACP_ENGINE_VERSION` of the three) and the functions
//! that say which library a program runs with.
//!
//! `ACP_ENGINE_ABI_VERSION` is the number in the shared library's soname
//! (`libacp_engine.so.1`; build.rs reads it from this file): raise it, and
//! record the new ABI with `make abi-baseline`, when a change breaks
//! programs built against the previous header (`make abi-check` says when).

use std::ffi::c_char;

/// The major version of the header (and of the crate it comes from).
pub const ACP_ENGINE_VERSION_MAJOR: u32 = 0;
/// The minor version of the header.
pub const ACP_ENGINE_VERSION_MINOR: u32 = 1;
/// The patch version of the header.
pub const ACP_ENGINE_VERSION_PATCH: u32 = 0;
/// The ABI version of the header: the N of the library's soname,
/// `libacp_engine.so.N`. A program may run with any library of the same
/// ABI version that is at least as new as its header.
pub const ACP_ENGINE_ABI_VERSION: u32 = 1;

/// The library's version, "MAJOR.MINOR.PATCH" (static; do not free).
/// Compare it with `ACP_ENGINE_VERSION`, the header's.
#[no_mangle]
pub extern "C" fn acp_engine_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library's ABI version (the N of `libacp_engine.so.N`). A program
/// built with `ACP_ENGINE_ABI_VERSION` N runs with a library whose ABI
/// version is N.
#[no_mangle]
pub extern "C" fn acp_engine_abi_version() -> u32 {
    ACP_ENGINE_ABI_VERSION
}

#[cfg(test)]
#[path = "../tests/unit/version.rs"]
mod tests;
