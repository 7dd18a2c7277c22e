//! `Fields`: a JSON object buffered as its properties' raw JSON text, the first step of
//! every union's deserialization (find the tag or the required properties, then read the
//! chosen variant from the buffered properties).
//!
//! Why not a `serde_json::Map`: building a `Value` tree allocates every nested string and
//! object, and then the variant is read from that tree again. Raw text costs one copy of
//! each property's JSON, and the variant's fields read it with serde_json's fast
//! string deserializer. With `support::read_struct!` (structs without serde's flatten
//! buffering), checking a `session/update` went from ~950 ns to ~680 ns.
//!
//! Only a serde_json deserializer (from text or from a `Value`) can fill `Fields`: the
//! protocol types are JSON types.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object's properties, in order, each as raw JSON text.
#[derive(Debug, Default)]
pub(crate) struct Fields(Vec<(String, Box<RawValue>)>);

impl Fields {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Removes property `key` and returns its value (a tag: small).
    pub(crate) fn remove(&mut self, key: &str) -> Option<Value> {
        let (_, raw) = self.remove_entry(key)?;
        // Raw text from serde_json is valid JSON: this cannot fail.
        serde_json::from_str(raw.get()).ok()
    }

    /// Removes property `key`, keeping its raw text.
    pub(crate) fn remove_entry(&mut self, key: &str) -> Option<(String, Box<RawValue>)> {
        let index = self.0.iter().position(|(name, _)| name == key)?;
        Some(self.0.remove(index))
    }

    pub(crate) fn push(&mut self, key: String, raw: Box<RawValue>) {
        self.0.push((key, raw));
    }

    /// Puts `value` (a removed tag) back.
    pub(crate) fn insert_value(&mut self, key: &str, value: &Value) {
        if let Ok(raw) = serde_json::value::to_raw_value(value) {
            self.0.push((key.to_owned(), raw));
        }
    }

    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.0.iter().any(|(name, _)| name == key)
    }

    /// Reads `T` from the buffered properties.
    pub(crate) fn read<T: de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(FieldsDeserializer { fields: &self.0 })
    }
}

/// For the catch-all variants, which keep an unknown object as a `Map`.
impl From<Fields> for Map<String, Value> {
    fn from(fields: Fields) -> Self {
        fields
            .0
            .into_iter()
            .filter_map(|(key, raw)| Some((key, serde_json::from_str(raw.get()).ok()?)))
            .collect()
    }
}

impl<'de> de::Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;

        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Fields, A::Error> {
                let mut fields = Fields(Vec::with_capacity(access.size_hint().unwrap_or(4).min(64)));
                while let Some(key) = access.next_key::<String>()? {
                    let raw = access.next_value::<Box<RawValue>>()?;
                    fields.push(key, raw);
                }
                Ok(fields)
            }
        }

        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// Reads a type from buffered properties as if from the original object.
struct FieldsDeserializer<'a> {
    fields: &'a [(String, Box<RawValue>)],
}

impl<'de> Deserializer<'de> for FieldsDeserializer<'de> {
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

struct FieldsAccess<'de> {
    fields: std::slice::Iter<'de, (String, Box<RawValue>)>,
    value: Option<&'de RawValue>,
}

impl<'de> MapAccess<'de> for FieldsAccess<'de> {
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
        seed.deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
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
