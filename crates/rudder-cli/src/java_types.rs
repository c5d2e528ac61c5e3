//! Java parameter types for command-line arguments: given (`--types`) or inferred from JSON.

use anyhow::{bail, Context, Result};
use rudder_common::Value;
use serde_json::Value as Json;

use crate::field_types::{self, FieldTypes};
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

/// The call's arguments: each JSON item converted to its Java type, one type per item (an error
/// naming both counts otherwise, and the argument that does not convert), objects' fields converted
/// to the types the metadata's `fields` declare (none known: `FieldTypes::default()`).
pub(crate) fn arguments_in(
    fields: &FieldTypes,
    types: &[String],
    items: &[Json],
    generic: bool,
) -> Result<Vec<Value>> {
    if types.len() != items.len() {
        bail!(
            "--types names {} parameter(s) but --args has {}",
            types.len(),
            items.len()
        );
    }
    types
        .iter()
        .zip(items)
        .enumerate()
        .map(|(i, (t, j))| {
            convert_in(fields, t, j, generic).with_context(|| format!("argument {}", i + 1))
        })
        .collect()
}

/// Converts `json` to the value a Java parameter of type `java_type` expects. `generic` calls send
/// objects as maps with a `class` entry (Dubbo's `PojoUtils` form); direct calls send typed objects.
///
/// `java.math.BigDecimal` and `BigInteger` take a string of digits (`"12.34"`; a whole JSON number
/// also works, a fractional one is refused: it has been through a double), `java.util.Date` and the
/// `java.time` types an ISO-8601 string (`Date` also its epoch milliseconds), and any other class
/// given a string is taken as an enum constant (`"BLUE"`): an enum object in a direct call, its
/// name in a generic one (which Dubbo's `PojoUtils` turns into the constant).
#[cfg(test)]
pub(crate) fn convert(java_type: &str, json: &Json, generic: bool) -> Result<Value> {
    convert_in(&FieldTypes::default(), java_type, json, generic)
}

/// [`convert`] knowing the classes' field types: in a direct call an object's fields, a typed
/// list's items and a typed map's values are converted to their declared types (a BigDecimal field
/// from `"12.34"`, an enum field from `"BLUE"`), so the provider reads them without `--generic`.
pub(crate) fn convert_in(
    fields: &FieldTypes,
    java_type: &str,
    json: &Json,
    generic: bool,
) -> Result<Value> {
    if !generic {
        if let Some(value) = convert_typed_container(fields, java_type, json)? {
            return Ok(value);
        }
    }
    let java_type = field_types::raw(java_type);
    if json.is_null() {
        if is_primitive(java_type) {
            bail!("null given for primitive parameter type {java_type}");
        }
        return Ok(Value::Null);
    }
    if let Some(value) = typed(java_type, json)? {
        return Ok(value);
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
            Json::Object(given) if generic => {
                let mut entries = vec![(Value::from("class"), Value::from(class))];
                for (k, v) in given {
                    // A field the metadata types goes as that type's value where Dubbo's
                    // `PojoUtils` would not convert the text (a `Date` from ISO-8601, an
                    // `Instant`); the provider keeps a value already of the field's type.
                    let value = match fields.field(class, k) {
                        Some(t) => convert_in(fields, t, v, true)
                            .with_context(|| format!("field {k} of {class} ({t})"))?,
                        None => json::to_value(v),
                    };
                    entries.push((Value::from(k.as_str()), value));
                }
                Value::Map {
                    type_name: None,
                    entries,
                }
            }
            Json::Object(given) => Value::Object {
                class: class.into(),
                fields: given
                    .iter()
                    .map(|(k, v)| {
                        let value = match fields.field(class, k) {
                            Some(t) => convert_in(fields, t, v, false)
                                .with_context(|| format!("field {k} of {class} ({t})"))?,
                            None => json::to_value(v),
                        };
                        Ok((k.as_str().into(), value))
                    })
                    .collect::<Result<_>>()?,
            },
            Json::String(constant) if !generic && !class.starts_with("java.") => {
                Value::java_enum(class, constant)
            }
            other => json::to_value(other),
        },
    };
    Ok(value)
}

/// A list or array whose element type, or a map whose value type, the type names: its items
/// converted to that type. `None` for anything else (converted as before).
fn convert_typed_container(
    fields: &FieldTypes,
    java_type: &str,
    json: &Json,
) -> Result<Option<Value>> {
    match json {
        Json::Array(items) => {
            let Some(element) = field_types::element_type(java_type) else {
                return Ok(None);
            };
            let items = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    convert_in(fields, element, item, false)
                        .with_context(|| format!("item {i} ({element})"))
                })
                .collect::<Result<_>>()?;
            Ok(Some(Value::List {
                type_name: None,
                items,
            }))
        }
        Json::Object(entries) => {
            let Some(value_type) = field_types::map_value_type(java_type) else {
                return Ok(None);
            };
            let entries = entries
                .iter()
                .map(|(k, v)| {
                    let value = convert_in(fields, value_type, v, false)
                        .with_context(|| format!("entry {k} ({value_type})"))?;
                    Ok((Value::from(k.as_str()), value))
                })
                .collect::<Result<_>>()?;
            Ok(Some(Value::Map {
                type_name: None,
                entries,
            }))
        }
        _ => Ok(None),
    }
}

