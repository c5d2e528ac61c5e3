//! failback: empty result at once, retries in the background from a bounded queue.

use std::sync::Arc;

use rudder_common::error::RpcErrorKind;

use super::timer::ManualTimer;
use super::*;

fn failback(retries: u32, tasks: u32) -> ClusterMode {
    ClusterMode::Failback {
        retries,
        tasks,
        period_millis: 5_000,
    }
}

fn with_timer(inv: ClusterInvoker<Scripted>) -> (ClusterInvoker<Scripted>, Arc<ManualTimer>) {
    let timer = Arc::new(ManualTimer::default());
    (inv.with_timer(Arc::clone(&timer) as Arc<dyn Timer>), timer)
}

#[test]
fn a_failed_call_returns_empty_and_is_retried_on_another_provider_after_the_period() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let (inv, timer) = with_timer(invoker(&THREE, &failing, failback(3, 100)));
    // Round robin starts on 10.0.0.1.
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "");
    assert_eq!(inv.caller().calls(), ["10.0.0.1:1"]);
    assert_eq!(inv.failback_stats().pending, 1);
    timer.advance(4_999);
    assert_eq!(inv.caller().calls().len(), 1, "no retry before the period");
    timer.advance(1);
    let calls = inv.caller().calls();
    assert_eq!(calls.len(), 2);
    assert_ne!(
        calls[1], "10.0.0.1:1",
        "the retry excludes the provider that failed"
    );
    let stats = inv.failback_stats();
    assert_eq!((stats.pending, stats.retries, stats.recovered), (0, 1, 1));
    assert_eq!(timer.tasks(), 0);
}

/// Dubbo's FailbackClusterInvokerTest: `retries=2&failbacktasks=2`, 3 failing calls give 2 queued and 1
/// refused, 4 failed retries, and 2 calls given up.
#[test]
fn the_queue_is_bounded_and_each_call_gives_up_after_its_retries() {
    let all = [
        ("10.0.0.1:1", RpcErrorKind::Timeout),
        ("10.0.0.2:1", RpcErrorKind::Timeout),
        ("10.0.0.3:1", RpcErrorKind::Timeout),
    ];
    let (inv, timer) = with_timer(invoker(&THREE, &all, failback(2, 2)));
    for _ in 0..3 {
        assert_eq!(block_on(inv.invoke(&call())).unwrap(), "");
    }
    let stats = inv.failback_stats();
    assert_eq!((stats.pending, stats.refused), (2, 1));
    timer.advance(5_000);
    assert_eq!(inv.failback_stats().retries, 2);
    assert_eq!(inv.caller().calls().len(), 5);
    timer.advance(5_000);
    let stats = inv.failback_stats();
    assert_eq!(
        (
            stats.pending,
            stats.retries,
            stats.given_up,
            stats.recovered
        ),
        (0, 4, 2, 0)
    );
    assert_eq!(inv.caller().calls().len(), 7, "3 calls + 4 retries");
    timer.advance(50_000);
    assert_eq!(inv.caller().calls().len(), 7, "nothing after giving up");
    // A place freed by a finished call is usable again.
    block_on(inv.invoke(&call())).unwrap();
    assert_eq!(inv.failback_stats().pending, 1);
}

#[test]
fn a_retry_sees_the_current_provider_list() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let (inv, timer) = with_timer(invoker(
        &["dubbo://10.0.0.1:1/S"],
        &failing,
        failback(3, 100),
    ));
    block_on(inv.invoke(&call())).unwrap();
    inv.balancer()
        .directory()
        .replace([DubboUrl::parse("dubbo://10.0.0.9:1/S").unwrap()]);
    timer.advance(5_000);
    assert_eq!(inv.caller().calls(), ["10.0.0.1:1", "10.0.0.9:1"]);
    assert_eq!(inv.failback_stats().recovered, 1);
}

#[test]
fn a_lone_provider_is_retried_until_it_recovers() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let (inv, timer) = with_timer(invoker(
        &["dubbo://10.0.0.1:1/S"],
        &failing,
        failback(3, 100),
    ));
    block_on(inv.invoke(&call())).unwrap();
    timer.advance(5_000);
    inv.caller().heal("10.0.0.1:1");
    timer.advance(5_000);
    assert_eq!(inv.caller().calls(), ["10.0.0.1:1"; 3]);
    let stats = inv.failback_stats();
    assert_eq!((stats.retries, stats.recovered, stats.given_up), (2, 1, 0));
}

#[test]
fn dropping_the_invoker_ends_pending_retries_at_once() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let (inv, timer) = with_timer(invoker(
        &["dubbo://10.0.0.1:1/S"],
        &failing,
        failback(3, 100),
    ));
    block_on(inv.invoke(&call())).unwrap();
    assert_eq!(timer.tasks(), 1);
    drop(inv);
    // No time passes: the task sees the closed signal on its next poll and ends.
    timer.run();
    assert_eq!(timer.tasks(), 0);
}

#[test]
fn no_retries_no_timer_and_business_errors() {
    let failing = [("10.0.0.1:1", RpcErrorKind::Network)];
    let (inv, timer) = with_timer(invoker(
        &["dubbo://10.0.0.1:1/S"],
        &failing,
        failback(0, 100),
    ));
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "");
    assert_eq!((timer.tasks(), inv.failback_stats().pending), (0, 0));

    let no_timer = invoker(&["dubbo://10.0.0.1:1/S"], &failing, failback(3, 100));
    assert_eq!(block_on(no_timer.invoke(&call())).unwrap(), "");
    assert_eq!(no_timer.failback_stats().refused, 1);

    let biz = [("10.0.0.1:1", RpcErrorKind::Biz)];
    let (inv, timer) = with_timer(invoker(&["dubbo://10.0.0.1:1/S"], &biz, failback(3, 100)));
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::Biz
    );
    assert_eq!(timer.tasks(), 0);
}
