//! `rudder demo`: the five Dubbo balancers side by side, on providers that run inside this process.
//!
//! Four dubbo:// providers (rudder's own small server, on loopback ports) with different weights,
//! latencies and one still warming up serve a fixed load through a real [`Reference`]: the balancer,
//! the cluster invoker, the wire protocol and the per-provider statistics, once per strategy. The table after each run
//! shows each provider's share of calls next to its effective weight, with latency percentiles, and a
//! short note says what that strategy did and why.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use rudder::{DubboUrl, Invocation, ProviderSet, Reference, Value};

use rudder_cluster::loadbalance::Pick;
use rudder_common::clock::{Clock, ManualClock, SystemClock};
use rudder_registry::Registry;
use rudder_rpc::server::{DubboServer, ServerConfig, ServerTls};

use crate::registry_args::RegistryArgs;

use crate::{bounds, metrics_endpoint};

/// Arguments of `rudder demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Calls per strategy (1 to 1000000).
    #[arg(long, default_value_t = 2000, value_parser = bounds::count(bounds::MAX_DEMO_CALLS))]
    calls: usize,
    /// Calls in flight at once (1 to 1024).
    #[arg(long, default_value_t = 32, value_parser = bounds::count(bounds::MAX_CONCURRENCY))]
    concurrency: usize,
    /// With --registry (once): register the embedded providers in that ZooKeeper and discover them
    /// from it, instead of handing their addresses to the consumer directly.
    #[command(flatten)]
    registry_args: RegistryArgs,
    /// Required with --registry, which writes into that registry: four ephemeral provider nodes
    /// `/dubbo/org.rudder.demo.Greeter/providers/dubbo://127.0.0.1:PORT/...` (and the persistent
    /// `/dubbo/org.rudder.demo.Greeter/providers` above them when missing), gone when the demo ends.
    #[arg(long, requires = "registry")]
    write_to_registry: bool,
    /// Serve Prometheus metrics of the demo's calls at http://ADDR/metrics while it runs (e.g.
    /// 127.0.0.1:9464; port 0 picks one; the address is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Instead: the LB-quality benchmark, every strategy against four embedded providers one of which
    /// is slow (10x), failing fast, stalling 500 ms every 2 s, or of unequal capacity (2:1), or all
    /// equal; QPS, p50/p99/p99.9 and error share per strategy, retries off.
    #[arg(long, value_enum, conflicts_with = "registry")]
    scenario: Option<crate::scenario::Scenario>,
    /// The consumer's TLS to the embedded providers (with --provider-cert/--provider-key).
    #[command(flatten)]
    tls: crate::tls_args::TlsArgs,
    /// The embedded providers serve TLS with this certificate chain (PEM, leaf first; Dubbo's
    /// server-key-cert-chain-path) and announce it (`ssl-enabled=true` in their URLs).
    #[arg(
        long,
        value_name = "FILE",
        requires = "provider_key",
        conflicts_with = "scenario"
    )]
    provider_cert: Option<PathBuf>,
    /// The key of --provider-cert (PEM: PKCS#8, PKCS#1 or SEC1, unencrypted; Dubbo's
    /// server-private-key-path).
    #[arg(long, value_name = "FILE", requires = "provider_cert")]
    provider_key: Option<PathBuf>,
    /// The embedded providers require a client certificate signed by a CA of this PEM file (mutual
    /// TLS; Dubbo's server-trust-cert-collection-path).
    #[arg(long, value_name = "FILE", requires = "provider_cert")]
    provider_client_ca: Option<PathBuf>,
}

const SERVICE: &str = "org.rudder.demo.Greeter";

/// One embedded provider: its weight, service time, and whether it registered a moment ago.
struct DemoProvider {
    weight: i32,
    latency: Duration,
    warming: bool,
}

const PROVIDERS: [DemoProvider; 4] = [
    DemoProvider {
        weight: 100,
        latency: Duration::from_millis(2),
        warming: false,
    },
    DemoProvider {
        weight: 200,
        latency: Duration::from_millis(4),
        warming: false,
    },
    DemoProvider {
        weight: 300,
        latency: Duration::from_millis(12),
        warming: false,
    },
    DemoProvider {
        weight: 200,
        latency: Duration::from_millis(2),
        warming: true,
    },
];

