//! The dynamic value model: every Hessian 2.0 value rudder can read or write.

use std::sync::Arc;

use super::{BigDecimal, BigInteger, Date, JavaTime, ParseError};

/// One Hessian value, as a Java peer would see it.
///
/// Integers keep their Java width (`int` vs `long`) because the wire form and the Java parameter type
/// depend on it. Lists and maps keep their optional Java type name; objects keep their class name and
/// field order, which is the order of the class definition on the wire.
///
/// Class names, field names and type names are [`Arc<str>`]: a stream defines each once and every
/// object or typed list of it shares that one allocation, so a long name costs its bytes once, not
/// once per value (a decoder that copied it per value could be made to allocate gigabytes from a
/// small body). Build them from a `&str` or `String` with `.into()`.
///
/// ```
/// use rudder_common::value::Value;
/// let v = Value::from("hello");
/// assert_eq!(v.as_str(), Some("hello"));
/// ```
// Exhaustive on purpose: every codec must say how it carries every variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Java `null`.
    Null,
    /// Java `boolean`.
    Bool(bool),
    /// Java `int` (also `byte`, `short`, `char` codes on decode).
    Int(i32),
    /// Java `long`.
    Long(i64),
    /// Java `double` (also `float`).
    Double(f64),
    /// `java.util.Date`, milliseconds since the Unix epoch (see [`Date`] for its text form).
    Date(i64),
    /// `java.math.BigDecimal`, exact.
    Decimal(BigDecimal),
    /// `java.math.BigInteger`.
    BigInteger(BigInteger),
    /// A `java.time` value (`LocalDate`, `Instant`, `Duration`...).
    Time(JavaTime),
    /// Java `String`.
    String(String),
    /// `byte[]`.
    Binary(Vec<u8>),
    /// A list or array; `type_name` is the Java type when the peer sent one (e.g. `[java.lang.String`).
    List {
        /// Java type name, if any.
        type_name: Option<Arc<str>>,
        /// The elements.
        items: Vec<Value>,
    },
    /// A map; `type_name` is the Java type when the peer sent one (e.g. `java.util.HashMap`).
    Map {
        /// Java type name, if any.
        type_name: Option<Arc<str>>,
        /// The entries, in wire order.
        entries: Vec<(Value, Value)>,
    },
    /// An object of a Java class: the class name and its fields in definition order.
    Object {
        /// Fully qualified Java class name.
        class: Arc<str>,
        /// Field names and values, in class-definition order.
        fields: Vec<(Arc<str>, Value)>,
    },
    /// A back-reference (Hessian `Q`) to the n-th list, map or object of the stream, counted from 0 in
    /// the order their headers appear.
    ///
    /// The reader only produces this for a cycle: a reference to a value that is still being decoded,
    /// such as a Java `Throwable` whose `cause` is itself. References to finished values are expanded
    /// into copies. The writer emits `Q` with the index as given, so it must name a list, map or object
    /// written earlier in the same stream.
    Ref(usize),
}

impl Value {
    /// The string inside a [`Value::String`], if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number as an `i32`, if this is an [`Value::Int`] or a [`Value::Long`] that fits.
    ///
    /// ```
    /// use rudder_common::value::Value;
    /// assert_eq!(Value::Long(7).as_i32(), Some(7));
    /// assert_eq!(Value::Long(1 << 40).as_i32(), None);
    /// ```
    pub fn as_i32(&self) -> Option<i32> {
        match *self {
            Value::Int(v) => Some(v),
            Value::Long(v) => i32::try_from(v).ok(),
            _ => None,
        }
    }

