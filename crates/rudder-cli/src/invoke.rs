//! `rudder invoke`: call a Dubbo method from the command line, like Dubbo telnet's `invoke` and
//! `grpcurl`: each result one JSON line on stdout, each failure one line on stderr, and after several
//! calls a summary (`20 calls: 11 ok, 9 failed (exception 9)`); exit 1 when any call failed.
//!
//! A wrong call gets an answer instead of retries: a method the providers' `methods=` do not list,
//! arguments that fit none of the metadata's overloads, or a version or group nobody provides fail
//! before anything is sent, naming what the service has.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder::{CallError, Consumer};
use rudder_common::error::{RpcError, RpcErrorKind};

use crate::invoke_target::{self, RegistryKnowledge};
use crate::logging::{AttemptLog, AttemptRecord};
use crate::params::ConsumerArgs;
use crate::registry_args::RegistryArgs;
use crate::{bounds, java_types, json, metrics_endpoint, service_info};

/// The largest `--args @FILE` or `--args -` read (Dubbo's default payload limit is 8 MiB).
const MAX_ARGS_BYTES: u64 = 64 * 1024 * 1024;

/// Arguments of `rudder invoke`.
#[derive(Debug, Args)]
pub(crate) struct InvokeArgs {
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    /// Call this provider directly: dubbo://HOST:PORT[/INTERFACE][?version=..&group=..] (or tri://). --interface,
    /// --version and --group apply to it as a Dubbo reference's do (a contradiction is an error).
    #[arg(long, value_name = "URL", conflicts_with = "registry")]
    pub(crate) url: Option<String>,
    /// The service interface (with --url: its path unless the URL has one).
    #[arg(long, value_name = "NAME")]
    pub(crate) interface: Option<String>,
    /// The same as --interface NAME: `rudder invoke --registry R com.acme.Greeter --method m`.
    #[arg(value_name = "SERVICE", conflicts_with = "interface")]
    pub(crate) service: Option<String>,
    /// Service version.
    #[arg(long)]
    pub(crate) version: Option<String>,
    /// Service group.
    #[arg(long)]
    pub(crate) group: Option<String>,
    /// The method to call.
    #[arg(long, required_unless_present = "list")]
    pub(crate) method: Option<String>,
    /// Java parameter types, comma-separated (java.lang.String,int,...). Without it: the overload the
    /// arguments fit in the registry's metadata, else inferred from the JSON.
    #[arg(long, value_name = "T1,T2,...")]
    pub(crate) types: Option<String>,
    /// Arguments as a JSON array; @FILE reads them from a file, - from stdin (up to 64 MiB).
    #[arg(long, value_name = "JSON_ARRAY|@FILE|-", default_value = "[]")]
    args: String,
    /// An attachment sent with every call, KEY=VALUE (repeatable, at most 256): `registry_zone=hz`
    /// routes the call to the registry of that zone.
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = attachment)]
    attachments: Vec<(String, String)>,
    /// How many times to call (1 to 1000000000), one after another; every call is made and counted,
    /// failed or not.
    #[arg(long, default_value_t = 1, value_parser = bounds::count(bounds::MAX_CALLS))]
    calls: usize,
    #[command(flatten)]
    pub(crate) consumer: ConsumerArgs,
    /// Call through Dubbo's generic `$invoke` (objects travel as maps).
    #[arg(long)]
    pub(crate) generic: bool,
    /// Per-call timeout in milliseconds (1 to 2147483647, Dubbo's int range).
    #[arg(long, value_name = "MS", value_parser = bounds::positive(bounds::MAX_TIMEOUT_MS))]
    pub(crate) timeout: Option<u64>,
    /// Per call, print on stderr the provider that answered, the elapsed time and the attempts.
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Serve Prometheus metrics of the calls at http://ADDR/metrics while they run (e.g. 127.0.0.1:9464;
    /// port 0 picks one; the address is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_addr: Option<SocketAddr>,
    /// With --metrics-addr: keep serving after the calls end, until Ctrl-C.
    #[arg(long, requires = "metrics_addr")]
    linger: bool,
    #[command(flatten)]
    pub(crate) proto: crate::proto_invoke::ProtoArgs,
}

impl InvokeArgs {
    /// How many calls to make.
    pub(crate) fn calls(&self) -> usize {
        self.calls
    }

    /// The `--attachment` pairs.
    pub(crate) fn attachments(&self) -> &[(String, String)] {
        &self.attachments
    }

