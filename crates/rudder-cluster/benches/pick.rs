//! Pick cost of each policy at 3, 10, 100 and 1000 providers, measured two ways:
//!
//! * `pick/<policy>`: the policy alone over a prepared snapshot view (`loadbalance::select`), which is
//!   what Dubbo's `LoadBalance.select(invokers, url, invocation)` does;
//! * `select/<policy>`: the whole path a call takes, `Balancer::select`: current snapshot, per-method
//!   view, policy resolution, clock, RNG, the policy, and the `Arc` of the chosen provider.
//!
//! `leastactive` and `shortestresponse` are measured idle (no call in flight, none finished, so every
//! provider ties, as in a lightly used service) and loaded (0 to 4 calls in flight per provider in no
//! particular order, and a different average response time per provider). `consistenthash-bounded` is
//! `consistenthash` with `hash.balance-factor=1.25`: idle (the key's owner has nothing in flight, so
//! the bound needs no sum) and loaded (the same scatter, plus the key's owner over the bound, so every
//! pick sums the load and walks the ring).
//!
//! Allocations per pick, counted by a wrapping global allocator, are printed first, then a table of
//! best-of-rounds figures (the fastest of 15 rounds of 20,000 picks; the machine is shared, and noise
//! only ever adds time), then criterion's own statistics.
//!
//! Run: `cargo bench -p rudder-cluster --bench pick`.

// The only unsafe code in the workspace: a global allocator that counts calls and forwards to `System`.
#![allow(unsafe_code)]
// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::{self, LoadBalance, LoadBalanceRegistry, MethodView, Pick};
use rudder_cluster::provider::Provider;
use rudder_common::clock::ManualClock;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordCall;
use rudder_common::status::ActiveCall;
use rudder_common::url::DubboUrl;
use rudder_common::Value;

struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const POLICIES: [&str; 8] = [
    "random",
    "roundrobin",
    "leastactive",
    "shortestresponse",
    "consistenthash",
    "adaptive",
    "p2c",
    "peakewma",
];
/// `consistenthash` with bounded loads: a policy name followed by the URL parameters that set it up.
const BOUNDED: &str = "consistenthash&hash.balance-factor=1.25";
const SIZES: [usize; 4] = [3, 10, 100, 1000];
const NOW: i64 = 1_800_000_000_000;

/// One benchmark subject: a balancer over `n` providers, its current view, and a separate policy
/// instance for the policy-only measurement.
struct Subject {
    balancer: Balancer,
    view: Arc<MethodView>,
    policy: Arc<dyn LoadBalance>,
    call: Invocation,
    _in_flight: Vec<ActiveCall>,
}

impl Subject {
    fn new(subject: &str, providers: usize, loaded: bool) -> Subject {
        let (policy, params) = subject.split_once('&').unwrap_or((subject, ""));
        let params = if params.is_empty() {
            String::new()
        } else {
            format!("&{params}")
        };
        let directory = Arc::new(Directory::default());
        directory.replace((0..providers).map(|i| {
            // Mixed weights, started long ago (no warmup in progress): a real service's steady state.
            let url = format!(
                "dubbo://10.0.{}.{}:20880/com.acme.Greeter?loadbalance={policy}&weight={}&timestamp={}{params}",
                i / 250,
                i % 250,
                50 + (i % 4) * 50,
                NOW - 3_600_000
            );
            DubboUrl::parse(&url).unwrap()
        }));
        let mut in_flight = if loaded { load(&directory) } else { Vec::new() };
        let call = Invocation::new(
            "sayHello",
            vec!["java.lang.String".into()],
            vec![Value::from("user-42")],
        );
        if loaded && !params.is_empty() {
            // Bounded and loaded: the key's owner over the bound, so every pick sums the load and walks.
            let snapshot = directory.snapshot();
            let view = snapshot.view("sayHello");
            let plain = LoadBalanceRegistry::with_builtins().get(policy).unwrap();
            let mut rng = SmallRng::seed_from_u64(0);
            let owner =
                loadbalance::select(&*plain, &view, &call, &Pick::at(NOW), &mut rng).unwrap();
            let status = snapshot.providers()[owner].status();
            in_flight.extend((0..16).map(|_| status.begin("sayHello", 0).unwrap()));
        }
        let balancer = Balancer::builder(Arc::clone(&directory))
            .clock(Arc::new(ManualClock::new(NOW)))
            .build();
        // The first pick builds the view and the policies' per-view state.
        balancer.select(&call, &[]).unwrap();
        let subject = Subject {
            view: directory.snapshot().view("sayHello"),
            policy: LoadBalanceRegistry::with_builtins().get(policy).unwrap(),
            balancer,
            call,
            _in_flight: in_flight,
        };
        subject.pick(&mut SmallRng::seed_from_u64(0));
        subject
    }

    fn select(&self) -> Arc<Provider> {
        self.balancer.select(black_box(&self.call), &[]).unwrap()
    }

