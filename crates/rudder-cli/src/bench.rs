//! `rudder bench`: a load generator for Dubbo services (ghz is the anchor for gRPC).
//!
//! N calls in flight through a real [`Reference`] (the balancer, the cluster mode, the wire), for a
//! number of calls or a duration, optionally paced to a rate; each call's latency goes into an HDR
//! histogram (microseconds, 3 significant digits). Each attempt's provider and time come from the
//! `rudder.attempt` tracing spans, so the per-provider table sees what the balancer did, retries
//! included. `cpu_us_per_call` is this process's user + system CPU over the measured calls (from
//! `/proc/self/stat`, 10 ms ticks) ÷ calls: what a call costs the consumer.
//!
//! The call is taken as `rudder invoke` takes it (the service as a positional argument, `--args` as
//! JSON, `@FILE` or `-`) and checked the same way before any load is sent: a method the providers
//! do not list, or arguments that fit none of the registry metadata's overloads, are refused at
//! once. Ctrl-C stops the run and prints the summary of the calls answered so far (exit 1).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use rudder::{Consumer, Invocation, Reference};
use rudder_common::error::RpcErrorKind;

use crate::bench_load::{drive, interrupt, Load, Stop};
use crate::bench_report::{to_json, write_text};
use crate::invoke_target::{self, CallTarget, RegistryKnowledge};
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
    /// Call this provider directly: dubbo://HOST:PORT/INTERFACE?... or tri://HOST:PORT/INTERFACE?...
    /// (Triple, over HTTP/2). --interface, --version and --group apply to it as in `rudder invoke`.
    #[arg(long, value_name = "URL", conflicts_with = "registry")]
    url: Option<String>,
    /// The service interface (default with --url: the URL's).
    #[arg(long, value_name = "NAME")]
    interface: Option<String>,
    /// The same as --interface NAME: `rudder bench --registry R com.acme.Greeter --method m`.
    #[arg(value_name = "SERVICE", conflicts_with = "interface")]
    service: Option<String>,
    /// Service version.
    #[arg(long)]
    version: Option<String>,
    /// Service group.
    #[arg(long)]
    group: Option<String>,
    /// The method to call.
    #[arg(long)]
    method: String,
    /// Java parameter types, comma-separated (java.lang.String,int,...). Without it: the overload the
    /// arguments fit in the registry's metadata, else inferred from the JSON.
    #[arg(long, value_name = "T1,T2,...")]
    types: Option<String>,
    /// Arguments of every call as a JSON array; @FILE reads them from a file, - from stdin (up to
    /// 64 MiB).
    #[arg(long, value_name = "JSON_ARRAY|@FILE|-", default_value = "[]")]
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

pub(crate) fn run(args: BenchArgs, out: &mut dyn Write) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args, out))
}

async fn run_async(mut args: BenchArgs, out: &mut dyn Write) -> Result<()> {
    // The positional SERVICE is --interface by another name.
    args.interface = args.interface.take().or(args.service.take());
    if args.url.is_none() && !args.registry.is_given() {
        bail!("--registry or --url is required");
    }
    let text = crate::invoke::read_arguments(&args.args)?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--args is not JSON: {}", crate::invoke::excerpt(&text)))?;
    let Some(items) = json.as_array() else {
        bail!("--args must be a JSON array")
    };
    crate::attachments::check_attachments(&args.attachments)?;
    args.tls.install()?;
    let consumer = crate::metrics_endpoint::consumer("rudder-bench", None, args.registry.options());
    let outcome = bench_with(&consumer, &args, items, out).await;
    // On every path, before the runtime ends: no registry task may outlive it (see
    // `Consumer::shutdown`).
    consumer.shutdown().await;
    outcome
}

async fn bench_with(
    consumer: &Consumer,
    args: &BenchArgs,
    items: &[serde_json::Value],
    out: &mut dyn Write,
) -> Result<()> {
    let target = args.target();
    let interface = target.interface()?;
    let reference = Arc::new(target.reference(consumer, &interface).await?);
    let call = invocation(args, &reference, &interface, items).await?;
    let call = &call;
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
    let interrupt = tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt();
        }
    });
    let report = drive(&reference, call, &load).await;
    interrupt.abort();
    match args.format {
        Format::Text => write_text(&report, out)?,
        Format::Json => writeln!(out, "{}", to_json(&report))?,
    }
    out.flush()?;
    if report.interrupted {
        crate::logging::say(format!(
            "interrupted by Ctrl-C after {:.2} s: the summary covers the {} calls answered before",
            report.elapsed.as_secs_f64(),
            report.calls
        ));
        return Err(crate::invoke::Reported(RpcErrorKind::ShutDown).into());
    }
    if report.errors > 0 && report.error_share() > args.max_error_rate {
        // Calls failed: exit 1, as `invoke` does, with the reason on stderr.
        crate::logging::say(format!(
            "{} {} of {} calls failed ({:.2} %), over --max-error-rate {}",
            crate::logging::error_label(),
            report.errors,
            report.calls,
            100.0 * report.error_share(),
            args.max_error_rate
        ));
        return Err(crate::invoke::Reported(RpcErrorKind::Unknown).into());
    }
    Ok(())
}

/// The call every worker makes, checked as `rudder invoke` checks it before any is sent: the method
/// against the providers' `methods=`, the arguments against the registry metadata's overloads, a
/// version or group nobody provides named.
async fn invocation(
    args: &BenchArgs,
    reference: &Reference,
    interface: &str,
    items: &[serde_json::Value],
) -> Result<Invocation> {
    let providers = invoke_target::provider_urls(reference);
    let knowledge = if args.registry.is_given() {
        invoke_target::registry_knowledge(&args.registry, interface).await?
    } else {
        RegistryKnowledge {
            all_providers: Vec::new(),
            overloads: Vec::new(),
            field_types: Default::default(),
        }
    };
    if args.registry.is_given() && providers.is_empty() {
        return Err(invoke_target::no_provider(interface, &args.target(), &knowledge).into());
    }
    crate::service_info::check_method(interface, &args.method, &providers)?;
    let types = invoke_target::parameter_types(
        &args.method,
        args.types.as_deref(),
        items,
        &knowledge.overloads,
    )?;
    // Object fields typed from the metadata's type definitions, as `invoke` types them.
    let values = java_types::arguments_in(&knowledge.field_types, &types, items, false)?;
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
