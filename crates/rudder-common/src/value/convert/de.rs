//! A serde `Deserializer` that reads from an owned [`Value`].

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use std::sync::Arc;

use super::super::{typed_serde, Value};
use super::SerdeError;

type Result<T> = std::result::Result<T, SerdeError>;

pub(super) struct ValueDeserializer(pub(super) Value);

impl<'de> de::Deserializer<'de> for ValueDeserializer {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(v) => visitor.visit_bool(v),
            Value::Int(v) => visitor.visit_i32(v),
            Value::Long(v) | Value::Date(v) => visitor.visit_i64(v),
            Value::Double(v) => visitor.visit_f64(v),
            Value::String(v) => visitor.visit_string(v),
            // Exact values read as their text: a `String` field takes them, an `f64` does not.
            Value::Decimal(v) => visitor.visit_string(v.to_string()),
            Value::BigInteger(v) => visitor.visit_string(v.to_string()),
            Value::Time(v) => visitor.visit_string(v.to_string()),
            Value::Binary(v) => visitor.visit_byte_buf(v),
            Value::List { items, .. } => visitor.visit_seq(SeqAccess(items.into_iter())),
            Value::Map { entries, .. } => visitor.visit_map(MapAccess {
                entries: entries.into_iter(),
                value: None,
            }),
            Value::Object { fields, .. } => visitor.visit_map(FieldAccess {
                fields: fields.into_iter(),
                value: None,
            }),
            Value::Ref(index) => Err(SerdeError::Cycle(index)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(ValueDeserializer(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name.starts_with(typed_serde::MAGIC_PREFIX) {
            // A typed Java value's visitor reads its text form.
            return visitor.visit_newtype_struct(ValueDeserializer(typed_serde::text_form(self.0)));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let (variant, content) = match self.0 {
            Value::String(name) => (name, None),
            Value::Map { entries, .. } if entries.len() == 1 => {
                let mut entries = entries;
                let (key, value) = entries.remove(0);
                match key {
                    Value::String(name) => (name, Some(value)),
                    _ => return Err(SerdeError::Message("enum map key must be a string".into())),
                }
            }
            // Java enums travel as an object with one `name` field.
            Value::Object { fields, .. } => {
                match fields.into_iter().find(|(k, _)| &**k == "name") {
                    Some((_, Value::String(name))) => (name, None),
                    _ => return Err(SerdeError::Message("enum object without a name".into())),
                }
            }
            other => {
                return Err(SerdeError::Message(format!(
                    "expected an enum, found {}",
                    kind(&other)
                )))
            }
        };
        visitor.visit_enum(EnumAccess { variant, content })
    }

    /// A `byte[]` also fills a sequence such as `Vec<u8>`.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Binary(bytes) => {
                let items: Vec<Value> = bytes.into_iter().map(|b| Value::Int(b.into())).collect();
                visitor.visit_seq(SeqAccess(items.into_iter()))
            }
            other => ValueDeserializer(other).deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct map struct identifier ignored_any
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) | Value::Long(_) | Value::Double(_) => "a number",
        Value::Date(_) => "a date",
        Value::Decimal(_) | Value::BigInteger(_) => "a big number",
        Value::Time(_) => "a java.time value",
        Value::Binary(_) => "binary",
        Value::List { .. } => "a list",
        _ => "a value of another kind",
    }
}

struct SeqAccess(std::vec::IntoIter<Value>);

impl<'de> de::SeqAccess<'de> for SeqAccess {
    type Error = SerdeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        self.0
            .next()
            .map(|v| seed.deserialize(ValueDeserializer(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct MapAccess {
    entries: std::vec::IntoIter<(Value, Value)>,
    value: Option<Value>,
}

impl<'de> de::MapAccess<'de> for MapAccess {
    type Error = SerdeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.entries.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(ValueDeserializer(k)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .value
            .take()
            .ok_or_else(|| SerdeError::Message("map value requested before its key".into()))?;
        seed.deserialize(ValueDeserializer(value))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An object's fields as a map: the names are lent to the key's visitor, never copied, so a
/// struct's field identifiers cost no allocation.
struct FieldAccess {
    fields: std::vec::IntoIter<(Arc<str>, Value)>,
    value: Option<Value>,
}

impl<'de> de::MapAccess<'de> for FieldAccess {
    type Error = SerdeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.fields.next() {
            Some((name, v)) => {
                self.value = Some(v);
                let key: de::value::StrDeserializer<'_, SerdeError> = (*name).into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .value
            .take()
            .ok_or_else(|| SerdeError::Message("map value requested before its key".into()))?;
        seed.deserialize(ValueDeserializer(value))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

struct EnumAccess {
    variant: String,
    content: Option<Value>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess {
    type Error = SerdeError;
    type Variant = VariantAccess;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, VariantAccess)> {
        let variant: de::value::StringDeserializer<SerdeError> = self.variant.into_deserializer();
        let name = seed.deserialize(variant)?;
        Ok((name, VariantAccess(self.content)))
    }
}

struct VariantAccess(Option<Value>);

impl VariantAccess {
    fn content(self) -> Result<ValueDeserializer> {
        self.0
            .map(ValueDeserializer)
            .ok_or_else(|| SerdeError::Message("enum variant has no content".into()))
    }
}

impl<'de> de::VariantAccess<'de> for VariantAccess {
    type Error = SerdeError;
    fn unit_variant(self) -> Result<()> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err(SerdeError::Message("unit variant with content".into())),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self.content()?)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self.content()?, visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_any(self.content()?, visitor)
    }
}
