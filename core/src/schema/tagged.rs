//! Tagged unions in one pass. Buffering the object first (`Fields`) is needed only
//! when the tag comes after other properties; when it comes first, as peers write
//! it (`{"sessionUpdate": "agent_message_chunk", ...}`, `{"type": "text", ...}`), the
//! chosen variant reads the rest of the object straight from the input: no copy and
//! no second parse of each property. Any other case (the tag later, not a plain
//! string, or a value this schema does not know) takes the buffered path, which the
//! generator writes as `TaggedUnion::from_fields`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::fields::{plain_string, Fields, RawText, Text};

/// What the generator implements for each tagged union that is not embedded in a struct.
pub(crate) trait TaggedUnion: Sized {
    /// The tag's property name.
    const TAG: &'static str;

    /// The variant `tag` names, read from the rest of the object (the tag was its first
    /// property); the access back, untouched, if `tag` is not one of the known values.
    fn read_variant<'de, A: MapAccess<'de>>(tag: &str, rest: A) -> Result<Result<Self, A>, A::Error>;

    /// Like `read_variant`, checking the payload without building it (`check.rs`).
    fn check_variant<'de, A: MapAccess<'de>>(tag: &str, rest: A) -> Result<Result<(), A>, A::Error>;

    /// The general path: from the whole object, buffered.
    fn from_fields(map: Fields<'_>) -> Result<Self, serde_json::Error>;
}

/// `Deserialize::deserialize` for a [`TaggedUnion`].
pub(crate) fn deserialize<'de, T: TaggedUnion, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_map(UnionVisitor(PhantomData))
}

struct UnionVisitor<T>(PhantomData<T>);

impl<'de, T: TaggedUnion> Visitor<'de> for UnionVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<T, A::Error> {
        visit_union(access, T::TAG, T::read_variant, T::from_fields)
    }
}

/// The walk every tagged union takes, to read it or to check it (`check.rs`):
/// `variant` takes the rest of the object when the tag comes first and is a
/// plain string (handing the access back for a tag it does not know); otherwise
/// `buffered` gets the whole object.
pub(crate) fn visit_union<'de, A: MapAccess<'de>, V>(
    mut access: A,
    tag_key: &str,
    variant: impl FnOnce(&str, A) -> Result<Result<V, A>, A::Error>,
    buffered: impl FnOnce(Fields<'de>) -> Result<V, serde_json::Error>,
) -> Result<V, A::Error> {
    let mut fields = Fields::new();
    if let Some(Text(key)) = access.next_key()? {
        let RawText(raw) = access.next_value()?;
        if key == tag_key {
            if let Some(tag) = plain_string(&raw) {
                match variant(tag, access)? {
                    Ok(value) => return Ok(value),
                    Err(rest) => access = rest,
                }
            }
        }
        fields.push(key, raw);
        fields.fill(&mut access)?;
    }
    buffered(fields).map_err(de::Error::custom)
}

/// Reads a variant's payload from the rest of the object.
pub(crate) fn read_rest<'de, T: Deserialize<'de>, A: MapAccess<'de>>(rest: A) -> Result<T, A::Error> {
    T::deserialize(MapAccessDeserializer::new(rest))
}

/// Skips the rest of the object (a variant without payload ignores other properties).
pub(crate) fn skip_rest<'de, A: MapAccess<'de>>(mut rest: A) -> Result<(), A::Error> {
    while rest.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::schema::{ContentBlock, RequestPermissionOutcome, SessionNotification, SessionUpdate};

    #[test]
    fn the_tag_first_or_last_reads_the_same() {
        let first = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#;
        let last = r#"{"update":{"content":{"text":"hi","type":"text"},"sessionUpdate":"agent_message_chunk"},"sessionId":"s"}"#;
        let escaped = r#"{"sessionId":"s","update":{"sessionUpdate":"agent\u005fmessage_chunk","content":{"type":"text","text":"hi"}}}"#;
        let read = |text| serde_json::from_str::<SessionNotification>(text).unwrap();
        assert_eq!(read(first), read(last));
        assert_eq!(read(first), read(escaped));
        let SessionUpdate::AgentMessageChunk(chunk) = read(first).update else {
            panic!("wrong variant");
        };
        assert!(matches!(&chunk.content, ContentBlock::Text(text) if text.text == "hi"));
        assert_eq!(serde_json::to_string(&read(last)).unwrap(), first);
    }

    #[test]
    fn an_unknown_tag_first_keeps_the_whole_object() {
        let text = r#"{"sessionUpdate":"from_the_future","n":[1,{"a":null}],"m":"x"}"#;
        let update: SessionUpdate = serde_json::from_str(text).unwrap();
        let SessionUpdate::Unknown(object) = &update else {
            panic!("wrong variant: {update:?}");
        };
        assert_eq!(
            Value::Object(object.clone()),
            json!({"sessionUpdate": "from_the_future", "n": [1, {"a": null}], "m": "x"})
        );
    }

    #[test]
    fn a_variant_without_payload_skips_the_other_properties() {
        let outcome: RequestPermissionOutcome =
            serde_json::from_str(r#"{"outcome":"cancelled","later":{"x":[1]}}"#).unwrap();
        assert_eq!(outcome, RequestPermissionOutcome::Cancelled);
    }

    #[test]
    fn errors_in_a_variant_read_in_one_pass_name_the_problem() {
        let error = serde_json::from_str::<SessionUpdate>(
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":5}}"#,
        )
        .unwrap_err();
        assert!(error.to_string().contains("invalid type: integer `5`"), "{error}");
        let missing =
            serde_json::from_str::<SessionUpdate>(r#"{"sessionUpdate":"agent_message_chunk"}"#).unwrap_err();
        assert!(missing.to_string().contains("content"), "{missing}");
        let not_a_string = serde_json::from_str::<SessionUpdate>(r#"{"sessionUpdate":7}"#).unwrap_err();
        assert!(
            not_a_string.to_string().contains("expected a string"),
            "{not_a_string}"
        );
    }
}
