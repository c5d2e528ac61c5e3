//! The whole call path of a `Reference` over a transport that answers at once (`rudder-noop://`
//! providers, a [`Transport`] plugged in with `ConsumerBuilder::transport`): reference, cluster mode, router chain (the tag router is
//! always on), balancer, statistics, spans. What a call costs rudder itself, without a socket or a
//! codec to hide it; `e2e_load` (examples/) measures the same against a real dubbo:// provider.
//!
//! Cases, each over 10 providers unless named:
//! * `call`: `Reference::call` with `Value`s, as a dynamic caller (a CLI, a gateway) calls it (method, one parameter type, one `String`
//!   argument), default `failover`, `random`;
//! * `invoke`: a prepared `Invocation` (cloned per call), the same reference;
//! * `condition_rule`: `invoke` with a service condition rule in force (routed views cached);
//! * `traced`: `invoke` with a tracing subscriber that enables every span and records nothing,
//!   so span fields are computed, not exported;
//! * `metrics_1000` (feature `metrics`): `invoke` with the Prometheus recorder on, over 1,000
//!   providers whose 4,000 series (4 methods) exist already.
//!
//! Allocations per call (a counting global allocator, over 20,000 calls after warm-up) are printed
//! first, with the wall time and the thread's on-CPU time per call (Linux's
//! `/proc/thread-self/schedstat`: the calls run on this thread, and time spent waiting for a core on
//! a shared machine is not counted), then criterion's figures (wall time).
//!
//! Run: `cargo bench -p rudder --features metrics --bench call_path`.

// A global allocator that counts calls and forwards to `System` needs unsafe.
#![allow(unsafe_code)]
// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use std::sync::Arc;

use rudder::transport::{Endpoint, Transport};
use rudder::{Consumer, DubboUrl, Invocation, Reference, RpcResponse, Value};
use rudder_cluster::router::RuleKey;
use tokio::runtime::Runtime;

/// The URL scheme of the providers that answer every call with `null` at once, without any I/O.
const NO_OP_PROTOCOL: &str = "rudder-noop";

/// The transport of `rudder-noop://` providers.
#[derive(Debug)]
struct NoOp;

impl Transport for NoOp {
    fn endpoint(&self, _: &DubboUrl) -> Endpoint {
        Endpoint::from_fn(|_| std::future::ready(Ok(RpcResponse::from_value(Value::Null))))
    }
}

struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const SERVICE: &str = "com.acme.Greeter";

/// How a case calls.
#[derive(Clone, Copy)]
enum Call {
    Invoke,
    Raw,
}

struct Case {
    name: &'static str,
    reference: Reference,
    call: Call,
    traced: bool,
}

fn providers(consumer: &Consumer, n: usize) -> rudder::ReferenceBuilder {
    let mut builder = consumer.reference(SERVICE);
    for i in 0..n {
        builder = builder.provider(&format!(
            "{NO_OP_PROTOCOL}://10.1.{}.{}:20880/{SERVICE}",
            i / 250,
            i % 250
        ));
    }
    builder
}

fn invocation() -> Invocation {
    Invocation::new(
        "sayHello",
        vec!["java.lang.String".to_owned()],
        vec![Value::from("rust")],
    )
}

async fn call_once(case: &Case, prepared: &Invocation) {
    let answer = match case.call {
        Call::Invoke => case
            .reference
            .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
            .await
            .map(|_| ()),
        Call::Raw => case.reference.invoke(prepared.clone()).await.map(|_| ()),
    };
    black_box(answer).expect("the no-op transport answers");
}

