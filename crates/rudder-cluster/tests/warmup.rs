//! Warmup through the whole pick path: a fixed clock moves a new provider up its ramp, no sleeping.

mod support;

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::clock::ManualClock;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use support::{chi_square, CHI2_P001};

const START: i64 = 1_800_000_000_000;

fn split(balancer: &Balancer, runs: usize) -> Vec<usize> {
    let call = Invocation::new("sayHello", vec![], vec![]);
    let mut counts = vec![0; 2];
    for _ in 0..runs {
        let p = balancer.select(&call, &[]).unwrap();
        counts[usize::from(p.address() == "10.0.0.2:20880")] += 1;
    }
    counts
}

fn setup(policy: &str) -> (Balancer, Arc<ManualClock>) {
    let directory = Arc::new(Directory::default());
    directory.replace([
        DubboUrl::parse(&format!(
            "dubbo://10.0.0.1:20880/S?loadbalance={policy}&timestamp={}",
            START - 3_600_000
        ))
        .unwrap(),
        // Registered at START with a 100 s warmup.
        DubboUrl::parse(&format!(
            "dubbo://10.0.0.2:20880/S?timestamp={START}&warmup=100000"
        ))
        .unwrap(),
    ]);
    let clock = Arc::new(ManualClock::new(START + 10_000));
    let balancer = Balancer::builder(directory)
        .clock(clock.clone())
        .seed(11)
        .build();
    (balancer, clock)
}

#[test]
fn random_ramps_a_new_provider_up_and_then_treats_it_fully() {
    let (balancer, clock) = setup("random");
    let early = split(&balancer, 11_000);
    assert!(
        chi_square(&early, &[100.0, 10.0]) < CHI2_P001[0],
        "10 s into 100 s: weight 10, {early:?}"
    );
    clock.set(START + 50_000);
    let half = split(&balancer, 15_000);
    assert!(
        chi_square(&half, &[100.0, 50.0]) < CHI2_P001[0],
        "half way: weight 50, {half:?}"
    );
    clock.set(START + 100_000);
    let warm = split(&balancer, 10_000);
    assert!(
        chi_square(&warm, &[1.0, 1.0]) < CHI2_P001[0],
        "warm: equal, {warm:?}"
    );
}

#[test]
fn round_robin_follows_the_ramp_exactly() {
    let (balancer, clock) = setup("roundrobin");
    assert_eq!(split(&balancer, 110), [100, 10]);
    clock.set(START + 100_000);
    assert_eq!(split(&balancer, 200), [100, 100]);
}

#[test]
fn provider_clock_ahead_of_ours_gets_weight_one() {
    let (balancer, clock) = setup("roundrobin");
    clock.set(START - 5_000);
    assert_eq!(split(&balancer, 101), [100, 1]);
}
