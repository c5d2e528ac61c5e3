//! `rudder invoke`: call a Dubbo method from the command line and print each result as a JSON line.

use std::io::Write;
use std::net::SocketAddr;

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder::{CallError, Consumer, Reference, Value};

use crate::params::ConsumerArgs;
use crate::{bounds, java_types, json, metrics_endpoint};

/// Arguments of `rudder invoke`.
#[derive(Debug, Args)]
pub(crate) struct InvokeArgs {
    /// Find providers in this registry (zookeeper://HOST:PORT). Repeatable, one per data centre: each
    /// call then picks a registry by `preferred`, `zone` and `weight` on the registry URL and the
    /// `registry_zone` / `registry_zone_force` attachments (`--param registry.failover=true` retries a
    /// failed call in the next registry).
    #[arg(
        long,
        value_name = "URL",
        required_unless_present = "url",
        conflicts_with = "url"
    )]
    registry: Vec<String>,
    /// Call this provider directly (dubbo://HOST:PORT/INTERFACE?...).
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
    /// Java parameter types, comma-separated (java.lang.String,int,...); inferred from JSON when omitted.
    #[arg(long, value_name = "T1,T2,...")]
    types: Option<String>,
    /// Arguments as a JSON array.
    #[arg(long, value_name = "JSON_ARRAY", default_value = "[]")]
    args: String,
    /// An attachment sent with every call, KEY=VALUE (repeatable, at most 256): `registry_zone=hz`
    /// routes the call to the registry of that zone.
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = attachment)]
    attachments: Vec<(String, String)>,
    /// How many times to call (1 to 1000000000); each result is printed as it arrives.
    #[arg(long, default_value_t = 1, value_parser = bounds::count(bounds::MAX_CALLS))]
    calls: usize,
    #[command(flatten)]
    consumer: ConsumerArgs,
    /// Call through Dubbo's generic `$invoke` (objects travel as maps).
    #[arg(long)]
    generic: bool,
    /// Per-call timeout in milliseconds (1 to 2147483647, Dubbo's int range).
    #[arg(long, value_name = "MS", value_parser = bounds::positive(bounds::MAX_TIMEOUT_MS))]
    timeout: Option<u64>,
    /// Serve Prometheus metrics of the calls at http://ADDR/metrics while they run (e.g. 127.0.0.1:9464;
    /// port 0 picks one; the address is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
}

pub(crate) fn run(args: InvokeArgs, out: &mut dyn Write) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args, out))
}

async fn run_async(args: InvokeArgs, out: &mut dyn Write) -> Result<()> {
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
    if types.len() != items.len() {
        bail!(
            "--types names {} parameter(s) but --args has {}",
            types.len(),
            items.len()
        );
    }
    let values = types
        .iter()
        .zip(items)
        .enumerate()
        .map(|(i, (t, j))| {
            java_types::convert(t, j, args.generic).with_context(|| format!("argument {}", i + 1))
        })
        .collect::<Result<Vec<Value>>>()?;

    check_attachments(&args.attachments)?;
    let consumer = metrics_endpoint::consumer("rudder-cli", args.metrics_addr);
    let outcome = call_with(&consumer, &args, types, values, out).await;
    // On every path, before the runtime ends: no registry task may outlive it (see
    // `Consumer::shutdown`; a task left running made zookeeper-client panic at exit).
    consumer.shutdown().await;
    outcome
}

/// Builds the reference and makes the calls.
async fn call_with(
    consumer: &Consumer,
    args: &InvokeArgs,
    types: Vec<String>,
    values: Vec<Value>,
    out: &mut dyn Write,
) -> Result<()> {
    let _metrics = metrics_endpoint::serve(consumer, args.metrics_addr).await?;
    let reference = build_reference(consumer, args).await?;
    let mut call = rudder::Invocation::new(args.method.clone(), types, values);
    for (key, value) in &args.attachments {
        call.set_attachment(key, value);
    }
    if args.generic {
        call = call.into_generic();
    }
    for _ in 0..args.calls {
        let result = reference.invoke_invocation(call.clone()).await;
        match result {
            Ok(value) => writeln!(out, "{}", json::from_value(&value))?,
            Err(CallError::Exception(e)) => {
                out.flush()?;
                return Err(rudder::RpcError::new(
                    rudder::RpcErrorKind::Biz,
                    format!("{}: {}", e.class, e.message.unwrap_or_default()),
                )
                .into());
            }
            Err(CallError::Rpc(e)) => {
                out.flush()?;
                return Err(e.into());
            }
            Err(other) => return Err(other.into()),
        }
    }
    Ok(())
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

async fn build_reference(consumer: &Consumer, args: &InvokeArgs) -> Result<Reference> {
    let interface = match (&args.interface, &args.url) {
        (Some(i), _) => i.clone(),
        (None, Some(url)) => rudder::DubboUrl::parse_any(url)?
            .service_interface()
            .to_owned(),
        (None, None) => bail!("--interface is required with --registry"),
    };
    let mut builder = consumer.reference(&interface);
    if let Some(url) = &args.url {
        builder = builder.provider(url);
    }
    for registry in &args.registry {
        builder = builder.registry(registry);
    }
    if let Some(v) = &args.version {
        builder = builder.version(v);
    }
    if let Some(g) = &args.group {
        builder = builder.group(g);
    }
    for (key, value) in args.consumer.pairs()? {
        builder = builder.parameter(&key, &value);
    }
    if let Some(t) = args.timeout {
        builder = builder.timeout_millis(t);
    }
    Ok(builder.build().await?)
}
