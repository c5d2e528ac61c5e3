//! The encoder: values to Hessian 2.0 bytes, in the compact forms Java's `Hessian2Output` picks.

use std::collections::HashMap;
use std::sync::Arc;

use crate::java_types;
use crate::tags::*;
use crate::text;
use rudder_common::Value;

/// Writes one Hessian 2.0 stream into a byte buffer.
///
/// A stream shares class definitions, type names and back-reference numbering between all the values
/// written into it, exactly like one Java `Hessian2Output`. A Dubbo request body is one stream: write
/// the header strings, the arguments and the attachments with the same writer.
///
/// Every method picks the shortest form Java would pick, so the bytes match a Java peer's.
///
/// ```
/// use rudder_common::value::Value;
/// use rudder_hessian::Hessian2Writer;
/// let mut w = Hessian2Writer::new();
/// w.write_int(300);
/// w.write_value(&Value::from("hi"));
/// assert_eq!(w.into_bytes(), [0xc9, 0x2c, 0x02, b'h', b'i']);
/// ```
#[derive(Debug, Default)]
pub struct Hessian2Writer {
    buf: Vec<u8>,
    /// Class name -> the definitions written under it, by index into `def_fields`.
    classes: HashMap<Arc<str>, Vec<usize>>,
    /// The field names of each definition written, by definition index.
    def_fields: Vec<Vec<Arc<str>>>,
    /// The last classes looked up, by identity. Objects decoded from one stream share one class
    /// name, so a list of them finds its definition without hashing the name per object (which
    /// for a long name would cost more than the object).
    recent_classes: Vec<(Arc<str>, usize)>,
    types: HashMap<Arc<str>, usize>,
    /// The last type name written, by identity, for the same reason.
    recent_type: Option<(Arc<str>, usize)>,
    refs_written: usize,
}

/// How many classes `recent_classes` remembers: enough for objects nested a few classes deep.
const RECENT_CLASSES: usize = 4;

impl Hessian2Writer {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty stream appending to `buf` (e.g. after a frame header already in it).
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Hessian2Writer {
            buf,
            ..Self::default()
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Ends the stream and returns its bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Writes Java `null` (`N`).
    pub fn write_null(&mut self) {
        self.buf.push(NULL);
    }

    /// Writes a `boolean` (`T` / `F`).
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(if v { TRUE } else { FALSE });
    }

    /// Writes an `int` in 1, 2, 3 or 5 bytes.
    ///
    /// Dubbo's `writeByte` (the response kind flag) is also an int: `0x94` for 4.
    pub fn write_int(&mut self, v: i32) {
        match v {
            -0x10..=0x2f => self.buf.push((i32::from(INT_ZERO) + v) as u8),
            -0x800..=0x7ff => {
                self.buf.push((i32::from(INT_BYTE_ZERO) + (v >> 8)) as u8);
                self.buf.push(v as u8);
            }
            -0x40000..=0x3ffff => {
                self.buf.push((i32::from(INT_SHORT_ZERO) + (v >> 16)) as u8);
                self.buf.extend_from_slice(&(v as u16).to_be_bytes());
            }
            _ => {
                self.buf.push(INT);
                self.buf.extend_from_slice(&v.to_be_bytes());
            }
        }
    }

    /// Writes a `long` in 1, 2, 3, 5 or 9 bytes.
    pub fn write_long(&mut self, v: i64) {
        match v {
            -0x08..=0x0f => self.buf.push((i64::from(LONG_ZERO) + v) as u8),
            -0x800..=0x7ff => {
                self.buf.push((i64::from(LONG_BYTE_ZERO) + (v >> 8)) as u8);
                self.buf.push(v as u8);
            }
            -0x40000..=0x3ffff => {
                self.buf
                    .push((i64::from(LONG_SHORT_ZERO) + (v >> 16)) as u8);
                self.buf.extend_from_slice(&(v as u16).to_be_bytes());
            }
            _ if i32::try_from(v).is_ok() => {
                self.buf.push(LONG_INT);
                self.buf.extend_from_slice(&(v as i32).to_be_bytes());
            }
            _ => {
                self.buf.push(LONG);
                self.buf.extend_from_slice(&v.to_be_bytes());
            }
        }
    }

