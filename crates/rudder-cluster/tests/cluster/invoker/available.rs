//! available: the first listed provider not known to be failing.

use std::sync::Arc;

use rudder_common::clock::ManualClock;
use rudder_common::error::RpcErrorKind;

use super::*;
use rudder_cluster::cluster::AVAILABLE_RECHECK_MILLIS;

fn available(clock: &Arc<ManualClock>) -> ClusterInvoker<Scripted> {
    let balancer = Balancer::builder(directory(&THREE))
        .clock(Arc::clone(clock) as Arc<dyn rudder_common::clock::Clock>)
        .build();
    ClusterInvoker::new(
        Arc::new(balancer),
        Scripted::default(),
        ClusterMode::Available,
    )
}

#[test]
fn a_network_failure_skips_the_provider_until_the_recheck_window_passes() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let inv = available(&clock);
    inv.caller().fail("10.0.0.1:1", RpcErrorKind::Network);
    assert_eq!(
        block_on(inv.invoke(&call())).unwrap_err().kind(),
        RpcErrorKind::Network,
        "the first call does not know yet"
    );
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.2:1");
    clock.advance(AVAILABLE_RECHECK_MILLIS - 1);
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.2:1");
    // The window has passed: 10.0.0.1 is tried again, and having recovered it is used again.
    inv.caller().heal("10.0.0.1:1");
    clock.advance(1);
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.1:1");
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.1:1");
    assert_eq!(
        inv.caller().calls(),
        [
            "10.0.0.1:1",
            "10.0.0.2:1",
            "10.0.0.2:1",
            "10.0.0.1:1",
            "10.0.0.1:1"
        ]
    );
}

#[test]
fn a_timeout_does_not_mark_a_provider_as_failing() {
    let clock = Arc::new(ManualClock::new(0));
    let inv = available(&clock);
    inv.caller().fail("10.0.0.1:1", RpcErrorKind::Timeout);
    block_on(inv.invoke(&call())).unwrap_err();
    block_on(inv.invoke(&call())).unwrap_err();
    assert_eq!(inv.caller().calls(), ["10.0.0.1:1", "10.0.0.1:1"]);
}

#[test]
fn when_every_provider_is_failing_the_first_is_probed() {
    let clock = Arc::new(ManualClock::new(0));
    let inv = available(&clock);
    for address in ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"] {
        inv.caller().fail(address, RpcErrorKind::Network);
    }
    for _ in 0..3 {
        block_on(inv.invoke(&call())).unwrap_err();
    }
    assert_eq!(
        inv.caller().calls(),
        ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]
    );
    inv.caller().heal("10.0.0.1:1");
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.1:1");
}
