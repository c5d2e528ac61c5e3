//! forking: several providers at once, first answer wins, losers cancelled, a deadline.

use std::sync::Arc;

use rudder_common::error::RpcErrorKind;

use super::timer::ManualTimer;
use super::*;

fn forking(forks: u32) -> ClusterMode {
    ClusterMode::Forking {
        forks,
        timeout_millis: 1_000,
    }
}

fn active_calls(inv: &ClusterInvoker<Scripted>) -> Vec<i32> {
    let snapshot = inv.balancer().directory().snapshot();
    snapshot
        .providers()
        .iter()
        .map(|p| p.status().method("m").active())
        .collect()
}

#[test]
fn the_first_answer_wins_and_the_others_are_cancelled() {
    let inv = invoker(&THREE, &[], forking(2));
    // Round robin picks 10.0.0.1 then 10.0.0.2; 10.0.0.1 never answers.
    inv.caller().hang("10.0.0.1:1");
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.2:1");
    let mut calls = inv.caller().calls();
    calls.sort();
    assert_eq!(
        calls,
        ["10.0.0.1:1", "10.0.0.2:1"],
        "two distinct providers"
    );
    assert_eq!(
        active_calls(&inv),
        [0, 0, 0],
        "the hanging call was dropped"
    );
}

#[test]
fn all_failing_is_the_last_error_with_every_attempt() {
    let failing = [
        ("10.0.0.1:1", RpcErrorKind::Network),
        ("10.0.0.2:1", RpcErrorKind::Timeout),
    ];
    let inv = invoker(&THREE, &failing, forking(2));
    let err = block_on(inv.invoke(&call())).unwrap_err();
    // Polled in pick order: 10.0.0.2's failure is the last.
    assert_eq!(err.kind(), RpcErrorKind::Timeout);
    let tried: Vec<(&str, RpcErrorKind)> = err
        .attempts()
        .iter()
        .map(|a| (a.provider.as_str(), a.kind))
        .collect();
    assert_eq!(
        tried,
        [
            ("10.0.0.1:1", RpcErrorKind::Network),
            ("10.0.0.2:1", RpcErrorKind::Timeout)
        ]
    );
    assert!(err.message().contains("every provider failed"), "{err}");
}

#[test]
fn one_failure_does_not_fail_the_call() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let inv = invoker(&THREE, &failing, forking(2));
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.2:1");
}

#[test]
fn forks_zero_or_more_than_listed_calls_every_provider() {
    for forks in [0, 3, 7] {
        let inv = invoker(&THREE, &[], forking(forks));
        for address in ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"] {
            inv.caller().hang(address);
        }
        inv.caller().unhang("10.0.0.3:1");
        assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.3:1");
        assert_eq!(inv.caller().calls().len(), 3, "forks={forks}");
    }
}

#[test]
fn the_deadline_is_a_timeout_error_listing_the_cancelled_forks() {
    let timer = Arc::new(ManualTimer::default());
    let inv = invoker(&THREE, &[("10.0.0.2:1", RpcErrorKind::Network)], forking(2))
        .with_timer(Arc::clone(&timer) as Arc<dyn Timer>);
    inv.caller().hang("10.0.0.1:1");
    let invocation = call();
    let mut pending = std::pin::pin!(inv.invoke(&invocation));
    assert!(poll_once(pending.as_mut()).is_pending());
    timer.advance(999);
    assert!(poll_once(pending.as_mut()).is_pending());
    timer.advance(1);
    let std::task::Poll::Ready(Err(err)) = poll_once(pending.as_mut()) else {
        panic!("the deadline has passed");
    };
    assert_eq!(err.kind(), RpcErrorKind::Timeout);
    let tried: Vec<(&str, RpcErrorKind)> = err
        .attempts()
        .iter()
        .map(|a| (a.provider.as_str(), a.kind))
        .collect();
    assert_eq!(
        tried,
        [
            ("10.0.0.2:1", RpcErrorKind::Network),
            ("10.0.0.1:1", RpcErrorKind::Timeout)
        ]
    );
    assert!(err.message().contains("within 1000 ms"), "{err}");
}

#[test]
fn a_business_exception_is_an_answer_and_can_win() {
    let inv = invoker(&THREE, &[], forking(2));
    inv.caller().throw("10.0.0.1:1");
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap(),
        "exception@10.0.0.1:1"
    );
}
