//! Rule YAML as Dubbo reads it (feature `yaml`): SnakeYAML loads a rule into Java objects, and Dubbo's
//! parsers turn values into strings with `String.valueOf`. The tag, condition and override parsers
//! all read values through these, so a number or a boolean in a rule means the same to each.
//!
//! ```
//! use rudder_common::yaml::{java_string, scalar_string};
//! let rule: yaml_serde::Value = yaml_serde::from_str("{weight: 1.0e7, on: true, tags: [a, 2]}")?;
//! assert_eq!(scalar_string(&rule["weight"]).as_deref(), Some("1.0E7"));  // Double.toString
//! assert_eq!(scalar_string(&rule["on"]).as_deref(), Some("true"));
//! assert_eq!(scalar_string(&rule["tags"]), None);                        // not a scalar
//! assert_eq!(java_string(&rule["tags"]), "[a, 2]");                      // List.toString
//! # Ok::<(), yaml_serde::Error>(())
//! ```
//!
//! YAML 1.2 scalars differ from SnakeYAML's YAML 1.1 on input Java reads oddly: `yes`/`on`/`off` stay
//! strings here where SnakeYAML makes them booleans.

use yaml_serde::Value;

use crate::java_string::write_java_double;

/// Java's `String.valueOf` of what SnakeYAML would have loaded: `null`, `true`, integers in decimal,
/// doubles as `Double.toString`, strings as they are, lists as `[a, b]`, maps as `{k=v}`.
pub fn java_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else if let Some(f) = n.as_f64() {
                let mut out = String::new();
                // Writing into a String cannot fail.
                let _ = write_java_double(&mut out, f);
                out
            } else {
                n.to_string()
            }
        }
        Value::String(s) => s.clone(),
        Value::Sequence(items) => {
            let inner: Vec<String> = items.iter().map(java_string).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Mapping(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}={}", java_string(k), java_string(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Tagged(tagged) => java_string(&tagged.value),
    }
}

/// [`java_string`] of a scalar (`null` included, as `"null"`); `None` for sequences and mappings,
/// where a rule wants a single value.
pub fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::Sequence(_) | Value::Mapping(_) => None,
        Value::Tagged(tagged) => scalar_string(&tagged.value),
        other => Some(java_string(other)),
    }
}

/// `Boolean.parseBoolean(String.valueOf(value))`: only a case-insensitive `true` is true.
pub fn java_boolean(value: &Value) -> bool {
    java_string(value).eq_ignore_ascii_case("true")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        yaml_serde::from_str(text).unwrap()
    }

    #[test]
    fn scalars_read_as_java_prints_them() {
        for (text, want) in [
            ("200", "200"),
            ("-7", "-7"),
            ("18446744073709551615", "18446744073709551615"),
            ("200.0", "200.0"),
            ("1.5", "1.5"),
            ("1.0e7", "1.0E7"),
            ("0.0001", "1.0E-4"),
            (".nan", "NaN"),
            ("-.inf", "-Infinity"),
            ("true", "true"),
            ("~", "null"),
            ("'a b'", "a b"),
            ("!custom 5", "5"),
        ] {
            assert_eq!(scalar_string(&yaml(text)).as_deref(), Some(want), "{text}");
        }
        assert_eq!(scalar_string(&yaml("[1]")), None);
        assert_eq!(scalar_string(&yaml("{a: 1}")), None);
    }

    #[test]
    fn collections_read_as_java_collections_print() {
        assert_eq!(java_string(&yaml("[1, 2.0, x]")), "[1, 2.0, x]");
        assert_eq!(java_string(&yaml("{a: 1, b: [c]}")), "{a=1, b=[c]}");
    }

    #[test]
    fn booleans_are_java_parse_boolean() {
        assert!(java_boolean(&yaml("TRUE")) && java_boolean(&yaml("'True'")));
        assert!(
            !java_boolean(&yaml("yes")) && !java_boolean(&yaml("1")) && !java_boolean(&yaml("~"))
        );
    }
}
