//! Reading a stream's JSON events into typed views without allocating for what is not kept,
//! and as forgivingly as reading them into a `serde_json::Value` would be: a field of an
//! unexpected type reads as absent (servers send odd things), never as an error.
//!
//! A text borrows from the event when it has no escapes; maps and lists the view does not keep
//! are skipped, not built.

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A text field: its text when it is a string, else absent.
#[derive(Debug, Default)]
pub(crate) struct Text<'a>(pub(crate) Option<Cow<'a, str>>);

/// A count or index: its value when it is a non-negative integer, else absent.
#[derive(Debug, Default)]
pub(crate) struct Index(pub(crate) Option<u64>);

/// An object read as `T` (whose fields are all optional), else absent.
#[derive(Debug)]
pub(crate) struct Object<T>(pub(crate) Option<T>);

/// A list of `T`: its items when it is an array, else empty.
#[derive(Debug)]
pub(crate) struct List<T>(pub(crate) Vec<T>);

/// Whether a field is there at all, whatever its value (`null` included).
#[derive(Debug, Default)]
pub(crate) struct Present(pub(crate) bool);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> Default for List<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

/// The visitor methods that read a scalar no view takes (booleans, negative and fractional
/// numbers, `null`) as `$absent`.
macro_rules! absent_scalars {
    ($absent:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
}

/// The visitor method that drains a map no view takes, reading it as `$absent`.
macro_rules! absent_map {
    ($absent:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            skip_map(map).map(|()| $absent)
        }
    };
}

/// The visitor method that drains a list no view takes, reading it as `$absent`.
macro_rules! absent_seq {
    ($absent:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            skip_seq(seq).map(|()| $absent)
        }
    };
}

/// Drains a map the caller does not take.
fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Drains a list the caller does not take.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(text))))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(text.to_owned()))))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(text))))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            absent_scalars!(Text(None));
            absent_map!(Text(None));
            absent_seq!(Text(None));
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

impl<'de> Deserialize<'de> for Index {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IndexVisitor;
        impl<'de> Visitor<'de> for IndexVisitor {
            type Value = Index;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E>(self, value: u64) -> Result<Self::Value, E> {
                Ok(Index(Some(value)))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Index(None))
            }
            absent_scalars!(Index(None));
            absent_map!(Index(None));
            absent_seq!(Index(None));
        }
        deserializer.deserialize_any(IndexVisitor)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|value| Object(Some(value)))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Object(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Object(None))
            }
            absent_scalars!(Object(None));
            absent_seq!(Object(None));
        }
        deserializer.deserialize_any(ObjectVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(List)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(List(Vec::new()))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(List(Vec::new()))
            }
            absent_scalars!(List(Vec::new()));
            absent_map!(List(Vec::new()));
        }
        deserializer.deserialize_any(ListVisitor(PhantomData))
    }
}

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer).map(|_| Present(true))
    }
}
