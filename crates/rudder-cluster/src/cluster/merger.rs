//! Dubbo's built-in result mergers (`merger=` on a multi-group reference), over [`Value`]s.
//!
//! | `merger` | merges | result |
//! |---|---|---|
//! | `true`, `default` | by the results' shape, as Dubbo's `MergerFactory` by return type | below |
//! | `list` | lists | concatenation, in group order |
//! | `set` | lists / sets | union, first occurrence kept, in group order |
//! | `map` | maps | union, a later group's value wins for a repeated key |
//! | `array` | arrays | concatenation; arrays of different element types are an error, as Dubbo's `ArrayMerger` |
//! | `int` `long` `short` `byte` `char` `float` `double` `boolean` | primitive arrays | concatenation (`byte` also `byte[]` binaries) |
//!
//! By shape (`true`): a list typed `[...` is an array, one whose Java type names a `Set` a set, any other
//! list a list; a map a map; a `byte[]` a byte array. `null` results are skipped, as Dubbo's mergers do.
//! Dubbo's `.methodName` form calls a Java method on the result type, which a Rust consumer cannot: it is
//! refused with an error naming the built-ins, as is any other name.
//!
//! ```
//! use rudder_cluster::cluster::merger::merge_values;
//! use rudder_common::Value;
//! let a = Value::List { type_name: None, items: vec![Value::Int(1), Value::Int(2)] };
//! let b = Value::List { type_name: None, items: vec![Value::Int(2), Value::Int(3)] };
//! let merged = merge_values("set", vec![a, b]).unwrap();
//! assert_eq!(merged, Value::List { type_name: None, items: vec![Value::Int(1), Value::Int(2), Value::Int(3)] });
//! ```

use std::collections::HashMap;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::Value;

const BUILT_IN: &str =
    "true, default, list, set, map, array, int, long, short, byte, char, float, double, boolean";

const PRIMITIVES: [&str; 8] = [
    "int", "long", "short", "byte", "char", "float", "double", "boolean",
];

/// Merges `values` (one per group, in group order) with the merger named `merger`.
///
/// # Errors
/// [`RpcErrorKind::Unknown`] for a merger name rudder does not have, results of a shape that merger
/// cannot merge, or arrays of different element types.
pub fn merge_values(merger: &str, values: Vec<Value>) -> Result<Value, RpcError> {
    let values: Vec<Value> = values.into_iter().filter(|v| *v != Value::Null).collect();
    let Some(first) = values.first() else {
        return Ok(Value::Null);
    };
    let kind = match merger {
        "true" | "default" => shape_of(first)?,
        "list" => Kind::List,
        "set" => Kind::Set,
        "map" => Kind::Map,
        "array" => Kind::Array,
        "byte" if matches!(first, Value::Binary(_)) => Kind::Bytes,
        name if PRIMITIVES.contains(&name) => Kind::Array,
        name if name.starts_with('.') => {
            return Err(error(format!(
                "merger={name} calls a Java method on the result type, which rudder cannot; use one of {BUILT_IN}"
            )))
        }
        name => {
            return Err(error(format!(
                "no merger named {name:?}; rudder has {BUILT_IN}"
            )))
        }
    };
    match kind {
        Kind::List => concat(values, false).map(|(t, items)| list(t, items)),
        Kind::Array => concat(values, true).map(|(t, items)| list(t, items)),
        Kind::Set => concat(values, false).map(|(t, items)| list(t, dedupe(items))),
        Kind::Map => merge_maps(values),
        Kind::Bytes => {
            let mut bytes = Vec::new();
            for value in values {
                match value {
                    Value::Binary(b) => bytes.extend_from_slice(&b),
                    other => return Err(wrong_shape("byte", &other)),
                }
            }
            Ok(Value::Binary(bytes))
        }
    }
}

enum Kind {
    List,
    Set,
    Map,
    Array,
    Bytes,
}

fn shape_of(value: &Value) -> Result<Kind, RpcError> {
    match value {
        Value::List { type_name, .. } => Ok(match type_name.as_deref() {
            Some(t) if t.starts_with('[') => Kind::Array,
            Some(t) if t.contains("Set") => Kind::Set,
            _ => Kind::List,
        }),
        Value::Map { .. } => Ok(Kind::Map),
        Value::Binary(_) => Ok(Kind::Bytes),
        other => Err(error(format!(
            "there is no merger for results like {other:?}; name one of {BUILT_IN}"
        ))),
    }
}

/// The lists' items, in order, and the first list's Java type; `same_type` requires equal types.
fn concat(
    values: Vec<Value>,
    same_type: bool,
) -> Result<(Option<std::sync::Arc<str>>, Vec<Value>), RpcError> {
    let mut type_of = None;
    let mut all = Vec::new();
    for (i, value) in values.into_iter().enumerate() {
        match value {
            Value::List { type_name, items } => {
                if i == 0 {
                    type_of = type_name;
                } else if same_type
                    && type_name.is_some()
                    && type_of.is_some()
                    && type_name != type_of
                {
                    return Err(error(format!(
                        "arrays of different element types cannot be merged: {} and {}",
                        type_of.as_deref().unwrap_or("?"),
                        type_name.as_deref().unwrap_or("?")
                    )));
                }
                all.extend(items);
            }
            other => return Err(wrong_shape("list", &other)),
        }
    }
    Ok((type_of, all))
}

fn merge_maps(values: Vec<Value>) -> Result<Value, RpcError> {
    let mut type_of = None;
    let mut merged: Vec<(Value, Value)> = Vec::new();
    // Values have no `Hash` (doubles); their debug form is a faithful key for equality here.
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, value) in values.into_iter().enumerate() {
        let Value::Map { type_name, entries } = value else {
            return Err(wrong_shape("map", &value));
        };
        if i == 0 {
            type_of = type_name;
        }
        for (key, value) in entries {
            match index.entry(format!("{key:?}")) {
                std::collections::hash_map::Entry::Occupied(at) => merged[*at.get()].1 = value,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(merged.len());
                    merged.push((key, value));
                }
            }
        }
    }
    Ok(Value::Map {
        type_name: type_of,
        entries: merged,
    })
}

fn dedupe(items: Vec<Value>) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(format!("{item:?}")))
        .collect()
}

fn list(type_name: Option<std::sync::Arc<str>>, items: Vec<Value>) -> Value {
    Value::List { type_name, items }
}

fn wrong_shape(merger: &str, value: &Value) -> RpcError {
    error(format!("merger {merger} cannot merge {value:?}"))
}

fn error(message: String) -> RpcError {
    RpcError::new(RpcErrorKind::Unknown, message)
}