/// The reactive strategy the demo shows against `random` on a slow provider: the one with the lowest
/// p99 in `rudder demo --scenario slow` (docs/balancing.md).
const REACTIVE: &str = "prequal";

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
    if let Some(scenario) = args.scenario {
        return crate::scenario::run(scenario, args.calls, args.concurrency, out).await;
    }
    let provider_tls = provider_tls(&args)?;
    args.tls.install()?;
    let mut servers = Vec::new();
    for (index, spec) in PROVIDERS.iter().enumerate() {
        let latency = spec.latency;
        let handler = move |call: Invocation| async move {
            tokio::time::sleep(latency).await;
            let who = call
                .arguments()
                .first()
                .and_then(Value::as_str)
                .unwrap_or("stranger")
                .to_owned();
            Ok(Value::from(format!("Hello {who}, from provider {index}")))
        };
        let server = match &provider_tls {
            Some(tls) => DubboServer::bind_tls(ServerConfig::new(0), tls.clone(), handler).await,
            None => DubboServer::bind(0, handler).await,
        }
        .context("starting an embedded provider on 127.0.0.1")?;
        servers.push(server);
    }
    let addresses: Vec<String> = servers.iter().map(|s| s.local_addr().to_string()).collect();
    let now = SystemClock.now_millis();
    let urls: Vec<String> = PROVIDERS
        .iter()
        .zip(&addresses)
        .map(|(spec, a)| provider_url(spec, a, now, provider_tls.is_some()))
        .collect();
    if args.registry_args.registry.len() > 1 {
        anyhow::bail!("demo registers its providers in one registry: give --registry once");
    }
    let registry_url = args.registry_args.registry.first().cloned();
    if registry_url.is_some() && !args.write_to_registry {
        anyhow::bail!("demo --registry writes four ephemeral providers of {SERVICE} (and /dubbo/{SERVICE}/providers when missing) into that registry: add --write-to-registry to let it");
    }
    let registry = match &registry_url {
        Some(registry) => Some(register(&args.registry_args, registry, &urls).await?),
        None => None,
    };
    let over = match (&provider_tls, &args.provider_client_ca) {
        (None, _) => "",
        (Some(_), None) => " over TLS",
        (Some(_), Some(_)) => " over mutual TLS",
    };
    writeln!(
        out,
        "rudder demo: {} dubbo:// providers{over} on 127.0.0.1 ({}), {} calls per strategy, {} in flight\n",
        PROVIDERS.len(),
        addresses.iter().map(|a| a.rsplit(':').next().unwrap_or(a)).collect::<Vec<_>>().join(", "),
        args.calls,
        args.concurrency
    )?;
    if let Some(registry) = &registry_url {
        writeln!(
            out,
            "providers registered in and discovered through ZooKeeper at {}\n",
            redacted(registry)
        )?;
    }
    // One consumer for every strategy, so one metrics endpoint shows them all. Each strategy's
    // reference is gone before the next is built, so each starts from fresh statistics. Its clock
    // stands at `now`: the warming provider stays 1/5 through its warmup in every table (on the
    // system clock its weight would creep up while the strategies run, and the tables would
    // disagree with the weights they print).
    let consumer = metrics_endpoint::consumer_with(
        crate::tls_args::apply(rudder::Consumer::builder().clock(Arc::new(ManualClock::new(now)))),
        "rudder-demo",
        args.metrics_addr,
        args.registry_args.options(),
    );
    let _metrics = metrics_endpoint::serve(&consumer, args.metrics_addr).await?;
    for (name, note) in STRATEGIES {
        let mut builder = consumer
            .reference(SERVICE)
            .loadbalance(name)
            .timeout(std::time::Duration::from_secs(2))
            .application("rudder-demo");
        match &registry_url {
            Some(registry) => builder = builder.registry(registry),
            None => {
                for url in &urls {
                    builder = builder.provider(url);
                }
            }
        }
        let reference = Arc::new(builder.build().await?);
        let started = Instant::now();
        let samples = drive(&reference, &addresses, args.calls, args.concurrency).await;
        let elapsed = started.elapsed();
        print_table(out, name, &reference.snapshot(), &samples, elapsed, now)?;
        writeln!(out, "  {note}\n")?;
        out.flush()?;
    }
    // What rudder adds to Dubbo's balancers, without knowing `--scenario`: one provider 10x slower,
    // Dubbo's default against the strategy that avoids it best.
    writeln!(
        out,
        "What rudder adds: one of four providers 10x slower, Dubbo's default `random` against `{REACTIVE}`\n\
         (all scenarios and strategies: rudder demo --scenario all)"
    )?;
    crate::scenario::run_one(
        crate::scenario::Scenario::Slow,
        &["random", REACTIVE],
        args.calls,
        args.concurrency,
        out,
    )
    .await?;
    writeln!(out, "Every call above was picked exactly as a Dubbo consumer would pick it and sent over dubbo://;")?;
    writeln!(out, "`rudder simulate` previews picks without calling, `rudder providers` lists a live service.")?;
    // Before the runtime ends: no registry task may outlive it (see `Consumer::shutdown`).
    consumer.shutdown().await;
    if let Some(registry) = registry {
        registry.close().await;
    }
    for server in servers {
        server.shutdown().await;
    }
    Ok(())
}

/// The registry URL for messages: credentials left out (`DubboUrl`'s `Display` never shows them).
fn redacted(registry: &str) -> String {
    DubboUrl::parse(registry).map_or_else(|_| "the registry".to_owned(), |u| u.to_string())
}