/// The typed value of a `BigDecimal`, `BigInteger`, `Date` or `java.time` parameter; `None` for
/// any other type.
fn typed(java_type: &str, json: &Json) -> Result<Option<Value>> {
    let text = match json {
        Json::String(s) => s.clone(),
        Json::Number(n) if java_type == "java.util.Date" => match n.as_i64() {
            Some(millis) => return Ok(Some(Value::Date(millis))),
            None => bail!("{n} is not a java.util.Date: give ISO-8601 text or epoch milliseconds"),
        },
        // Whole numbers are exact in JSON; anything with a point or exponent went through f64.
        Json::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Json::Number(n) if java_type.starts_with("java.math.") => {
            bail!("{n} is read as a double: give a {java_type} as a string of digits (\"12.34\")")
        }
        other => other.to_string(),
    };
    match Value::from_java_text(java_type, &text) {
        None => Ok(None),
        Some(Ok(value)) => Ok(Some(value)),
        Some(Err(e)) => bail!("{e} (argument of type {java_type})"),
    }
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

    #[test]
    fn the_metadata_types_an_objects_fields() {
        let j = |s: &str| serde_json::from_str::<Json>(s).unwrap();
        let fields = FieldTypes::from_definitions([r#"{"types":[
            {"type":"peer.Invoice","properties":{"amount":"java.math.BigDecimal",
             "due":"java.time.LocalDate","color":"peer.Color","count":"long",
             "lines":"java.util.List<peer.Line>"}},
            {"type":"peer.Line","properties":{"price":"java.math.BigDecimal"}}]}"#]);
        let invoice = j(
            r#"{"amount":"12.34","due":"2026-12-31","color":"BLUE","count":2,
                           "lines":[{"price":"1.5"}],"note":"as given"}"#,
        );
        let Value::Object { fields: sent, .. } =
            convert_in(&fields, "peer.Invoice", &invoice, false).unwrap()
        else {
            panic!("an object")
        };
        let field = |name: &str| sent.iter().find(|(k, _)| &**k == name).unwrap().1.clone();
        assert_eq!(field("amount"), Value::Decimal("12.34".parse().unwrap()));
        assert_eq!(
            field("due"),
            convert("java.time.LocalDate", &j(r#""2026-12-31""#), false).unwrap()
        );
        assert_eq!(field("color"), Value::java_enum("peer.Color", "BLUE"));
        assert_eq!(field("count"), Value::Long(2));
        assert_eq!(field("note"), Value::from("as given"));
        let Value::List { items, .. } = field("lines") else {
            panic!("a list")
        };
        assert!(matches!(&items[0], Value::Object { class, fields }
            if &**class == "peer.Line" && fields[0].1 == Value::Decimal("1.5".parse().unwrap())));
        // Without the metadata the fields go as JSON gives them (the --generic hint's case).
        let Value::Object { fields: plain, .. } = convert("peer.Invoice", &invoice, false).unwrap()
        else {
            panic!("an object")
        };
        assert_eq!(plain[0].1, Value::from("12.34"));
        // A field that does not convert names itself.
        let e = convert_in(&fields, "peer.Invoice", &j(r#"{"amount":12.5}"#), false).unwrap_err();
        assert!(
            format!("{e:#}").starts_with("field amount of peer.Invoice (java.math.BigDecimal): "),
            "{e:#}"
        );
    }

    #[test]
    fn typed_java_parameters_take_text() {
        let j = |s: &str| serde_json::from_str::<Json>(s).unwrap();
        assert_eq!(
            convert("java.math.BigDecimal", &j(r#""12.340""#), false).unwrap(),
            Value::Decimal("12.340".parse().unwrap())
        );
        assert_eq!(
            convert("java.math.BigInteger", &j("12345678901234567"), false).unwrap(),
            Value::BigInteger("12345678901234567".parse().unwrap())
        );
        let e = convert("java.math.BigDecimal", &j("12.34"), false).unwrap_err();
        assert!(e.to_string().contains("as a string"), "{e}");
        assert!(convert("java.math.BigDecimal", &j(r#""12,3""#), false).is_err());
        assert_eq!(
            convert("java.util.Date", &j(r#""2026-12-01T23:30:00Z""#), false).unwrap(),
            Value::Date(1_796_167_800_000)
        );
        assert_eq!(
            convert("java.util.Date", &j("5"), false).unwrap(),
            Value::Date(5)
        );
        let day = convert("java.time.LocalDate", &j(r#""2026-12-31""#), true).unwrap();
        assert_eq!(json::from_value(&day), j(r#""2026-12-31""#));
        let e = convert("java.time.LocalDate", &j(r#""2026-02-30""#), false).unwrap_err();
        assert!(e.to_string().contains("LocalDate"), "{e}");
        assert_eq!(
            convert("peer.Color", &j(r#""BLUE""#), false).unwrap(),
            Value::java_enum("peer.Color", "BLUE")
        );
        assert_eq!(
            convert("peer.Color", &j(r#""BLUE""#), true).unwrap(),
            Value::from("BLUE")
        );
    }
}
