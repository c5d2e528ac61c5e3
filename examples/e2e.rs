//! The end-to-end load comparison behind `examples/e2e_load.rs`: whole consumer versus bare client.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::{DubboUrl, Invocation, Value};
use rudder_common::error::RpcError;
use rudder_rpc::server::DubboServer;
use rudder_rpc::{DubboProtocol, RpcResponse};
use rudder_triple::TripleProtocol;

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Calls per measurement.
    pub calls: u64,
    /// Concurrency levels.
    pub levels: Vec<usize>,
    /// Rounds per client and level; the medians are reported.
    pub rounds: usize,
    /// Slices per round: the two clients take turns this many times within a round (in alternating
    /// order), `calls / slices` calls each turn, so that a noisy second hits both alike.
    pub slices: usize,
    /// Call this provider (e.g. the Java one) instead of starting an in-process rudder provider.
    pub url: Option<String>,
    /// Measure a second bare client in place of rudder: the tool's own noise floor, what "cost"
    /// reads when both sides do the same work.
    pub noise_floor: bool,
    /// Run one client alone (`bare` or `rudder`), for profiling one side (`perf stat`, `perf record`);
    /// no cost is computed then.
    pub only: Option<Only>,
    /// `--tls-ca FILE`: both clients call over TLS, trusting this CA (the provider must serve TLS).
    pub tls_ca: Option<std::path::PathBuf>,
    /// `--handshakes N` (with `--url` and `--tls-ca`): time N new connections with and without TLS
    /// instead of calls.
    pub handshakes: usize,
}

/// The one client a profiling run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// The bare protocol client.
    Bare,
    /// The whole consumer.
    Rudder,
}

impl Options {
    /// Parses `--calls N --levels a,b --rounds R --slices S --url U --noise-floor --only bare|rudder`.
    ///
    /// # Errors
    /// A message naming the bad flag.
    pub fn from_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut o = Options {
            calls: 20_000,
            levels: vec![1, 16, 128],
            rounds: 7,
            slices: 10,
            url: None,
            noise_floor: false,
            only: None,
            tls_ca: None,
            handshakes: 0,
        };
        let mut args = args;
        while let Some(flag) = args.next() {
            if flag == "--noise-floor" {
                o.noise_floor = true;
                continue;
            }
            if flag == "--no-direct-write" {
                return Err("--no-direct-write is now the environment variable \
                     RUDDER_RPC_DIRECT_WRITES=0 (read once by rudder-rpc)"
                    .to_owned());
            }
            let value = args.next().ok_or(format!("{flag} needs a value"))?;
            let bad = |_| format!("bad value {value:?} for {flag}");
            match flag.as_str() {
                "--calls" => o.calls = value.parse().map_err(bad)?,
                "--rounds" => o.rounds = value.parse().map_err(bad)?,
                "--slices" => o.slices = value.parse().map_err(bad)?,
                "--url" => o.url = Some(value),
                "--tls-ca" => o.tls_ca = Some(value.into()),
                "--handshakes" => o.handshakes = value.parse().map_err(bad)?,
                "--only" => {
                    o.only = Some(match value.as_str() {
                        "bare" => Only::Bare,
                        "rudder" => Only::Rudder,
                        _ => return Err(format!("--only takes bare or rudder, not {value:?}")),
                    })
                }
                "--levels" => {
                    o.levels = value
                        .split(',')
                        .map(|l| l.trim().parse().map_err(bad))
                        .collect::<Result<_, _>>()?
                }
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if o.handshakes > 0 && (o.url.is_none() || o.tls_ca.is_none()) {
            return Err("--handshakes needs --url and --tls-ca".to_owned());
        }
        Ok(o)
    }
}

/// One measurement.
#[derive(Debug, Clone, Copy)]
pub struct Measurement {
    /// Completed calls per second.
    pub qps: f64,
    /// Median latency.
    pub p50: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
    /// Failed calls.
    pub errors: u64,
    /// The consumer's CPU time per call (all its threads; an in-process provider's left out).
    pub cpu_per_call: Option<Duration>,
}

/// Runs the comparison and returns the report, one line each.
pub async fn run(options: &Options) -> Vec<String> {
    // The in-process provider runs on a runtime of its own, whose threads the CPU figures leave out.
    let provider_runtime = options.url.is_none().then(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(crate::cpu_clock::PROVIDER_THREAD)
            .enable_all()
            .build()
            .expect("the provider's runtime")
    });
    let server = match &provider_runtime {
        None => None,
        Some(runtime) => Some(
            runtime
                .spawn(DubboServer::bind(0, |call: Invocation| async move {
                    let name = call
                        .arguments()
                        .first()
                        .and_then(Value::as_str)
                        .unwrap_or("?");
                    Ok(Value::from(format!("Hello {name}")))
                }))
                .await
                .expect("the provider's start")
                .expect("bind the in-process provider on 127.0.0.1"),
        ),
    };
    let url = match (&options.url, &server) {
        (Some(url), _) => url.clone(),
        (None, Some(server)) => format!(
            "dubbo://{}/org.rudder.bench.Greeter?timeout=10000",
            server.local_addr()
        ),
        (None, None) => unreachable!("a server is started when no URL is given"),
    };
    let tls = options
        .tls_ca
        .as_ref()
        .map(|ca| rudder::TlsConfig::ca_file(ca).load().expect("--tls-ca"));
    if let (Some(tls), true) = (&tls, options.handshakes > 0) {
        return crate::e2e_handshake::handshakes(&url, tls, options.handshakes).await;
    }
    let bare = Arc::new(Bare::for_url(&url, tls.clone()));
    // With `--noise-floor`, a second bare client on its own connection stands in for rudder.
    let other_bare = options
        .noise_floor
        .then(|| Arc::new(Bare::for_url(&url, tls.clone())));
    let parsed = Arc::new(DubboUrl::parse(&url).expect("valid URL"));
    let interface = parsed.service_interface().to_owned();
    let reference = Arc::new(
        match tls.clone() {
            Some(tls) => rudder::Consumer::builder().tls(tls),
            None => rudder::Consumer::builder(),
        }
        .build()
        .reference(&interface)
        .provider(&url)
        .build()
        .await
        .expect("reference"),
    );

