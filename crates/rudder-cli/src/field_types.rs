//! The field types of the classes a service's metadata describes (the `types` of Dubbo's
//! `FullServiceDefinition`: `{"type": "com.acme.Invoice", "properties": {"amount":
//! "java.math.BigDecimal", ...}}`), so that `rudder invoke` sends an object's BigDecimal, LocalDate
//! and enum fields typed, as the provider's class declares them, without `--generic`.

use std::collections::HashMap;

use serde_json::Value as Json;

/// Each described class's fields and their Java types; empty when the registry has no metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldTypes {
    classes: HashMap<String, HashMap<String, String>>,
}

impl FieldTypes {
    /// The classes of the definitions' texts; a text that is not the JSON Dubbo writes is skipped.
    /// Takes both Dubbo 3's `"properties": {"f": "T"}` and Dubbo 2.7's `{"f": {"type": "T"}}`.
    pub(crate) fn from_definitions<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut classes: HashMap<String, HashMap<String, String>> = HashMap::new();
        for text in texts {
            let Ok(json) = serde_json::from_str::<Json>(text) else {
                continue;
            };
            for definition in json
                .get("types")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                let (Some(class), Some(properties)) = (
                    definition.get("type").and_then(Json::as_str),
                    definition.get("properties").and_then(Json::as_object),
                ) else {
                    continue;
                };
                let fields = classes.entry(class.to_owned()).or_default();
                for (name, field) in properties {
                    let java_type = match field {
                        Json::String(t) => Some(t.as_str()),
                        other => other.get("type").and_then(Json::as_str),
                    };
                    if let Some(java_type) = java_type {
                        fields.insert(name.clone(), java_type.to_owned());
                    }
                }
            }
        }
        FieldTypes { classes }
    }

    /// Whether the metadata describes `class`'s fields.
    pub(crate) fn knows(&self, class: &str) -> bool {
        self.classes.get(raw(class)).is_some_and(|f| !f.is_empty())
    }

    /// The Java type of `class`'s field `field`, as the metadata declares it.
    pub(crate) fn field(&self, class: &str, field: &str) -> Option<&str> {
        self.classes.get(raw(class))?.get(field).map(String::as_str)
    }
}

/// A type without its type arguments: `java.util.List<com.acme.Item>` is `java.util.List`.
pub(crate) fn raw(java_type: &str) -> &str {
    java_type.split('<').next().unwrap_or(java_type).trim()
}

/// The element type of an array (`com.acme.Item[]`) or of a one-argument collection type
/// (`java.util.List<com.acme.Item>`); `None` when the type does not say.
pub(crate) fn element_type(java_type: &str) -> Option<&str> {
    if let Some(element) = java_type.strip_suffix("[]") {
        return Some(element.trim());
    }
    let arguments = type_arguments(java_type)?;
    match arguments.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// The value type of a map type (`java.util.Map<java.lang.String, com.acme.Item>`).
pub(crate) fn map_value_type(java_type: &str) -> Option<&str> {
    match type_arguments(java_type)?.as_slice() {
        [_, value] => Some(value),
        _ => None,
    }
}

/// The top-level type arguments between the outer `<` and `>`, split at commas outside nested `<>`.
fn type_arguments(java_type: &str) -> Option<Vec<&str>> {
    let open = java_type.find('<')?;
    let inner = java_type[open + 1..].trim_end().strip_suffix('>')?;
    let mut arguments = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                arguments.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    arguments.push(inner[start..].trim());
    Some(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_from_dubbo_3_and_2_7_definitions() {
        let dubbo3 = r#"{"methods":[],"types":[
            {"type":"com.acme.Invoice","properties":{"amount":"java.math.BigDecimal",
             "items":"java.util.List<com.acme.Item>"}},
            {"type":"com.acme.Color","enums":["RED","BLUE"]}]}"#;
        let dubbo27 = r#"{"types":[{"type":"com.acme.Item","properties":{"due":{"type":"java.time.LocalDate"}}}]}"#;
        let types = FieldTypes::from_definitions([dubbo3, dubbo27, "not json"]);
        assert_eq!(
            types.field("com.acme.Invoice", "amount"),
            Some("java.math.BigDecimal")
        );
        assert_eq!(
            types.field("com.acme.Item", "due"),
            Some("java.time.LocalDate")
        );
        assert!(types.knows("com.acme.Invoice"));
        assert!(!types.knows("com.acme.Color"));
        assert_eq!(types.field("com.acme.Invoice", "nope"), None);
    }

    #[test]
    fn type_arguments_name_elements_and_values() {
        assert_eq!(
            element_type("java.util.List<com.acme.Item>"),
            Some("com.acme.Item")
        );
        assert_eq!(element_type("com.acme.Item[]"), Some("com.acme.Item"));
        assert_eq!(element_type("java.util.List"), None);
        assert_eq!(
            map_value_type("java.util.Map<java.lang.String, java.util.List<com.acme.Item>>"),
            Some("java.util.List<com.acme.Item>")
        );
        assert_eq!(raw("java.util.Map<K,V>"), "java.util.Map");
    }
}
