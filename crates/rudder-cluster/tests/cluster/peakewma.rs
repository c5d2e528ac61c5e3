//! `peakewma`, `p2c` and `adaptive` on a fixed clock and a seeded generator: what each avoids and when
//! it comes back. The call statistics are fed as the cluster feeds them (begin, finish).

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::provider::Provider;
use rudder_common::clock::ManualClock;
use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordCall;
use rudder_common::status::ActiveCall;
use rudder_common::url::DubboUrl;

const START: i64 = 1_800_000_000_000;

struct Fixture {
    directory: Arc<Directory>,
    clock: Arc<ManualClock>,
    balancer: Balancer,
    call: Invocation,
}

fn fixture(policy: &str, extra: &[&str]) -> Fixture {
    let directory = Arc::new(Directory::default());
    directory.replace((1..=4).map(|i| {
        let more = extra.get(i - 1).copied().unwrap_or("");
        DubboUrl::parse(&format!(
            "dubbo://127.0.0.1:{i}/S?loadbalance={policy}&weight=100{more}"
        ))
        .unwrap()
    }));
    let clock = Arc::new(ManualClock::new(START));
    let balancer = Balancer::builder(Arc::clone(&directory))
        .clock(clock.clone())
        .seed(11)
        .build();
    Fixture {
        directory,
        clock,
        balancer,
        call: Invocation::new("m", vec![], vec![]),
    }
}

impl Fixture {
    fn provider(&self, port: usize) -> Arc<Provider> {
        Arc::clone(&self.directory.snapshot().providers()[port - 1])
    }

    /// Records `n` finished calls of `elapsed` ms on provider `port`.
    fn finished(&self, port: usize, n: usize, elapsed: i64, ok: bool) {
        let provider = self.provider(port);
        for _ in 0..n {
            provider.status().begin("m", 0).unwrap().finish(elapsed, ok);
        }
    }

    fn in_flight(&self, port: usize, n: usize) -> Vec<ActiveCall> {
        let provider = self.provider(port);
        (0..n)
            .map(|_| provider.status().begin("m", 0).unwrap())
            .collect()
    }

    /// How many of `n` picks went to each provider, with the clock fixed.
    fn shares(&self, n: usize) -> [usize; 4] {
        let mut counts = [0; 4];
        for _ in 0..n {
            let p = self.balancer.select(&self.call, &[]).unwrap();
            counts[p.url().port() as usize - 1] += 1;
        }
        counts
    }
}

/// Makes each provider observed once, so later calls are new observations.
fn warm(f: &Fixture) {
    f.shares(1);
}

#[test]
fn peakewma_avoids_a_slow_provider() {
    let f = fixture("peakewma", &[]);
    warm(&f);
    f.finished(1, 5, 100, true);
    for port in 2..=4 {
        f.finished(port, 5, 10, true);
    }
    let counts = f.shares(4000);
    // Provider 1 loses every comparison it is drawn into: (100+1) against (10+1).
    assert_eq!(counts[0], 0, "{counts:?}");
    // The other three share the rest: 4000/3 each, ±4 standard deviations (±120).
    for c in &counts[1..] {
        assert!((1213..=1453).contains(c), "{counts:?}");
    }
}

#[test]
fn peakewma_penalises_fast_failures_and_forgives_them_with_time() {
    let f = fixture("peakewma", &[]);
    warm(&f);
    // Provider 1 fails in 0 ms: it must look as slow as a timeout (1000 ms), not fast.
    f.finished(1, 3, 0, false);
    for port in 2..=4 {
        f.finished(port, 3, 10, true);
    }
    assert_eq!(f.shares(2000)[0], 0);
    // Six decay periods later, with the others still answering in 10 ms, its estimate has decayed
    // to 1000·e^-6 ≈ 2.5 ms: it is tried again, and wins every pair it is drawn into (half of them).
    f.clock.advance(60_000);
    for port in 2..=4 {
        f.finished(port, 1, 10, true);
    }
    let counts = f.shares(4000);
    assert!(
        (1880..=2120).contains(&counts[0]),
        "drawn into half the pairs: {counts:?}"
    );
}

