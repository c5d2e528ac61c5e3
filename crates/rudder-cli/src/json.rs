//! JSON arguments to Hessian values: how the command line spells Java arguments.

use anyhow::{bail, Context, Result};
use rudder_common::Value;
use serde_json::Value as Json;

/// Converts one JSON value: strings, booleans and null map directly; integers become Java `int` when they
/// fit and `long` otherwise; other numbers `double`; arrays lists; objects string-keyed maps.
pub(crate) fn to_value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i32::try_from(i).map_or(Value::Long(i), Value::Int),
            (None, Some(f)) => Value::Double(f),
            (None, None) => Value::String(n.to_string()),
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::List {
            type_name: None,
            items: items.iter().map(to_value).collect(),
        },
        Json::Object(map) => Value::Map {
            type_name: None,
            entries: map
                .iter()
                .map(|(k, v)| (Value::String(k.clone()), to_value(v)))
                .collect(),
        },
    }
}

/// Parses a JSON array of arguments.
pub(crate) fn parse_args(text: &str) -> Result<Vec<Value>> {
    let json: Json =
        serde_json::from_str(text).with_context(|| format!("arguments are not JSON: {text}"))?;
    match json {
        Json::Array(items) => Ok(items.iter().map(to_value).collect()),
        other => bail!("arguments must be a JSON array, got {other}"),
    }
}

/// Renders a value as JSON for output: objects as their fields, maps with string keys as objects;
/// `BigDecimal` and `BigInteger` as strings of digits (`"12.34"`, never through a double), `Date`
/// and `java.time` values as ISO-8601 strings, and a Java enum (an object whose only field is a
/// string `name`) as its constant's name.
pub(crate) fn from_value(value: &Value) -> Json {
    if let Some(text) = value.to_java_text() {
        return Json::String(text);
    }
    if let Some(constant) = value.enum_constant() {
        return Json::String(constant.to_owned());
    }
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Long(l) => Json::from(*l),
        Value::Double(d) => serde_json::Number::from_f64(*d).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.clone()),
        Value::Binary(b) => Json::Array(b.iter().map(|&x| Json::from(x)).collect()),
        Value::List { items, .. } => Json::Array(items.iter().map(from_value).collect()),
        Value::Map { entries, .. } => Json::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str()
                            .map_or_else(|| from_value(k).to_string(), str::to_owned),
                        from_value(v),
                    )
                })
                .collect(),
        ),
        Value::Object { fields, .. } => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), from_value(v)))
                .collect(),
        ),
        other => Json::String(format!("{other:?}")),
    }
}

/// A generic call's result without the `"class"` entries Dubbo's provider adds to each object it
/// turns into a map (`PojoUtils.generalize` under `generic.include.class`, true by default), so that
/// it prints as the same call without `--generic` prints: the object's fields. Only an entry whose
/// value is a Java class name (a string with a `.` and no blank) is dropped.
pub(crate) fn without_class_entries(json: Json) -> Json {
    match json {
        Json::Object(mut map) => {
            let names_a_class = map
                .get("class")
                .and_then(Json::as_str)
                .is_some_and(|c| c.contains('.') && !c.contains(char::is_whitespace));
            if names_a_class {
                map.remove("class");
            }
            Json::Object(
                map.into_iter()
                    .map(|(k, v)| (k, without_class_entries(v)))
                    .collect(),
            )
        }
        Json::Array(items) => Json::Array(items.into_iter().map(without_class_entries).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generic_results_class_entries_are_dropped_at_every_depth() {
        let generic = serde_json::json!({"class": "org.rudder.it.User", "name": "a",
            "friends": [{"class": "org.rudder.it.User", "name": "b"}],
            "note": {"class": "not a class name"}});
        assert_eq!(
            without_class_entries(generic),
            serde_json::json!({"name": "a", "friends": [{"name": "b"}],
                "note": {"class": "not a class name"}})
        );
        assert_eq!(without_class_entries(Json::from("x")), Json::from("x"));
    }

    #[test]
    fn numbers_keep_java_widths() {
        let args = parse_args(r#"[1, 3000000000, 1.5, "x", null, true]"#).unwrap();
        assert_eq!(
            args,
            [
                Value::Int(1),
                Value::Long(3_000_000_000),
                Value::Double(1.5),
                Value::from("x"),
                Value::Null,
                Value::Bool(true)
            ]
        );
        assert!(parse_args("{}").is_err());
        assert!(parse_args("[1,").is_err());
    }

    #[test]
    fn typed_java_values_print_as_text() {
        let text =
            |class: &str, s: &str| from_value(&Value::from_java_text(class, s).unwrap().unwrap());
        assert_eq!(text("java.math.BigDecimal", "12.340"), Json::from("12.340"));
        assert_eq!(
            text("java.math.BigInteger", "123456789012345678901234567890"),
            Json::from("123456789012345678901234567890")
        );
        assert_eq!(
            text("java.time.LocalDate", "2026-12-31"),
            Json::from("2026-12-31")
        );
        assert_eq!(
            text("java.time.LocalDateTime", "2026-12-01T23:30"),
            Json::from("2026-12-01T23:30:00")
        );
        assert_eq!(
            from_value(&Value::Date(1_796_167_800_123)),
            Json::from("2026-12-01T23:30:00.123Z")
        );
        assert_eq!(
            from_value(&Value::java_enum("peer.Color", "BLUE")),
            Json::from("BLUE")
        );
        // Nested in a POJO, each field is rendered the same way.
        let invoice = Value::Object {
            class: "peer.Invoice".into(),
            fields: vec![
                ("amount".into(), Value::Decimal("0.10".parse().unwrap())),
                ("color".into(), Value::java_enum("peer.Color", "RED")),
            ],
        };
        assert_eq!(
            from_value(&invoice),
            serde_json::json!({"amount": "0.10", "color": "RED"})
        );
    }
}
