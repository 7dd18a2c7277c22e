//! The schema check (validation without building the value, `core/src/schema/check.rs`)
//! against the full parse: for any text as the params of any method, both must accept
//! or both refuse. Params that parse are also written by the engine's JSON writer and by
//! serde_json, which must write the same bytes.
//!
//! Input layout: a method name, a newline, the params' text. Inputs whose method either
//! side does not receive are skipped (the seeds name every method).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let Some((method, text)) = input.split_once('\n') else {
        return;
    };
    if let Some(agrees) = acp_engine::fuzzing::check_agrees_with_parse(method, text) {
        assert!(agrees, "check and parse disagree on {method} params {text}");
    }
});