async fn cases() -> Vec<Case> {
    let consumer = Consumer::builder()
        .application("bench")
        .transport(NO_OP_PROTOCOL, Arc::new(NoOp))
        .build();
    let plain = providers(&consumer, 10).build().await.expect("reference");
    let ruled = providers(&consumer, 10).build().await.expect("reference");
    let rule = format!(
        "configVersion: v3.0\nscope: service\nforce: true\nenabled: true\nkey: {SERVICE}\n\
         conditions:\n  - method = sayHello => host != 10.1.0.3\n"
    );
    ruled
        .set_rule(RuleKey::service_condition(SERVICE, "", ""), Some(&rule))
        .expect("rule");
    let mut cases = vec![
        Case {
            name: "call",
            reference: plain.clone(),
            call: Call::Invoke,
            traced: false,
        },
        Case {
            name: "invoke",
            reference: plain.clone(),
            call: Call::Raw,
            traced: false,
        },
        Case {
            name: "condition_rule",
            reference: ruled,
            call: Call::Raw,
            traced: false,
        },
        Case {
            name: "traced",
            reference: plain,
            call: Call::Raw,
            traced: true,
        },
    ];
    #[cfg(feature = "metrics")]
    {
        let metered = Consumer::builder()
            .application("bench")
            .transport(NO_OP_PROTOCOL, Arc::new(NoOp))
            .metrics(rudder::metrics::MetricsConfig::default())
            .build();
        let reference = providers(&metered, 1000).build().await.expect("reference");
        // Every provider gets a series for four methods, as a busy service's would.
        for method in ["a", "b", "c", "sayHello"] {
            for _ in 0..1000 {
                reference
                    .invoke(Invocation::new(method, vec![], vec![]))
                    .await
                    .expect("call");
            }
        }
        cases.push(Case {
            name: "metrics_1000",
            reference,
            call: Call::Raw,
            traced: false,
        });
    }
    cases
}

/// Runs `f` with a subscriber that enables every span and event and keeps nothing, when `traced`.
///
/// Afterwards the callsites' interest is computed again: tracing caches "always" while the scoped
/// subscriber is set and keeps it when the subscriber goes, so every later case would create and enter
/// live (if unrecorded) spans and measure the traced path again (about 2x its cost here).
fn with_tracing<R>(traced: bool, f: impl FnOnce() -> R) -> R {
    if !traced {
        return f();
    }
    let result = tracing::subscriber::with_default(EnableAll, f);
    tracing::callsite::rebuild_interest_cache();
    result
}

/// Enables everything and records nothing: span fields are evaluated as an exporter would need.
struct EnableAll;

impl tracing::Subscriber for EnableAll {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn allocations_per_call(runtime: &Runtime, cases: &[Case]) {
    const CALLS: u64 = 20_000;
    let prepared = invocation();
    for case in cases {
        let (allocations, bytes, took) = with_tracing(case.traced, || {
            runtime.block_on(async {
                for _ in 0..1000 {
                    call_once(case, &prepared).await;
                }
                let (allocations, bytes) = (ALLOCATIONS.load(Relaxed), BYTES.load(Relaxed));
                let (started, on_cpu) = (Instant::now(), on_cpu_nanos());
                for _ in 0..CALLS {
                    call_once(case, &prepared).await;
                }
                let took = (started.elapsed(), on_cpu_nanos().saturating_sub(on_cpu));
                (
                    ALLOCATIONS.load(Relaxed) - allocations,
                    BYTES.load(Relaxed) - bytes,
                    took,
                )
            })
        });
        let (wall, on_cpu) = took;
        println!(
            "call_path/{:<15} {:>6.1} allocations, {:>6.0} bytes, {:>6.0} ns wall, {:>6.0} ns on CPU per call",
            case.name,
            allocations as f64 / CALLS as f64,
            bytes as f64 / CALLS as f64,
            wall.as_nanos() as f64 / CALLS as f64,
            on_cpu as f64 / CALLS as f64,
        );
    }
}

/// Nanoseconds this thread has spent on a CPU (0 where Linux's schedstat is not available).
fn on_cpu_nanos() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut cases = runtime.block_on(cases());
    // `CALL_PATH_CASES=invoke,call` keeps those cases only: one case per run under callgrind
    // (`docs/performance.md`), whose instruction count is then that case's alone.
    if let Ok(names) = std::env::var("CALL_PATH_CASES") {
        cases.retain(|case| names.split(',').any(|name| name == case.name));
    }
    allocations_per_call(&runtime, &cases);
    let prepared = invocation();
    let mut group = c.benchmark_group("call_path");
    group.measurement_time(Duration::from_secs(3));
    for case in &cases {
        group.bench_function(case.name, |b| {
            b.iter_custom(|iters| {
                with_tracing(case.traced, || {
                    runtime.block_on(async {
                        let started = Instant::now();
                        for _ in 0..iters {
                            call_once(case, &prepared).await;
                        }
                        started.elapsed()
                    })
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