    /// Writes a `double`: whole numbers that fit a short in 1-3 bytes, whole thousandths that fit an
    /// int in 5 bytes, anything else in 9. Like Java, `-0.0` is written as `0.0`.
    pub fn write_double(&mut self, v: f64) {
        // `as` saturates and maps NaN to 0, the same as Java's `(int)` cast.
        let whole = v as i32;
        if f64::from(whole) == v {
            match whole {
                0 => return self.buf.push(DOUBLE_ZERO),
                1 => return self.buf.push(DOUBLE_ONE),
                -0x80..=0x7f => {
                    self.buf.push(DOUBLE_BYTE);
                    self.buf.push(whole as u8);
                    return;
                }
                -0x8000..=0x7fff => {
                    self.buf.push(DOUBLE_SHORT);
                    self.buf.extend_from_slice(&(whole as i16).to_be_bytes());
                    return;
                }
                _ => {}
            }
        }
        let mills = (v * 1000.0) as i32;
        if 0.001 * f64::from(mills) == v {
            self.buf.push(DOUBLE_MILL);
            self.buf.extend_from_slice(&mills.to_be_bytes());
        } else {
            self.buf.push(DOUBLE);
            self.buf.extend_from_slice(&v.to_bits().to_be_bytes());
        }
    }

    /// Writes a `java.util.Date` (milliseconds since the epoch): whole minutes in 5 bytes, else 9.
    pub fn write_date(&mut self, millis: i64) {
        let minutes = millis / 60_000;
        if millis % 60_000 == 0 && i32::try_from(minutes).is_ok() {
            self.buf.push(DATE_MINUTES);
            self.buf.extend_from_slice(&(minutes as i32).to_be_bytes());
        } else {
            self.buf.push(DATE_MILLIS);
            self.buf.extend_from_slice(&millis.to_be_bytes());
        }
    }

    /// Writes a `String`. Lengths count UTF-16 units; strings over 32768 units are cut into `R`
    /// chunks, never between the two halves of a surrogate pair.
    pub fn write_string(&mut self, s: &str) {
        let mut rest = s;
        let mut units = text::utf16_len(s);
        while units > STRING_CHUNK_UNITS {
            let (split, chunk_units) = text::split_at_units(rest, STRING_CHUNK_UNITS);
            self.buf.push(STRING_CHUNK);
            self.buf
                .extend_from_slice(&(chunk_units as u16).to_be_bytes());
            text::encode_into(&rest[..split], &mut self.buf);
            rest = &rest[split..];
            units -= chunk_units;
        }
        if units <= STRING_DIRECT_MAX {
            self.buf.push(units as u8);
        } else if units <= STRING_SHORT_MAX {
            self.buf.push(STRING_SHORT + (units >> 8) as u8);
            self.buf.push(units as u8);
        } else {
            self.buf.push(STRING_FINAL);
            self.buf.extend_from_slice(&(units as u16).to_be_bytes());
        }
        text::encode_into(rest, &mut self.buf);
    }

    /// Dubbo's `writeUTF`: in hessian2 it is the same as [`Hessian2Writer::write_string`]. The
    /// request header fields (dubbo version, service, version, method, parameter descriptor) use it.
    pub fn write_utf(&mut self, s: &str) {
        self.write_string(s);
    }

    /// Writes a `byte[]`. Payloads over 32768 bytes are cut into `A` chunks of that size (Java's
    /// chunk size depends on its buffer; readers accept any).
    pub fn write_binary(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while rest.len() > BINARY_CHUNK_BYTES {
            let (chunk, tail) = rest.split_at(BINARY_CHUNK_BYTES);
            self.buf.push(BINARY_CHUNK);
            self.buf
                .extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            self.buf.extend_from_slice(chunk);
            rest = tail;
        }
        let len = rest.len();
        if len <= BINARY_DIRECT_MAX {
            self.buf.push(BINARY_DIRECT + len as u8);
        } else if len <= BINARY_SHORT_MAX {
            self.buf.push(BINARY_SHORT + (len >> 8) as u8);
            self.buf.push(len as u8);
        } else {
            self.buf.push(BINARY_FINAL);
            self.buf.extend_from_slice(&(len as u16).to_be_bytes());
        }
        self.buf.extend_from_slice(rest);
    }

