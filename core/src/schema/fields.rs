//! `Fields`: a JSON object buffered as its properties' raw JSON text, the first step of
//! every union's deserialization (find the tag or the required properties, then read the
//! chosen variant from the buffered properties).
//!
//! Why not a `serde_json::Map`: building a `Value` tree allocates every nested string and
//! object, and then the variant is read from that tree again. Raw text borrowed from the
//! input costs nothing per property, and the variant's fields read it with serde_json's
//! fast string deserializer (docs/performance.md has the measurements).
//!
//! Only a serde_json deserializer (from text or from a `Value`) can fill `Fields`: the
//! protocol types are JSON types. Reading from text borrows: keys and raw values are
//! slices of the input (no allocation per property); other inputs give owned copies.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Value};

/// serde_json's (stable, if unexported) name for "hand me this value's raw text": with
/// it, a deserializer reading text passes a borrowed slice of the input, any other an
/// owned copy. `the_raw_text_of_a_property_is_borrowed_from_text_input` below pins it.
pub(crate) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A JSON object's properties, in order, each as its raw JSON text.
#[derive(Debug, Default)]
pub(crate) struct Fields<'de>(Vec<(Cow<'de, str>, Cow<'de, str>)>);

impl<'de> Fields<'de> {
    pub(crate) fn new() -> Self {
        Self(Vec::new())
    }

    /// Removes property `key` and returns its value (a tag: small).
    pub(crate) fn remove(&mut self, key: &str) -> Option<Value> {
        let (_, raw) = self.remove_entry(key)?;
        // The common case, a plain string, without a parse.
        if let Some(text) = plain_string(&raw) {
            return Some(Value::String(text.to_owned()));
        }
        // Raw text from serde_json is valid JSON: this cannot fail.
        serde_json::from_str(&raw).ok()
    }

    /// Buffers the rest of an object.
    pub(crate) fn fill<A: MapAccess<'de>>(&mut self, access: &mut A) -> Result<(), A::Error> {
        while let Some(Text(key)) = access.next_key()? {
            let RawText(raw) = access.next_value()?;
            self.push(key, raw);
        }
        Ok(())
    }

    /// Removes property `key`, keeping its raw text.
    pub(crate) fn remove_entry(&mut self, key: &str) -> Option<(Cow<'de, str>, Cow<'de, str>)> {
        let index = self.0.iter().position(|(name, _)| name == key)?;
        Some(self.0.remove(index))
    }

    pub(crate) fn push(&mut self, key: Cow<'de, str>, raw: Cow<'de, str>) {
        self.0.push((key, raw));
    }

    /// Puts `value` (a removed tag) back.
    pub(crate) fn insert_value(&mut self, key: &str, value: &Value) {
        self.0
            .push((Cow::Owned(key.to_owned()), Cow::Owned(value.to_string())));
    }

    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.0.iter().any(|(name, _)| name == key)
    }

    /// Property `key`'s raw JSON text.
    pub(crate) fn raw(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, raw)| raw.as_ref())
    }

    /// Reads `T` from the buffered properties.
    pub(crate) fn read<T: de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(FieldsDeserializer { fields: &self.0 })
    }
}

/// For the catch-all variants, which keep an unknown object as a `Map`.
impl From<Fields<'_>> for Map<String, Value> {
    fn from(fields: Fields<'_>) -> Self {
        fields
            .0
            .into_iter()
            .filter_map(|(key, raw)| Some((key.into_owned(), serde_json::from_str(&raw).ok()?)))
            .collect()
    }
}

impl<'de> de::Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;

        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Fields(Vec::with_capacity(access.size_hint().unwrap_or(4).min(64)));
                fields.fill(&mut access)?;
                Ok(fields)
            }
        }

        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// The text of a raw JSON string without escapes (`"abc"` -> `abc`); None for
/// anything else.
pub(crate) fn plain_string(raw: &str) -> Option<&str> {
    let text = raw.strip_prefix('"')?.strip_suffix('"')?;
    (!text.contains(['\\', '"'])).then_some(text)
}

/// A string (a property name, a raw value's text), borrowed from the input when the
/// deserializer can lend it.
pub(crate) struct Text<'de>(pub(crate) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(text)))
    }
}