    let mut report = vec![format!(
        "{:>11} | {:>10} {:>9} {:>9} | {:>10} {:>9} {:>9} | {:>12} {:>12} | {:>8}",
        "concurrency",
        "bare QPS",
        "p50",
        "p99",
        if options.noise_floor {
            "bare2 QPS"
        } else {
            "rudder QPS"
        },
        "p50",
        "p99",
        "bare CPU/call",
        "rudder CPU",
        "cost"
    )];
    for &level in &options.levels {
        // Alternate the clients round by round so machine noise hits both alike; report the median
        // round of each, and the median of the per-round costs.
        let (mut bares, mut rudders, mut costs) = (Vec::new(), Vec::new(), Vec::new());
        let slices = options.slices.max(1);
        let per_slice = (options.calls / slices as u64).max(1);
        for _ in 0..options.rounds.max(1) {
            let (mut b, mut r) = (Sample::default(), Sample::default());
            for slice in 0..slices {
                let bare_call = {
                    let (bare, url) = (Arc::clone(&bare), Arc::clone(&parsed));
                    move |call| {
                        let (bare, url) = (Arc::clone(&bare), Arc::clone(&url));
                        async move { bare.invoke(&url, &call).await.is_ok() }
                    }
                };
                let rudder_call = {
                    let (reference, url) = (Arc::clone(&reference), Arc::clone(&parsed));
                    let other_bare = other_bare.clone();
                    move |call| {
                        let (reference, url) = (Arc::clone(&reference), Arc::clone(&url));
                        let other_bare = other_bare.clone();
                        async move {
                            match other_bare {
                                Some(bare) => bare.invoke(&url, &call).await.is_ok(),
                                None => reference.invoke(call).await.is_ok(),
                            }
                        }
                    }
                };
                match options.only {
                    Some(Only::Bare) => b.add(sample(level, per_slice, bare_call).await),
                    Some(Only::Rudder) => r.add(sample(level, per_slice, rudder_call).await),
                    // Alternate who goes first, so neither always follows the other's warm-up.
                    None if slice % 2 == 0 => {
                        b.add(sample(level, per_slice, bare_call).await);
                        r.add(sample(level, per_slice, rudder_call).await);
                    }
                    None => {
                        r.add(sample(level, per_slice, rudder_call).await);
                        b.add(sample(level, per_slice, bare_call).await);
                    }
                }
            }
            let (b, r) = (b.summary(), r.summary());
            if options.only.is_none() {
                costs.push(100.0 * (b.qps - r.qps) / b.qps);
            }
            bares.push(b);
            rudders.push(r);
        }
        let (b, r) = (median_by_qps(&mut bares), median_by_qps(&mut rudders));
        costs.sort_by(f64::total_cmp);
        let cost = match costs.get(costs.len() / 2) {
            Some(cost) => format!("{cost:.1}%"),
            None => "-".to_owned(),
        };
        let (b_cpu, r_cpu) = (median_cpu(&bares), median_cpu(&rudders));
        report.push(format!(
            "{level:>11} | {:>10.0} {:>9} {:>9} | {:>10.0} {:>9} {:>9} | {b_cpu:>12} {r_cpu:>12} | {cost:>8}",
            b.qps,
            micros(b.p50),
            micros(b.p99),
            r.qps,
            micros(r.p50),
            micros(r.p99),
        ));
        let errors: u64 = bares.iter().chain(&rudders).map(|m| m.errors).sum();
        if errors > 0 {
            report.push(format!("  errors: {errors}"));
        }
    }
    if let Some(tls) = &tls {
        // One per connection (the bare client's and rudder's), not one per call.
        report.push(format!("TLS handshakes: {}", tls.handshakes()));
    }
    if let Some(server) = server {
        server.shutdown().await;
    }
    if let Some(runtime) = provider_runtime {
        runtime.shutdown_background();
    }
    report
}

