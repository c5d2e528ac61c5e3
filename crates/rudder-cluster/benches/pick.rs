//! Pick cost of each policy at 3, 10, 100 and 1000 providers, through `Balancer::select` (snapshot load,
//! view lookup, policy, RNG), plus allocations per pick counted by a wrapping global allocator.
//!
//! `leastactive` and `shortestresponse` are measured twice: idle (no call in flight, no call finished: every
//! provider ties, the common state of a lightly loaded service) and loaded (1 to 5 calls in flight and a
//! different average response time per provider, so the lowest key is shared by about a fifth of them,
//! or by one).
//!
//! Run: `cargo bench -p rudder-cluster --bench pick`. The allocation table is printed first.

// The only unsafe code in the workspace: a global allocator that counts calls and forwards to `System`.
#![allow(unsafe_code)]
// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::clock::ManualClock;
use rudder_common::invocation::Invocation;
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

const POLICIES: [&str; 5] = [
    "random",
    "roundrobin",
    "leastactive",
    "shortestresponse",
    "consistenthash",
];
const SIZES: [usize; 4] = [3, 10, 100, 1000];
const NOW: i64 = 1_800_000_000_000;

fn balancer(policy: &str, providers: usize) -> Balancer {
    let directory = Arc::new(Directory::default());
    directory.replace((0..providers).map(|i| {
        // Mixed weights, started long ago (no warmup in progress): the steady state of a real service.
        let url = format!(
            "dubbo://10.0.{}.{}:20880/com.acme.Greeter?loadbalance={policy}&weight={}&timestamp={}",
            i / 250,
            i % 250,
            50 + (i % 4) * 50,
            NOW - 3_600_000
        );
        DubboUrl::parse(&url).unwrap()
    }));
    Balancer::builder(directory)
        .clock(Arc::new(ManualClock::new(NOW)))
        .build()
}

/// Puts `b`'s providers under load: `(i * 7) % 5` calls in flight on provider `i`, and, for
/// `shortestresponse`, eight finished calls of `1 + (i * 13) % 40` ms each. The returned guards keep the
/// calls in flight.
fn load(b: &Balancer) -> Vec<rudder_rpc::status::ActiveCall> {
    let snapshot = b.directory().snapshot();
    let mut in_flight = Vec::new();
    for (i, provider) in snapshot.providers().iter().enumerate() {
        for _ in 0..8 {
            let call = provider.status().begin("sayHello", 0).unwrap();
            call.finish(1 + (i as i64 * 13) % 40, true);
        }
        for _ in 0..(i * 7) % 5 {
            in_flight.push(provider.status().begin("sayHello", 0).unwrap());
        }
    }
    in_flight
}

fn call() -> Invocation {
    Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("user-42")],
    )
}

fn print_allocations() {
    println!("allocations per pick (after the first pick of each view):");
    for policy in POLICIES {
        for n in SIZES {
            let b = balancer(policy, n);
            let call = call();
            b.select(&call, &[]).unwrap();
            let before = ALLOCATIONS.load(Relaxed);
            for _ in 0..10_000 {
                std::hint::black_box(b.select(&call, &[]).unwrap());
            }
            let per_pick = (ALLOCATIONS.load(Relaxed) - before) as f64 / 10_000.0;
            println!("  {policy:>16} n={n:<5} {per_pick}");
        }
    }
}

fn bench_picks(c: &mut Criterion) {
    print_allocations();
    for policy in POLICIES {
        let mut group = c.benchmark_group(policy);
        for n in SIZES {
            let b = balancer(policy, n);
            let call = call();
            b.select(&call, &[]).unwrap();
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
                bench.iter(|| b.select(&call, &[]).unwrap())
            });
        }
        group.finish();
    }
    for policy in ["leastactive", "shortestresponse"] {
        let mut group = c.benchmark_group(format!("{policy}-loaded"));
        for n in SIZES {
            let b = balancer(policy, n);
            let _in_flight = load(&b);
            let call = call();
            b.select(&call, &[]).unwrap();
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
                bench.iter(|| b.select(&call, &[]).unwrap())
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1)).sample_size(30);
    targets = bench_picks
}
criterion_main!(benches);
