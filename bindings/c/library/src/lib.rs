//! The C library: every export of the C ABI (`acp-engine-ffi`, whose
//! `#[no_mangle]` functions a cdylib and a staticlib keep), under the name
//! and soname C programs link (`-lacp_engine`, build.rs).

pub use acp_engine_ffi::*;

#[cfg(test)]
mod tests {
    #[test]
    fn the_soname_is_the_abi_version() {
        // build.rs gives the linker `-soname` from the text of version.rs.
        assert_eq!(
            env!("ACP_ENGINE_SONAME"),
            format!("libacp_engine.so.{}", acp_engine_ffi::ACP_ENGINE_ABI_VERSION)
        );
    }
}
