//! Warmup through the whole pick path: a fixed clock moves a new provider up its ramp, no sleeping.

use std::sync::Arc;

use crate::support::{chi_square, CHI2_P001};
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::clock::ManualClock;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

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

/// A clock that counts how often it is read.
#[derive(Debug)]
struct CountingClock {
    inner: ManualClock,
    reads: std::sync::atomic::AtomicUsize,
}

impl rudder_common::clock::Clock for CountingClock {
    fn now_millis(&self) -> i64 {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.now_millis()
    }
}

#[test]
fn picks_read_the_clock_only_while_a_warmup_may_be_in_progress() {
    use std::sync::atomic::Ordering::Relaxed;
    let clock = Arc::new(CountingClock {
        inner: ManualClock::new(START + 10_000),
        reads: Default::default(),
    });
    // Four providers; provider 1 started at START with a 100 s warmup. A new directory per policy,
    // since a view remembers that its warmup is over.
    let directory = || {
        let directory = Arc::new(Directory::default());
        directory.replace((0..4).map(|i| {
            let started = if i == 1 { START } else { START - 3_600_000 };
            DubboUrl::parse(&format!(
                "dubbo://10.0.0.{i}:20880/S?timestamp={started}&warmup=100000"
            ))
            .unwrap()
        }));
        directory
    };
    for policy in ["random", "leastactive", "consistenthash"] {
        let balancer = Balancer::builder(directory())
            .clock(clock.clone())
            .force_policy(policy)
            .unwrap()
            .build();
        let call = Invocation::new("sayHello", vec![], vec![]);
        clock.inner.set(START + 10_000);
        let before = clock.reads.load(Relaxed);
        balancer.select(&call, &[]).unwrap();
        balancer.select(&call, &[]).unwrap();
        // Warming up: one read per pick (the pick keeps what it read); consistenthash ignores
        // weights, as in Dubbo, so it never needs the time.
        let expected = if policy == "consistenthash" { 0 } else { 2 };
        let reads = clock.reads.load(Relaxed) - before;
        assert_eq!(reads, expected, "{policy} while warming");
        clock.inner.set(START + 200_000);
        balancer.select(&call, &[]).unwrap();
        let after_warmup = clock.reads.load(Relaxed);
        for _ in 0..100 {
            balancer.select(&call, &[]).unwrap();
        }
        assert_eq!(
            clock.reads.load(Relaxed),
            after_warmup,
            "{policy} once warm"
        );
        // Setting the clock back does not restart the ramp for clock-reading picks.
        clock.inner.set(START + 10_000);
        balancer.select(&call, &[]).unwrap();
        assert_eq!(
            clock.reads.load(Relaxed),
            after_warmup,
            "{policy} after the clock went back"
        );
    }
    // shortestresponse checks its window on every pick, so it reads the clock every time.
    let balancer = Balancer::builder(directory())
        .clock(clock.clone())
        .force_policy("shortestresponse")
        .unwrap()
        .build();
    let before = clock.reads.load(Relaxed);
    for _ in 0..10 {
        balancer
            .select(&Invocation::new("sayHello", vec![], vec![]), &[])
            .unwrap();
    }
    assert_eq!(clock.reads.load(Relaxed) - before, 10);
}

#[test]
fn a_fixed_time_pick_sees_the_warmup_at_its_own_time() {
    use rudder_cluster::loadbalance::Pick;
    let (balancer, clock) = setup("random");
    // A clock-reading pick finds the warmup over...
    clock.set(START + 200_000);
    split(&balancer, 10);
    // ...but a pick at a fixed earlier time still sees provider 2 at 10 % of its weight.
    let view = balancer.directory().snapshot().view("sayHello");
    assert_eq!(view.weight(1, &Pick::at(START + 10_000)), 10);
    assert_eq!(view.weight(1, &Pick::at(START + 200_000)), 100);
}
