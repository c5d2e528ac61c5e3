//! `rudder demo --scenario slow|failing|stall|capacity|equal|all`: the LB-quality benchmark.
//!
//! Four embedded dubbo:// providers on loopback, one of them misbehaving, serve the same load through
//! every strategy in turn, retries off (`failfast`), each through a fresh reference (fresh statistics).
//! Per strategy: QPS, p50 / p99 / p99.9 and the share of calls that failed.
//!
//! | scenario | provider 0 | the others |
//! |---|---|---|
//! | `slow` | answers in 10 × the base time | base time (2 ms) |
//! | `failing` | fails at once (an RPC error, under 1 ms) | base time |
//! | `stall` | stalls for 500 ms every 2 s, then answers | base time |
//! | `capacity` | providers 0 and 1 serve 8 calls at once, 2 and 3 only 4 (2:1), equal weights | |
//! | `equal` | all alike | |

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::ValueEnum;
use rudder::{Consumer, Invocation, Value};
use rudder_rpc::server::{DubboServer, ServerConfig};

use crate::bench_load::{drive, Load, Stop};

/// `--scenario`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scenario {
    /// One provider 10 times slower.
    Slow,
    /// One provider failing fast.
    Failing,
    /// One provider with periodic 500 ms stalls.
    Stall,
    /// Unequal capacity, 2:1 workers, equal weights.
    Capacity,
    /// All providers alike.
    Equal,
    /// Every scenario, one after another.
    All,
}

const SERVICE: &str = "org.rudder.demo.Greeter";
const BASE: Duration = Duration::from_millis(2);

/// The strategies compared, with the consumer parameters that make each.
const STRATEGIES: [(&str, &str); 9] = [
    ("random", "loadbalance=random"),
    ("roundrobin", "loadbalance=roundrobin"),
    ("leastactive", "loadbalance=leastactive"),
    ("shortestresponse", "loadbalance=shortestresponse"),
    ("adaptive", "loadbalance=adaptive"),
    ("p2c", "loadbalance=p2c"),
    ("peakewma", "loadbalance=peakewma"),
    ("prequal", "loadbalance=prequal"),
    (
        "random+outlier",
        "loadbalance=random&outlier.consecutive-errors=5&outlier.base-ejection-ms=1000",
    ),
];

/// How provider `index` behaves in `scenario`: its service time for a call at `now`, whether it
/// fails, and how many calls it serves at once.
struct Behaviour {
    fails: bool,
    workers: usize,
    stalls: bool,
    service: Duration,
}

fn behaviour(scenario: Scenario, index: usize) -> Behaviour {
    let odd = index == 0;
    Behaviour {
        fails: scenario == Scenario::Failing && odd,
        stalls: scenario == Scenario::Stall && odd,
        service: if scenario == Scenario::Slow && odd {
            BASE * 10
        } else {
            BASE
        },
        workers: match (scenario, index) {
            (Scenario::Capacity, 0 | 1) => 8,
            (Scenario::Capacity, _) => 4,
            _ => 64,
        },
    }
}

/// An answer larger than the failing provider's payload limit: it replies with an error status
/// (BAD_RESPONSE) at once, an RPC error for the consumer.
const TOO_LARGE: usize = 4096;

async fn start(scenario: Scenario, index: usize) -> Result<DubboServer> {
    let b = behaviour(scenario, index);
    let gate = Arc::new(tokio::sync::Semaphore::new(b.workers));
    let started = std::time::Instant::now();
    let limit = if b.fails { 1024 } else { 8 << 20 };
    let handler = move |_: Invocation| {
        let gate = Arc::clone(&gate);
        async move {
            if b.fails {
                return Ok(Value::from("x".repeat(TOO_LARGE)));
            }
            let _worker = gate.acquire().await.expect("never closed");
            if b.stalls {
                // Stalled during the first 500 ms of every 2 s.
                let phase = started.elapsed().as_millis() as u64 % 2000;
                if phase < 500 {
                    tokio::time::sleep(Duration::from_millis(500 - phase)).await;
                }
            }
            tokio::time::sleep(b.service).await;
            Ok(Value::from("hello"))
        }
    };
    DubboServer::bind_with(ServerConfig::new(0).with_payload_limit(limit), handler)
        .await
        .context("starting an embedded provider on 127.0.0.1")
}

/// Runs `scenario` (or all of them) and prints one table per scenario.
pub(crate) async fn run(
    scenario: Scenario,
    calls: usize,
    concurrency: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let all = [
        Scenario::Slow,
        Scenario::Failing,
        Scenario::Stall,
        Scenario::Capacity,
        Scenario::Equal,
    ];
    let chosen: Vec<Scenario> = match scenario {
        Scenario::All => all.to_vec(),
        one => vec![one],
    };
    for scenario in chosen {
        run_one(scenario, &[], calls, concurrency, out).await?;
    }
    Ok(())
}

/// Runs one scenario with the strategies named in `only` (every strategy when empty).
pub(crate) async fn run_one(
    scenario: Scenario,
    only: &[&str],
    calls: usize,
    concurrency: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let mut servers = Vec::new();
    for index in 0..4 {
        servers.push(start(scenario, index).await?);
    }
    let name = scenario
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default();
    writeln!(
        out,
        "── {name} ── 4 providers, {calls} calls per strategy, {concurrency} in flight, retries off"
    )?;
    writeln!(
        out,
        "  {:<17} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "strategy", "QPS", "p50 ms", "p99 ms", "p99.9 ms", "errors"
    )?;
    let consumer = Consumer::builder().application("rudder-demo").build();
    let call = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("user")],
    );
    for (strategy, params) in STRATEGIES {
        if !only.is_empty() && !only.contains(&strategy) {
            continue;
        }
        let mut builder = consumer
            .reference(SERVICE)
            .cluster(rudder::ClusterMode::Failfast)
            .timeout(std::time::Duration::from_millis(2000));
        for pair in params.split('&') {
            let (key, value) = pair.split_once('=').expect("key=value");
            builder = builder.parameter(key, value);
        }
        for server in &servers {
            builder = builder.provider(&format!(
                "dubbo://{}/{SERVICE}?interface={SERVICE}&methods=sayHello&side=provider",
                server.local_addr()
            ));
        }
        let reference = Arc::new(builder.build().await?);
        let load = Load {
            concurrency,
            stop: Stop::Calls(calls),
            rate: None,
            warmup: 0,
            progress: false,
        };
        let report = drive(&reference, &call, &load).await;
        writeln!(
            out,
            "  {:<17} {:>9.0} {:>9.2} {:>9.2} {:>9.2} {:>7.1}%",
            strategy,
            report.qps(),
            report.ms(0.5),
            report.ms(0.99),
            report.ms(0.999),
            100.0 * report.error_share()
        )?;
        out.flush()?;
    }
    writeln!(out)?;
    for server in servers {
        server.shutdown().await;
    }
    Ok(())
}
