//! The engine's JSON writer (`core/src/json_writer.rs`) against serde_json:
//! any input serde_json reads as a value is written by both, and the bytes
//! must be the same (strings with every escape, numbers, nesting).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(agrees) = acp_engine::fuzzing::writer_agrees_with_serde_json(data) {
        assert!(
            agrees,
            "json_writer and serde_json write {:?} differently",
            String::from_utf8_lossy(data)
        );
    }
});
