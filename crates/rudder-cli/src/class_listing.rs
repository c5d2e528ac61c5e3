//! The classes a service's methods take and return, as `rudder list SERVICE` shows them: each class's
//! fields and each enum's constants from the metadata report's type definitions (the `types` of Dubbo's
//! `FullServiceDefinition`), so that a user can write `--args` for `echoUser(org.rudder.it.User)`
//! without the Java sources.
//!
//! Only the service's own classes are shown: those its methods' parameter and return types name,
//! directly, as type arguments or array items, and through their fields, transitively. JDK types
//! (`java.*`, `javax.*`) are left out: their "fields" are implementation details (`LocalDate` is
//! `year`, `month`, `day`) and `--args` gives them as text.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value as Json};

use crate::service_info::Overload;

/// One described class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A class: its fields and their Java types, by name.
    Fields(BTreeMap<String, String>),
    /// An enum: its constants in declaration order.
    Enum(Vec<String>),
}

/// The service's classes, by name, reachable from `overloads`, described by the definitions' texts (a
/// text that is not the JSON Dubbo writes is skipped).
pub(crate) fn classes<'a>(
    texts: impl IntoIterator<Item = &'a str>,
    overloads: &[Overload],
) -> BTreeMap<String, Shape> {
    let described = described(texts);
    let mut shown = BTreeMap::new();
    let mut pending: Vec<String> = overloads
        .iter()
        .flat_map(|o| o.parameter_types.iter().chain(o.return_type.iter()))
        .flat_map(|t| names_in(t))
        .collect();
    // Each class is taken once, so a class that refers to itself (a tree node) ends the walk.
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) || is_jdk(&name) {
            continue;
        }
        let Some(shape) = described.get(&name) else {
            continue;
        };
        if let Shape::Fields(fields) = shape {
            pending.extend(fields.values().flat_map(|t| names_in(t)));
        }
        shown.insert(name, shape.clone());
    }
    shown
}

/// The text lines of `classes`: `class C {`, a `  field: Type` line each, `}`; `enum E { A, B }`.
pub(crate) fn text_lines(classes: &BTreeMap<String, Shape>) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, shape) in classes {
        match shape {
            Shape::Fields(fields) => {
                lines.push(format!("class {name} {{"));
                lines.extend(fields.iter().map(|(f, t)| format!("  {f}: {t}")));
                lines.push("}".to_owned());
            }
            Shape::Enum(constants) => {
                lines.push(format!("enum {name} {{ {} }}", constants.join(", ")));
            }
        }
    }
    lines
}

/// The JSON of `classes`: `[{"name": C, "fields": {f: T}}, {"name": E, "enum": [A, B]}]`.
pub(crate) fn json(classes: &BTreeMap<String, Shape>) -> Json {
    classes
        .iter()
        .map(|(name, shape)| match shape {
            Shape::Fields(fields) => json!({"name": name, "fields": fields}),
            Shape::Enum(constants) => json!({"name": name, "enum": constants}),
        })
        .collect()
}

/// Every class the definitions describe with fields or constants.
fn described<'a>(texts: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, Shape> {
    let mut described = BTreeMap::new();
    for text in texts {
        let Ok(definition) = serde_json::from_str::<Json>(text) else {
            continue;
        };
        for class in definition
            .get("types")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = class.get("type").and_then(Json::as_str) else {
                continue;
            };
            let constants: Vec<String> = class
                .get("enums")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect();
            // Dubbo 3 writes `"f": "T"`, Dubbo 2.7 `"f": {"type": "T"}`.
            let fields: BTreeMap<String, String> = class
                .get("properties")
                .and_then(Json::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(field, t)| {
                    let t = t
                        .as_str()
                        .or_else(|| t.get("type").and_then(Json::as_str))?;
                    Some((field.clone(), t.to_owned()))
                })
                .collect();
            let shape = if !constants.is_empty() {
                Shape::Enum(constants)
            } else if !fields.is_empty() {
                Shape::Fields(fields)
            } else {
                continue;
            };
            described.entry(name.to_owned()).or_insert(shape);
        }
    }
    described
}