#[test]
fn peak_rises_at_once_and_falls_with_time() {
    let f = fixture("peakewma", &[]);
    warm(&f);
    let policy = rudder_cluster::loadbalance::peak_ewma::PeakEwma::default();
    let view = f.directory.snapshot().view("m");
    let pick = |now: i64| {
        let p = rudder_cluster::loadbalance::Pick::at(now);
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
        rudder_cluster::loadbalance::select(&policy, &view, &f.call, &p, &mut rng);
    };
    pick(START);
    f.finished(1, 1, 10, true);
    pick(START);
    let at = |now| policy.latency_estimate(&view, 0, now).unwrap();
    assert_eq!(at(START), 10.0);
    f.finished(1, 1, 200, true);
    pick(START + 1);
    assert_eq!(at(START + 1), 200.0, "a slower call replaces the estimate");
    // Read one decay period (10 s) later without new calls: e^-1 of it.
    let later = at(START + 10_001);
    assert!(
        (later - 200.0 / std::f64::consts::E).abs() < 1e-9,
        "{later}"
    );
}

#[test]
fn peakewma_counts_calls_in_flight_and_honours_warmup() {
    let f = fixture("peakewma", &[]);
    warm(&f);
    for port in 1..=4 {
        f.finished(port, 2, 10, true);
    }
    let _stalled = f.in_flight(2, 3);
    assert_eq!(
        f.shares(2000)[1],
        0,
        "a provider with calls stuck in flight loses"
    );

    // A provider that started a second ago with a 10-minute warmup weighs 1 of 100.
    let warming = format!("&timestamp={}&warmup=600000", START - 1000);
    let f = fixture("peakewma", &[warming.as_str()]);
    warm(&f);
    for port in 1..=4 {
        f.finished(port, 2, 10, true);
    }
    assert_eq!(f.shares(2000)[0], 0, "its cost is 100 times the others'");
}

#[test]
fn p2c_prefers_fewer_calls_in_flight_and_is_uniform_when_idle() {
    let f = fixture("p2c", &[]);
    let counts = f.shares(8000);
    // Idle and equal weights: uniform, 2000 each ± 4 standard deviations (±155).
    for c in counts {
        assert!((1845..=2155).contains(&c), "{counts:?}");
    }
    let _busy = f.in_flight(3, 1);
    assert_eq!(f.shares(2000)[2], 0);
}

/// Answers every call with the `lb_adaptive` report a Java provider sends, and records the request.
struct ReportingProvider {
    requests: std::sync::Mutex<Vec<Option<String>>>,
}

impl Caller for ReportingProvider {
    type Output = String;

    fn empty(&self) -> String {
        String::new()
    }

    async fn call(&self, _: &Arc<Provider>, invocation: &Invocation) -> Result<String, RpcError> {
        let asked = invocation.attachment("lb_adaptive").map(str::to_owned);
        self.requests.lock().unwrap().push(asked);
        Ok(format!("curTime:{START},load:25.0"))
    }

    fn answer_attachment<'a>(&self, output: &'a String, key: &str) -> Option<&'a str> {
        (key == "lb_adaptive").then_some(output.as_str())
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

#[test]
fn adaptive_asks_for_load_reports_and_feeds_them_back() {
    let f = fixture("adaptive", &[]);
    let caller = ReportingProvider {
        requests: Default::default(),
    };
    let invoker = ClusterInvoker::new(Arc::new(f.balancer), caller, ClusterMode::Failfast);
    for _ in 0..20 {
        block_on(invoker.invoke(&f.call)).unwrap();
    }
    let requests = invoker.caller().requests.lock().unwrap();
    assert!(requests.iter().all(|r| r.as_deref() == Some("mem,load")));
    let snapshot = f.directory.snapshot();
    let (mut picked, mut answered) = (0, 0);
    for provider in snapshot.providers() {
        let (req, success, errors) = provider.status().adaptive().counts();
        picked += req;
        answered += success;
        assert_eq!(errors, 0);
        if success > 0 {
            assert_eq!(
                provider.status().adaptive().provider_load_and_ewma().0,
                25.0
            );
        }
    }
    assert_eq!((picked, answered), (20, 20));
}
