//! `cluster.availablecheck`: a provider whose transport marks its connection down is not picked,
//! unless every provider is down.

use std::time::{Duration, Instant};

use rudder_common::status::availability::Availability;
use rudder_common::status::record::RecordAvailability;

use super::*;

/// Gives each provider of `inv`'s directory an availability of its own, as the caller does with each
/// endpoint's; returned in list order.
fn watched(inv: &ClusterInvoker<Scripted>) -> Vec<Availability> {
    inv.balancer()
        .directory()
        .snapshot()
        .providers()
        .iter()
        .map(|p| {
            let availability = Availability::default();
            p.watch_availability(availability.clone());
            availability
        })
        .collect()
}

fn an_hour() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

fn random_three() -> [&'static str; 3] {
    [
        "dubbo://10.0.0.1:1/S",
        "dubbo://10.0.0.2:1/S",
        "dubbo://10.0.0.3:1/S",
    ]
}

#[test]
fn a_provider_marked_down_is_never_picked_and_comes_back_when_up() {
    let inv = invoker(&random_three(), &[], ClusterMode::Failfast);
    let connections = watched(&inv);
    connections[0].mark_down_until(an_hour());
    for _ in 0..300 {
        assert_ne!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.1:1");
    }
    connections[0].mark_up();
    let back = (0..300)
        .filter(|_| block_on(inv.invoke(&call())).unwrap() == "10.0.0.1:1")
        .count();
    // Random over three: 100 expected; 40 is more than 8 standard deviations below.
    assert!(back > 40, "picked {back} times of 300 once up");
}

#[test]
fn a_provider_due_for_its_reconnect_attempt_is_picked_again() {
    let inv = invoker(&random_three(), &[], ClusterMode::Failfast);
    let connections = watched(&inv);
    connections[1].mark_down_until(Instant::now());
    let picked = (0..300)
        .filter(|_| block_on(inv.invoke(&call())).unwrap() == "10.0.0.2:1")
        .count();
    assert!(
        picked > 40,
        "picked {picked} times of 300 with its attempt due"
    );
}

#[test]
fn when_every_provider_is_down_calls_still_go_out() {
    let inv = invoker(&random_three(), &[], ClusterMode::Failfast);
    for connection in watched(&inv) {
        connection.mark_down_until(an_hour());
    }
    let mut seen: Vec<String> = (0..60)
        .map(|_| block_on(inv.invoke(&call())).unwrap())
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]);
}

#[test]
fn failover_retries_skip_down_providers_and_the_check_can_be_turned_off() {
    let all_fail = [
        ("10.0.0.1:1", RpcErrorKind::Network),
        ("10.0.0.2:1", RpcErrorKind::Network),
    ];
    let inv = invoker(
        &random_three(),
        &all_fail,
        ClusterMode::Failover { retries: 2 },
    );
    let connections = watched(&inv);
    connections[0].mark_down_until(an_hour());
    connections[1].mark_down_until(an_hour());
    for _ in 0..20 {
        assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.3:1");
    }
    assert!(inv.caller().calls().iter().all(|a| a == "10.0.0.3:1"));

    // `cluster.availablecheck=false`: the down ones are picked as before.
    let balancer = Balancer::builder(directory(&random_three()))
        .seed(3)
        .available_check(false)
        .build();
    let unchecked = ClusterInvoker::new(
        Arc::new(balancer),
        Scripted::default(),
        ClusterMode::Failfast,
    );
    let connections = watched(&unchecked);
    connections[0].mark_down_until(an_hour());
    let picked = (0..300)
        .filter(|_| block_on(unchecked.invoke(&call())).unwrap() == "10.0.0.1:1")
        .count();
    assert!(
        picked > 40,
        "picked {picked} times of 300 without the check"
    );
}

#[test]
fn a_sticky_provider_is_left_when_it_goes_down() {
    let sticky = [
        "dubbo://10.0.0.1:1/S?sticky=true&loadbalance=roundrobin",
        "dubbo://10.0.0.2:1/S",
    ];
    let inv = invoker(&sticky, &[], ClusterMode::Failfast);
    let connections = watched(&inv);
    let first = block_on(inv.invoke(&call())).unwrap();
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), first);
    let index = usize::from(first == "10.0.0.2:1");
    connections[index].mark_down_until(an_hour());
    let other = block_on(inv.invoke(&call())).unwrap();
    assert_ne!(other, first);
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), other);
}

#[test]
fn available_mode_skips_a_down_provider() {
    let inv = invoker(&THREE, &[], ClusterMode::Available);
    let connections = watched(&inv);
    connections[0].mark_down_until(an_hour());
    assert_eq!(block_on(inv.invoke(&call())).unwrap(), "10.0.0.2:1");
}