/// A value's raw JSON text (serde_json's raw-value protocol, see `RAW_VALUE_TOKEN`).
pub(crate) struct RawText<'de>(pub(crate) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for RawText<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RawVisitor;

        impl<'de> Visitor<'de> for RawVisitor {
            type Value = RawText<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("any valid JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<RawText<'de>, A::Error> {
                if access.next_key::<IgnoredAny>()?.is_none() {
                    return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
                }
                let Text(text) = access.next_value()?;
                Ok(RawText(text))
            }
        }

        deserializer.deserialize_newtype_struct(RAW_VALUE_TOKEN, RawVisitor)
    }
}

/// Reads a type from buffered properties as if from the original object.
/// (`'de`: the borrow of the buffer, which the values read may borrow from; `'src`: the
/// buffer's own borrow of the input.)
struct FieldsDeserializer<'de, 'src> {
    fields: &'de [(Cow<'src, str>, Cow<'src, str>)],
}

impl<'de> Deserializer<'de> for FieldsDeserializer<'de, '_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_map(FieldsAccess {
            fields: self.fields.iter(),
            value: None,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct FieldsAccess<'de, 'src> {
    fields: std::slice::Iter<'de, (Cow<'src, str>, Cow<'src, str>)>,
    value: Option<&'de str>,
}

impl<'de> MapAccess<'de> for FieldsAccess<'de, '_> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, raw)) = self.fields.next() else {
            return Ok(None);
        };
        self.value = Some(raw);
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let raw = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value asked for before its key"))?;
        seed.deserialize(&mut serde_json::Deserializer::from_str(raw))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ContentBlock, SessionNotification, SessionUpdate};

    const UPDATE: &str = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#;

    #[test]
    fn a_tagged_union_reads_from_text_and_from_a_value() {
        let from_text: SessionNotification = serde_json::from_str(UPDATE).unwrap();
        let value: Value = serde_json::from_str(UPDATE).unwrap();
        let from_value: SessionNotification = serde_json::from_value(value).unwrap();
        assert_eq!(from_text, from_value);
        let SessionUpdate::AgentMessageChunk(chunk) = &from_text.update else {
            panic!("wrong variant: {:?}", from_text.update);
        };
        assert!(matches!(&chunk.content, ContentBlock::Text(text) if text.text == "hi"));
        assert_eq!(serde_json::to_string(&from_text).unwrap(), UPDATE);
    }

    #[test]
    fn the_raw_text_of_a_property_is_borrowed_from_text_input() {
        let text = r#"{"a":{"b":[1, 2]},"c\u0041":"x"}"#;
        let fields: Fields = serde_json::from_str(text).unwrap();
        assert!(matches!(
            &fields.0[0],
            (Cow::Borrowed("a"), Cow::Borrowed(r#"{"b":[1, 2]}"#))
        ));
        // An escaped key is decoded, so owned.
        assert!(matches!(&fields.0[1], (Cow::Owned(key), Cow::Borrowed(r#""x""#)) if key == "cA"));
        let value: Value = serde_json::from_str(text).unwrap();
        let owned = <Fields as de::Deserialize>::deserialize(value).unwrap();
        assert!(
            matches!(&owned.0[0], (Cow::Owned(key), Cow::Owned(raw)) if key == "a" && raw == r#"{"b":[1,2]}"#)
        );
    }

    #[test]
    fn unknown_tags_keep_their_object() {
        let text = r#"{"sessionUpdate":"from_the_future","n":[1,{"a":null}]}"#;
        let update: SessionUpdate = serde_json::from_str(text).unwrap();
        assert!(matches!(update, SessionUpdate::Unknown(_)));
        let back: Value = serde_json::to_value(&update).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn errors_name_the_problem() {
        let missing = serde_json::from_str::<SessionUpdate>(r#"{"content":{}}"#).unwrap_err();
        assert!(missing.to_string().contains("sessionUpdate"), "{missing}");
        let wrong = serde_json::from_str::<SessionUpdate>("[1]").unwrap_err();
        assert!(wrong.to_string().contains("expected a map"), "{wrong}");
        let bad_field = serde_json::from_str::<SessionUpdate>(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":5}}"#,
        )
        .unwrap_err();
        assert!(bad_field.to_string().contains("invalid type"), "{bad_field}");
    }
}
