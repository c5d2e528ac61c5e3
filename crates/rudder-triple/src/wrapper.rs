//! Dubbo's wrapper messages for Java interface (POJO) services over Triple, and the hessian2 inside.
//!
//! A Java interface method's arguments are not protobuf messages, so Dubbo "wraps" them
//! (`ReflectionPackableMethod`, `TripleCustomerProtocolWapper`): the request is a
//! `TripleRequestWrapper` holding one hessian2 stream per argument and each argument's Java class
//! name, the response a `TripleResponseWrapper` holding one hessian2 value and its class name. Both are
//! protobuf (`dubbo-rpc-triple/src/main/proto/triple_wrapper.proto`, package `org.apache.dubbo.triple`).

use rudder_common::invocation::Invocation;
use rudder_common::value::{JavaException, Value};
use rudder_hessian::{DecodeLimits, Hessian2Reader, Hessian2Writer};

/// What Dubbo writes as `serializeType` for hessian2 (`convertHessianToWrapper` renames it).
pub(crate) const HESSIAN4: &str = "hessian4";

/// `TripleRequestWrapper`: the arguments of one call.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TripleRequestWrapper {
    /// `hessian4` for hessian2.
    #[prost(string, tag = "1")]
    pub(crate) serialize_type: String,
    /// One serialized stream per argument.
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub(crate) args: Vec<Vec<u8>>,
    /// Each argument's Java class name (`Class.getName()`: `int`, `[Ljava.lang.String;`).
    #[prost(string, repeated, tag = "3")]
    pub(crate) arg_types: Vec<String>,
}

/// `TripleResponseWrapper`: the returned value, or the thrown exception.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TripleResponseWrapper {
    /// The serialization of `data`; `hessian4` for hessian2.
    #[prost(string, tag = "1")]
    pub(crate) serialize_type: String,
    /// One serialized value.
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) data: Vec<u8>,
    /// The value's Java class name.
    #[prost(string, tag = "3")]
    pub(crate) r#type: String,
}

// Hessian's own type names for `String[]` and `Object[]`, as Java's serializer writes them, and
// the Java class names of `$invoke(String, String[], Object[])`'s parameters.
const STRING_ARRAY: &str = "[string";
const OBJECT_ARRAY: &str = "[object";
const GENERIC_ARG_TYPES: [&str; 3] = [
    "java.lang.String",
    "[Ljava.lang.String;",
    "[Ljava.lang.Object;",
];

/// The request wrapper of `invocation`: each argument in its own hessian2 stream (Dubbo resets its
/// output per argument, so no class definition or reference is shared between them).
pub(crate) fn request_wrapper(invocation: &Invocation) -> TripleRequestWrapper {
    let encode = |value: &Value| {
        let mut w = Hessian2Writer::new();
        w.write_value(value);
        w.into_bytes()
    };
    let (args, arg_types) = if invocation.is_generic() {
        let types = Value::List {
            type_name: Some(STRING_ARRAY.into()),
            items: invocation
                .parameter_types()
                .iter()
                .map(|t| Value::from(t.as_str()))
                .collect(),
        };
        let values = Value::List {
            type_name: Some(OBJECT_ARRAY.into()),
            items: invocation.arguments().to_vec(),
        };
        let method = Value::from(invocation.method_name());
        (
            vec![encode(&method), encode(&types), encode(&values)],
            GENERIC_ARG_TYPES.map(str::to_owned).to_vec(),
        )
    } else {
        (
            invocation.arguments().iter().map(encode).collect(),
            invocation
                .parameter_types()
                .iter()
                .map(|t| java_class_name(t))
                .collect(),
        )
    };
    TripleRequestWrapper {
        serialize_type: HESSIAN4.to_owned(),
        args,
        arg_types,
    }
}

/// Why a response wrapper could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WrapperError {
    /// The provider used a serialization rudder does not read.
    Serialization(String),
    /// The hessian2 value is malformed or over its decode budget.
    Hessian(String),
}

impl std::fmt::Display for WrapperError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WrapperError::Serialization(kind) => write!(
                f,
                "the provider answered in serialization {kind:?}; rudder reads hessian2 (hessian4) only"
            ),
            WrapperError::Hessian(e) => write!(f, "the answer's hessian2 value does not decode: {e}"),
        }
    }
}

/// The value a response wrapper carries, decoded within `limits`. An empty `data` is `null` (Java
/// writes nothing for a `void` method).
pub(crate) fn response_value(
    wrapper: &TripleResponseWrapper,
    limits: DecodeLimits,
) -> Result<Value, WrapperError> {
    if !wrapper.serialize_type.is_empty() && wrapper.serialize_type != HESSIAN4 {
        return Err(WrapperError::Serialization(wrapper.serialize_type.clone()));
    }
    if wrapper.data.is_empty() {
        return Ok(Value::Null);
    }
    Hessian2Reader::with_limits(&wrapper.data, limits)
        .read_value()
        .map_err(|e| WrapperError::Hessian(e.to_string()))
}

/// The business exception a response wrapper carries (a serialized `Throwable`); a value that is not
/// one is still reported, by the wrapper's class name.
pub(crate) fn response_exception(
    wrapper: &TripleResponseWrapper,
    limits: DecodeLimits,
) -> Result<JavaException, WrapperError> {
    let thrown = response_value(wrapper, limits)?;
    Ok(
        JavaException::from_value(&thrown).unwrap_or_else(|| JavaException {
            class: match &thrown {
                Value::Object { class, .. } => class.to_string(),
                _ if !wrapper.r#type.is_empty() => wrapper.r#type.clone(),
                _ => "java.lang.Throwable".to_owned(),
            },
            message: None,
            cause: None,
        }),
    )
}

/// `Class.getName()` of a Java type as rudder's invocations write it: `int`, `java.lang.String`,
/// `java.lang.String[]` → `[Ljava.lang.String;`, `int[][]` → `[[I`; generics are erased, and a name
/// already in `[`-form is kept.
pub(crate) fn java_class_name(java_type: &str) -> String {
    let java_type = java_type.trim();
    if java_type.starts_with('[') {
        return java_type.to_owned();
    }
    let (base, suffix) = match java_type.find('<') {
        Some(open) => (
            &java_type[..open],
            java_type
                .rfind('>')
                .map_or("", |close| &java_type[close + 1..]),
        ),
        None => (java_type, ""),
    };
    let mut base = base.trim();
    let mut depth = suffix.matches("[]").count();
    while let Some(stripped) = base.strip_suffix("[]") {
        base = stripped.trim_end();
        depth += 1;
    }
    if depth == 0 {
        return base.to_owned();
    }
    let element = match base {
        "boolean" => "Z".to_owned(),
        "byte" => "B".to_owned(),
        "char" => "C".to_owned(),
        "double" => "D".to_owned(),
        "float" => "F".to_owned(),
        "int" => "I".to_owned(),
        "long" => "J".to_owned(),
        "short" => "S".to_owned(),
        class => format!("L{class};"),
    };
    format!("{}{element}", "[".repeat(depth))
}

#[cfg(test)]
mod tests;
