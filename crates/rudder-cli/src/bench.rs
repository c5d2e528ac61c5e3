//! `rudder bench`: a load generator for Dubbo services (ghz is the anchor for gRPC).
//!
//! N calls in flight through a real [`Reference`] (the balancer, the cluster mode, the wire), for a
//! number of calls or a duration, optionally paced to a rate; each call's latency goes into an HDR
//! histogram (microseconds, 3 significant digits). Each attempt's provider and time come from the
//! `rudder.attempt` tracing spans, so the per-provider table sees what the balancer did, retries
//! included. `cpu_us_per_call` is this process's user + system CPU over the measured calls (from
//! `/proc/self/stat`, 10 ms ticks) ÷ calls: what a call costs the consumer.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use hdrhistogram::Histogram;
use rudder::{CallError, Consumer, Invocation, Reference};
use rudder_cluster::loadbalance::outlier::OutlierSettings;

use crate::bench_attempts::{self as attempts, histogram, ProviderRow};
use crate::invoke_target::CallTarget;
use crate::params::ConsumerArgs;
use crate::registry_args::RegistryArgs;
use crate::{bounds, java_types};

/// Arguments of `rudder bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    tls: crate::tls_args::TlsArgs,
    /// Call this provider directly (dubbo://HOST:PORT/INTERFACE?... or tri://HOST:PORT/INTERFACE?...).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The service interface (default with --url: the URL's).
    #[arg(long, value_name = "NAME")]
    interface: Option<String>,
    /// Service version.
    #[arg(long)]
    version: Option<String>,
    /// Service group.
    #[arg(long)]
    group: Option<String>,
    /// The method to call.
    #[arg(long)]
    method: String,
    /// Java parameter types, comma-separated; inferred from JSON when omitted.
    #[arg(long, value_name = "T1,T2,...")]
    types: Option<String>,
    /// Arguments as a JSON array.
    #[arg(long, value_name = "JSON_ARRAY", default_value = "[]")]
    args: String,
    /// An attachment sent with every call, KEY=VALUE (repeatable, at most 256).
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = crate::attachments::attachment)]
    attachments: Vec<(String, String)>,
    #[command(flatten)]
    consumer: ConsumerArgs,
    /// Calls in flight at once (1 to 1024).
    #[arg(long, default_value_t = 16, value_parser = bounds::count(bounds::MAX_CONCURRENCY))]
    concurrency: usize,
    /// Measured calls (1 to 1000000000; default 1000 unless --duration is given).
    #[arg(long, conflicts_with = "duration", value_parser = bounds::count(bounds::MAX_CALLS))]
    calls: Option<usize>,
    /// Measure for this long instead: 30s, 500ms, 2m (at most 24h).
    #[arg(long, value_parser = duration)]
    duration: Option<Duration>,
    /// Start calls at most this many times per second, in total (0.001 to 10000000).
    #[arg(long, value_name = "QPS", value_parser = rate)]
    rate: Option<f64>,
    /// Calls made before measuring, not counted (0 to 1000000000).
    #[arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=bounds::MAX_CALLS))]
    warmup: usize,
    /// Output: a text report, or one JSON object on the last line.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Exit with status 1 when more than this share of the measured calls failed (0 to 1; default
    /// 0: any failed call fails the run). The report is printed first.
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, value_parser = error_rate)]
    max_error_rate: f64,
    /// Per-call timeout in milliseconds (1 to 2147483647).
    #[arg(long, value_name = "MS", value_parser = bounds::positive(bounds::MAX_TIMEOUT_MS))]
    timeout: Option<u64>,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Tables for people.
    Text,
    /// One JSON object, the last line of stdout.
    Json,
}

fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or((text, "s"), |i| text.split_at(i));
    let value: f64 = number
        .parse()
        .map_err(|_| format!("not a duration: {text:?}"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit in {text:?} (ms, s, m, h)")),
    };
    if !(0.001..=86_400.0).contains(&seconds) {
        return Err(format!("{text:?} is outside 1ms..=24h"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `--max-error-rate`: a share from 0 to 1.
fn error_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(share) if (0.0..=1.0).contains(&share) => Ok(share),
        _ => Err(format!(
            "{text:?} is not a share from 0 to 1 (e.g. 0.01 for 1 %)"
        )),
    }
}

fn rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if (0.001..=10_000_000.0).contains(&r) => Ok(r),
        _ => Err(format!(
            "expected a rate in 0.001..=10000000 calls/s, got {text:?}"
        )),
    }
}

/// When the measured phase ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    /// After this many calls.
    Calls(usize),
    /// After this long.
    After(Duration),
}

