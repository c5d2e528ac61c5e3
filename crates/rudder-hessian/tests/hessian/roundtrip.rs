//! Property tests: any acyclic value survives encode then decode, alone or in a shared stream.

use proptest::prelude::*;
use rudder_common::value::Value;
use rudder_hessian::{Hessian2Reader, Hessian2Writer};

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z][a-zA-Z0-9.$\\[]{0,20}"
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::Int),
        any::<i64>().prop_map(Value::Long),
        // NaN is the one double that is not equal to itself.
        any::<f64>()
            .prop_filter("not NaN", |d| !d.is_nan())
            .prop_map(Value::Double),
        (-1000i32..1000).prop_map(|m| Value::Double(0.001 * f64::from(m))),
        any::<i64>().prop_map(Value::Date),
        (any::<i32>()).prop_map(|m| Value::Date(i64::from(m) * 60_000)),
        any::<String>().prop_map(Value::String),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Value::Binary),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 64, 10, |inner| {
        prop_oneof![
            (
                prop::option::of(name()),
                prop::collection::vec(inner.clone(), 0..12)
            )
                .prop_map(|(type_name, items)| Value::List {
                    type_name: type_name.map(Into::into),
                    items,
                }),
            (
                prop::option::of(name()),
                prop::collection::vec((inner.clone(), inner.clone()), 0..6)
            )
                .prop_map(|(type_name, entries)| Value::Map {
                    type_name: type_name.map(Into::into),
                    entries,
                }),
            (
                prop::sample::select(vec!["com.a.User", "com.a.Order", "x"]),
                prop::collection::vec((name(), inner), 0..5)
            )
                .prop_map(|(class, fields)| Value::Object {
                    class: class.into(),
                    fields: fields.into_iter().map(|(k, v)| (k.into(), v)).collect(),
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_value_round_trips(v in value()) {
        let mut w = Hessian2Writer::new();
        w.write_value(&v);
        let bytes = w.into_bytes();
        let mut r = Hessian2Reader::new(&bytes);
        prop_assert_eq!(r.read_value().unwrap(), v);
        prop_assert!(r.is_at_end());
    }

    /// Class definitions and type names written for one value are reused by the next.
    #[test]
    fn a_stream_of_values_round_trips(values in prop::collection::vec(value(), 1..6)) {
        let mut w = Hessian2Writer::new();
        for v in &values {
            w.write_value(v);
        }
        let bytes = w.into_bytes();
        let mut r = Hessian2Reader::new(&bytes);
        for v in &values {
            prop_assert_eq!(&r.read_value().unwrap(), v);
        }
        prop_assert!(r.is_at_end());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut r = Hessian2Reader::new(&bytes);
        while !r.is_at_end() {
            if let Err(e) = r.read_value() {
                prop_assert!(e.offset() <= bytes.len());
                break;
            }
        }
    }
}
