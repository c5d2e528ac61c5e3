//! A serde `Serializer` whose output is a [`Value`].

use serde::ser::{self, Serialize};

use super::super::{typed_serde, Value};
use super::SerdeError;

pub(super) struct ValueSerializer;

type Result<T> = std::result::Result<T, SerdeError>;

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = SerdeError;
    type SerializeSeq = ListBuilder;
    type SerializeTuple = ListBuilder;
    type SerializeTupleStruct = ListBuilder;
    type SerializeTupleVariant = VariantBuilder<ListBuilder>;
    type SerializeMap = MapBuilder;
    type SerializeStruct = StructBuilder;
    type SerializeStructVariant = VariantBuilder<StructBuilder>;

    fn serialize_bool(self, v: bool) -> Result<Value> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value> {
        Ok(Value::Int(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value> {
        Ok(Value::Long(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    /// Java has no unsigned int; a `long` holds every `u32`.
    fn serialize_u32(self, v: u32) -> Result<Value> {
        Ok(Value::Long(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value> {
        i64::try_from(v)
            .map(Value::Long)
            .map_err(|_| SerdeError::Unsupported("u64 above i64::MAX"))
    }
    fn serialize_f32(self, v: f32) -> Result<Value> {
        Ok(Value::Double(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value> {
        Ok(Value::Double(v))
    }
    fn serialize_char(self, v: char) -> Result<Value> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value> {
        Ok(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value> {
        Ok(Value::Binary(v.to_vec()))
    }
    fn serialize_none(self) -> Result<Value> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value> {
        Ok(Value::Null)
    }
    /// A Java enum constant when the enum's serde name is a Java class (has a `.`), else the
    /// variant's name as a string.
    fn serialize_unit_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value> {
        if name.contains('.') {
            return Ok(Value::java_enum(name, variant));
        }
        Ok(Value::String(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Value> {
        let inner = value.serialize(self)?;
        // A typed Java value (see `typed_serde`) serializes its text under a marked name.
        if let (Some(class), Value::String(text)) =
            (name.strip_prefix(typed_serde::MAGIC_PREFIX), &inner)
        {
            if let Some(typed) = Value::from_java_text(class, text) {
                return typed.map_err(|e| SerdeError::Message(e.to_string()));
            }
        }
        Ok(inner)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value> {
        Ok(single_entry(variant, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListBuilder> {
        Ok(ListBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<ListBuilder> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<ListBuilder> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Ok(VariantBuilder {
            variant,
            inner: ListBuilder(Vec::with_capacity(len)),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapBuilder> {
        Ok(MapBuilder {
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructBuilder> {
        Ok(StructBuilder::new(name, len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Ok(VariantBuilder {
            variant,
            inner: StructBuilder::new(variant, len),
        })
    }
    fn serialize_i128(self, _: i128) -> Result<Value> {
        Err(SerdeError::Unsupported("i128"))
    }
    fn serialize_u128(self, _: u128) -> Result<Value> {
        Err(SerdeError::Unsupported("u128"))
    }
}

fn single_entry(key: &str, value: Value) -> Value {
    Value::map(vec![(Value::String(key.to_owned()), value)])
}

pub(super) struct ListBuilder(Vec<Value>);

impl ListBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.0.push(value.serialize(ValueSerializer)?);
        Ok(())
    }
}

impl ser::SerializeSeq for ListBuilder {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(Value::list(self.0))
    }
}

impl ser::SerializeTuple for ListBuilder {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(Value::list(self.0))
    }
}

impl ser::SerializeTupleStruct for ListBuilder {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(Value::list(self.0))
    }
}

pub(super) struct MapBuilder {
    entries: Vec<(Value, Value)>,
    key: Option<Value>,
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(key.serialize(ValueSerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerdeError::Message("map value without a key".into()))?;
        self.entries.push((key, value.serialize(ValueSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value> {
        Ok(Value::map(self.entries))
    }
}

/// Collects struct fields; a serde name with a `.` is taken as the Java class.
pub(super) struct StructBuilder {
    class: Option<&'static str>,
    // Serde's names are static; they become `Arc<str>` or `String` only once the shape is known.
    fields: Vec<(&'static str, Value)>,
}

impl StructBuilder {
    fn new(name: &'static str, len: usize) -> Self {
        StructBuilder {
            class: name.contains('.').then_some(name),
            fields: Vec::with_capacity(len),
        }
    }

    fn into_value(self) -> Value {
        match self.class {
            Some(class) => Value::Object {
                class: class.into(),
                fields: self
                    .fields
                    .into_iter()
                    .map(|(k, v)| (k.into(), v))
                    .collect(),
            },
            None => Value::map(
                self.fields
                    .into_iter()
                    .map(|(k, v)| (Value::from(k), v))
                    .collect(),
            ),
        }
    }
}

impl ser::SerializeStruct for StructBuilder {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.fields.push((key, value.serialize(ValueSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value> {
        Ok(self.into_value())
    }
}

/// An enum variant with content: `{variant: content}`.
pub(super) struct VariantBuilder<B> {
    variant: &'static str,
    inner: B,
}

impl ser::SerializeTupleVariant for VariantBuilder<ListBuilder> {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(single_entry(self.variant, Value::list(self.inner.0)))
    }
}

impl ser::SerializeStructVariant for VariantBuilder<StructBuilder> {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<Value> {
        Ok(single_entry(self.variant, self.inner.into_value()))
    }
}
