//! Typed values as compact JSON, byte for byte what `serde_json::to_writer`
//! writes, for the frames and results the engine serializes itself (a Rust
//! agent's `fs/write_text_file` params, a Rust client's file content).
//!
//! serde_json checks a string for escapes a byte at a time and grows its
//! buffer by doubling: a 16 MiB string cost about 18 ms, and the line it
//! ended in took a fresh 32 MiB mapping (above the allocator's reuse limit,
//! so every page faulted in again on every message). Here strings go
//! through `json_string` (a plain run at a time) and a long one reserves
//! its room once, with space for the brackets that close it.
//!
//! What this writer does not know (a map key that is not a string, a
//! serde_json private type other than `RawValue`, a custom error) it
//! declines, and the value is written again by serde_json: the same bytes,
//! or the same error.

use serde::ser::{self, Serialize};
use serde_json::value::RawValue;

use crate::json_string;

/// Append `value` as compact JSON, as `serde_json::to_writer` would.
pub(crate) fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    let start = out.len();
    match value.serialize(&mut Writer { out: &mut *out }) {
        Ok(()) => Ok(()),
        Err(Declined) => {
            out.truncate(start);
            serde_json::to_writer(&mut *out, value)
        }
    }
}

/// `value` as raw JSON text, as `serde_json::value::to_raw_value` makes it.
pub(crate) fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    let mut out = Vec::new();
    write(&mut out, value)?;
    // SAFETY: both writers produce UTF-8 (strings are copied from `str`s
    // whole or escaped as ASCII; everything else is ASCII).
    let text = unsafe { String::from_utf8_unchecked(out) };
    Ok(crate::valid_raw::owned(text.into_boxed_str()))
}

/// Whether `write` and `to_raw` give `value` the bytes serde_json gives it
/// (the tests' and the fuzz targets' comparison).
pub(crate) fn writes_as_serde_json<T: Serialize + ?Sized>(value: &T) -> bool {
    let expected = serde_json::to_vec(value).expect("the value serializes");
    let mut written = Vec::new();
    write(&mut written, value).expect("the value serializes");
    let raw = to_raw(value).expect("the value serializes");
    written == expected && raw.get().as_bytes() == expected
}

/// Room to reserve for a long string: its quotes and the brackets that
/// close around it, so the line is not regrown (doubled) for its last few
/// bytes; and an eighth for escapes. (Reserving exactly was slower: with
/// glibc's adaptive limits, a buffer of exactly the size just freed comes
/// from the heap, whose top is then trimmed and grown again every message.)
fn room_for_string(len: usize) -> usize {
    len + len / 8 + 64
}

/// Why this writer handed a value back to serde_json.
#[derive(Debug)]
struct Declined;

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("declined: serde_json writes this value")
    }
}

impl std::error::Error for Declined {}

impl ser::Error for Declined {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Declined
    }
}

/// serde_json's token for a `RawValue` in a serializer's eyes.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

struct Writer<'o> {
    out: &'o mut Vec<u8>,
}

impl<'o> Writer<'o> {
    fn string(&mut self, text: &str) {
        if text.len() > 4096 {
            self.out.reserve(room_for_string(text.len()));
        }
        json_string::write_string(self.out, text);
    }

    fn integer(&mut self, value: impl itoa::Integer) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    }

    fn compound(&mut self, open: u8, close: &'static [u8]) -> Compound<'_, 'o> {
        self.out.push(open);
        Compound {
            writer: self,
            first: true,
            close,
        }
    }

    /// `{"variant":` around a variant's content.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        self.string(variant);
        self.out.push(b':');
    }
}

impl<'a, 'o> ser::Serializer for &'a mut Writer<'o> {
    type Ok = ();
    type Error = Declined;
    type SerializeSeq = Compound<'a, 'o>;
    type SerializeTuple = Compound<'a, 'o>;
    type SerializeTupleStruct = Compound<'a, 'o>;
    type SerializeTupleVariant = Compound<'a, 'o>;
    type SerializeMap = Compound<'a, 'o>;
    type SerializeStruct = Compound<'a, 'o>;
    type SerializeStructVariant = Compound<'a, 'o>;

