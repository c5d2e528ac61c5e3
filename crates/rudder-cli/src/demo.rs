//! `rudder demo`: the five Dubbo balancers side by side, on providers that run inside this process.
//!
//! Four providers with different weights, latencies and one still warming up serve a fixed load through
//! the real balancer and the real per-provider statistics, once per strategy. The table after each run
//! shows each provider's share of calls next to its effective weight, with latency percentiles, and a
//! short note says what that strategy did and why.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::Pick;
use rudder_common::clock::{Clock, SystemClock};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::Value;

/// Arguments of `rudder demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Calls per strategy.
    #[arg(long, default_value_t = 2000)]
    calls: usize,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
}

/// One embedded provider: its port, weight, service time, and whether it registered a moment ago.
struct DemoProvider {
    port: u16,
    weight: i32,
    latency: Duration,
    warming: bool,
}

const PROVIDERS: [DemoProvider; 4] = [
    DemoProvider {
        port: 20881,
        weight: 100,
        latency: Duration::from_millis(2),
        warming: false,
    },
    DemoProvider {
        port: 20882,
        weight: 200,
        latency: Duration::from_millis(4),
        warming: false,
    },
    DemoProvider {
        port: 20883,
        weight: 300,
        latency: Duration::from_millis(12),
        warming: false,
    },
    DemoProvider {
        port: 20884,
        weight: 200,
        latency: Duration::from_millis(2),
        warming: true,
    },
];

const STRATEGIES: [(&str, &str); 5] = [
    ("random", "Weighted random: shares follow the effective weights (the warming provider gets ~1/5 of its weight)."),
    ("roundrobin", "Smooth weighted round robin: the same proportions as random, but interleaved exactly, not by chance."),
    ("leastactive", "Fewest calls in flight wins: fast providers finish sooner, so they take more than their weight."),
    ("shortestresponse", "Shortest expected response (average time x in-flight): the slow provider is avoided once measured."),
    ("consistenthash", "Same arguments, same provider: 50 user ids spread over the ring, each always on one provider."),
];

pub(crate) fn run(args: DemoArgs, out: &mut dyn Write) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args, out))
}

async fn run_async(args: DemoArgs, out: &mut dyn Write) -> Result<()> {
    let now = SystemClock.now_millis();
    writeln!(
        out,
        "rudder demo: {} providers embedded in this process, {} calls per strategy, {} in flight\n",
        PROVIDERS.len(),
        args.calls,
        args.concurrency
    )?;
    for (name, note) in STRATEGIES {
        let directory = Arc::new(Directory::default());
        directory.replace(PROVIDERS.iter().map(|p| provider_url(p, name, now)));
        let balancer = Arc::new(Balancer::builder(Arc::clone(&directory)).build());
        let started = Instant::now();
        let samples = drive(&balancer, args.calls, args.concurrency).await;
        let elapsed = started.elapsed();
        print_table(out, name, &directory, &samples, elapsed, now)?;
        writeln!(out, "  {note}\n")?;
        out.flush()?;
    }
    writeln!(out, "Every pick above went through rudder's balancer exactly as a Dubbo consumer would make it;")?;
    writeln!(out, "`rudder simulate` previews picks without calling, `rudder providers` lists a live service.")?;
    Ok(())
}

fn provider_url(p: &DemoProvider, loadbalance: &str, now: i64) -> DubboUrl {
    // A provider that registered two minutes ago is 1/5 through Dubbo's 10-minute warmup.
    let started = if p.warming {
        now - 120_000
    } else {
        now - 3_600_000
    };
    let url = format!(
        "dubbo://127.0.0.1:{}/org.rudder.demo.Greeter?loadbalance={loadbalance}&weight={}&timestamp={started}",
        p.port, p.weight
    );
    DubboUrl::parse(&url).expect("demo URLs are valid")
}

/// One completed call: which provider, how long, whether it failed.
struct Sample {
    address: String,
    latency: Duration,
    failed: bool,
}

async fn drive(balancer: &Arc<Balancer>, calls: usize, concurrency: usize) -> Vec<Sample> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for _ in 0..concurrency.max(1) {
        let (balancer, tx, next) = (Arc::clone(balancer), tx.clone(), Arc::clone(&next));
        tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= calls {
                    break;
                }
                let user = Value::from(format!("user-{}", n % 50));
                let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![user]);
                let sample = call_once(&balancer, &call).await;
                if tx.send(sample).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut samples = Vec::with_capacity(calls);
    while let Some(sample) = rx.recv().await {
        samples.push(sample);
        if progress && samples.len() % 200 == 0 {
            eprint!("\r  {} / {calls} calls", samples.len());
        }
    }
    if progress {
        eprint!("\r{:40}\r", "");
    }
    samples
}

async fn call_once(balancer: &Balancer, call: &Invocation) -> Sample {
    let started = Instant::now();
    let provider = match balancer.select(call, &[]) {
        Ok(p) => p,
        Err(_) => {
            return Sample {
                address: "-".into(),
                latency: started.elapsed(),
                failed: true,
            }
        }
    };
    let active = provider.status().begin(call.method_name(), 0);
    let spec = PROVIDERS.iter().find(|p| p.port == provider.url().port());
    tokio::time::sleep(spec.map_or(Duration::ZERO, |p| p.latency)).await;
    let latency = started.elapsed();
    if let Some(active) = active {
        active.finish(latency.as_millis() as i64, true);
    }
    Sample {
        address: provider.address().to_owned(),
        latency,
        failed: false,
    }
}

fn print_table(
    out: &mut dyn Write,
    name: &str,
    directory: &Directory,
    samples: &[Sample],
    elapsed: Duration,
    now: i64,
) -> Result<()> {
    let snapshot = directory.snapshot();
    let view = snapshot.view("sayHello");
    let pick = Pick {
        now,
        ..Pick::default()
    };
    let total_weight: i64 = (0..view.len())
        .map(|i| i64::from(view.weight(i, &pick)))
        .sum();
    let mut by_provider: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        by_provider.entry(&s.address).or_default().push(s);
    }
    writeln!(
        out,
        "── {name} ── {} calls in {:.2} s",
        samples.len(),
        elapsed.as_secs_f64()
    )?;
    writeln!(
        out,
        "  {:<17} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6}",
        "provider", "weight", "w-share", "share", "p50", "p99", "errors"
    )?;
    for (i, provider) in view.providers().iter().enumerate() {
        let weight = view.weight(i, &pick);
        let mine = by_provider
            .get(provider.address())
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut latencies: Vec<Duration> = mine.iter().map(|s| s.latency).collect();
        latencies.sort();
        let errors = mine.iter().filter(|s| s.failed).count();
        writeln!(
            out,
            "  {:<17} {:>6} {:>7.1}% {:>7.1}% {:>8} {:>8} {:>6}",
            provider.address(),
            weight,
            100.0 * weight as f64 / total_weight.max(1) as f64,
            100.0 * mine.len() as f64 / samples.len().max(1) as f64,
            percentile(&latencies, 0.50),
            percentile(&latencies, 0.99),
            errors
        )?;
    }
    Ok(())
}

fn percentile(sorted: &[Duration], q: f64) -> String {
    if sorted.is_empty() {
        return "-".into();
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    format!("{:.1}ms", sorted[i].as_secs_f64() * 1000.0)
}
