//! Hand-written helpers for the generated protocol types (`v1.rs`, `v1_unstable.rs`).
//!
//! The generator (`tools/codegen/gen_rust.py`) keeps the generated code short by leaning on
//! the macros and functions here: string identifiers, string/integer enums that keep values
//! they do not know, the (de)serialization of tagged unions, and the lenient field
//! deserializers that mirror the schema's `x-deserialize-*` annotations.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, Unexpected};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub(crate) use super::check::{check_by_parse, check_rest, check_tagged, Check, Checked};
pub(crate) use super::fields::{Fields, Text};
pub(crate) use super::strip::{note_unknown, skip_extra};
pub(crate) use super::tagged::{deserialize as tagged_union, read_rest, skip_rest, TaggedUnion};
pub(crate) use crate::typed::{check as check_params, check_agrees};

/// One protocol method, as listed in the generated method tables (`AGENT_METHODS`,
/// `CLIENT_METHODS`, `PROTOCOL_METHODS`, `PROXY_METHODS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MethodInfo {
    /// The wire method name, e.g. `"session/new"`.
    pub name: &'static str,
    /// The Rust type name of the params, e.g. `"NewSessionRequest"`.
    pub params: &'static str,
    /// The Rust type name of the result; `None` for a notification.
    pub result: Option<&'static str>,
    /// Whether the method is a notification (no response).
    pub notification: bool,
    /// The handler method's name on `Agent` / `Client`, and the peer method's on the
    /// other side's connection, e.g. `"new_session"`.
    pub handler: &'static str,
    /// Part of the unstable protocol only (schema/v1/schema.unstable.json).
    pub unstable: bool,
}

// ---------------------------------------------------------------------------------------
// Macros used by the generated code

/// Trait impls for a `#[serde(transparent)] pub struct Name(pub String);` identifier.
macro_rules! string_newtype {
    ($name:ident) => {
        impl $name {
            /// Wraps a string.
            pub fn new(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The identifier as an owned string.
            pub fn into_inner(self) -> String {
                self.0
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl From<&String> for $name {
            fn from(value: &String) -> Self {
                Self(value.clone())
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl $crate::schema::support::Check for $name {
            fn check<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
                <String as $crate::schema::support::Check>::check(deserializer)
            }
        }
    };
}
pub(crate) use string_newtype;

/// A string enum with a final `Unknown(String)` variant that keeps any value this version
/// of the protocol does not know, so it round-trips unchanged.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this version of the protocol does not know, kept verbatim.
            ///
            /// Build values with `From<&str>`/`FromStr`, which never produce `Unknown` for a known value.
            Unknown(String),
        }

        impl $name {
            /// Every value this version of the protocol knows, in schema order.
            pub const KNOWN: &'static [&'static str] = &[$($value),*];

            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )*
                    Self::Unknown(value) => value,
                }
            }

            /// Whether this is a value this version of the protocol does not know.
            pub fn is_unknown(&self) -> bool {
                matches!(self, Self::Unknown(_))
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $value => Self::$variant, )*
                    _ => Self::Unknown(value.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    $( $value => Self::$variant, )*
                    _ => Self::Unknown(value),
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok(Self::from(value))
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::schema::support::deserialize_string_enum(deserializer)
            }
        }

        // Any string is a value (unknown ones are kept).
        impl $crate::schema::support::Check for $name {
            fn check<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
                <String as $crate::schema::support::Check>::check(deserializer)
            }
        }
    };
}
pub(crate) use string_enum;

