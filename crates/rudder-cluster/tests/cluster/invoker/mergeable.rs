//! mergeable: one sub-cluster per provider group; the first group, or all merged in group order.

use std::sync::Arc;

use rudder_common::error::RpcErrorKind;

use super::*;

const GROUPS: [&str; 5] = [
    "dubbo://10.0.1.1:1/S?group=b",
    "dubbo://10.0.1.2:1/S?group=b",
    "dubbo://10.0.2.1:1/S?group=a",
    "dubbo://10.0.3.1:1/S?group=c",
    "dubbo://10.0.9.1:1/S",
];

fn mergeable(merger: Option<&str>, groups: Groups) -> ClusterMode {
    ClusterMode::Mergeable {
        merger: merger.map(Arc::from),
        groups,
        retries: 2,
    }
}

fn listed(groups: &str) -> Groups {
    Groups::Listed(groups.into())
}

#[test]
fn with_a_merger_every_listed_group_is_called_and_merged_in_group_order() {
    let inv = invoker(&GROUPS, &[], mergeable(Some("join"), listed("b,a")));
    let merged = block_on(inv.invoke(&call())).unwrap();
    let (b, a) = merged.split_once('+').unwrap();
    assert!(b.starts_with("10.0.1."), "{merged}");
    assert_eq!(a, "10.0.2.1:1");
    assert_eq!(
        inv.caller().calls().len(),
        2,
        "one call per group; c is not listed"
    );
}

#[test]
fn star_spans_every_group_in_name_order() {
    let inv = invoker(&GROUPS, &[], mergeable(Some("join"), Groups::Any));
    let merged = block_on(inv.invoke(&call())).unwrap();
    let parts: Vec<&str> = merged.split('+').collect();
    // "" (no group), a, b, c.
    assert_eq!(parts.len(), 4, "{merged}");
    assert_eq!(parts[0], "10.0.9.1:1");
    assert_eq!(parts[1], "10.0.2.1:1");
    assert!(parts[2].starts_with("10.0.1."));
    assert_eq!(parts[3], "10.0.3.1:1");
}

#[test]
fn without_a_merger_the_first_group_with_providers_answers() {
    let inv = invoker(&GROUPS, &[], mergeable(None, listed("x,a,b")));
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.2.1:1");
    assert_eq!(inv.caller().calls(), ["10.0.2.1:1"]);
}

#[test]
fn failover_stays_within_the_group() {
    let failing = [
        ("10.0.1.1:1", RpcErrorKind::Network),
        ("10.0.1.2:1", RpcErrorKind::Network),
    ];
    let inv = invoker(&GROUPS, &failing, mergeable(Some("join"), listed("b,a")));
    let err = block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::Network);
    // Group b's three attempts went to its own two providers only, and say so.
    assert_eq!(err.attempts().len(), 3);
    assert!(err
        .attempts()
        .iter()
        .all(|a| a.provider.starts_with("10.0.1.")));
    let to_b = inv
        .caller()
        .calls()
        .iter()
        .filter(|c| c.starts_with("10.0.1."))
        .count();
    assert_eq!(to_b, 3);
}

#[test]
fn a_group_answering_with_an_exception_is_left_out() {
    let inv = invoker(&GROUPS, &[], mergeable(Some("join"), listed("a,c")));
    inv.caller().throw("10.0.3.1:1");
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.2.1:1");
}

#[test]
fn groups_without_providers_are_skipped_and_none_at_all_is_no_provider() {
    let inv = invoker(&GROUPS, &[], mergeable(Some("join"), listed("a,x,c")));
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap(),
        "10.0.2.1:1+10.0.3.1:1"
    );
    let none = invoker(&GROUPS, &[], mergeable(Some("join"), listed("x,y")));
    assert_eq!(
        block_on(none.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::NoProvider
    );
}

#[test]
fn explicit_mergeable_on_one_group_merges_every_provider() {
    let inv = invoker(&THREE, &[], mergeable(Some("join"), Groups::EachProvider));
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap(),
        "10.0.0.1:1+10.0.0.2:1+10.0.0.3:1"
    );
    let first = invoker(&THREE, &[], mergeable(None, Groups::EachProvider));
    assert_eq!(block_on(first.invoke(&call())).unwrap(), "10.0.0.1:1");
}