    /// Writes Dubbo attachments, a Java `Map<String, String>`, as an untyped map `H ... Z`.
    ///
    /// ```
    /// use rudder_hessian::Hessian2Writer;
    /// let mut w = Hessian2Writer::new();
    /// w.write_attachments([("dubbo", "2.0.2")]);
    /// assert_eq!(w.into_bytes(), b"H\x05dubbo\x052.0.2Z");
    /// ```
    pub fn write_attachments<K, V>(&mut self, entries: impl IntoIterator<Item = (K, V)>)
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        // The map is a referable value in Java's numbering.
        self.refs_written += 1;
        self.buf.push(MAP_UNTYPED);
        for (k, v) in entries {
            self.write_string(k.as_ref());
            self.write_string(v.as_ref());
        }
        self.buf.push(END);
    }

    /// Writes any [`Value`], with class definitions and type names reused within this stream.
    ///
    /// Lists are written with their length (Java's fixed-length forms). An object's class name must
    /// not be empty (no Java class has one, and readers reject it); a [`Value::Ref`] must name a
    /// list, map or object already written to this stream (see [`Hessian2Writer::ref_count`]).
    pub fn write_value(&mut self, value: &Value) {
        match value {
            Value::Null => self.write_null(),
            Value::Bool(v) => self.write_bool(*v),
            Value::Int(v) => self.write_int(*v),
            Value::Long(v) => self.write_long(*v),
            Value::Double(v) => self.write_double(*v),
            Value::Date(v) => self.write_date(*v),
            Value::String(s) => self.write_string(s),
            Value::Binary(b) => self.write_binary(b),
            Value::List { type_name, items } => {
                self.write_list_header(type_name.as_ref(), items.len());
                for item in items {
                    self.write_value(item);
                }
            }
            Value::Map { type_name, entries } => {
                self.refs_written += 1;
                match type_name {
                    Some(t) => {
                        self.buf.push(MAP_TYPED);
                        self.write_type(t);
                    }
                    None => self.buf.push(MAP_UNTYPED),
                }
                for (k, v) in entries {
                    self.write_value(k);
                    self.write_value(v);
                }
                self.buf.push(END);
            }
            Value::Object { class, fields } => {
                let def = self.class_def(class, fields);
                self.refs_written += 1;
                if def <= OBJECT_DIRECT_MAX {
                    self.buf.push(OBJECT_DIRECT + def as u8);
                } else {
                    self.buf.push(OBJECT);
                    self.write_int(def as i32);
                }
                for (_, v) in fields {
                    self.write_value(v);
                }
            }
            Value::Ref(index) => {
                self.buf.push(REF);
                self.write_int(*index as i32);
            }
            Value::Decimal(_) | Value::BigInteger(_) | Value::Time(_) => {
                // As hessian-lite writes them: objects of a known shape (see `java_types`).
                if let Some(object) = java_types::to_object(value) {
                    self.write_value(&object);
                }
            }
        }
    }

    /// The number of lists, maps and objects written so far: the index the next one will have
    /// for a [`Value::Ref`].
    pub fn ref_count(&self) -> usize {
        self.refs_written
    }

    fn write_list_header(&mut self, type_name: Option<&Arc<str>>, len: usize) {
        self.refs_written += 1;
        match (type_name, len <= LIST_DIRECT_MAX) {
            (Some(t), true) => {
                self.buf.push(LIST_DIRECT_TYPED + len as u8);
                self.write_type(t);
            }
            (None, true) => self.buf.push(LIST_DIRECT_UNTYPED + len as u8),
            (Some(t), false) => {
                self.buf.push(LIST_FIXED_TYPED);
                self.write_type(t);
                self.write_int(len as i32);
            }
            (None, false) => {
                self.buf.push(LIST_FIXED_UNTYPED);
                self.write_int(len as i32);
            }
        }
    }

    /// A type name is written once per stream; later uses refer to it by index.
    fn write_type(&mut self, name: &Arc<str>) {
        let recent = match &self.recent_type {
            Some((last, index)) if Arc::ptr_eq(last, name) => Some(*index),
            _ => None,
        };
        if let Some(index) = recent.or_else(|| self.types.get(&**name).copied()) {
            self.write_int(index as i32);
            self.recent_type = Some((Arc::clone(name), index));
        } else {
            let index = self.types.len();
            self.types.insert(Arc::clone(name), index);
            self.write_string(name);
            self.recent_type = Some((Arc::clone(name), index));
        }
    }

    /// The definition index for this class and field list, writing the `C` definition first if the
    /// stream has none yet.
    fn class_def(&mut self, class: &Arc<str>, fields: &[(Arc<str>, Value)]) -> usize {
        let same_fields = |names: &[Arc<str>]| {
            names.len() == fields.len()
                && names
                    .iter()
                    .zip(fields)
                    .all(|(a, (b, _))| Arc::ptr_eq(a, b) || a == b)
        };
        let recent = self
            .recent_classes
            .iter()
            .find(|(c, d)| Arc::ptr_eq(c, class) && same_fields(&self.def_fields[*d]))
            .map(|(_, d)| *d);
        if let Some(index) = recent {
            return index;
        }
        let known = self.classes.get(&**class).and_then(|defs| {
            defs.iter()
                .copied()
                .find(|d| same_fields(&self.def_fields[*d]))
        });
        let index = match known {
            Some(index) => index,
            None => {
                let index = self.def_fields.len();
                self.buf.push(CLASS_DEF);
                self.write_string(class);
                self.write_int(fields.len() as i32);
                for (name, _) in fields {
                    self.write_string(name);
                }
                self.def_fields
                    .push(fields.iter().map(|(n, _)| Arc::clone(n)).collect());
                self.classes
                    .entry(Arc::clone(class))
                    .or_default()
                    .push(index);
                index
            }
        };
        if self.recent_classes.len() == RECENT_CLASSES {
            self.recent_classes.remove(0);
        }
        self.recent_classes.push((Arc::clone(class), index));
        index
    }
}
