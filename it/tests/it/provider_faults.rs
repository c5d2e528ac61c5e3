//! A provider killed under concurrent load, through the facade: two in-process dubbo:// providers,
//! 32 callers sharing one `Reference` for a fixed number of calls, one provider shut down half-way.
//! Failover must keep the success rate at or above 99.9 % and the p99 latency bounded.
//!
//! No Docker needed. The socket-level provider faults (black hole, accept-and-close, a provider
//! that stops reading, a close mid-frame) are in `crates/rudder-rpc/tests/rpc/provider_faults.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::{Invocation, Reference, Value};
use rudder_rpc::server::DubboServer;
use tokio::sync::watch;

const CALLERS: usize = 32;
const CALLS: usize = 20_000;
/// The provider is killed when this many calls have completed.
const KILL_AT: usize = CALLS / 2;
const REQUIRED_SUCCESS: f64 = 0.999;
/// Loopback calls in a debug build on two cores; failover after a kill adds one failed attempt.
const P99_BOUND: Duration = Duration::from_millis(250);
const DEADLINE: Duration = Duration::from_secs(120);

async fn provider(name: &'static str) -> DubboServer {
    DubboServer::bind(
        0,
        move |_call: Invocation| async move { Ok(Value::from(name)) },
    )
    .await
    .expect("bind 127.0.0.1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_killed_under_load_costs_under_a_tenth_of_a_percent_of_calls() {
    tokio::time::timeout(DEADLINE, run())
        .await
        .expect("the run exceeded its deadline");
}

async fn run() {
    let (a, b) = (provider("a").await, provider("b").await);
    let (url_a, url_b) = (
        format!("dubbo://{}/svc", a.local_addr()),
        format!("dubbo://{}/svc", b.local_addr()),
    );
    let reference = Arc::new(
        Reference::builder("svc")
            .provider(&url_a)
            .provider(&url_b)
            .build()
            .await
            .expect("reference"),
    );
    let issued = Arc::new(AtomicUsize::new(0));
    let (completed_tx, mut completed) = watch::channel(0usize);
    let completed_tx = Arc::new(completed_tx);
    let started = Instant::now();
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let (reference, issued, completed) = (
                Arc::clone(&reference),
                Arc::clone(&issued),
                Arc::clone(&completed_tx),
            );
            tokio::spawn(async move {
                let (mut latencies, mut failures, mut served_by_a) = (Vec::new(), Vec::new(), 0);
                while issued.fetch_add(1, Ordering::Relaxed) < CALLS {
                    let call_started = Instant::now();
                    let outcome = reference.call::<Value, _>("sayHello", &[], vec![]).await;
                    latencies.push(call_started.elapsed());
                    match outcome {
                        Ok(value) => served_by_a += usize::from(value == Value::from("a")),
                        Err(e) => failures.push(e.to_string()),
                    }
                    completed.send_modify(|n| *n += 1);
                }
                (latencies, failures, served_by_a)
            })
        })
        .collect();

    let _ = completed.wait_for(|n| *n >= KILL_AT).await;
    let killed_after = started.elapsed();
    a.shutdown().await;
    let a_served_at_kill = *completed.borrow();

    let (mut latencies, mut failures, mut by_a) = (Vec::new(), Vec::new(), 0);
    for caller in callers {
        let (l, f, a) = caller.await.expect("caller task");
        latencies.extend(l);
        failures.extend(f);
        by_a += a;
    }
    let total = latencies.len();
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let p50 = latencies[total / 2];
    let p99 = latencies[(total * 99).div_ceil(100) - 1];
    let max = latencies[total - 1];
    let success = (total - failures.len()) as f64 / total as f64;
    println!(
        "{total} calls by {CALLERS} callers in {elapsed:?}; provider a killed after {killed_after:?} \
         ({a_served_at_kill} done, {by_a} served by a in all); success {:.3} % ({} failed); \
         p50 {p50:?}, p99 {p99:?}, max {max:?}",
        success * 100.0,
        failures.len()
    );
    for failure in failures.iter().take(5) {
        println!("  failure: {failure}");
    }
    assert_eq!(total, CALLS);
    assert!(by_a > 0 && by_a < total, "both providers served: {by_a}");
    assert!(success >= REQUIRED_SUCCESS, "success {success}");
    assert!(p99 <= P99_BOUND, "p99 {p99:?}");
    b.shutdown().await;
}
