//! The decoder: Hessian 2.0 bytes to [`Value`]s, accepting every form of the grammar.

mod budget;
mod input;
mod refs;

use std::sync::Arc;

use crate::error::DecodeError;
use crate::java_types;
use crate::tags::*;
use rudder_common::Value;

use budget::Budget;
pub use budget::DecodeLimits;
use refs::RefTable;

/// A class definition (`C`): the class name and its field names, in wire order. Every object of
/// the class shares these names.
#[derive(Debug)]
struct ClassDef {
    name: Arc<str>,
    fields: Vec<Arc<str>>,
}

/// Reads one Hessian 2.0 stream of values from a byte slice.
///
/// Class definitions, type names and back-references are shared by every value read from one reader,
/// as they are in a Java `Hessian2Input`; read a whole Dubbo body with one reader.
///
/// A back-reference to a finished list, map or object is expanded into a copy of it; a reference to
/// one still being read (a cycle) becomes [`Value::Ref`].
///
/// Everything read from one reader shares one memory budget ([`DecodeLimits::budget_for`] its
/// input); a stream that would decode to more fails with [`DecodeError::BudgetExceeded`].
///
/// ```
/// use rudder_common::value::Value;
/// use rudder_hessian::Hessian2Reader;
/// // A Dubbo response body: kind flag 4, the value, the attachments.
/// let body = b"\x94\x02hiH\x05dubbo\x052.0.2Z";
/// let mut r = Hessian2Reader::new(body);
/// assert_eq!(r.read_int()?, 4);
/// assert_eq!(r.read_value()?, Value::from("hi"));
/// assert_eq!(r.read_value()?.get("dubbo"), Some(&Value::from("2.0.2")));
/// assert!(r.is_at_end());
/// # Ok::<(), rudder_hessian::DecodeError>(())
/// ```
#[derive(Debug)]
pub struct Hessian2Reader<'a> {
    input: &'a [u8],
    pos: usize,
    limits: DecodeLimits,
    classes: Vec<ClassDef>,
    types: Vec<Arc<str>>,
    refs: RefTable,
    depth: usize,
    budget: Budget,
}

impl<'a> Hessian2Reader<'a> {
    /// A reader over `input` with the default [`DecodeLimits`].
    pub fn new(input: &'a [u8]) -> Self {
        Self::with_limits(input, DecodeLimits::default())
    }

    /// A reader over `input` with the given limits.
    pub fn with_limits(input: &'a [u8], limits: DecodeLimits) -> Self {
        Hessian2Reader {
            input,
            pos: 0,
            limits,
            classes: Vec::new(),
            types: Vec::new(),
            refs: RefTable::default(),
            depth: 0,
            budget: Budget::new(limits.budget_for(input.len())),
        }
    }

    /// Offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether every byte has been read.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    /// Reads the next value, whatever its type.
    pub fn read_value(&mut self) -> Result<Value, DecodeError> {
        self.read_any()
    }

    /// Reads an `int` (any of its compact forms); anything else is an error.
    ///
    /// Dubbo's response kind flag is read this way.
    pub fn read_int(&mut self) -> Result<i32, DecodeError> {
        self.read_int_field("int")
    }

    /// Reads a `String` (what Dubbo's `writeUTF` wrote); `null` or any other type is an error.
    pub fn read_string(&mut self) -> Result<String, DecodeError> {
        let offset = self.pos;
        let tag = self.byte("string")?;
        if is_string_tag(tag) {
            self.string_body(tag, offset)
        } else {
            Err(DecodeError::UnexpectedTag {
                tag,
                offset,
                expected: "string",
            })
        }
    }