/// How to load a reference.
#[derive(Debug, Clone)]
pub(crate) struct Load {
    pub(crate) concurrency: usize,
    pub(crate) stop: Stop,
    pub(crate) rate: Option<f64>,
    pub(crate) warmup: usize,
    pub(crate) progress: bool,
}

/// What a run measured.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) calls: u64,
    pub(crate) errors: u64,
    pub(crate) errors_by_kind: BTreeMap<String, u64>,
    /// Call latencies, µs.
    pub(crate) latency: Histogram<u64>,
    pub(crate) elapsed: Duration,
    pub(crate) cpu: Option<Duration>,
    pub(crate) providers: Vec<ProviderRow>,
}

impl Report {
    pub(crate) fn qps(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub(crate) fn ms(&self, quantile: f64) -> f64 {
        quantile_ms(&self.latency, quantile)
    }

    pub(crate) fn error_share(&self) -> f64 {
        self.errors as f64 / (self.calls.max(1)) as f64
    }

    fn cpu_us_per_call(&self) -> Option<f64> {
        self.cpu
            .map(|cpu| cpu.as_secs_f64() * 1e6 / self.calls.max(1) as f64)
    }
}

fn quantile_ms(h: &Histogram<u64>, quantile: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    h.value_at_quantile(quantile) as f64 / 1000.0
}

pub(crate) fn run(args: BenchArgs, out: &mut dyn Write) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args, out))
}

async fn run_async(args: BenchArgs, out: &mut dyn Write) -> Result<()> {
    args.tls.install()?;
    crate::attachments::check_attachments(&args.attachments)?;
    let call = invocation(&args)?;
    if args.url.is_none() && !args.registry.is_given() {
        bail!("--registry or --url is required");
    }
    let consumer = crate::metrics_endpoint::consumer("rudder-bench", None, args.registry.options());
    let outcome = bench_with(&consumer, &args, &call, out).await;
    // On every path, before the runtime ends: no registry task may outlive it (see
    // `Consumer::shutdown`).
    consumer.shutdown().await;
    outcome
}

async fn bench_with(
    consumer: &Consumer,
    args: &BenchArgs,
    call: &Invocation,
    out: &mut dyn Write,
) -> Result<()> {
    let target = args.target();
    let reference = Arc::new(target.reference(consumer, &target.interface()?).await?);
    let load = Load {
        concurrency: args.concurrency,
        stop: match (args.calls, args.duration) {
            (_, Some(d)) => Stop::After(d),
            (Some(n), None) => Stop::Calls(n),
            (None, None) => Stop::Calls(1000),
        },
        rate: args.rate,
        warmup: args.warmup,
        // A progress line only for a person watching: not in a file, not beside JSON.
        progress: args.format == Format::Text
            && std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let report = drive(&reference, call, &load).await;
    match args.format {
        Format::Text => write_text(&report, out)?,
        Format::Json => writeln!(out, "{}", to_json(&report))?,
    }
    out.flush()?;
    if report.errors > 0 && report.error_share() > args.max_error_rate {
        bail!(
            "{} of {} calls failed ({:.2} %), over --max-error-rate {}",
            report.errors,
            report.calls,
            100.0 * report.error_share(),
            args.max_error_rate
        );
    }
    Ok(())
}

fn invocation(args: &BenchArgs) -> Result<Invocation> {
    let json: serde_json::Value = serde_json::from_str(&args.args)
        .with_context(|| format!("--args is not JSON: {}", args.args))?;
    let Some(items) = json.as_array() else {
        bail!("--args must be a JSON array")
    };
    let types: Vec<String> = match &args.types {
        Some(t) => t
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        None => items
            .iter()
            .map(|j| java_types::infer(j).to_owned())
            .collect(),
    };
    let values = java_types::arguments(&types, items, false)?;
    let mut call = Invocation::new(args.method.clone(), types, values);
    for (key, value) in &args.attachments {
        call.set_attachment(key, value);
    }
    Ok(call)
}

impl BenchArgs {
    /// The same target rules as `rudder invoke`: flags apply to a direct URL, conflicts are errors.
    fn target(&self) -> CallTarget<'_> {
        CallTarget {
            url: self.url.as_deref(),
            interface: self.interface.as_deref(),
            version: self.version.as_deref(),
            group: self.group.as_deref(),
            registry: &self.registry,
            consumer: &self.consumer,
            timeout: self.timeout,
        }
    }
}

/// What the workers share.
struct Shared {
    issued: AtomicUsize,
    done: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
    /// The next call's start time under `--rate`.
    next_slot: Mutex<Instant>,
}

/// One worker's measurements, merged at the end.
struct Tally {
    latency: Histogram<u64>,
    errors_by_kind: BTreeMap<String, u64>,
}

