//! The command line's JSON arguments, as `rudder invoke --types T1,T2 --args JSON` reads them: the
//! first input line is the `--types` list (may be empty: types inferred), the rest the `--args` text.
//!
//! Nothing may panic, and four properties must hold:
//! - `parse_args` accepts exactly the JSON arrays;
//! - JSON → value → JSON gives the input back (integers beyond `i64` travel as `double`, as in Java);
//! - the type inferred for an argument always converts it, to the same value the untyped path gives;
//! - dropping a generic result's `"class"` entries is idempotent.
//!
//! The CLI is a binary crate, so its conversion modules are compiled into this target as they are.
#![no_main]

#[path = "../../src/json.rs"]
mod json;

#[path = "../../src/java_types.rs"]
mod java_types;

#[path = "../../src/field_types.rs"]
mod field_types;

use libfuzzer_sys::fuzz_target;
use rudder_common::Value;
use serde_json::Value as Json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (types, args) = text.split_once('\n').unwrap_or(("", text));
    let parsed = serde_json::from_str::<Json>(args);
    assert_eq!(
        json::parse_args(args).is_ok(),
        matches!(parsed, Ok(Json::Array(_))),
        "parse_args disagrees with serde_json on {args:?}"
    );
    let Ok(parsed) = parsed else {
        return;
    };
    assert_eq!(
        json::from_value(&json::to_value(&parsed)),
        widened(&parsed),
        "JSON does not survive the round trip through a value"
    );
    // A --generic result printed without its "class" entries: once is enough.
    let classless = json::without_class_entries(parsed.clone());
    assert_eq!(json::without_class_entries(classless.clone()), classless);
    let Json::Array(items) = &parsed else {
        return;
    };
    for item in items {
        let inferred = java_types::infer(item);
        for generic in [false, true] {
            match convert(inferred, item, generic) {
                Ok(value) => assert_eq!(value, json::to_value(item), "{inferred} for {item}"),
                Err(e) => panic!("inferred type {inferred} refuses its own argument {item}: {e:#}"),
            }
        }
    }
    for (java_type, item) in types.split(',').map(str::trim).zip(items) {
        for generic in [false, true] {
            let Ok(value) = convert(java_type, item, generic) else {
                continue;
            };
            check_width(java_type, item, &value);
            let _ = json::from_value(&value);
        }
    }
});

/// One argument converted as `rudder invoke` converts it when the metadata names no field types.
fn convert(java_type: &str, item: &Json, generic: bool) -> anyhow::Result<Value> {
    java_types::convert_in(&field_types::FieldTypes::default(), java_type, item, generic)
}

/// `parsed` as the round trip gives it back: unsigned integers past `i64::MAX` become doubles.
fn widened(parsed: &Json) -> Json {
    match parsed {
        Json::Number(n) if n.is_u64() && !n.is_i64() => {
            let wide = n.as_f64().and_then(serde_json::Number::from_f64);
            wide.map_or(Json::Null, Json::Number)
        }
        Json::Array(items) => Json::Array(items.iter().map(widened).collect()),
        Json::Object(map) => {
            Json::Object(map.iter().map(|(k, v)| (k.clone(), widened(v))).collect())
        }
        other => other.clone(),
    }
}

/// A conversion the CLI accepted for an integral Java type carries exactly the JSON integer.
fn check_width(java_type: &str, item: &Json, value: &Value) {
    match java_type {
        "int" | "short" | "byte" | "java.lang.Integer" | "java.lang.Short" | "java.lang.Byte" => {
            assert!(
                matches!(value, Value::Int(i) if item.as_i64() == Some(i64::from(*i))),
                "{item} as {java_type} became {value:?}"
            );
        }
        "long" | "java.lang.Long" => assert!(
            matches!(value, Value::Long(l) if item.as_i64() == Some(*l)),
            "{item} as {java_type} became {value:?}"
        ),
        _ => {}
    }
}