/// Registers the embedded providers in the registry, as Dubbo providers register themselves.
async fn register(
    flags: &RegistryArgs,
    registry: &str,
    urls: &[String],
) -> Result<std::sync::Arc<dyn Registry>> {
    let opened = flags
        .connect(registry)
        .await
        .with_context(|| format!("connecting to {}", redacted(registry)))?;
    for url in urls {
        opened.register_provider(&DubboUrl::parse(url)?).await?;
    }
    Ok(opened)
}

/// The embedded providers' TLS from --provider-*, checked against the consumer's --tls* flags: TLS
/// on one side only would fail every call (rudder never falls back to plaintext).
fn provider_tls(args: &DemoArgs) -> Result<Option<ServerTls>> {
    let consumer = args.tls.config().is_some();
    let (Some(cert), Some(key)) = (&args.provider_cert, &args.provider_key) else {
        if consumer {
            anyhow::bail!(
                "--tls* makes the demo's consumer speak TLS: give its embedded providers a certificate \
                 with --provider-cert and --provider-key"
            );
        }
        return Ok(None);
    };
    if !consumer {
        anyhow::bail!(
            "--provider-cert makes the embedded providers serve TLS: give the consumer --tls-ca \
             (the CA that signed it), or --tls for the system's roots"
        );
    }
    ServerTls::from_pem_files(cert, key, args.provider_client_ca.as_deref())
        .map(Some)
        .context("--provider-cert/--provider-key")
}

fn provider_url(p: &DemoProvider, address: &str, now: i64, tls: bool) -> String {
    // A provider that registered two minutes ago is 1/5 through Dubbo's 10-minute warmup.
    let started = if p.warming {
        now - 120_000
    } else {
        now - 3_600_000
    };
    // As a Java provider with `setSslEnabled(true)` announces it.
    let ssl = if tls { "&ssl-enabled=true" } else { "" };
    format!(
        "dubbo://{address}/{SERVICE}?application=rudder-demo&dubbo=2.0.2&interface={SERVICE}\
         &methods=sayHello&side=provider&timestamp={started}&weight={}{ssl}",
        p.weight
    )
}

/// One completed call: which provider, how long, whether it failed.
struct Sample {
    address: String,
    latency: Duration,
    failed: bool,
}

async fn drive(
    reference: &Arc<Reference>,
    addresses: &[String],
    calls: usize,
    concurrency: usize,
) -> Vec<Sample> {
    let addresses: Arc<[String]> = addresses.into();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::with_capacity(concurrency.max(1));
    for _ in 0..concurrency.max(1) {
        let (reference, tx, next) = (Arc::clone(reference), tx.clone(), Arc::clone(&next));
        let addresses = Arc::clone(&addresses);
        workers.push(tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= calls {
                    break;
                }
                if tx.send(call_once(&reference, &addresses, n).await).is_err() {
                    break;
                }
            }
        }));
    }
    drop(tx);
    // `RUDDER_DEMO_PROGRESS=1` shows it on a stderr that is no terminal too: a program (or test)
    // following the run reads how far it got there.
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr())
        || std::env::var_os("RUDDER_DEMO_PROGRESS").is_some_and(|v| v == "1");
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
    // Every worker's handle on the reference is dropped once it has ended.
    for worker in workers {
        let _ = worker.await;
    }
    samples
}

/// One call; the provider that served it names itself in the answer.
async fn call_once(reference: &Reference, addresses: &[String], n: usize) -> Sample {
    let user = Value::from(format!("user-{}", n % 50));
    let started = Instant::now();
    let result = reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![user])
        .await;
    let latency = started.elapsed();
    let served_by = result
        .as_ref()
        .ok()
        .and_then(Value::as_str)
        .and_then(|answer| {
            let index: usize = answer.rsplit(' ').next()?.parse().ok()?;
            addresses.get(index).cloned()
        });
    match served_by {
        Some(address) => Sample {
            address,
            latency,
            failed: false,
        },
        None => Sample {
            address: "-".into(),
            latency,
            failed: true,
        },
    }
}

fn print_table(
    out: &mut dyn Write,
    name: &str,
    snapshot: &ProviderSet,
    samples: &[Sample],
    elapsed: Duration,
    now: i64,
) -> Result<()> {
    let view = snapshot.view("sayHello");
    let pick = Pick::at(now);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_providers_announce_it_as_java_does() {
        let url = provider_url(&PROVIDERS[0], "127.0.0.1:20880", 0, true);
        let parsed = DubboUrl::parse(&url).unwrap();
        assert!(rudder_rpc::tls::provider_announces_tls(&parsed), "{url}");
        let plain = provider_url(&PROVIDERS[0], "127.0.0.1:20880", 0, false);
        assert!(!plain.contains("ssl-enabled"), "{plain}");
    }
}
