//! Reading and writing the JSON text the library hands to C, without a JSON
//! library of C's own: a value at a JSON pointer (RFC 6901, e.g.
//! `/prompt/0/text`) of a document, and a string as a JSON literal.

use std::ffi::c_char;

use serde_json::Value;

use crate::ffi::acp_result::*;
use crate::ffi::{acp_result, guard, owned_string, str_arg, Failure};

/// The value at `pointer` in the document `json`.
unsafe fn value_at(json: *const c_char, pointer: *const c_char) -> Result<(Value, String), Failure> {
    let text = str_arg(json, "json")?;
    let pointer = str_arg(pointer, "pointer")?;
    let document: Value = serde_json::from_str(text)
        .map_err(|error| Failure::new(ACP_ERR_INVALID_JSON, format!("json: {error}")))?;
    match document.pointer(pointer) {
        Some(value) => Ok((value.clone(), pointer.to_owned())),
        None => Err(Failure::new(ACP_ERR_NOT_FOUND, format!("nothing at {pointer:?}"))),
    }
}

/// Read the value at `pointer` in `json` as `wanted` (`take` gives None for
/// another type) into `*out`.
unsafe fn get_as<T>(
    json: *const c_char,
    pointer: *const c_char,
    out: *mut T,
    wanted: &str,
    take: impl FnOnce(Value) -> Option<T>,
) -> acp_result {
    guard(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        let (value, pointer) = value_at(json, pointer)?;
        let shown = value.to_string();
        match take(value) {
            Some(taken) => {
                *out = taken;
                Ok(())
            }
            None => Err(Failure::new(
                ACP_ERR_NOT_FOUND,
                format!("{pointer:?} is {shown}, not {wanted}"),
            )),
        }
    })
}

/// The string at JSON pointer `pointer` (`""`: the whole document) in
/// `json`, unescaped, in `*out` (free with `acp_string_free`).
/// `ACP_ERR_NOT_FOUND` when there is no value there or it is not a string.
#[no_mangle]
pub unsafe extern "C" fn acp_json_get_string(
    json: *const c_char,
    pointer: *const c_char,
    out: *mut *mut c_char,
) -> acp_result {
    if !out.is_null() {
        *out = std::ptr::null_mut();
    }
    get_as(json, pointer, out, "a string", |value| match value {
        Value::String(text) => Some(owned_string(&text)),
        _ => None,
    })
}

/// The number at `pointer` in `json`, in `*out`. `ACP_ERR_NOT_FOUND` when
/// there is no value there or it is not a number.
#[no_mangle]
pub unsafe extern "C" fn acp_json_get_number(
    json: *const c_char,
    pointer: *const c_char,
    out: *mut f64,
) -> acp_result {
    get_as(json, pointer, out, "a number", |value| value.as_f64())
}

/// The boolean at `pointer` in `json`, in `*out`. `ACP_ERR_NOT_FOUND` when
/// there is no value there or it is not a boolean.
#[no_mangle]
pub unsafe extern "C" fn acp_json_get_bool(
    json: *const c_char,
    pointer: *const c_char,
    out: *mut bool,
) -> acp_result {
    get_as(json, pointer, out, "a boolean", |value| value.as_bool())
}

/// The value at `pointer` in `json` (an object, an array, anything) as JSON
/// text in `*out_json` (free with `acp_string_free`). `ACP_ERR_NOT_FOUND`
/// when there is no value there.
#[no_mangle]
pub unsafe extern "C" fn acp_json_get(
    json: *const c_char,
    pointer: *const c_char,
    out_json: *mut *mut c_char,
) -> acp_result {
    guard(|| {
        if out_json.is_null() {
            return Err(Failure::null("out_json"));
        }
        *out_json = std::ptr::null_mut();
        let (value, _) = value_at(json, pointer)?;
        *out_json = owned_string(&value.to_string());
        Ok(())
    })
}

/// `text` as a JSON string literal (quoted and escaped), in `*out_json`
/// (free with `acp_string_free`): to put text into the params C writes.
#[no_mangle]
pub unsafe extern "C" fn acp_json_quote(text: *const c_char, out_json: *mut *mut c_char) -> acp_result {
    guard(|| {
        if out_json.is_null() {
            return Err(Failure::null("out_json"));
        }
        let text = str_arg(text, "text")?;
        *out_json = owned_string(&Value::from(text).to_string());
        Ok(())
    })
}
