//! `Deserialize for Value`: any serde data (JSON, YAML, a serde-typed struct) as a [`Value`], so a
//! `Value` can be what a generic call site asks for (`Reference::call::<Value, _>` in the facade).
//!
//! The mapping is the one the CLI's JSON arguments use: integers of up to 32 bits are Java `int`s, 64-bit
//! ones Java `long`s (an unsigned one above `i64::MAX` a `BigInteger`), floats `double`s, sequences
//! `List`s and maps `Map`s without a Java type name. A serde format carries no Java class, so an
//! `Object` never comes out of it; the facade hands a provider's `Value` over as it is, without this
//! round trip.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{BigInteger, Value};

/// Entries reserved up front at most, whatever length a format announces: a hostile length prefix
/// must not allocate before the entries arrive.
const MOST_RESERVED: usize = 1024;

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i32<E>(self, v: i32) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Long(v))
    }

    fn visit_u32<E>(self, v: u32) -> Result<Value, E> {
        Ok(i32::try_from(v).map_or(Value::Long(i64::from(v)), Value::Int))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or_else(|_| Value::BigInteger(BigInteger::from(v)), Value::Long))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Double(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Binary(v.to_vec()))
    }

    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Binary(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Value::deserialize(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Value, D::Error> {
        Value::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MOST_RESERVED));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::List {
            type_name: None,
            items,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(MOST_RESERVED));
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Value::Map {
            type_name: None,
            entries,
        })
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, _data: A) -> Result<Value, A::Error> {
        Err(de::Error::custom(
            "an enum has no Value of its own: serialize it as its name (a string) instead",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_becomes_the_values_the_cli_would_send() {
        let value: Value = serde_json::from_str(
            r#"{"n": 7, "big": 18446744073709551615, "x": 1.5, "s": "a", "l": [true, null]}"#,
        )
        .unwrap();
        let Value::Map { type_name, entries } = value else {
            panic!("a map: {value:?}");
        };
        assert_eq!(type_name, None);
        assert_eq!(entries[0], (Value::from("n"), Value::Long(7)));
        assert!(
            matches!(entries[1].1, Value::BigInteger(_)),
            "{:?}",
            entries[1]
        );
        assert_eq!(entries[2].1, Value::Double(1.5));
        assert_eq!(entries[3].1, Value::from("a"));
        assert_eq!(
            entries[4].1,
            Value::List {
                type_name: None,
                items: vec![Value::Bool(true), Value::Null]
            }
        );
    }

    #[test]
    fn small_integers_are_java_ints() {
        let from_u8: Value = serde_json::from_value(serde_json::json!(1)).unwrap();
        assert_eq!(from_u8, Value::Long(1), "JSON integers are 64-bit");
        assert_eq!(
            ValueVisitor.visit_i32::<de::value::Error>(3),
            Ok(Value::Int(3))
        );
        assert_eq!(
            ValueVisitor.visit_u32::<de::value::Error>(u32::MAX),
            Ok(Value::Long(i64::from(u32::MAX)))
        );
    }
}