/// The class names a Java type names: `java.util.Map<java.lang.String, com.acme.Item[]>` names
/// `java.util.Map`, `java.lang.String` and `com.acme.Item`.
fn names_in(java_type: &str) -> impl Iterator<Item = String> + '_ {
    java_type
        .split(|c: char| matches!(c, '<' | '>' | ',' | '[' | ']') || c.is_whitespace())
        .filter(|name| !name.is_empty() && *name != "?" && *name != "extends")
        .map(str::to_owned)
}

fn is_jdk(name: &str) -> bool {
    name.starts_with("java.") || name.starts_with("javax.") || !name.contains('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overload(name: &str, parameters: &[&str], returns: &str) -> Overload {
        Overload {
            name: name.to_owned(),
            parameter_types: parameters.iter().map(|p| (*p).to_owned()).collect(),
            return_type: Some(returns.to_owned()),
        }
    }

    /// The shape of the Java provider's metadata in `it/` (Dubbo 3.3.6), trimmed.
    const DEFINITION: &str = r#"{"methods":[],"types":[
        {"enums":[],"items":[],"properties":{"months":"int"},"type":"java.time.Period"},
        {"enums":["RED","GREEN","BLUE"],"items":[],"properties":{},"type":"org.rudder.it.Color"},
        {"enums":[],"items":[],"properties":{"amount":"java.math.BigDecimal",
          "color":"org.rudder.it.Color","lines":"java.util.List<org.rudder.it.Line>"},
          "type":"org.rudder.it.Invoice"},
        {"enums":[],"items":[],"properties":{"sku":"java.lang.String","next":"org.rudder.it.Line"},
          "type":"org.rudder.it.Line"},
        {"enums":[],"items":[],"properties":{"x":"int"},"type":"org.rudder.it.Unused"},
        {"enums":[],"items":[],"properties":{},"type":"java.math.BigDecimal"}]}"#;

    #[test]
    fn the_methods_classes_are_shown_with_what_they_refer_to() {
        let overloads = [
            overload(
                "nextInvoice",
                &["org.rudder.it.Invoice"],
                "org.rudder.it.Invoice",
            ),
            overload("echoPeriod", &["java.time.Period"], "java.time.Period"),
        ];
        let classes = classes([DEFINITION, "not json"], &overloads);
        assert_eq!(
            classes.keys().collect::<Vec<_>>(),
            [
                "org.rudder.it.Color",
                "org.rudder.it.Invoice",
                "org.rudder.it.Line"
            ]
        );
        assert_eq!(
            text_lines(&classes),
            [
                "enum org.rudder.it.Color { RED, GREEN, BLUE }",
                "class org.rudder.it.Invoice {",
                "  amount: java.math.BigDecimal",
                "  color: org.rudder.it.Color",
                "  lines: java.util.List<org.rudder.it.Line>",
                "}",
                "class org.rudder.it.Line {",
                "  next: org.rudder.it.Line",
                "  sku: java.lang.String",
                "}",
            ]
        );
        assert_eq!(
            json(&classes)[0],
            json!({"name": "org.rudder.it.Color", "enum": ["RED", "GREEN", "BLUE"]})
        );
        assert_eq!(
            json(&classes)[2]["fields"]["sku"],
            json!("java.lang.String")
        );
    }

    #[test]
    fn dubbo_2_7_fields_and_type_arguments_are_read() {
        let old = r#"{"types":[{"type":"com.acme.Item","properties":{"due":{"type":"java.time.LocalDate"}}}]}"#;
        let overloads = [overload(
            "all",
            &["java.util.Map<java.lang.String, com.acme.Item[]>"],
            "void",
        )];
        let classes = classes([old], &overloads);
        assert_eq!(text_lines(&classes)[1], "  due: java.time.LocalDate");
    }
}
