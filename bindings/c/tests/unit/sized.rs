//! A program built against an older header passes a smaller struct than
//! the library's: simulated with structs that grew by appended fields
//! (what a later version of `acp_options` / `acp_handlers` will be),
//! read from a caller's `acp_options` / `acp_handlers` of today that sit
//! in front of bytes that are not the caller's struct.
use super::*;
use crate::ffi::acp_result;
use crate::handlers::acp_handlers;
use crate::options::{acp_options, acp_side};
use std::ffi::{c_char, c_void};

/// `acp_options` with fields appended (a later version), without
/// padding between them, as the rules ask.
#[repr(C)]
#[derive(Clone, Copy)]
struct GrownOptions {
    v1: acp_options,
    added_ms: u32,
    _reserved: u32,
    added_name: *const c_char,
}

impl SizedStruct for GrownOptions {
    const NAME: &'static str = "acp_options";
    const FIRST_SIZE: usize = acp_options::FIRST_SIZE;
    fn defaults() -> Self {
        Self {
            v1: acp_options::default(),
            added_ms: 0,
            _reserved: 0,
            added_name: ptr::null(),
        }
    }
}

/// `acp_handlers` with a callback appended.
#[repr(C)]
#[derive(Clone, Copy)]
struct GrownHandlers {
    v1: acp_handlers,
    on_added: Option<unsafe extern "C" fn(*mut c_void)>,
}

impl SizedStruct for GrownHandlers {
    const NAME: &'static str = "acp_handlers";
    const FIRST_SIZE: usize = acp_handlers::FIRST_SIZE;
    fn defaults() -> Self {
        Self {
            v1: acp_handlers::defaults(),
            on_added: None,
        }
    }
}

/// Room for a caller's struct and what follows it in memory.
#[repr(C, align(8))]
struct Memory([u8; 256]);

/// `value` at the start of memory whose other bytes are `fill`.
fn memory_with<T: Copy>(value: T, fill: u8) -> Memory {
    let mut memory = Memory([fill; 256]);
    unsafe { ptr::write(memory.0.as_mut_ptr().cast::<T>(), value) };
    memory
}

fn old_options() -> acp_options {
    acp_options {
        side: acp_side::ACP_SIDE_AGENT,
        max_message_size: 1234,
        unstable: true,
        ..acp_options::default()
    }
}

#[test]
fn an_old_programs_options_read_with_the_appended_fields_defaulted() {
    // struct_size: the old program's sizeof; the bytes after its struct
    // are not zero (its stack), and must not be read.
    let memory = memory_with(old_options(), 0xa5);
    let got = unsafe { read(memory.0.as_ptr().cast::<GrownOptions>(), "options") }
        .unwrap_or_else(|f| panic!("{}", f.message))
        .unwrap();
    assert_eq!(got.v1.side, acp_side::ACP_SIDE_AGENT);
    assert_eq!(got.v1.max_message_size, 1234);
    assert!(got.v1.unstable);
    assert_eq!(got.added_ms, 0);
    assert!(got.added_name.is_null());
}

#[test]
fn an_old_programs_handlers_read_with_the_appended_callbacks_null() {
    unsafe extern "C" fn on_close(_: *mut c_void, _: *const crate::acp_connection, _: *const c_char) {}
    let handlers = acp_handlers {
        on_close: Some(on_close),
        ..acp_handlers::defaults()
    };
    let memory = memory_with(handlers, 0x5a);
    let got = unsafe { read(memory.0.as_ptr().cast::<GrownHandlers>(), "handlers") }
        .unwrap_or_else(|f| panic!("{}", f.message))
        .unwrap();
    assert!(got.v1.on_close.is_some());
    assert!(got.v1.on_request.is_none() && got.v1.user_data.is_null());
    assert!(got.on_added.is_none());
}

#[test]
fn a_newer_programs_struct_is_read_when_its_unknown_fields_are_zero() {
    let mut grown = GrownOptions::defaults();
    grown.v1 = old_options();
    grown.v1.struct_size = size_of::<GrownOptions>();
    let memory = memory_with(grown, 0xff);
    let got = unsafe { read(memory.0.as_ptr().cast::<acp_options>(), "options") }
        .unwrap_or_else(|f| panic!("{}", f.message))
        .unwrap();
    assert_eq!(got.max_message_size, 1234);

    grown.added_ms = 10;
    let memory = memory_with(grown, 0);
    let failure = unsafe { read(memory.0.as_ptr().cast::<acp_options>(), "options") }
        .err()
        .unwrap();
    assert_eq!(failure.code, acp_result::ACP_ERR_INVALID_ARGUMENT);
    assert!(
        failure.message.contains("newer acp_engine.h"),
        "{}",
        failure.message
    );
}

#[test]
fn sizes_that_are_not_a_version_of_the_struct_are_refused() {
    for (size, says) in [
        (0, "set it to sizeof(acp_options) (ACP_OPTIONS_INIT)"),
        (8, "no acp_options is smaller than"),
        (acp_options::FIRST_SIZE - 8, "must be rebuilt"),
        (MAX_STRUCT_SIZE + 1, "not the size of an acp_options"),
        (0x7f00_dead_beef, "not the size of an acp_options"),
    ] {
        let options = acp_options {
            struct_size: size,
            ..acp_options::default()
        };
        let memory = memory_with(options, 0);
        let failure = unsafe { read(memory.0.as_ptr().cast::<acp_options>(), "options") }
            .err()
            .unwrap();
        assert_eq!(failure.code, acp_result::ACP_ERR_INVALID_ARGUMENT);
        assert!(failure
            .message
            .starts_with(&format!("options->struct_size is {size}: ")));
        assert!(failure.message.contains(says), "{}", failure.message);
    }
    let null = unsafe { read(ptr::null::<acp_handlers>(), "handlers") };
    assert!(matches!(null, Ok(None)));
}

#[test]
fn an_unknown_side_is_refused_before_it_is_an_acp_side() {
    let mut memory = memory_with(acp_options::default(), 0);
    let side = std::mem::offset_of!(acp_options, side);
    memory.0[side..side + 4].copy_from_slice(&7i32.to_ne_bytes());
    let failure = unsafe { read(memory.0.as_ptr().cast::<acp_options>(), "options") }
        .err()
        .unwrap();
    assert_eq!(failure.message, "options->side is 7, not an acp_side");
}

#[test]
#[cfg(target_pointer_width = "64")]
fn the_first_versions_stay_the_first_versions() {
    // The sizes of the structs of ACP_ENGINE_ABI_VERSION 1 (0.1.0): a
    // program built against that header passes them, whatever is
    // appended later. FIRST_SIZE never changes within an ABI version.
    assert_eq!(acp_options::FIRST_SIZE, 64);
    assert_eq!(acp_handlers::FIRST_SIZE, 56);
    assert!(size_of::<acp_options>() >= 64 && size_of::<acp_handlers>() >= 56);
}