    /// The method to call (`--method`; only `--list` goes without).
    pub(crate) fn method(&self) -> Result<&str> {
        self.method.as_deref().context("--method is required")
    }

    /// Where the calls go.
    pub(crate) fn target(&self) -> invoke_target::CallTarget<'_> {
        invoke_target::CallTarget {
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

pub(crate) fn run(
    args: InvokeArgs,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Result<()> {
    let has_target = args.url.is_some() || args.registry.is_given();
    if !has_target && !args.proto.list {
        bail!("--registry or --url is required");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args, attempts, out))
}

async fn run_async(
    args: InvokeArgs,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Result<()> {
    let text = read_arguments(&args.args)?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--args is not JSON: {}", excerpt(&text)))?;
    check_attachments(&args.attachments)?;
    // Protobuf calls by --url (and --list of .proto files) need no consumer.
    if let Some(outcome) =
        crate::proto_invoke::without_registry(&args, &json, attempts.clone(), out).await
    {
        return outcome;
    }
    let Some(items) = json.as_array() else {
        bail!("--args must be a JSON array")
    };
    let interface = args.target().interface()?;
    let consumer =
        metrics_endpoint::consumer("rudder-cli", args.metrics_addr, args.registry.options());
    let outcome = invoke_with(&consumer, &args, &interface, items, attempts, out).await;
    // On every path, before the runtime ends: no registry task may outlive it (see
    // `Consumer::shutdown`; a task left running made zookeeper-client panic at exit).
    consumer.shutdown().await;
    outcome
}

/// Builds the reference and makes the calls.
async fn invoke_with(
    consumer: &Consumer,
    args: &InvokeArgs,
    interface: &str,
    items: &[serde_json::Value],
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Result<()> {
    let metrics = metrics_endpoint::serve(consumer, args.metrics_addr).await?;
    let reference = args.target().reference(consumer, interface).await?;

    let providers = invoke_target::provider_urls(&reference);
    if args.verbose {
        // Which view (interface- or application-level) the reference's providers came from, and why.
        for status in reference.registry_status().into_iter().flatten() {
            if let Some(note) = crate::providers::migration_note(&status) {
                crate::logging::say(note);
            }
        }
    }
    let knowledge = if args.registry.is_given() {
        invoke_target::registry_knowledge(args, interface).await?
    } else {
        RegistryKnowledge {
            all_providers: Vec::new(),
            overloads: Vec::new(),
        }
    };
    if args.registry.is_given() && providers.is_empty() {
        return Err(invoke_target::no_provider(interface, args, &knowledge).into());
    }
    if args.registry.is_given() {
        if let Some(outcome) = crate::proto_invoke::through_registry(
            &reference,
            &providers,
            interface,
            items,
            args,
            attempts.clone(),
            out,
        )
        .await
        {
            return outcome;
        }
    }
    let method = args.method()?;
    service_info::check_method(interface, method, &providers)?;
    let types = invoke_target::parameter_types(args, items, &knowledge.overloads)?;
    let values = java_types::arguments(&types, items, args.generic)?;

    let mut call = rudder::Invocation::new(method.to_owned(), types, values);
    for (key, value) in &args.attachments {
        call.set_attachment(key, value);
    }
    if args.generic {
        call = call.into_generic();
    }
    let mut tally = Tally::default();
    let mut last_error = None;
    for number in 1..=args.calls {
        if let Some(log) = &attempts {
            log.take();
        }
        let started = Instant::now();
        let result = reference.invoke_invocation(call.clone()).await;
        let elapsed = started.elapsed();
        let tried = attempts.as_ref().map(AttemptLog::take);
        let outcome = match result {
            Ok(value) => {
                writeln!(out, "{}", json::from_value(&value))?;
                Ok(())
            }
            Err(error) => Err(failure(error)),
        };
        // Results and failures interleave in call order when both go to a terminal.
        out.flush()?;
        let line = describe(number, args.calls, &outcome, elapsed, tried.as_deref());
        match outcome {
            Ok(()) => {
                tally.ok += 1;
                if let Some(line) = line {
                    crate::logging::say(line);
                }
            }
            Err(error) => {
                if last_error.is_none()
                    && crate::error_chain::provider_said(&error, "Fail to decode request")
                {
                    crate::logging::say(format!(
                        "hint: a Dubbo provider answers \"Fail to decode request\" when it exports no {} \
                         (check --version and --group: `rudder list --registry R --interface {interface}`) \
                         or cannot read the argument types",
                        service_key(interface, args)
                    ));
                }
                *tally.failed.entry(label(error.kind())).or_insert(0) += 1;
                if args.calls > 1 || args.verbose {
                    crate::logging::say(line.unwrap_or_default());
                }
                last_error = Some(error);
            }
        }
    }
    if args.calls > 1 {
        crate::logging::say(tally.summary());
    }
    if args.linger {
        if let Some(server) = &metrics {
            crate::logging::say(format!(
                "metrics: still serving http://{}/metrics; Ctrl-C to stop",
                server.local_addr()
            ));
            tokio::signal::ctrl_c()
                .await
                .context("waiting for Ctrl-C")?;
        }
    }
    drop(metrics);
    match last_error {
        // One call: its error is the command's (`error: <kind>: <message>`).
        Some(error) if args.calls == 1 && !args.verbose => Err(error.into()),
        Some(error) => Err(Reported(error.kind()).into()),
        None => Ok(()),
    }
}

/// `group/interface:version`, as Dubbo names an exported service.
fn service_key(interface: &str, args: &InvokeArgs) -> String {
    let mut key = String::new();
    if let Some(group) = args.group.as_deref().filter(|g| !g.is_empty()) {
        key.push_str(group);
        key.push('/');
    }
    key.push_str(interface);
    if let Some(version) = args.version.as_deref().filter(|v| !v.is_empty()) {
        key.push(':');
        key.push_str(version);
    }
    key
}

/// A failure already reported on stderr: only the exit code is left to give.
#[derive(Debug)]
pub(crate) struct Reported(pub(crate) RpcErrorKind);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a call failed ({})", label(self.0))
    }
}

impl std::error::Error for Reported {}

/// A failed call as an [`RpcError`]: a provider's exception is kind `Biz` with `Class: message`.
fn failure(error: CallError) -> RpcError {
    match error {
        CallError::Exception(e) => RpcError::new(
            RpcErrorKind::Biz,
            match e.message {
                Some(message) => format!("{}: {message}", e.class),
                None => e.class.clone(),
            },
        ),
        CallError::Rpc(e) => e,
        CallError::Conversion(e) => {
            RpcError::new(RpcErrorKind::Unknown, "conversion failed").with_source(e)
        }
        other => RpcError::new(RpcErrorKind::Unknown, other.to_string()),
    }
}

/// How a failure kind is counted and shown: `exception` for a provider's exception, else the kind.
pub(crate) fn label(kind: RpcErrorKind) -> String {
    match kind {
        RpcErrorKind::Biz => "exception".to_owned(),
        other => other.to_string(),
    }
}

/// The stderr line of one call: for a failure always, for a success only with `-v` (`tried`).
pub(crate) fn describe(
    number: usize,
    calls: usize,
    outcome: &Result<(), RpcError>,
    elapsed: Duration,
    tried: Option<&[AttemptRecord]>,
) -> Option<String> {
    let head = if calls > 1 {
        format!("call {number}/{calls}")
    } else {
        "call".to_owned()
    };
    let detail = tried.map(|tried| verbose_detail(tried, outcome.as_ref().err(), elapsed));
    match outcome {
        Ok(()) => detail.map(|d| format!("{head} ok: {d}")),
        Err(error) => {
            let mut line = format!(
                "{head} failed: {}: {}",
                label(error.kind()),
                crate::error_chain::chain_text(error)
            );
            if let Some(detail) = detail {
                line.push_str(&format!(" [{detail}]"));
            }
            Some(line)
        }
    }
}

/// `127.0.0.1:24001, 2.3 ms, 1 attempt` or `3 attempts: a timeout, b timeout, c ok`.
fn verbose_detail(tried: &[AttemptRecord], error: Option<&RpcError>, elapsed: Duration) -> String {
    let millis = elapsed.as_secs_f64() * 1000.0;
    let answered = tried
        .iter()
        .rev()
        .find(|a| a.outcome.as_deref() == Some("ok"))
        .map(|a| a.address.as_str());
    let who = match (answered, error) {
        (Some(address), _) => format!("provider {address}"),
        (None, _) if tried.is_empty() => "no provider tried".to_owned(),
        (None, _) => "no provider answered".to_owned(),
    };
    let attempts = match tried.len() {
        1 => "1 attempt".to_owned(),
        n => {
            let each: Vec<String> = tried
                .iter()
                .map(|a| format!("{} {}", a.address, a.outcome.as_deref().unwrap_or("?")))
                .collect();
            format!("{n} attempts: {}", each.join(", "))
        }
    };
    format!("{who}, {millis:.1} ms, {attempts}")
}

/// Calls that succeeded, and failures by kind.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) ok: usize,
    pub(crate) failed: BTreeMap<String, usize>,
}

impl Tally {
    /// `20 calls: 11 ok, 9 failed (exception 9)`.
    pub(crate) fn summary(&self) -> String {
        let failed: usize = self.failed.values().sum();
        let total = self.ok + failed;
        let mut line = format!("{total} calls: {} ok", self.ok);
        if failed > 0 {
            let kinds: Vec<String> = self
                .failed
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            line.push_str(&format!(", {failed} failed ({})", kinds.join(", ")));
        }
        line
    }
}

/// The `--args` text: given, `@FILE`, or `-` for stdin, at most [`MAX_ARGS_BYTES`].
fn read_arguments(spec: &str) -> Result<String> {
    let (reader, origin): (Box<dyn Read>, String) = if spec == "-" {
        (Box::new(std::io::stdin()), "stdin".to_owned())
    } else if let Some(path) = spec.strip_prefix('@') {
        let file = std::fs::File::open(path).with_context(|| format!("--args @{path}"))?;
        (Box::new(file), path.to_owned())
    } else {
        return Ok(spec.to_owned());
    };
    let mut text = String::new();
    reader
        .take(MAX_ARGS_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("reading --args from {origin}"))?;
    if text.len() as u64 > MAX_ARGS_BYTES {
        bail!("--args from {origin} is larger than {MAX_ARGS_BYTES} bytes");
    }
    Ok(text)
}

/// The start of a long text, for an error message.
fn excerpt(text: &str) -> String {
    const SHOWN: usize = 200;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}... ({} bytes)", &text[..end], text.len()),
        None => text.to_owned(),
    }
}