/// An integer enum with a final `Other(int)` variant for every other value.
macro_rules! int_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $int:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// Any other value.
            Other($int),
        }

        impl $name {
            /// The wire value.
            pub fn code(self) -> $int {
                match self {
                    $( Self::$variant => $value, )*
                    Self::Other(value) => value,
                }
            }
        }

        impl From<$int> for $name {
            fn from(value: $int) -> Self {
                match value {
                    $( $value => Self::$variant, )*
                    _ => Self::Other(value),
                }
            }
        }

        impl From<$name> for $int {
            fn from(value: $name) -> Self {
                value.code()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.code())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serde::Serialize::serialize(&self.code(), serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <$int as serde::Deserialize>::deserialize(deserializer).map(Self::from)
            }
        }

        impl $crate::schema::support::Check for $name {
            fn check<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
                <$int as serde::Deserialize>::deserialize(deserializer).map(drop)
            }
        }
    };
}
pub(crate) use int_enum;

/// Deserializes a `string_enum!` type from a string without allocating for known values.
pub(crate) fn deserialize_string_enum<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: for<'a> From<&'a str> + From<String>,
{
    struct Visitor<T>(PhantomData<T>);

    impl<T: for<'a> From<&'a str> + From<String>> de::Visitor<'_> for Visitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
            Ok(T::from(value))
        }

        fn visit_string<E: de::Error>(self, value: String) -> Result<T, E> {
            Ok(T::from(value))
        }
    }

    deserializer.deserialize_str(Visitor(PhantomData))
}

// ---------------------------------------------------------------------------------------
// Tagged unions: the tag sits next to the payload's own properties in one JSON object.

/// Serializes as the single entry `{key: value}` (a variant that is only its tag).
pub(crate) struct Tag<'a> {
    key: &'a str,
    value: &'a str,
}

impl<'a> Tag<'a> {
    pub(crate) fn new(key: &'a str, value: &'a str) -> Self {
        Self { key, value }
    }
}

impl Serialize for Tag<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.key, self.value)?;
        map.end()
    }
}

/// Serializes as `{key: value, ...payload's properties}`.
#[derive(Serialize)]
pub(crate) struct Tagged<'a, T: Serialize + ?Sized> {
    #[serde(flatten)]
    tag: Tag<'a>,
    #[serde(flatten)]
    payload: &'a T,
}

impl<'a, T: Serialize + ?Sized> Tagged<'a, T> {
    pub(crate) fn new(key: &'a str, value: &'a str, payload: &'a T) -> Self {
        Self {
            tag: Tag::new(key, value),
            payload,
        }
    }
}

/// Buffers a JSON object (the first step of every union's deserialization).
pub(crate) fn object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Fields<'de>, D::Error> {
    Fields::deserialize(deserializer)
}

/// Deserializes `T` from a buffered JSON object.
pub(crate) fn from_map<T: DeserializeOwned>(map: Fields<'_>) -> Result<T, serde_json::Error> {
    map.read()
}

/// Moves `fields` out of `map` and deserializes `T` from them (the rest stays in `map`
/// for the enclosing object).
pub(crate) fn take_payload<T: DeserializeOwned>(
    map: &mut Fields<'_>,
    fields: &[&str],
) -> Result<T, serde_json::Error> {
    let mut own = Fields::new();
    for name in fields {
        if let Some((key, value)) = map.remove_entry(name) {
            own.push(key, value);
        }
    }
    from_map(own)
}

/// Puts a removed tag back (for a tag-less default variant or a catch-all variant, which
/// keeps the object as a `Map`).
pub(crate) fn restore<'de, R: From<Fields<'de>>>(mut map: Fields<'de>, key: &str, tag: Option<Value>) -> R {
    restore_in(&mut map, key, tag);
    map.into()
}

/// Puts a removed tag back into the enclosing object's map.
pub(crate) fn restore_in(map: &mut Fields<'_>, key: &str, tag: Option<Value>) {
    if let Some(tag) = tag {
        map.insert_value(key, &tag);
    }
}

