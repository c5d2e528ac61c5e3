//! Reading rule YAML the way Dubbo's SnakeYAML maps are read: scalars by their text, booleans with
//! `Boolean.parseBoolean`.

use yaml_serde::{Mapping, Value};

/// Parses `text` into its top-level mapping.
pub(crate) fn parse_mapping(text: &str) -> Result<Mapping, String> {
    match yaml_serde::from_str::<Value>(text) {
        Ok(Value::Mapping(map)) => Ok(map),
        Ok(Value::Null) => Err("the rule is empty".into()),
        Ok(_) => Err("the rule is not a YAML mapping".into()),
        Err(error) => Err(format!("not valid YAML: {error}")),
    }
}

/// The value under `key`, if present and not null.
pub(crate) fn get<'m>(map: &'m Mapping, key: &str) -> Option<&'m Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// A scalar's text, as Java's `toString` gives it; `None` for null, lists and maps.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Tagged(tagged) => scalar_text(&tagged.value),
        _ => None,
    }
}

/// `Boolean.parseBoolean(map.get(key).toString())`, or `default` when absent.
pub(crate) fn get_bool(map: &Mapping, key: &str, default: bool) -> bool {
    match get(map, key).and_then(scalar_text) {
        Some(text) => text.eq_ignore_ascii_case("true"),
        None => default,
    }
}

/// The text under `key`, if it is a scalar.
pub(crate) fn get_text(map: &Mapping, key: &str) -> Option<String> {
    get(map, key).and_then(scalar_text)
}

/// The list under `key`; empty when absent or null.
pub(crate) fn get_list<'m>(map: &'m Mapping, key: &str) -> Result<&'m [Value], String> {
    match get(map, key) {
        None => Ok(&[]),
        Some(Value::Sequence(items)) => Ok(items),
        Some(_) => Err(format!("`{key}` must be a list")),
    }
}