/// Runs the warmup, then the measured calls, and reports on the latter.
pub(crate) async fn drive(reference: &Arc<Reference>, call: &Invocation, load: &Load) -> Report {
    if load.warmup > 0 {
        let warm = Load {
            stop: Stop::Calls(load.warmup),
            progress: false,
            ..load.clone()
        };
        phase(reference, call, &warm).await;
    }
    attempts::start();
    let cpu_before = cpu_time();
    let started = Instant::now();
    let tallies = phase(reference, call, load).await;
    let elapsed = started.elapsed();
    let cpu = cpu_before.zip(cpu_time()).map(|(a, b)| b.saturating_sub(a));
    let mut providers = attempts::finish();
    count_ejections(reference, call.method_name(), &mut providers);
    let mut latency = histogram();
    let mut errors_by_kind = BTreeMap::new();
    for tally in tallies {
        latency.add(&tally.latency).expect("same bounds");
        for (kind, n) in tally.errors_by_kind {
            *errors_by_kind.entry(kind).or_insert(0) += n;
        }
    }
    let errors = errors_by_kind.values().sum();
    Report {
        calls: latency.len(),
        errors,
        errors_by_kind,
        latency,
        elapsed,
        cpu,
        providers,
    }
}

/// Fills in each row's ejection count from the consumer's statistics, when ejection is on for the
/// method.
fn count_ejections(reference: &Reference, method: &str, rows: &mut [ProviderRow]) {
    let providers = reference.providers();
    for row in rows {
        let Some(provider) = providers.iter().find(|p| p.address() == row.address) else {
            continue;
        };
        if OutlierSettings::of(provider.url(), method).is_some() {
            row.ejections = Some(
                provider
                    .status()
                    .find_method(method)
                    .map_or(0, |status| status.outlier().ejections()),
            );
        }
    }
}

async fn phase(reference: &Arc<Reference>, call: &Invocation, load: &Load) -> Vec<Tally> {
    let shared = Arc::new(Shared {
        issued: AtomicUsize::new(0),
        done: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        next_slot: Mutex::new(Instant::now()),
    });
    let deadline = match load.stop {
        Stop::After(d) => Some(tokio::time::Instant::now() + d),
        Stop::Calls(_) => None,
    };
    let progress = load
        .progress
        .then(|| tokio::spawn(show_progress(Arc::clone(&shared))));
    let workers: Vec<_> = (0..load.concurrency)
        .map(|_| {
            let (reference, call, shared, load) = (
                Arc::clone(reference),
                call.clone(),
                Arc::clone(&shared),
                load.clone(),
            );
            tokio::spawn(async move { worker(&reference, &call, &shared, &load, deadline).await })
        })
        .collect();
    let mut tallies = Vec::with_capacity(workers.len());
    for worker in workers {
        if let Ok(tally) = worker.await {
            tallies.push(tally);
        }
    }
    shared.stop.store(true, Relaxed);
    if let Some(progress) = progress {
        progress.abort();
        let _ = progress.await;
        eprintln!();
    }
    tallies
}

async fn worker(
    reference: &Reference,
    call: &Invocation,
    shared: &Shared,
    load: &Load,
    deadline: Option<tokio::time::Instant>,
) -> Tally {
    let mut tally = Tally {
        latency: histogram(),
        errors_by_kind: BTreeMap::new(),
    };
    loop {
        if let Stop::Calls(n) = load.stop {
            if shared.issued.fetch_add(1, Relaxed) >= n {
                break;
            }
        }
        if let Some(rate) = load.rate {
            let slot = {
                let mut next = shared
                    .next_slot
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let slot = (*next).max(Instant::now());
                *next = slot + Duration::from_secs_f64(1.0 / rate);
                slot
            };
            tokio::time::sleep_until(slot.into()).await;
        }
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            break;
        }
        let started = Instant::now();
        let result = reference
            .invoke(call.clone())
            .await
            .and_then(|response| Ok(response.into_result()?));
        let micros = started.elapsed().as_micros().clamp(1, 3_600_000_000) as u64;
        tally.latency.saturating_record(micros);
        shared.done.fetch_add(1, Relaxed);
        if let Err(error) = result {
            let kind = match &error {
                CallError::Exception(_) => "exception".to_owned(),
                CallError::Rpc(e) => e.kind().to_string(),
                other => other.to_string(),
            };
            *tally.errors_by_kind.entry(kind).or_insert(0) += 1;
            shared.errors.fetch_add(1, Relaxed);
        }
    }
    tally
}

async fn show_progress(shared: Arc<Shared>) {
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    while !shared.stop.load(Relaxed) {
        tick.tick().await;
        let done = shared.done.load(Relaxed);
        let qps = done as f64 / started.elapsed().as_secs_f64();
        eprint!(
            "\r{done} calls, {} errors, {qps:.0} calls/s",
            shared.errors.load(Relaxed)
        );
    }
}

