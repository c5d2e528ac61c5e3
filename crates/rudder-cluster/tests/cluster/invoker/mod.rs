//! The cluster modes through `ClusterInvoker`'s public API, against scripted providers
//! (`rudder_test_support::scripted`).

use std::sync::Arc;

use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordCall;
use rudder_common::url::DubboUrl;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::*;
use rudder_cluster::directory::Directory;
pub(crate) use rudder_test_support::scripted::{block_on, poll_once, Scripted};

mod availability;
mod available;
mod broadcast;
mod failback;
mod forking;
mod mergeable;
mod merger;
mod modes;
mod spans;
mod timer;

fn directory(urls: &[&str]) -> Arc<Directory> {
    let directory = Arc::new(Directory::default());
    directory.replace(urls.iter().map(|u| DubboUrl::parse(u).unwrap()));
    directory
}

fn invoker(
    urls: &[&str],
    failing: &[(&'static str, RpcErrorKind)],
    mode: ClusterMode,
) -> ClusterInvoker<Scripted> {
    let balancer = Arc::new(Balancer::builder(directory(urls)).seed(3).build());
    let caller = Scripted::default();
    for (address, kind) in failing {
        caller.fail(address, *kind);
    }
    ClusterInvoker::new(balancer, caller, mode)
}

const THREE: [&str; 3] = [
    "dubbo://10.0.0.1:1/S?loadbalance=roundrobin",
    "dubbo://10.0.0.2:1/S",
    "dubbo://10.0.0.3:1/S",
];

fn call() -> Invocation {
    Invocation::new("m", vec![], vec![])
}

#[test]
fn failover_tries_each_provider_once_before_repeating() {
    let all = [
        ("10.0.0.1:1", RpcErrorKind::Timeout),
        ("10.0.0.2:1", RpcErrorKind::Timeout),
        ("10.0.0.3:1", RpcErrorKind::Timeout),
    ];
    let inv = invoker(&THREE, &all, ClusterMode::Failover { retries: 5 });
    let err = block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::Timeout);
    assert!(err.message().contains("after 6 attempts"), "{err}");
    let calls = inv.caller().calls();
    assert_eq!(calls.len(), 6);
    let mut first_three = calls[..3].to_vec();
    first_three.sort();
    assert_eq!(first_three, ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]);
}

#[test]
fn a_provider_without_the_method_is_not_asked_again_but_another_one_is() {
    // One provider: it says it has no such method once, and the call ends there.
    let one = invoker(
        &THREE[1..2],
        &[("10.0.0.2:1", RpcErrorKind::MethodNotFound)],
        ClusterMode::Failover { retries: 2 },
    );
    let err = block_on(one.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::MethodNotFound);
    assert!(
        err.message()
            .contains("after 1 attempt on providers [10.0.0.2:1]"),
        "{err}"
    );
    assert_eq!(one.caller().calls(), ["10.0.0.2:1"]);

    // A rolling upgrade: the providers not yet upgraded lack the method, the others answer.
    let mixed = invoker(
        &THREE,
        &[
            ("10.0.0.1:1", RpcErrorKind::MethodNotFound),
            ("10.0.0.2:1", RpcErrorKind::MethodNotFound),
        ],
        ClusterMode::Failover { retries: 2 },
    );
    for _ in 0..6 {
        assert_eq!(block_on(mixed.invoke(&call())).unwrap(), "10.0.0.3:1");
    }

    // None has it: each is asked once, then the error, however many retries are left.
    let none = invoker(
        &THREE,
        &[
            ("10.0.0.1:1", RpcErrorKind::MethodNotFound),
            ("10.0.0.2:1", RpcErrorKind::MethodNotFound),
            ("10.0.0.3:1", RpcErrorKind::MethodNotFound),
        ],
        ClusterMode::Failover { retries: 5 },
    );
    let err = block_on(none.invoke(&call())).unwrap_err();
    assert!(err.message().contains("after 3 attempts"), "{err}");
    let mut asked = none.caller().calls();
    asked.sort();
    assert_eq!(asked, ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]);
}

#[test]
fn failover_moves_past_a_failing_provider() {
    let inv = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Network)],
        ClusterMode::default(),
    );
    for _ in 0..10 {
        assert_ne!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.1:1");
    }
}

