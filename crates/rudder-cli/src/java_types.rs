//! Java parameter types for command-line arguments: given (`--types`) or inferred from JSON.

use anyhow::{bail, Result};
use rudder_common::Value;
use serde_json::Value as Json;

use crate::json;

/// The Java type a JSON value most naturally is, for calls made without `--types`.
pub(crate) fn infer(json: &Json) -> &'static str {
    match json {
        Json::Null => "java.lang.Object",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => "int",
        Json::Number(n) if n.is_i64() => "long",
        // Past i64::MAX no Java integer holds it; `json::to_value` sends it as a double too.
        Json::Number(_) => "double",
        Json::String(_) => "java.lang.String",
        Json::Array(_) => "java.util.List",
        Json::Object(_) => "java.util.Map",
    }
}

/// Converts `json` to the value a Java parameter of type `java_type` expects. `generic` calls send
/// objects as maps with a `class` entry (Dubbo's `PojoUtils` form); direct calls send typed objects.
pub(crate) fn convert(java_type: &str, json: &Json, generic: bool) -> Result<Value> {
    if json.is_null() {
        if is_primitive(java_type) {
            bail!("null given for primitive parameter type {java_type}");
        }
        return Ok(Value::Null);
    }
    let value = match java_type {
        "int" | "short" | "byte" | "java.lang.Integer" | "java.lang.Short" | "java.lang.Byte" => {
            let i = json.as_i64().ok_or_else(|| mismatch(java_type, json))?;
            Value::Int(
                i32::try_from(i).map_err(|_| anyhow::anyhow!("{i} does not fit {java_type}"))?,
            )
        }
        "long" | "java.lang.Long" => {
            Value::Long(json.as_i64().ok_or_else(|| mismatch(java_type, json))?)
        }
        "double" | "float" | "java.lang.Double" | "java.lang.Float" => {
            Value::Double(json.as_f64().ok_or_else(|| mismatch(java_type, json))?)
        }
        "boolean" | "java.lang.Boolean" => {
            Value::Bool(json.as_bool().ok_or_else(|| mismatch(java_type, json))?)
        }
        "char" | "java.lang.Character" | "java.lang.String" => match json {
            Json::String(s) => Value::String(s.clone()),
            other => Value::String(other.to_string()),
        },
        "java.lang.Object" => json::to_value(json),
        t if t.ends_with("[]") || t.starts_with('[') || t.starts_with("java.util.") => {
            json::to_value(json)
        }
        class => match json {
            Json::Object(fields) if generic => {
                let mut entries = vec![(Value::from("class"), Value::from(class))];
                entries.extend(
                    fields
                        .iter()
                        .map(|(k, v)| (Value::from(k.as_str()), json::to_value(v))),
                );
                Value::Map {
                    type_name: None,
                    entries,
                }
            }
            Json::Object(fields) => Value::Object {
                class: class.into(),
                fields: fields
                    .iter()
                    .map(|(k, v)| (k.as_str().into(), json::to_value(v)))
                    .collect(),
            },
            other => json::to_value(other),
        },
    };
    Ok(value)
}

fn is_primitive(java_type: &str) -> bool {
    matches!(
        java_type,
        "int" | "long" | "short" | "byte" | "double" | "float" | "boolean" | "char"
    )
}

fn mismatch(java_type: &str, json: &Json) -> anyhow::Error {
    let article = if java_type.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    anyhow::anyhow!("argument {json} is not {article} {java_type}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inference_and_conversion() {
        let j = |s: &str| serde_json::from_str::<Json>(s).unwrap();
        assert_eq!(infer(&j("1")), "int");
        assert_eq!(infer(&j("3000000000")), "long");
        let huge = j("18446744073709551615");
        assert_eq!(infer(&huge), "double");
        assert_eq!(
            convert(infer(&huge), &huge, false).unwrap(),
            json::to_value(&huge)
        );
        assert_eq!(infer(&j("\"x\"")), "java.lang.String");
        assert_eq!(convert("long", &j("5"), false).unwrap(), Value::Long(5));
        assert_eq!(
            convert("double", &j("5"), false).unwrap(),
            Value::Double(5.0)
        );
        assert_eq!(
            convert("int", &j("\"x\""), false).unwrap_err().to_string(),
            "argument \"x\" is not an int"
        );
        assert_eq!(
            convert("long", &j("true"), false).unwrap_err().to_string(),
            "argument true is not a long"
        );
        assert!(convert("int", &j("null"), false).is_err());
        assert_eq!(
            convert("com.x.User", &j(r#"{"name":"a"}"#), false).unwrap(),
            Value::Object {
                class: "com.x.User".into(),
                fields: vec![("name".into(), Value::from("a"))]
            }
        );
        let generic = convert("com.x.User", &j(r#"{"name":"a"}"#), true).unwrap();
        assert!(
            matches!(generic, Value::Map { ref entries, .. } if entries[0] == (Value::from("class"), Value::from("com.x.User")))
        );
    }
}