/// User + system CPU time of this process so far (Linux; `None` elsewhere).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name, which may itself contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; USER_HZ is 100.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn write_text(report: &Report, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{} calls in {:.2} s: {:.1} calls/s, {} errors ({:.2} %){}",
        report.calls,
        report.elapsed.as_secs_f64(),
        report.qps(),
        report.errors,
        report.error_share() * 100.0,
        report
            .cpu_us_per_call()
            .map(|c| format!(", {c:.1} µs CPU per call"))
            .unwrap_or_default()
    )?;
    writeln!(
        out,
        "latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        report.ms(0.5),
        report.ms(0.9),
        report.ms(0.99),
        report.ms(0.999),
        report.latency.max() as f64 / 1000.0
    )?;
    if !report.errors_by_kind.is_empty() {
        let kinds: Vec<String> = report
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        writeln!(out, "errors by kind: {}", kinds.join(", "))?;
    }
    let attempts: u64 = report.providers.iter().map(|p| p.calls).sum();
    let (retries, failed_attempts) = attempt_totals(report);
    // The rows count attempts: with failover a failed attempt is retried and the call may succeed,
    // so the rows' failures and the calls' errors differ by design; this line ties them together.
    writeln!(
        out,
        "attempts: {attempts} ({retries} retries), {failed_attempts} failed with an RPC error; \
         an exception thrown by the provider is an answer to its attempt and an error of its call"
    )?;
    let ejecting = report.providers.iter().any(|p| p.ejections.is_some());
    write!(
        out,
        "{:<24} {:>9} {:>7} {:>8} {:>9} {:>9}",
        "provider", "attempts", "share", "failed", "p50 ms", "p99 ms"
    )?;
    writeln!(out, "{}", if ejecting { " ejections" } else { "" })?;
    for p in &report.providers {
        write!(
            out,
            "{:<24} {:>9} {:>6.1}% {:>8} {:>9.3} {:>9.3}",
            p.address,
            p.calls,
            100.0 * p.calls as f64 / attempts.max(1) as f64,
            p.errors,
            quantile_ms(&p.latency, 0.5),
            quantile_ms(&p.latency, 0.99)
        )?;
        match p.ejections {
            Some(n) if ejecting => writeln!(out, " {n:>9}")?,
            _ => writeln!(out)?,
        }
    }
    Ok(())
}

/// Retries (attempts beyond one per call) and attempts that failed with an RPC error.
fn attempt_totals(report: &Report) -> (u64, u64) {
    let attempts: u64 = report.providers.iter().map(|p| p.calls).sum();
    let failed = report.providers.iter().map(|p| p.errors).sum();
    (attempts.saturating_sub(report.calls), failed)
}

fn to_json(report: &Report) -> serde_json::Value {
    let providers: Vec<serde_json::Value> = report
        .providers
        .iter()
        .map(|p| {
            serde_json::json!({
                "address": p.address,
                "calls": p.calls,
                "errors": p.errors,
                "p50_ms": quantile_ms(&p.latency, 0.5),
                "p99_ms": quantile_ms(&p.latency, 0.99),
                "ejections": p.ejections,
            })
        })
        .collect();
    let (retries, failed_attempts) = attempt_totals(report);
    serde_json::json!({
        "calls": report.calls,
        "errors": report.errors,
        "attempts": report.providers.iter().map(|p| p.calls).sum::<u64>(),
        "retries": retries,
        "failed_attempts": failed_attempts,
        "errors_by_kind": report.errors_by_kind,
        "qps": report.qps(),
        "duration_s": report.elapsed.as_secs_f64(),
        "latency_ms": {
            "p50": report.ms(0.5),
            "p90": report.ms(0.9),
            "p99": report.ms(0.99),
            "p999": report.ms(0.999),
            "max": report.latency.max() as f64 / 1000.0,
        },
        "cpu_us_per_call": report.cpu_us_per_call(),
        "providers": providers,
    })
}

#[cfg(test)]
mod tests {
    use super::{duration, error_rate, rate};
    use std::time::Duration;

    #[test]
    fn durations_and_rates_parse_within_bounds() {
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("7"), Ok(Duration::from_secs(7)));
        assert!(duration("25h").is_err() && duration("1y").is_err() && duration("0s").is_err());
        assert_eq!(rate("250"), Ok(250.0));
        assert!(rate("0").is_err() && rate("-1").is_err() && rate("x").is_err());
        assert_eq!(error_rate("0.01"), Ok(0.01));
        assert_eq!(error_rate("0"), Ok(0.0));
        assert!(
            error_rate("1.5").is_err() && error_rate("-0.1").is_err() && error_rate("NaN").is_err()
        );
    }
}
