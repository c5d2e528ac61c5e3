//! What the Prometheus recorder costs a real call: `Reference::invoke` against an in-process
//! dubbo:// provider on loopback that answers at once, 16 calls in flight, on a two-worker runtime,
//! through a consumer without metrics (`plain`) and one with them (`metrics`). Criterion's figure is
//! the wall time per call at that concurrency (its inverse is the throughput); the two cases differ
//! by the recorder alone (series lookup, in-flight gauge, histogram, counters).
//!
//! Run: `cargo bench -p rudder --features metrics --bench metrics_overhead`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rudder::metrics::MetricsConfig;
use rudder::{Consumer, Invocation, Reference, Value};
use rudder_rpc::server::DubboServer;

const SERVICE: &str = "com.acme.Greeter";
/// Calls in flight at once, each on its own task.
const IN_FLIGHT: u64 = 16;

/// A fresh consumer, with or without metrics, and its reference to `server`.
async fn reference(server: &DubboServer, metrics: bool) -> (Consumer, Reference) {
    let builder = Consumer::builder();
    let consumer = match metrics {
        true => builder.metrics(MetricsConfig::default()).build(),
        false => builder.build(),
    };
    let reference = consumer
        .reference(SERVICE)
        .provider(&format!("dubbo://{}/{SERVICE}", server.local_addr()))
        .build()
        .await
        .expect("reference");
    (consumer, reference)
}

/// Makes `calls` calls, `IN_FLIGHT` at a time (each task its share), and returns how long they took.
async fn run(reference: &Reference, calls: u64) -> Duration {
    let started = Instant::now();
    let tasks: Vec<_> = (0..IN_FLIGHT)
        .map(|task| {
            let reference = reference.clone();
            // The first `calls % IN_FLIGHT` tasks make one more, so the total is exactly `calls`.
            let share = calls / IN_FLIGHT + u64::from(task < calls % IN_FLIGHT);
            tokio::spawn(async move {
                for _ in 0..share {
                    reference
                        .call::<Value, _>("m", &[], vec![])
                        .await
                        .expect("the provider answers");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a calling task panicked");
    }
    started.elapsed()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = runtime.block_on(async {
        DubboServer::bind(0, |_: Invocation| async { Ok(Value::from("hi")) })
            .await
            .expect("bind 127.0.0.1")
    });
    let mut group = c.benchmark_group("metrics_overhead");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(5));
    for (name, metrics) in [("plain", false), ("metrics", true)] {
        let (_consumer, reference) = runtime.block_on(reference(&server, metrics));
        // The connection is opened before measuring.
        runtime.block_on(run(&reference, IN_FLIGHT));
        group.bench_function(name, |b| {
            b.iter_custom(|calls| runtime.block_on(run(&reference, calls)));
        });
    }
    group.finish();
    runtime.block_on(server.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