/// A catch-all variant's own required properties (`(name, must be a string)`): each
/// present, and a string where the schema says so.
pub(crate) fn check_required(
    map: &Fields<'_>,
    required: &[(&'static str, bool)],
) -> Result<(), serde_json::Error> {
    for &(key, string) in required {
        match map.raw(key) {
            None => return Err(de::Error::missing_field(key)),
            // Raw text from serde_json is exact JSON: a string starts with its quote.
            Some(raw) if string && !raw.trim_start().starts_with('"') => {
                return Err(de::Error::custom(format_args!(
                    "invalid type for `{key}`: expected a string"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A catch-all variant's alternatives (an elicitation's scopes): at least one holds, as
/// [`check_required`] says.
pub(crate) fn check_one_of(
    map: &Fields<'_>,
    alternatives: &[&[(&'static str, bool)]],
) -> Result<(), serde_json::Error> {
    let mut first = None;
    for required in alternatives {
        match check_required(map, required) {
            Ok(()) => return Ok(()),
            Err(error) => first = first.or(Some(error)),
        }
    }
    first.map_or(Ok(()), Err)
}

/// Whether `map` has every one of `fields`.
pub(crate) fn has_all(map: &Fields<'_>, fields: &[&str]) -> bool {
    fields.iter().all(|name| map.contains_key(name))
}

/// The error for a tag that is missing, not a string, or not one of `expected`.
pub(crate) fn bad_tag(
    key: &'static str,
    tag: Option<&Value>,
    expected: &'static [&'static str],
) -> serde_json::Error {
    match tag {
        None => de::Error::missing_field(key),
        Some(Value::String(value)) => de::Error::unknown_variant(value, expected),
        Some(other) => de::Error::custom(format_args!(
            "invalid type for `{key}`: {}, expected a string",
            unexpected(other)
        )),
    }
}

/// The error for an object that has the required properties of none of a union's shapes.
pub(crate) fn no_variant(union: &str, required: &[&[&str]]) -> serde_json::Error {
    let shapes: Vec<String> = required
        .iter()
        .map(|fields| {
            fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(" + ")
        })
        .collect();
    de::Error::custom(format_args!(
        "data did not match any variant of `{union}`: expected the properties {}",
        shapes.join(" or ")
    ))
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Unexpected::Signed(i),
            (_, Some(u), _) => Unexpected::Unsigned(u),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

// ---------------------------------------------------------------------------------------
// Lenient fields (`x-deserialize-default-on-error`, `x-deserialize-skip-invalid-items`)

/// An optional property whose invalid value is treated as absent.
pub(crate) fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    if value.is_null() {
        return Ok(None);
    }
    Ok(T::deserialize(value).ok())
}

/// An optional array property: an invalid value is treated as absent, invalid items are
/// dropped.
pub(crate) fn lenient_vec<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(deserializer)? {
        Value::Array(items) => Ok(Some(valid_items(items))),
        _ => Ok(None),
    }
}

/// A required array property: an invalid value becomes empty, invalid items are dropped.
pub(crate) fn lenient_vec_default<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    match Value::deserialize(deserializer)? {
        Value::Array(items) => Ok(valid_items(items)),
        _ => Ok(Vec::new()),
    }
}

/// An array property whose invalid items are dropped (`x-deserialize-skip-invalid-items`
/// without default-on-error): a value that is not an array is still an error.
#[cfg_attr(not(feature = "unstable"), allow(dead_code))]
pub(crate) fn skip_invalid_items<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(valid_items(Vec::<Value>::deserialize(deserializer)?))
}

/// A required property whose JSON null reads as its default
/// (`x-deserialize-default-on-null`: a null list of MCP servers is an empty one).
pub(crate) fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

fn valid_items<T: DeserializeOwned>(items: Vec<Value>) -> Vec<T> {
    items
        .into_iter()
        .filter_map(|item| T::deserialize(item).ok())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Struct deserialization

/// `Deserialize` for a generated struct: its properties by wire name, the rest into
/// `extra`. The same rules as serde's derive (a missing required property, a duplicate
/// one and a wrong type are errors; `default` fields may be absent), without the
/// buffering that `#[serde(flatten)]` costs on every read: a struct reads straight from
/// the input. Each field: `name: Type = "wire", required|default [with function, check
/// Type];`, where the check type accepts what the function accepts.
macro_rules! read_struct {
    ($name:ident { $( $field:ident : $ty:ty = $wire:literal, $kind:ident $(with $with:path, check $check:ty)? ; )* }) => {
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct StructVisitor;

                impl<'de> serde::de::Visitor<'de> for StructVisitor {
                    type Value = $name;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                        formatter.write_str(concat!("struct ", stringify!($name)))
                    }

                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<$name, A::Error> {
                        $( let mut $field: Option<$ty> = None; )*
                        let mut extra = serde_json::Map::new();
                        while let Some(support::Text(key)) = access.next_key()? {
                            match key.as_ref() {
                                $( $wire => {
                                    if $field.is_some() {
                                        return Err(serde::de::Error::duplicate_field($wire));
                                    }
                                    $field = Some(support::read_field!(access, $ty $(, $with)?));
                                } )*
                                _ => {
                                    let value = access.next_value::<serde_json::Value>()?;
                                    support::note_unknown();
                                    extra.insert(key.into_owned(), value);
                                }
                            }
                        }
                        Ok($name {
                            $( $field: support::field_end!($field, $wire, $kind), )*
                            extra,
                        })
                    }
                }

                deserializer.deserialize_map(StructVisitor)
            }
        }

        impl support::Check for $name {
            fn check<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
                struct CheckVisitor;

                impl<'de> serde::de::Visitor<'de> for CheckVisitor {
                    type Value = ();

                    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                        formatter.write_str(concat!("struct ", stringify!($name)))
                    }

                    #[allow(non_snake_case)]
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
                        $( let mut $field = false; )*
                        while let Some(support::Text(key)) = access.next_key()? {
                            match key.as_ref() {
                                $( $wire => {
                                    if $field {
                                        return Err(serde::de::Error::duplicate_field($wire));
                                    }
                                    $field = true;
                                    support::check_field!(access, $ty $(, $check)?);
                                } )*
                                _ => {
                                    access.next_value::<support::Checked<serde_json::Value>>()?;
                                    support::note_unknown();
                                }
                            }
                        }
                        $( support::check_end!($field, $wire, $kind); )*
                        Ok(())
                    }
                }

                deserializer.deserialize_map(CheckVisitor)
            }
        }
    };
}
pub(crate) use read_struct;

/// Checks one property's value, as its type or as the type its `with` function accepts
/// (`lenient*`: any `Value`; `null_default`: `Option<T>`).
macro_rules! check_field {
    ($access:ident, $ty:ty) => {
        $access.next_value::<support::Checked<$ty>>()?
    };
    ($access:ident, $ty:ty, $check:ty) => {
        $access.next_value::<support::Checked<$check>>()?
    };
}
pub(crate) use check_field;

/// A required property must have been present.
macro_rules! check_end {
    ($seen:ident, $wire:literal, required) => {
        if !$seen {
            return Err(serde::de::Error::missing_field($wire));
        }
    };
    ($seen:ident, $wire:literal, default) => {
        let _ = $seen;
    };
}
pub(crate) use check_end;

/// One property's value, through `with` when the field has a custom deserializer.
macro_rules! read_field {
    ($access:ident, $ty:ty) => {
        $access.next_value::<$ty>()?
    };
    ($access:ident, $ty:ty, $with:path) => {{
        struct With($ty);

        impl<'de> serde::Deserialize<'de> for With {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $with(deserializer).map(With)
            }
        }

        $access.next_value::<With>()?.0
    }};
}
pub(crate) use read_field;

/// A field's final value: required ones must have been present.
macro_rules! field_end {
    ($value:ident, $wire:literal, required) => {
        match $value {
            Some(value) => value,
            None => return Err(serde::de::Error::missing_field($wire)),
        }
    };
    ($value:ident, $wire:literal, default) => {
        $value.unwrap_or_default()
    };
}
pub(crate) use field_end;