    fn serialize_bool(self, value: bool) -> Result<(), Declined> {
        self.out.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i8(self, value: i8) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_i16(self, value: i16) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_i32(self, value: i32) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_i64(self, value: i64) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_i128(self, value: i128) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_u8(self, value: u8) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_u16(self, value: u16) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_u32(self, value: u32) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_u64(self, value: u64) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    fn serialize_u128(self, value: u128) -> Result<(), Declined> {
        self.integer(value);
        Ok(())
    }

    // Floats: serde_json's own, which writes `null` for NaN and infinities.
    fn serialize_f32(self, value: f32) -> Result<(), Declined> {
        serde_json::to_writer(&mut *self.out, &value).map_err(|_| Declined)
    }

    fn serialize_f64(self, value: f64) -> Result<(), Declined> {
        serde_json::to_writer(&mut *self.out, &value).map_err(|_| Declined)
    }

    fn serialize_char(self, value: char) -> Result<(), Declined> {
        self.string(value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, value: &str) -> Result<(), Declined> {
        self.string(value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), Declined> {
        let mut seq = self.compound(b'[', b"]");
        for byte in value {
            ser::SerializeSeq::serialize_element(&mut seq, byte)?;
        }
        ser::SerializeSeq::end(seq)
    }

    fn serialize_none(self) -> Result<(), Declined> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Declined> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Declined> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Declined> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Declined> {
        self.string(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Declined> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Declined> {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a, 'o>, Declined> {
        Ok(self.compound(b'[', b"]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'o>, Declined> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, 'o>, Declined> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'o>, Declined> {
        self.open_variant(variant);
        Ok(self.compound(b'[', b"]}"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a, 'o>, Declined> {
        Ok(self.compound(b'{', b"}"))
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'a, 'o>, Declined> {
        match name {
            // A RawValue is a struct of this name: its one field is written
            // as it is (`SerializeStruct::serialize_field`), no braces.
            RAW_VALUE_TOKEN => Ok(Compound {
                writer: self,
                first: true,
                close: b"",
            }),
            _ if name.starts_with("$serde_json::private::") => Err(Declined),
            _ => Ok(self.compound(b'{', b"}")),
        }
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'o>, Declined> {
        self.open_variant(variant);
        Ok(self.compound(b'{', b"}}"))
    }
}

/// An array or an object being written (`close` ends it, with the brace
/// of the variant around it, if any; empty for a RawValue).
struct Compound<'a, 'o> {
    writer: &'a mut Writer<'o>,
    first: bool,
    close: &'static [u8],
}

impl Compound<'_, '_> {
    fn separator(&mut self) {
        if !std::mem::replace(&mut self.first, false) {
            self.writer.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Declined> {
        self.separator();
        value.serialize(&mut *self.writer)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Declined> {
        self.separator();
        self.writer.string(key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    fn finish(self) -> Result<(), Declined> {
        self.writer.out.extend_from_slice(self.close);
        Ok(())
    }
}

/// The four sequence traits: each element after a comma, then the close.
macro_rules! sequence {
    ($($trait:ident :: $method:ident),*) => {
        $(
            impl ser::$trait for Compound<'_, '_> {
                type Ok = ();
                type Error = Declined;

                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Declined> {
                    self.element(value)
                }

                fn end(self) -> Result<(), Declined> {
                    self.finish()
                }
            }
        )*
    };
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Declined;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Declined> {
        self.separator();
        key.serialize(StringKey(&mut *self.writer))?;
        self.writer.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Declined> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<(), Declined> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Declined;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Declined> {
        if self.close.is_empty() {
            // A RawValue's text, as it is.
            return value.serialize(RawText(&mut *self.writer));
        }
        self.field(key, value)
    }

    fn end(self) -> Result<(), Declined> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Declined;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Declined> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), Declined> {
        self.finish()
    }
}

/// The serializer of a serializer that takes one kind of value (`$take`)
/// and declines every other.
macro_rules! only {
    ($writer:ident, $($take:tt)*) => {
        impl ser::Serializer for $writer<'_, '_> {
            type Ok = ();
            type Error = Declined;
            type SerializeSeq = ser::Impossible<(), Declined>;
            type SerializeTuple = ser::Impossible<(), Declined>;
            type SerializeTupleStruct = ser::Impossible<(), Declined>;
            type SerializeTupleVariant = ser::Impossible<(), Declined>;
            type SerializeMap = ser::Impossible<(), Declined>;
            type SerializeStruct = ser::Impossible<(), Declined>;
            type SerializeStructVariant = ser::Impossible<(), Declined>;

            $($take)*

            fn serialize_bool(self, _: bool) -> Result<(), Declined> { Err(Declined) }
            fn serialize_i8(self, _: i8) -> Result<(), Declined> { Err(Declined) }
            fn serialize_i16(self, _: i16) -> Result<(), Declined> { Err(Declined) }
            fn serialize_i32(self, _: i32) -> Result<(), Declined> { Err(Declined) }
            fn serialize_i64(self, _: i64) -> Result<(), Declined> { Err(Declined) }
            fn serialize_u8(self, _: u8) -> Result<(), Declined> { Err(Declined) }
            fn serialize_u16(self, _: u16) -> Result<(), Declined> { Err(Declined) }
            fn serialize_u32(self, _: u32) -> Result<(), Declined> { Err(Declined) }
            fn serialize_u64(self, _: u64) -> Result<(), Declined> { Err(Declined) }
            fn serialize_f32(self, _: f32) -> Result<(), Declined> { Err(Declined) }
            fn serialize_f64(self, _: f64) -> Result<(), Declined> { Err(Declined) }
            fn serialize_char(self, _: char) -> Result<(), Declined> { Err(Declined) }
            fn serialize_bytes(self, _: &[u8]) -> Result<(), Declined> { Err(Declined) }
            fn serialize_none(self) -> Result<(), Declined> { Err(Declined) }
            fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Declined> { Err(Declined) }
            fn serialize_unit(self) -> Result<(), Declined> { Err(Declined) }
            fn serialize_unit_struct(self, _: &'static str) -> Result<(), Declined> { Err(Declined) }
            fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Declined> {
                Err(Declined)
            }
            fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Result<(), Declined> {
                Err(Declined)
            }
            fn serialize_newtype_variant<T: Serialize + ?Sized>(
                self, _: &'static str, _: u32, _: &'static str, _: &T,
            ) -> Result<(), Declined> {
                Err(Declined)
            }
            fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Declined> { Err(Declined) }
            fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Declined> { Err(Declined) }
            fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Declined> {
                Err(Declined)
            }
            fn serialize_tuple_variant(
                self, _: &'static str, _: u32, _: &'static str, _: usize,
            ) -> Result<Self::SerializeTupleVariant, Declined> {
                Err(Declined)
            }
            fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Declined> { Err(Declined) }
            fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Declined> {
                Err(Declined)
            }
            fn serialize_struct_variant(
                self, _: &'static str, _: u32, _: &'static str, _: usize,
            ) -> Result<Self::SerializeStructVariant, Declined> {
                Err(Declined)
            }
        }
    };
}

/// A map key: a string. serde_json writes other keys (numbers, booleans)
/// quoted; those maps are left to it.
struct StringKey<'a, 'o>(&'a mut Writer<'o>);

only!(
    StringKey,
    fn serialize_str(self, value: &str) -> Result<(), Declined> {
        self.0.string(value);
        Ok(())
    }
);

/// A RawValue's text, written as it is.
struct RawText<'a, 'o>(&'a mut Writer<'o>);

only!(
    RawText,
    fn serialize_str(self, value: &str) -> Result<(), Declined> {
        self.0.out.extend_from_slice(value.as_bytes());
        Ok(())
    }
);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::{json, Value};

    use super::*;
    use crate::schema;

    fn ours<T: Serialize + ?Sized>(value: &T) -> String {
        let mut out = Vec::new();
        write(&mut out, value).expect("serializes");
        String::from_utf8(out).expect("UTF-8")
    }

    fn same<T: Serialize + ?Sized>(value: &T) {
        assert_eq!(ours(value), serde_json::to_string(value).unwrap());
    }

    #[test]
    fn json_values_are_written_as_serde_json_writes_them() {
        same(&json!(null));
        same(&json!({
            "plain": "words", "escaped": "a \"b\"\n\\ \u{1} naïve 🦀", "empty": "", "list": [],
            "object": {}, "numbers": [0, -1, 1.5, 1e300, -2.5e-7, u64::MAX, i64::MIN, 0.1],
            "nested": [[{"a": [true, false, null]}]],
        }));
        same(&json!("x".repeat(10_000)));
        same(&format!("{}\"{}", "y".repeat(5000), "\n".repeat(5000)));
    }

    #[derive(Serialize)]
    enum Shapes {
        Unit,
        Newtype(u8),
        Tuple(u8, String),
        Struct { a: Option<u8>, b: Vec<char> },
    }

    #[derive(Serialize)]
    struct Everything {
        unit: (),
        tuple: (i8, i16, i32, i64, i128, u128),
        floats: (f32, f64, f64, f64),
        bytes: serde_bytes_like::Bytes,
        shapes: Vec<Shapes>,
        raw: Box<RawValue>,
        map: BTreeMap<String, Value>,
    }

    mod serde_bytes_like {
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[test]
    fn every_serde_shape_is_written_as_serde_json_writes_it() {
        same(&Everything {
            unit: (),
            tuple: (-8, -16, -32, -64, i128::MIN, u128::MAX),
            floats: (1.25, f64::NAN, f64::INFINITY, -0.0),
            bytes: serde_bytes_like::Bytes(vec![0, 1, 255]),
            shapes: vec![
                Shapes::Unit,
                Shapes::Newtype(7),
                Shapes::Tuple(1, "t".into()),
                Shapes::Struct {
                    a: None,
                    b: vec!['é', '"'],
                },
            ],
            raw: RawValue::from_string("{ \"kept\" : [1, 2] }".into()).unwrap(),
            map: [("k".to_owned(), json!(1))].into(),
        });
    }

    #[test]
    fn what_it_does_not_write_serde_json_does() {
        // Keys that are not strings: serde_json quotes them.
        let numbered: BTreeMap<u32, &str> = [(1, "one"), (2, "two")].into();
        same(&numbered);
        // A failing value fails with serde_json's error.
        let keyed_by_list: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        let mut out = b"kept".to_vec();
        let error = write(&mut out, &keyed_by_list).unwrap_err();
        assert_eq!(
            error.to_string(),
            serde_json::to_vec(&keyed_by_list).unwrap_err().to_string()
        );
    }

    #[test]
    fn protocol_messages_are_written_as_serde_json_writes_them() {
        let request: schema::WriteTextFileRequest = serde_json::from_value(json!({
            "sessionId": "s", "path": "/tmp/a.txt", "content": format!("{}\n\"end\"", "line\n".repeat(2000)),
            "_meta": {"trace": [1, {"x": null}]},
        }))
        .unwrap();
        same(&request);
        let update: schema::SessionNotification = serde_json::from_value(json!({
            "sessionId": "s",
            "update": {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "edit",
                       "status": "pending", "content": [{"type": "diff", "path": "/a", "oldText": "x", "newText": "y"}],
                       "locations": [{"path": "/a", "line": 3}]},
        }))
        .unwrap();
        same(&update);
    }

    #[test]
    fn a_long_string_leaves_room_for_the_line_around_it() {
        let content = "x".repeat(1 << 20);
        let mut out = Vec::new();
        write(&mut out, &json!({ "content": content })).unwrap();
        let capacity = out.capacity();
        out.extend_from_slice(b"}\n");
        assert_eq!(out.capacity(), capacity, "closing the line did not regrow it");
        assert!(
            capacity < 2 * content.len(),
            "reserved {capacity} for {} bytes",
            content.len()
        );
    }

    #[test]
    fn to_raw_writes_what_serde_json_writes() {
        let raw = to_raw(&json!({"a": [1, "b"]})).unwrap();
        assert_eq!(raw.get(), r#"{"a":[1,"b"]}"#);
        assert_eq!(
            raw.get(),
            serde_json::value::to_raw_value(&json!({"a": [1, "b"]}))
                .unwrap()
                .get()
        );
    }
}
