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
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn the_header_macros_are_the_crate_version() {
        let number = |text: &str| text.parse::<u32>().unwrap();
        assert_eq!(ACP_ENGINE_VERSION_MAJOR, number(env!("CARGO_PKG_VERSION_MAJOR")));
        assert_eq!(ACP_ENGINE_VERSION_MINOR, number(env!("CARGO_PKG_VERSION_MINOR")));
        assert_eq!(ACP_ENGINE_VERSION_PATCH, number(env!("CARGO_PKG_VERSION_PATCH")));
        // The header's ACP_ENGINE_VERSION is "MAJOR.MINOR.PATCH": no
        // pre-release or build suffix it would miss.
        assert_eq!(
            format!("{ACP_ENGINE_VERSION_MAJOR}.{ACP_ENGINE_VERSION_MINOR}.{ACP_ENGINE_VERSION_PATCH}"),
            env!("CARGO_PKG_VERSION")
        );
    }

    #[test]
    fn the_functions_say_what_the_macros_say() {
        let version = unsafe { CStr::from_ptr(acp_engine_version()) };
        assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(unsafe { CStr::from_ptr(crate::ffi::acp_version()) }, version);
        assert_eq!(acp_engine_abi_version(), ACP_ENGINE_ABI_VERSION);
    }

    #[test]
    fn the_soname_is_the_abi_version() {
        // build.rs gives the linker `-soname` from this file's text.
        assert_eq!(
            env!("ACP_ENGINE_SONAME"),
            format!("libacp_engine.so.{ACP_ENGINE_ABI_VERSION}")
        );
    }
}
