//! Dubbo's built-in mergers over values (ResultMergerTest's cases, in group order).

use std::sync::Arc;

use rudder_common::Value;

use rudder_cluster::cluster::merger::merge_values;

fn list(type_name: Option<&str>, items: &[i32]) -> Value {
    Value::List {
        type_name: type_name.map(Arc::from),
        items: items.iter().map(|i| Value::Int(*i)).collect(),
    }
}

fn map(entries: &[(&str, i32)]) -> Value {
    Value::Map {
        type_name: None,
        entries: entries
            .iter()
            .map(|(k, v)| (Value::from(*k), Value::Int(*v)))
            .collect(),
    }
}

#[test]
fn lists_concatenate_and_nulls_are_skipped() {
    let merged = merge_values(
        "list",
        vec![list(None, &[1, 2]), Value::Null, list(None, &[2, 3])],
    );
    assert_eq!(merged.unwrap(), list(None, &[1, 2, 2, 3]));
    assert_eq!(
        merge_values("list", vec![Value::Null]).unwrap(),
        Value::Null
    );
}

#[test]
fn sets_keep_the_first_occurrence() {
    let merged = merge_values("set", vec![list(None, &[3, 1]), list(None, &[1, 2, 3])]);
    assert_eq!(merged.unwrap(), list(None, &[3, 1, 2]));
}

#[test]
fn maps_let_a_later_group_win() {
    let merged = merge_values(
        "map",
        vec![map(&[("a", 1), ("b", 2)]), map(&[("b", 20), ("c", 3)])],
    );
    assert_eq!(merged.unwrap(), map(&[("a", 1), ("b", 20), ("c", 3)]));
}

/// ResultMergerTest: `{"1","2"}`, `{"3","4","5"}`, `{"6"}` give six elements in order; mixed component
/// types are refused.
#[test]
fn arrays_concatenate_only_with_one_element_type() {
    let strings = |items: &[&str]| Value::List {
        type_name: Some(Arc::from("[java.lang.String")),
        items: items.iter().map(|s| Value::from(*s)).collect(),
    };
    let merged = merge_values(
        "array",
        vec![
            strings(&["1", "2"]),
            strings(&["3", "4", "5"]),
            strings(&["6"]),
        ],
    )
    .unwrap();
    assert_eq!(merged, strings(&["1", "2", "3", "4", "5", "6"]));
    let err = merge_values("array", vec![strings(&["1"]), list(Some("[int"), &[2])]).unwrap_err();
    assert!(err.message().contains("different element types"), "{err}");
    // `int` and the other primitive names concatenate too.
    let ints = merge_values(
        "int",
        vec![list(Some("[int"), &[1]), list(Some("[int"), &[2, 3])],
    );
    assert_eq!(ints.unwrap(), list(Some("[int"), &[1, 2, 3]));
}

#[test]
fn default_merges_by_shape() {
    let set = |items: &[i32]| list(Some("java.util.HashSet"), items);
    assert_eq!(
        merge_values("true", vec![set(&[1]), set(&[1, 2])]).unwrap(),
        set(&[1, 2])
    );
    assert_eq!(
        merge_values("default", vec![list(None, &[1]), list(None, &[1])]).unwrap(),
        list(None, &[1, 1])
    );
    assert_eq!(
        merge_values("true", vec![map(&[("a", 1)]), map(&[("a", 2)])]).unwrap(),
        map(&[("a", 2)])
    );
    assert_eq!(
        merge_values("true", vec![Value::Binary(vec![1]), Value::Binary(vec![2])]).unwrap(),
        Value::Binary(vec![1, 2])
    );
    let err = merge_values("true", vec![Value::Int(1), Value::Int(2)]).unwrap_err();
    assert!(err.message().contains("no merger"), "{err}");
}

#[test]
fn unknown_names_and_java_methods_are_clear_errors() {
    let two = || vec![list(None, &[1]), list(None, &[2])];
    let err = merge_values(".merge", two()).unwrap_err();
    assert!(err.message().contains("Java method"), "{err}");
    let err = merge_values("concat", two()).unwrap_err();
    assert!(
        err.message().contains("no merger named \"concat\""),
        "{err}"
    );
    let err = merge_values("map", two()).unwrap_err();
    assert!(err.message().contains("cannot merge"), "{err}");
}
