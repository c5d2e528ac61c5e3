//! broadcast: every provider in list order; any failure fails; the percentage stops early.

use rudder_common::error::RpcErrorKind;

use super::*;

const FOUR: [&str; 4] = [
    "dubbo://10.0.0.1:1/S",
    "dubbo://10.0.0.2:1/S",
    "dubbo://10.0.0.3:1/S",
    "dubbo://10.0.0.4:1/S",
];

fn broadcast(fail_percent: u32) -> ClusterMode {
    ClusterMode::Broadcast { fail_percent }
}

#[test]
fn every_provider_in_list_order_and_the_last_answer() {
    let inv = invoker(&FOUR, &[], broadcast(100));
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.4:1");
    assert_eq!(
        inv.caller().calls(),
        ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1", "10.0.0.4:1"]
    );
}

#[test]
fn one_failure_fails_the_call_after_calling_everyone() {
    let inv = invoker(
        &FOUR,
        &[("10.0.0.2:1", RpcErrorKind::Network)],
        broadcast(100),
    );
    let err = block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::Network);
    assert_eq!(inv.caller().calls().len(), 4);
    assert_eq!(err.attempts().len(), 1);
    assert_eq!(err.attempts()[0].provider, "10.0.0.2:1");
    assert!(err.message().contains("1 of 4 providers called"), "{err}");
}

/// Dubbo's BroadcastClusterInvokerTest: 75 % of 4 failing invokers stops after the third.
#[test]
fn the_fail_percentage_stops_calling_the_rest() {
    let all: Vec<(&'static str, RpcErrorKind)> =
        ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1", "10.0.0.4:1"]
            .into_iter()
            .map(|a| (a, RpcErrorKind::Timeout))
            .collect();
    let inv = invoker(&FOUR, &all, broadcast(75));
    let err = block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(
        inv.caller().calls(),
        ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]
    );
    assert_eq!(err.attempts().len(), 3);

    // 0 % stops at the first failure (Dubbo's `==` never matches a threshold of 0 and calls everyone).
    let zero = invoker(&FOUR, &all, broadcast(0));
    block_on(zero.invoke(&call())).unwrap_err();
    assert_eq!(zero.caller().calls(), ["10.0.0.1:1"]);
}

#[test]
fn a_business_exception_counts_as_a_failure() {
    let inv = invoker(&FOUR, &[], broadcast(100));
    inv.caller().throw("10.0.0.3:1");
    let err = block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::Biz);
    assert_eq!(err.attempts()[0].message, "exception@10.0.0.3:1");
    assert_eq!(inv.caller().calls().len(), 4);
}

#[test]
fn nothing_listed_is_no_provider() {
    let inv = invoker(&[], &[], broadcast(100));
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::NoProvider
    );
}