    fn read_any(&mut self) -> Result<Value, DecodeError> {
        loop {
            let offset = self.pos;
            let tag = self.byte("value")?;
            let value = match tag {
                NULL => Value::Null,
                TRUE => Value::Bool(true),
                FALSE => Value::Bool(false),
                0x80..=0xbf | 0xc0..=0xcf | 0xd0..=0xd7 | INT => Value::Int(self.int_body(tag)?),
                0xd8..=0xef => Value::Long(i64::from(tag) - i64::from(LONG_ZERO)),
                0xf0..=0xff => {
                    let low = i64::from(self.byte("long")?);
                    Value::Long(((i64::from(tag) - i64::from(LONG_BYTE_ZERO)) << 8) | low)
                }
                0x38..=0x3f => {
                    let low = i64::from(u16::from_be_bytes(self.array("long")?));
                    Value::Long(((i64::from(tag) - i64::from(LONG_SHORT_ZERO)) << 16) | low)
                }
                LONG_INT => Value::Long(i64::from(i32::from_be_bytes(self.array("long")?))),
                LONG => Value::Long(i64::from_be_bytes(self.array("long")?)),
                DOUBLE_ZERO => Value::Double(0.0),
                DOUBLE_ONE => Value::Double(1.0),
                DOUBLE_BYTE => Value::Double(f64::from(self.byte("double")? as i8)),
                DOUBLE_SHORT => Value::Double(f64::from(i16::from_be_bytes(self.array("double")?))),
                DOUBLE_MILL => {
                    let mills = i32::from_be_bytes(self.array("double")?);
                    Value::Double(0.001 * f64::from(mills))
                }
                DOUBLE => Value::Double(f64::from_bits(u64::from_be_bytes(self.array("double")?))),
                DATE_MILLIS => Value::Date(i64::from_be_bytes(self.array("date")?)),
                DATE_MINUTES => {
                    let minutes = i32::from_be_bytes(self.array("date")?);
                    Value::Date(i64::from(minutes) * 60_000)
                }
                t if is_string_tag(t) => Value::String(self.string_body(t, offset)?),
                0x20..=0x2f | 0x34..=0x37 | BINARY_FINAL | BINARY_CHUNK => {
                    Value::Binary(self.binary_body(tag, offset)?)
                }
                LIST_VARIABLE_TYPED
                | LIST_VARIABLE_UNTYPED
                | LIST_FIXED_TYPED
                | LIST_FIXED_UNTYPED
                | 0x70..=0x7f => self.list(tag, offset)?,
                MAP_UNTYPED | MAP_TYPED => self.map(tag, offset)?,
                CLASS_DEF => {
                    // A definition is not a value: the value follows it.
                    self.class_def(offset)?;
                    continue;
                }
                OBJECT => {
                    let def = self.read_int_field("class definition index")?;
                    self.object(i64::from(def), offset)?
                }
                0x60..=0x6f => self.object(i64::from(tag - OBJECT_DIRECT), offset)?,
                REF => {
                    let index = self.read_int_field("reference index")?;
                    self.resolve_ref(i64::from(index), offset)?
                }
                _ => return Err(DecodeError::UnknownTag { tag, offset }),
            };
            return Ok(value);
        }
    }

    fn list(&mut self, tag: u8, offset: usize) -> Result<Value, DecodeError> {
        let type_name = match tag {
            LIST_VARIABLE_TYPED | LIST_FIXED_TYPED | 0x70..=0x77 => Some(self.read_type()?),
            _ => None,
        };
        let len = match tag {
            LIST_FIXED_TYPED | LIST_FIXED_UNTYPED => {
                let len = self.read_int_field("list length")?;
                Some(self.check_count("list", len, offset)?)
            }
            0x70..=0x77 => Some(usize::from(tag - LIST_DIRECT_TYPED)),
            0x78..=0x7f => Some(usize::from(tag - LIST_DIRECT_UNTYPED)),
            _ => None,
        };
        self.enter(offset)?;
        let slot = self.refs.open(offset, &mut self.budget)?;
        let items = match len {
            Some(len) => {
                // The length is at most the bytes left; its slots are charged before they exist.
                let mut items = self.budget.vec_with_capacity(len, offset)?;
                for _ in 0..len {
                    items.push(self.read_any()?);
                }
                items
            }
            None => {
                let mut items = Vec::new();
                while !self.at_end_marker("list")? {
                    let item = self.read_any()?;
                    self.budget.push(&mut items, item, offset)?;
                }
                items
            }
        };
        self.refs.close(slot, self.pos);
        self.depth -= 1;
        Ok(Value::List { type_name, items })
    }

    fn map(&mut self, tag: u8, offset: usize) -> Result<Value, DecodeError> {
        let type_name = if tag == MAP_TYPED {
            Some(self.read_type()?)
        } else {
            None
        };
        self.enter(offset)?;
        let slot = self.refs.open(offset, &mut self.budget)?;
        let mut entries = Vec::new();
        while !self.at_end_marker("map")? {
            let key = self.read_any()?;
            let value = self.read_any()?;
            self.budget.push(&mut entries, (key, value), offset)?;
        }
        self.refs.close(slot, self.pos);
        self.depth -= 1;
        Ok(Value::Map { type_name, entries })
    }