/// The median round's CPU time per call, in µs with one decimal ("-" where not measured).
fn median_cpu(rounds: &[Measurement]) -> String {
    let mut cpu: Vec<Duration> = rounds.iter().filter_map(|m| m.cpu_per_call).collect();
    cpu.sort_unstable();
    match cpu.get(cpu.len() / 2) {
        Some(c) => format!("{:.1}us", c.as_secs_f64() * 1e6),
        None => "-".to_owned(),
    }
}

fn median_by_qps(rounds: &mut [Measurement]) -> Measurement {
    rounds.sort_by(|a, b| a.qps.total_cmp(&b.qps));
    rounds[rounds.len() / 2]
}

fn micros(d: Duration) -> String {
    format!("{}us", d.as_micros())
}

/// The client rudder is compared with: the protocol client alone, one connection, no cluster.
#[derive(Debug)]
enum Bare {
    /// dubbo:// (rudder-rpc).
    Dubbo(DubboProtocol),
    /// tri:// (rudder-triple: tonic's HTTP/2 channel and the wrapper messages).
    Triple(TripleProtocol),
}

impl Bare {
    fn for_url(url: &str, tls: Option<rudder::TlsClient>) -> Bare {
        match url.starts_with("tri://") {
            true => Bare::Triple(TripleProtocol::with_tls(None, tls)),
            false => Bare::Dubbo(DubboProtocol::with_tls(tls)),
        }
    }

    async fn invoke(&self, url: &DubboUrl, call: &Invocation) -> Result<RpcResponse, RpcError> {
        match self {
            Bare::Dubbo(client) => client.invoke(url, call).await,
            Bare::Triple(client) => client.invoke(url, call).await,
        }
    }
}

/// The latencies, wall time and failures of one or more runs of calls.
#[derive(Debug, Default)]
struct Sample {
    latencies: Vec<Duration>,
    elapsed: Duration,
    errors: u64,
    /// The consumer's CPU time over the calls, when `/proc` tells it.
    cpu: Option<Duration>,
}

impl Sample {
    /// Adds another run, as if both had run back to back.
    fn add(&mut self, other: Sample) {
        self.latencies.extend(other.latencies);
        self.elapsed += other.elapsed;
        self.errors += other.errors;
        self.cpu = match (self.cpu, other.cpu) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    fn summary(mut self) -> Measurement {
        if self.latencies.is_empty() {
            // The side an `--only` run left out.
            return Measurement {
                qps: 0.0,
                p50: Duration::ZERO,
                p99: Duration::ZERO,
                errors: self.errors,
                cpu_per_call: None,
            };
        }
        self.latencies.sort_unstable();
        let latencies = &self.latencies;
        let pct = |p: f64| {
            latencies[((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1]
        };
        Measurement {
            qps: latencies.len() as f64 / self.elapsed.as_secs_f64(),
            p50: pct(0.50),
            p99: pct(0.99),
            errors: self.errors,
            cpu_per_call: self.cpu.map(|cpu| cpu / latencies.len() as u32),
        }
    }
}

/// Runs `calls` calls of `sayHello` with `concurrency` tasks, each call through `call`.
async fn sample<F, Fut>(concurrency: usize, calls: u64, call: F) -> Sample
where
    F: Fn(Invocation) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let next = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(30);
    let cpu_before = crate::cpu_clock::consumer_cpu();
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency.max(1) {
        let (next, errors, call) = (Arc::clone(&next), Arc::clone(&errors), call.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Relaxed) < calls && Instant::now() < deadline {
                let invocation = Invocation::new(
                    "sayHello",
                    vec!["java.lang.String".into()],
                    vec![Value::from("bench")],
                );
                let begun = Instant::now();
                if !call(invocation).await {
                    errors.fetch_add(1, Relaxed);
                }
                latencies.push(begun.elapsed());
            }
            latencies
        }));
    }
    let mut latencies = Vec::with_capacity(calls as usize);
    for task in tasks {
        latencies.extend(task.await.expect("load task"));
    }
    let elapsed = started.elapsed();
    let cpu = crate::cpu_clock::consumer_cpu()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    Sample {
        latencies,
        elapsed,
        errors: errors.load(Relaxed),
        cpu,
    }
}
