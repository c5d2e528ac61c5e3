//! serde support: Rust types to and from [`Value`].
//!
//! The mapping table is on [`to_value`].

mod de;
mod ser;

use serde::de::DeserializeOwned;
use serde::Serialize;
use thiserror::Error;

use super::Value;

/// Why a Rust value could not be turned into a [`Value`] or back.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SerdeError {
    /// A message from a `Serialize`/`Deserialize` implementation (e.g. a missing field).
    #[error("{0}")]
    Message(String),
    /// A Rust type with no Java counterpart (e.g. `u128`, or a `u64` over `i64::MAX`).
    #[error("cannot represent {0} in Hessian")]
    Unsupported(&'static str),
    /// The value is a cycle ([`Value::Ref`]), which a tree of Rust values cannot hold.
    #[error("cyclic reference #{0} cannot be deserialized")]
    Cycle(usize),
    /// [`to_object_value`] was given something that does not serialize as a struct or map.
    #[error("expected a struct or map to make an object of class {0}")]
    NotAnObject(String),
}

impl serde::ser::Error for SerdeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerdeError::Message(msg.to_string())
    }
}

impl serde::de::Error for SerdeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerdeError::Message(msg.to_string())
    }
}

/// A Rust type that stands for a Java class.
///
/// ```
/// use rudder_common::value::{to_java_object, JavaClass, Value};
/// #[derive(serde::Serialize)]
/// struct User { name: String, age: i32 }
/// impl JavaClass for User { const CLASS: &'static str = "org.apache.dubbo.demo.User"; }
///
/// let v = to_java_object(&User { name: "alice".into(), age: 42 })?;
/// assert!(matches!(&v, Value::Object { class, .. } if &**class == "org.apache.dubbo.demo.User"));
/// # Ok::<(), rudder_common::value::SerdeError>(())
/// ```
pub trait JavaClass {
    /// The fully qualified Java class name.
    const CLASS: &'static str;
}

/// Converts any serializable value to a [`Value`].
///
/// | Rust | Value | Java |
/// |---|---|---|
/// | `bool` | `Bool` | `boolean` |
/// | `i8`, `i16`, `i32`, `u8`, `u16` | `Int` | `int` |
/// | `i64`, `u32`, `u64` (up to `i64::MAX`) | `Long` | `long` |
/// | `f32`, `f64` | `Double` | `double` |
/// | `char`, `String`, `&str` | `String` | `String` |
/// | bytes (e.g. `serde_bytes`; plain `Vec<u8>` is a list) | `Binary` | `byte[]` |
/// | `Option<T>` | `Null` or `T` | nullable reference |
/// | `()`, unit structs | `Null` | `null` |
/// | `Vec<T>`, tuples, sets | untyped `List` | `ArrayList` |
/// | maps | untyped `Map` | `HashMap` |
/// | struct whose serde name contains a `.` | `Object` of that class | a POJO |
/// | any other struct | untyped `Map` keyed by field name | `HashMap` |
/// | unit enum variant | `String` of its name | (enum name) |
/// | other enum variants | one-entry `Map` `{variant: content}` | `HashMap` |
///
/// Give a struct its Java class with `#[serde(rename = "com.example.User")]` (which also works for
/// nested structs), or, for the top-level value only, with [`JavaClass`] and [`to_java_object`] or
/// with [`to_object_value`]. Java field names are camelCase: `#[serde(rename_all = "camelCase")]`
/// helps. Deserializing accepts objects and maps for structs, and a Java enum object (a `name`
/// field) for a unit variant.
///
/// # Example
///
/// ```
/// use rudder_common::value::{to_value, Value};
/// #[derive(serde::Serialize)]
/// #[serde(rename = "com.example.Point")]
/// struct Point { x: i32, y: i32 }
///
/// let v = to_value(&Point { x: 1, y: 2 })?;
/// assert_eq!(v, Value::Object {
///     class: "com.example.Point".into(),
///     fields: vec![("x".into(), Value::Int(1)), ("y".into(), Value::Int(2))],
/// });
/// # Ok::<(), rudder_common::value::SerdeError>(())
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, SerdeError> {
    value.serialize(ser::ValueSerializer)
}

/// Converts a serializable struct (or string-keyed map) to an object of the Java class `class`.
pub fn to_object_value<T: Serialize + ?Sized>(value: &T, class: &str) -> Result<Value, SerdeError> {
    match to_value(value)? {
        Value::Object { fields, .. } => Ok(Value::Object {
            class: class.into(),
            fields,
        }),
        Value::Map { entries, .. } => {
            let fields = entries
                .into_iter()
                .map(|(k, v)| match k {
                    Value::String(name) => Ok((name.into(), v)),
                    _ => Err(SerdeError::NotAnObject(class.to_owned())),
                })
                .collect::<Result<_, _>>()?;
            Ok(Value::Object {
                class: class.into(),
                fields,
            })
        }
        _ => Err(SerdeError::NotAnObject(class.to_owned())),
    }
}

/// Converts a [`JavaClass`] to an object of its class.
pub fn to_java_object<T: Serialize + JavaClass>(value: &T) -> Result<Value, SerdeError> {
    to_object_value(value, T::CLASS)
}

/// Builds a Rust value from a [`Value`] (objects and maps both fill structs).
///
/// ```
/// use rudder_common::value::{from_value, Value};
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct User { name: String, age: u8 }
///
/// let v = Value::Object {
///     class: "org.apache.dubbo.demo.User".into(),
///     fields: vec![("name".into(), Value::from("alice")), ("age".into(), Value::Int(42))],
/// };
/// assert_eq!(from_value::<User>(v)?, User { name: "alice".into(), age: 42 });
/// # Ok::<(), rudder_common::value::SerdeError>(())
/// ```
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, SerdeError> {
    T::deserialize(de::ValueDeserializer(value))
}