    fn object(&mut self, def: i64, offset: usize) -> Result<Value, DecodeError> {
        let count = self.classes.len();
        let index =
            usize::try_from(def)
                .ok()
                .filter(|d| *d < count)
                .ok_or(DecodeError::BadClassRef {
                    index: def,
                    count,
                    offset,
                })?;
        self.enter(offset)?;
        let slot = self.refs.open(offset, &mut self.budget)?;
        let field_count = self.classes[index].fields.len();
        let mut fields = self.budget.vec_with_capacity(field_count, offset)?;
        for field in 0..field_count {
            let value = self.read_any()?;
            // Definitions are append-only, so the index still names the same one; the object
            // shares the definition's names rather than copying them.
            fields.push((Arc::clone(&self.classes[index].fields[field]), value));
        }
        self.refs.close(slot, self.pos);
        self.depth -= 1;
        let class = &self.classes[index].name;
        if let Some(typed) = java_types::from_object(class, &fields) {
            return Ok(typed);
        }
        Ok(Value::Object {
            class: Arc::clone(class),
            fields,
        })
    }

    fn class_def(&mut self, offset: usize) -> Result<(), DecodeError> {
        let name = self.read_string()?;
        let count = self.read_int_field("class field count")?;
        let count = self.check_count("class definition", count, offset)?;
        let mut fields = self.budget.vec_with_capacity(count, offset)?;
        for _ in 0..count {
            fields.push(Arc::from(self.read_string()?));
        }
        if name.is_empty() {
            return Err(DecodeError::InvalidClassDef {
                offset,
                reason: "empty class name",
            });
        }
        // Replaying a region for a back-reference meets definitions that are already known.
        if !self.refs.is_replaying() {
            let def = ClassDef {
                name: Arc::from(name),
                fields,
            };
            self.budget.push(&mut self.classes, def, offset)?;
        }
        Ok(())
    }

    /// A list or map type: a new name (a string) or the index of one seen earlier in the stream.
    /// Either way the name is shared with the type table, never copied.
    fn read_type(&mut self) -> Result<Arc<str>, DecodeError> {
        let offset = self.pos;
        let tag = self.peek("type")?;
        if is_string_tag(tag) {
            let name: Arc<str> = Arc::from(self.read_string()?);
            if !self.refs.is_replaying() {
                self.budget
                    .push(&mut self.types, Arc::clone(&name), offset)?;
            }
            return Ok(name);
        }
        let index = self.read_int_field("type")?;
        usize::try_from(index)
            .ok()
            .and_then(|i| self.types.get(i))
            .cloned()
            .ok_or(DecodeError::BadTypeRef {
                index: i64::from(index),
                count: self.types.len(),
                offset,
            })
    }

    fn read_int_field(&mut self, what: &'static str) -> Result<i32, DecodeError> {
        let offset = self.pos;
        let tag = self.byte(what)?;
        match tag {
            0x80..=0xbf | 0xc0..=0xcf | 0xd0..=0xd7 | INT => self.int_body(tag),
            _ => Err(DecodeError::UnexpectedTag {
                tag,
                offset,
                expected: what,
            }),
        }
    }

    fn int_body(&mut self, tag: u8) -> Result<i32, DecodeError> {
        Ok(match tag {
            0x80..=0xbf => i32::from(tag) - i32::from(INT_ZERO),
            0xc0..=0xcf => {
                let low = i32::from(self.byte("int")?);
                ((i32::from(tag) - i32::from(INT_BYTE_ZERO)) << 8) | low
            }
            0xd0..=0xd7 => {
                let low = i32::from(u16::from_be_bytes(self.array("int")?));
                ((i32::from(tag) - i32::from(INT_SHORT_ZERO)) << 16) | low
            }
            _ => i32::from_be_bytes(self.array("int")?),
        })
    }

    /// Checks a declared count against the limit and against what the rest of the input could hold
    /// (every item takes at least one byte).
    fn check_count(
        &self,
        what: &'static str,
        len: i32,
        offset: usize,
    ) -> Result<usize, DecodeError> {
        let limit = self.limits.max_length.min(self.remaining());
        usize::try_from(len)
            .ok()
            .filter(|n| *n <= limit)
            .ok_or(DecodeError::LengthOverLimit {
                what,
                len: i64::from(len),
                limit,
                offset,
            })
    }

    fn enter(&mut self, offset: usize) -> Result<(), DecodeError> {
        if self.depth >= self.limits.max_depth {
            return Err(DecodeError::TooDeep {
                limit: self.limits.max_depth,
                offset,
            });
        }
        self.depth += 1;
        Ok(())
    }

    /// Consumes the `Z` that ends a map or variable-length list, if it is next.
    fn at_end_marker(&mut self, context: &'static str) -> Result<bool, DecodeError> {
        if self.peek(context)? == END {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }
}

fn is_string_tag(tag: u8) -> bool {
    matches!(tag, 0x00..=0x1f | 0x30..=0x33 | STRING_FINAL | STRING_CHUNK)
}