    /// The number as an `i64`, if this is an [`Value::Int`] or a [`Value::Long`].
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(i64::from(v)),
            Value::Long(v) => Some(v),
            _ => None,
        }
    }

    /// The number as an `f64`, if this is a [`Value::Double`], [`Value::Int`] or [`Value::Long`].
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Double(v) => Some(v),
            Value::Int(v) => Some(f64::from(v)),
            // Java widens long to double the same lossy way.
            Value::Long(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The flag inside a [`Value::Bool`], if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// Whether this is Java `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A field of an [`Value::Object`], or the value under a string key of a [`Value::Map`].
    ///
    /// ```
    /// use rudder_common::value::Value;
    /// let user = Value::Object {
    ///     class: "com.example.User".into(),
    ///     fields: vec![("name".into(), Value::from("alice"))],
    /// };
    /// assert_eq!(user.get("name").and_then(Value::as_str), Some("alice"));
    /// ```
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object { fields, .. } => {
                fields.iter().find(|(k, _)| &**k == name).map(|(_, v)| v)
            }
            Value::Map { entries, .. } => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(name))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The typed value of Java class `class` written as `text` (digits for `BigDecimal` and
    /// `BigInteger`, ISO-8601 for `java.util.Date` and `java.time`); `None` if `class` is not one
    /// of those.
    ///
    /// ```
    /// use rudder_common::value::Value;
    /// let price = Value::from_java_text("java.math.BigDecimal", "12.34").unwrap()?;
    /// assert_eq!(price.to_java_text().as_deref(), Some("12.34"));
    /// assert!(Value::from_java_text("java.time.LocalDate", "2026-02-30").unwrap().is_err());
    /// assert!(Value::from_java_text("java.lang.String", "x").is_none());
    /// # Ok::<(), rudder_common::value::ParseError>(())
    /// ```
    pub fn from_java_text(class: &str, text: &str) -> Option<Result<Value, ParseError>> {
        let parsed = match class {
            "java.math.BigDecimal" => text.parse().map(Value::Decimal),
            "java.math.BigInteger" => text.parse().map(Value::BigInteger),
            "java.util.Date" => text.parse::<Date>().map(|d| Value::Date(d.millis())),
            _ => return JavaTime::parse(class, text).map(|r| r.map(Value::Time)),
        };
        Some(parsed)
    }

    /// The text of a [`Value::Decimal`], [`Value::BigInteger`], [`Value::Date`] or
    /// [`Value::Time`] (the inverse of [`Value::from_java_text`]); `None` for other values.
    pub fn to_java_text(&self) -> Option<String> {
        match self {
            Value::Decimal(d) => Some(d.to_string()),
            Value::BigInteger(i) => Some(i.to_string()),
            Value::Date(ms) => Some(Date::from_millis(*ms).to_string()),
            Value::Time(t) => Some(t.to_string()),
            _ => None,
        }
    }

    /// A constant of the Java enum `class`, as hessian carries it: an object with one field,
    /// `name`.
    ///
    /// ```
    /// use rudder_common::value::Value;
    /// let blue = Value::java_enum("com.example.Color", "BLUE");
    /// assert_eq!(blue.enum_constant(), Some("BLUE"));
    /// ```
    pub fn java_enum(class: &str, constant: &str) -> Value {
        Value::Object {
            class: class.into(),
            fields: vec![("name".into(), Value::from(constant))],
        }
    }

    /// The constant's name, if this has the shape of a Java enum on the wire: an object whose only
    /// field is a string `name`. (A class with a single `String name` field has the same shape;
    /// hessian cannot tell them apart.)
    pub fn enum_constant(&self) -> Option<&str> {
        match self {
            Value::Object { fields, .. } if fields.len() == 1 && &*fields[0].0 == "name" => {
                fields[0].1.as_str()
            }
            _ => None,
        }
    }

    /// An untyped list (Java `ArrayList`) of the given items.
    pub fn list(items: Vec<Value>) -> Self {
        Value::List {
            type_name: None,
            items,
        }
    }

    /// An untyped map (Java `HashMap`) of the given entries.
    pub fn map(entries: Vec<(Value, Value)>) -> Self {
        Value::Map {
            type_name: None,
            entries,
        }
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Binary(v)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::list(items)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Long(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<BigDecimal> for Value {
    fn from(v: BigDecimal) -> Self {
        Value::Decimal(v)
    }
}

impl From<BigInteger> for Value {
    fn from(v: BigInteger) -> Self {
        Value::BigInteger(v)
    }
}

impl From<Date> for Value {
    fn from(v: Date) -> Self {
        Value::Date(v.millis())
    }
}

impl From<JavaTime> for Value {
    fn from(v: JavaTime) -> Self {
        Value::Time(v)
    }
}