    fn pick(&self, rng: &mut SmallRng) -> usize {
        let pick = Pick::at(NOW);
        loadbalance::select(&*self.policy, &self.view, black_box(&self.call), &pick, rng).unwrap()
    }
}

/// Puts the providers under load: 0 to 4 calls in flight each, scattered by a hash of the index, and
/// eight finished calls of `1 + (i * 13) % 40` ms. The returned guards keep the calls in flight.
fn load(directory: &Directory) -> Vec<ActiveCall> {
    let snapshot = directory.snapshot();
    // As in a consumer, the view exists before the calls (it allocates the counters they update).
    snapshot.view("sayHello");
    let mut in_flight = Vec::new();
    for (i, provider) in snapshot.providers().iter().enumerate() {
        for _ in 0..8 {
            let call = provider.status().begin("sayHello", 0).unwrap();
            call.finish(1 + (i as i64 * 13) % 40, true);
        }
        let busy = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) % 5;
        for _ in 0..busy {
            in_flight.push(provider.status().begin("sayHello", 0).unwrap());
        }
    }
    in_flight
}

/// The subjects measured: every policy idle, and the two that read live counters loaded too.
fn subjects() -> Vec<(String, bool)> {
    let mut all: Vec<(String, bool)> = POLICIES.iter().map(|p| (p.to_string(), false)).collect();
    all.push((BOUNDED.to_string(), false));
    all.extend(
        [
            "leastactive",
            "shortestresponse",
            "adaptive",
            "p2c",
            "peakewma",
            BOUNDED,
        ]
        .map(|p| (p.to_string(), true)),
    );
    all
}

fn label(policy: &str, loaded: bool) -> String {
    let policy = short_name(policy);
    if loaded {
        format!("{policy} (loaded)")
    } else {
        policy.to_string()
    }
}

/// `consistenthash-bounded` for [`BOUNDED`], else the policy name.
fn short_name(subject: &str) -> String {
    match subject.split_once('&') {
        Some((policy, _)) => format!("{policy}-bounded"),
        None => subject.to_string(),
    }
}

fn print_allocations() {
    println!("allocations per pick (after the first pick of each view):");
    for (policy, loaded) in subjects() {
        for n in SIZES {
            let subject = Subject::new(&policy, n, loaded);
            let mut rng = SmallRng::seed_from_u64(1);
            let before = ALLOCATIONS.load(Relaxed);
            for _ in 0..10_000 {
                black_box(subject.select());
                black_box(subject.pick(&mut rng));
            }
            let per_pick = (ALLOCATIONS.load(Relaxed) - before) as f64 / 20_000.0;
            println!("  {:>26} n={n:<5} {per_pick}", label(&policy, loaded));
            // The reactive policies promise no allocation on the pick path, loaded or not.
            if ["adaptive", "p2c", "peakewma", BOUNDED].contains(&policy.as_str()) {
                assert_eq!(per_pick, 0.0, "{policy} allocates on the pick path");
            }
        }
    }
}

/// The fastest of 15 rounds of 20,000 calls of `f`, in nanoseconds per call.
fn best_of_rounds(mut f: impl FnMut()) -> f64 {
    (0..15)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..20_000 {
                f();
            }
            started.elapsed().as_nanos() as f64 / 20_000.0
        })
        .fold(f64::MAX, f64::min)
}

fn print_best_of_rounds() {
    println!("best of 15 rounds, ns per pick: policy alone (pick) / whole path (select)");
    println!("| policy | 3 | 10 | 100 | 1000 |");
    println!("|---|---|---|---|---|");
    for (policy, loaded) in subjects() {
        let cells: Vec<String> = SIZES
            .iter()
            .map(|&n| {
                let subject = Subject::new(&policy, n, loaded);
                let mut rng = SmallRng::seed_from_u64(2);
                let pick = best_of_rounds(|| {
                    black_box(subject.pick(&mut rng));
                });
                let select = best_of_rounds(|| {
                    black_box(subject.select());
                });
                format!("{pick:.0} / {select:.0}")
            })
            .collect();
        println!("| {} | {} |", label(&policy, loaded), cells.join(" | "));
    }
}

fn bench_picks(c: &mut Criterion) {
    print_allocations();
    print_best_of_rounds();
    for (policy, loaded) in subjects() {
        let name = if loaded {
            format!("{}-loaded", short_name(&policy))
        } else {
            short_name(&policy)
        };
        let mut pick = c.benchmark_group(format!("pick/{name}"));
        for n in SIZES {
            let subject = Subject::new(&policy, n, loaded);
            let mut rng = SmallRng::seed_from_u64(3);
            pick.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
                bench.iter(|| subject.pick(&mut rng))
            });
        }
        pick.finish();
        let mut select = c.benchmark_group(format!("select/{name}"));
        for n in SIZES {
            let subject = Subject::new(&policy, n, loaded);
            select.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
                bench.iter(|| subject.select())
            });
        }
        select.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1)).sample_size(30);
    targets = bench_picks
}
criterion_main!(benches);
