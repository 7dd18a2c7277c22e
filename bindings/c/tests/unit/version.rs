// Unit tests of src/version.rs (C conversions), kept beside the C tests.
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
