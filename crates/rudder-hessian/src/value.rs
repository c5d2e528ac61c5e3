//! The dynamic value model: every Hessian 2.0 value rudder can read or write.

/// One Hessian value, as a Java peer would see it.
///
/// Integers keep their Java width (`int` vs `long`) because the wire form and the Java parameter type
/// depend on it. Lists and maps keep their optional Java type name; objects keep their class name and
/// field order, which is the order of the class definition on the wire.
///
/// ```
/// use rudder_hessian::Value;
/// let v = Value::from("hello");
/// assert_eq!(v.as_str(), Some("hello"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// `java.util.Date`, milliseconds since the Unix epoch.
    Date(i64),
    /// Java `String`.
    String(String),
    /// `byte[]`.
    Binary(Vec<u8>),
    /// A list or array; `type_name` is the Java type when the peer sent one (e.g. `[java.lang.String`).
    List {
        /// Java type name, if any.
        type_name: Option<String>,
        /// The elements.
        items: Vec<Value>,
    },
    /// A map; `type_name` is the Java type when the peer sent one (e.g. `java.util.HashMap`).
    Map {
        /// Java type name, if any.
        type_name: Option<String>,
        /// The entries, in wire order.
        entries: Vec<(Value, Value)>,
    },
    /// An object of a Java class: the class name and its fields in definition order.
    Object {
        /// Fully qualified Java class name.
        class: String,
        /// Field names and values, in class-definition order.
        fields: Vec<(String, Value)>,
    },
}

impl Value {
    /// The string inside a [`Value::String`], if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
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
