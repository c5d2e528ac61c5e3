//! Relative outlier detection (Envoy's success rate and failure percentage) through the cluster, on a
//! fixed clock and a seeded random source: one provider of four throwing on every call is ejected at
//! the end of its interval, by either rule, without consecutive errors; every provider throwing
//! ejects nobody and leaves the other methods alone; a provider that recovers is back when its
//! ejection ends and stays in.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::outlier::Ejection;
use rudder_cluster::provider::Provider;
use rudder_common::clock::ManualClock;
use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

const START: i64 = 1_800_000_000_000;
const PORTS: [u16; 4] = [1, 2, 3, 4];

/// Answers every call; the ports in `throwing` answer with a Java exception.
#[derive(Default)]
struct Throwing {
    throwing: Mutex<HashSet<u16>>,
    calls: Mutex<[u32; 5]>,
}

impl Caller for Throwing {
    type Output = Option<String>;
    fn empty(&self) -> Option<String> {
        None
    }
    async fn call(&self, p: &Arc<Provider>, _: &Invocation) -> Result<Option<String>, RpcError> {
        let port = p.url().port();
        self.calls.lock().unwrap()[port as usize] += 1;
        let throws = self.throwing.lock().unwrap().contains(&port);
        Ok(throws.then(|| "java.lang.IllegalStateException: database down".to_owned()))
    }
    fn exception(&self, output: &Option<String>) -> Option<String> {
        output.clone()
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

struct Fixture {
    clock: Arc<ManualClock>,
    directory: Arc<Directory>,
    invoker: ClusterInvoker<Throwing>,
}

fn fixture(params: &str, throwing: &[u16]) -> Fixture {
    let directory = Arc::new(Directory::default());
    directory.replace(
        PORTS.map(|port| {
            DubboUrl::parse(&format!("dubbo://10.0.0.{port}:{port}/S?{params}")).unwrap()
        }),
    );
    let clock = Arc::new(ManualClock::new(START));
    let balancer = Balancer::builder(Arc::clone(&directory))
        .clock(Arc::clone(&clock) as Arc<dyn rudder_common::clock::Clock>)
        .seed(11)
        .build();
    let caller = Throwing::default();
    caller.throwing.lock().unwrap().extend(throwing);
    Fixture {
        clock,
        directory,
        invoker: ClusterInvoker::new(Arc::new(balancer), caller, ClusterMode::Failfast),
    }
}

impl Fixture {
    /// Makes `n` calls of `method`; returns how many answered with an exception.
    fn calls(&self, method: &str, n: usize) -> usize {
        let call = Invocation::new(method, vec![], vec![]);
        (0..n)
            .filter(|_| block_on(self.invoker.invoke(&call)).unwrap().is_some())
            .count()
    }

    /// The ports ejected for `method` now.
    fn ejected(&self, method: &str) -> Vec<u16> {
        let now = self.clock.now_millis();
        self.directory
            .snapshot()
            .providers()
            .iter()
            .filter(|p| Ejection::of(p, method, now).is_some())
            .map(|p| p.url().port())
            .collect()
    }
}

use rudder_common::clock::Clock;

/// Failure percentage: 85 % of at least 20 calls per 1 s interval, four providers compared.
const FAILURE_PERCENTAGE: &str = "outlier.enforcing-failure-percentage=100&outlier.failure-percentage-minimum-hosts=4&outlier.failure-percentage-request-volume=20&outlier.interval-ms=1000";
/// Success rate: 1 σ below the mean of four, at least 20 calls per 1 s interval.
const SUCCESS_RATE: &str = "outlier.enforcing-success-rate=100&outlier.success-rate-minimum-hosts=4&outlier.success-rate-request-volume=20&outlier.success-rate-stdev-factor=1000&outlier.interval-ms=1000";

#[test]
fn one_provider_of_four_throwing_is_ejected_at_the_end_of_the_interval_by_either_rule() {
    for params in [FAILURE_PERCENTAGE, SUCCESS_RATE] {
        let f = fixture(params, &[1]);
        // The first interval: a quarter of the calls throw, nobody is ejected before it ends.
        let first = f.calls("m", 400);
        assert!(
            (60..=140).contains(&first),
            "{params}: {first} of 400 threw"
        );
        assert!(f.ejected("m").is_empty(), "{params}");
        f.clock.advance(1000);
        // The first call to end after it compares the providers.
        f.calls("m", 1);
        assert_eq!(f.ejected("m"), [1], "{params}");
        assert_eq!(f.calls("m", 400), 0, "{params}: ejected, it throws no more");
    }
}

#[test]
fn not_enough_calls_or_too_few_providers_compare_nothing() {
    // 40 calls: 10 per provider, under the volume of 20.
    let f = fixture(FAILURE_PERCENTAGE, &[1]);
    f.calls("m", 40);
    f.clock.advance(1000);
    f.calls("m", 1);
    assert!(f.ejected("m").is_empty());
    // Five providers needed (Envoy's default), four listed.
    let f = fixture(
        "outlier.enforcing-failure-percentage=100&outlier.failure-percentage-request-volume=20&outlier.interval-ms=1000",
        &[1],
    );
    f.calls("m", 400);
    f.clock.advance(1000);
    f.calls("m", 1);
    assert!(f.ejected("m").is_empty());
}

#[test]
fn every_provider_throwing_ejects_nobody_and_other_methods_are_unaffected() {
    // Both rules at once.
    let f = fixture(&format!("{FAILURE_PERCENTAGE}&{SUCCESS_RATE}"), &PORTS);
    for _ in 0..5 {
        assert_eq!(f.calls("m", 400), 400);
        f.clock.advance(1000);
    }
    assert_eq!(f.calls("m", 1), 1);
    assert!(f.ejected("m").is_empty(), "ejected {:?}", f.ejected("m"));
    f.invoker.caller().throwing.lock().unwrap().clear();
    assert_eq!(f.calls("other", 400), 0);
    assert!(f.ejected("other").is_empty());
    let calls = *f.invoker.caller().calls.lock().unwrap();
    assert!(calls[1..].iter().all(|&n| n > 500), "{calls:?}");
}

#[test]
fn a_provider_that_recovers_is_back_when_its_ejection_ends_and_stays() {
    let f = fixture(
        &format!("{FAILURE_PERCENTAGE}&outlier.base-ejection-ms=3000"),
        &[2],
    );
    f.calls("m", 400);
    f.clock.advance(1000);
    f.calls("m", 1);
    assert_eq!(f.ejected("m"), [2]);
    f.invoker.caller().throwing.lock().unwrap().clear();
    let served = |f: &Fixture| f.invoker.caller().calls.lock().unwrap()[2];
    let at_ejection = served(&f);
    // Intervals pass while it is out; it is compared with nothing and not ejected again.
    for _ in 0..2 {
        f.calls("m", 300);
        f.clock.advance(1000);
    }
    f.clock.advance(999);
    f.calls("m", 200);
    assert_eq!(served(&f), at_ejection, "still ejected 1 ms before its end");
    f.clock.advance(1);
    for _ in 0..3 {
        f.calls("m", 400);
        f.clock.advance(1000);
    }
    assert!(
        served(&f) > at_ejection + 200,
        "back within its interval, and kept"
    );
    assert!(f.ejected("m").is_empty());
}
