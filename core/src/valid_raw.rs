//! `RawValue`s made from text already known to be valid JSON, without
//! parsing it again: serde_json offers no unchecked constructor, and its
//! own (`to_raw_value`) makes one by the same cast. Only text this crate
//! wrote (`json_writer`) or read as JSON (`json_scan`) comes here.

use serde_json::value::RawValue;

/// `text` (valid JSON, no surrounding whitespace) as an owned `RawValue`.
pub(crate) fn owned(text: Box<str>) -> Box<RawValue> {
    // SAFETY: `RawValue` is `#[repr(transparent)]` over `str`, as serde_json
    // relies on itself; `casts_keep_the_text` checks it.
    unsafe { Box::from_raw(Box::into_raw(text) as *mut RawValue) }
}

/// `text` (valid JSON, no surrounding whitespace) as a borrowed `RawValue`.
pub(crate) fn borrowed(text: &str) -> &RawValue {
    // SAFETY: as `owned`.
    unsafe { &*(text as *const str as *const RawValue) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_keep_the_text() {
        for text in ["null", "\"a\\\"b\"", r#"{"a":[1,2.5,{"b":null}]}"#] {
            let checked = RawValue::from_string(text.to_owned()).unwrap();
            assert_eq!(owned(text.into()).get(), checked.get());
            assert_eq!(borrowed(text).get(), checked.get());
            assert_eq!(owned(text.into()).to_string(), checked.to_string());
        }
    }
}