/// More attachments than this on one command line is a mistake.
pub(crate) const MAX_ATTACHMENTS: usize = 256;

/// Refuses more than [`MAX_ATTACHMENTS`] `--attachment` values (every command that takes them).
pub(crate) fn check_attachments(attachments: &[(String, String)]) -> Result<()> {
    if attachments.len() > MAX_ATTACHMENTS {
        bail!(
            "at most {MAX_ATTACHMENTS} --attachment values, got {}",
            attachments.len()
        );
    }
    Ok(())
}

/// Reads `--attachment KEY=VALUE` (also used by `simulate`).
pub(crate) fn attachment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!(
            "expected KEY=VALUE (a non-empty key), got {text:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_failures_by_kind() {
        let mut tally = Tally {
            ok: 11,
            ..Tally::default()
        };
        tally.failed.insert(label(RpcErrorKind::Biz), 9);
        assert_eq!(tally.summary(), "20 calls: 11 ok, 9 failed (exception 9)");
        tally.failed.insert(label(RpcErrorKind::Timeout), 2);
        assert_eq!(
            tally.summary(),
            "22 calls: 11 ok, 11 failed (exception 9, timeout 2)"
        );
        assert_eq!(
            Tally {
                ok: 3,
                ..Tally::default()
            }
            .summary(),
            "3 calls: 3 ok"
        );
    }

    #[test]
    fn verbose_lines_name_the_provider_time_and_attempts() {
        let tried = [
            AttemptRecord {
                address: "10.0.0.1:1".into(),
                outcome: Some("timeout".into()),
            },
            AttemptRecord {
                address: "10.0.0.2:1".into(),
                outcome: Some("ok".into()),
            },
        ];
        let line = describe(2, 5, &Ok(()), Duration::from_micros(2500), Some(&tried)).unwrap();
        assert_eq!(
            line,
            "call 2/5 ok: provider 10.0.0.2:1, 2.5 ms, 2 attempts: 10.0.0.1:1 timeout, 10.0.0.2:1 ok"
        );
        let failed = Err(RpcError::new(RpcErrorKind::Biz, "x.Oops: no"));
        assert_eq!(
            describe(1, 1, &failed, Duration::from_millis(3), Some(&tried[1..])).unwrap(),
            "call failed: exception: x.Oops: no [provider 10.0.0.2:1, 3.0 ms, 1 attempt]"
        );
        assert_eq!(describe(1, 2, &Ok(()), Duration::ZERO, None), None);
    }

    #[test]
    fn long_arguments_are_cut_in_messages() {
        let long = "x".repeat(5000);
        assert_eq!(excerpt(&long).len(), 200 + "... (5000 bytes)".len());
        assert_eq!(excerpt("[1]"), "[1]");
    }
}