#[test]
fn retries_zero_means_one_attempt_and_business_errors_are_not_retried() {
    let inv = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Timeout)],
        ClusterMode::Failover { retries: 0 },
    );
    let err = block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::Timeout);
    assert!(err.message().contains("after 1 attempt on"), "{err}");
    assert_eq!(inv.caller().calls().len(), 1);

    let biz = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Biz)],
        ClusterMode::default(),
    );
    assert_eq!(
        block_on(biz.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::Biz
    );
    assert_eq!(biz.caller().calls().len(), 1);

    // A request the provider cannot decode (BAD_REQUEST) fails the same everywhere: not retried.
    let undecodable = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Serialization)],
        ClusterMode::default(),
    );
    assert_eq!(
        block_on(undecodable.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::Serialization
    );
    assert_eq!(undecodable.caller().calls().len(), 1);
}

#[test]
fn failfast_and_failsafe() {
    let fast = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Network)],
        ClusterMode::Failfast,
    );
    assert_eq!(
        block_on(fast.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::Network
    );
    assert_eq!(fast.caller().calls().len(), 1);

    let safe = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Network)],
        ClusterMode::Failsafe,
    );
    assert_eq!(block_on(safe.invoke(&call())).unwrap(), "");
    let empty = invoker(&[], &[], ClusterMode::Failsafe);
    assert_eq!(block_on(empty.invoke(&call())).unwrap(), "");
}

#[test]
fn no_provider_is_a_typed_error() {
    let inv = invoker(&[], &[], ClusterMode::default());
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::NoProvider
    );
}

#[test]
fn sticky_reuses_the_last_good_provider() {
    let urls = [
        "dubbo://10.0.0.1:1/S?loadbalance=roundrobin&sticky=true",
        "dubbo://10.0.0.2:1/S",
    ];
    let inv = invoker(&urls, &[], ClusterMode::default());
    let first = block_on(inv.invoke(&call())).unwrap();
    for _ in 0..5 {
        assert_eq!(block_on(inv.invoke(&call())).unwrap(), first);
    }
    let not_sticky = invoker(&THREE, &[], ClusterMode::default());
    let picks: Vec<String> = (0..3)
        .map(|_| block_on(not_sticky.invoke(&call())).unwrap())
        .collect();
    assert_eq!(picks.len(), 3);
    assert_ne!(picks[0], picks[1], "round robin alternates without sticky");
}

#[test]
fn available_calls_the_first_listed() {
    let inv = invoker(&THREE, &[], ClusterMode::Available);
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.1:1");
}

#[test]
fn mode_from_consumer_parameters() {
    let u = |s: &str| DubboUrl::parse(s).unwrap();
    assert_eq!(
        ClusterMode::from_consumer(&u("consumer://h/S"), "m").unwrap(),
        ClusterMode::Failover { retries: 2 }
    );
    assert_eq!(
        ClusterMode::from_consumer(&u("consumer://h/S?retries=-1"), "m").unwrap(),
        ClusterMode::Failover { retries: 0 }
    );
    assert_eq!(
        ClusterMode::from_consumer(&u("consumer://h/S?cluster=failfast"), "m").unwrap(),
        ClusterMode::Failfast
    );
    assert!(ClusterMode::from_consumer(&u("consumer://h/S?cluster=zone-aware"), "m").is_err());
}

#[test]
fn every_attempt_is_counted_and_actives_limits_calls_in_flight() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let inv = invoker(&THREE, &failing, ClusterMode::default());
    for _ in 0..9 {
        block_on(inv.invoke(&call())).unwrap();
    }
    let snapshot = inv.balancer().directory().snapshot();
    let totals: Vec<(i64, i64)> = snapshot
        .providers()
        .iter()
        .map(|p| {
            (
                p.status().method("m").total(),
                p.status().method("m").failed(),
            )
        })
        .collect();
    // Round robin starts on 10.0.0.1, which fails and is failed over: every attempt is counted.
    assert_eq!(totals.iter().map(|t| t.0).sum::<i64>(), totals[0].0 + 9);
    assert_eq!(
        totals[0].1, totals[0].0,
        "all calls to the failing provider counted as failed"
    );
    assert!(snapshot
        .providers()
        .iter()
        .all(|p| p.status().method("m").active() == 0));

    // `actives=1` on the only provider: with one call already in flight, the next is refused unsent.
    let limited = invoker(
        &["dubbo://10.0.0.1:1/S?actives=1"],
        &[],
        ClusterMode::Failfast,
    );
    let provider = Arc::clone(&limited.balancer().directory().snapshot().providers()[0]);
    let in_flight = provider.status().begin("m", 0).unwrap();
    let err = block_on(limited.invoke(&call())).unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::LimitExceeded);
    assert!(limited.caller().calls().is_empty(), "nothing was sent");
    in_flight.finish(1, true);
    assert_eq!(block_on(limited.invoke(&call())).unwrap(), "10.0.0.1:1");
}
