//! Reading rule YAML the way Dubbo's SnakeYAML maps are read: scalars by their Java text
//! ([`rudder_common::yaml`]), booleans with `Boolean.parseBoolean`.

use rudder_common::yaml::scalar_string;
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

/// `Boolean.parseBoolean(map.get(key).toString())`, or `default` when absent.
pub(crate) fn get_bool(map: &Mapping, key: &str, default: bool) -> bool {
    get(map, key).map_or(default, rudder_common::yaml::java_boolean)
}

/// The text under `key`, if it is a scalar.
pub(crate) fn get_text(map: &Mapping, key: &str) -> Option<String> {
    get(map, key).and_then(scalar_string)
}

/// The list under `key`; empty when absent or null.
pub(crate) fn get_list<'m>(map: &'m Mapping, key: &str) -> Result<&'m [Value], String> {
    match get(map, key) {
        None => Ok(&[]),
        Some(Value::Sequence(items)) => Ok(items),
        Some(_) => Err(format!("`{key}` must be a list")),
    }
}
