//! `rudder invoke`: call a Dubbo method from the command line, like Dubbo telnet's `invoke` and
//! `grpcurl`: each result one JSON line on stdout, each failure one line on stderr, and after several
//! calls a summary (`20 calls: 11 ok, 9 failed (exception 9)`); exit 1 when any call failed.
//!
//! A wrong call gets an answer instead of retries: a method the providers' `methods=` do not list,
//! arguments that fit none of the metadata's overloads, or a version or group nobody provides fail
//! before anything is sent, naming what the service has.

use std::io::{Read, Write};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rudder::{CallError, Consumer};
use rudder_common::error::{RpcError, RpcErrorKind};

use crate::call_report::{describe, Tally};
// `main` names the command's flags, and the marker and label it turns into the exit code and the
// error line, through the command's module.
pub(crate) use crate::call_report::{label, Reported};
pub(crate) use crate::invoke_args::InvokeArgs;
use crate::invoke_target::{self, RegistryKnowledge};
use crate::logging::AttemptLog;
use crate::{attachments, java_types, json, metrics_endpoint, service_info};

/// The largest `--args @FILE` or `--args -` read (Dubbo's default payload limit is 8 MiB).
const MAX_ARGS_BYTES: u64 = 64 * 1024 * 1024;

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
    attachments::check_attachments(args.attachments())?;
    args.tls.install()?;
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
    // By --url under --tls*, protobuf calls too go through the reference (see `without_registry`).
    if args.registry.is_given() || crate::tls_args::installed().is_some() {
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
    let types =
        invoke_target::parameter_types(method, args.types.as_deref(), items, &knowledge.overloads)?;
    if args.verbose {
        crate::logging::say(format!(
            "types: {method}({}) ({})",
            types.join(", "),
            types_origin(method, args, &knowledge)
        ));
    }
    let values = java_types::arguments_in(&knowledge.field_types, &types, items, args.generic)?;

    let mut call = rudder::Invocation::new(method.to_owned(), types.clone(), values);
    for (key, value) in args.attachments() {
        call.set_attachment(key, value);
    }
    if args.generic {
        call = call.into_generic();
    }
    let mut tally = Tally::default();
    let mut progress = crate::progress::Progress::new(args.calls());
    let mut last_error = None;
    let mut hint = None;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    for number in 1..=args.calls() {
        if let Some(log) = &attempts {
            log.take();
        }
        let started = Instant::now();
        // Ctrl-C during --calls N: the calls so far are summarised, and the command fails.
        let result = tokio::select! {
            result = reference.invoke(call.clone()) => {
                result.and_then(|response| Ok(response.into_result()?))
            }
            _ = &mut interrupt, if args.calls() > 1 => {
                progress.clear();
                crate::logging::say(format!("interrupted during call {number}/{}", args.calls()));
                crate::logging::say(tally.summary());
                return Err(Reported(RpcErrorKind::ShutDown).into());
            }
        };
        let elapsed = started.elapsed();
        let tried = attempts.as_ref().map(AttemptLog::take);
        let outcome = match result {
            Ok(value) => {
                let mut printed = json::from_value(&value);
                if args.generic && !args.with_class {
                    printed = json::without_class_entries(printed);
                }
                writeln!(out, "{printed}")?;
                Ok(())
            }
            Err(error) => Err(failure(error)),
        };
        // Results and failures interleave in call order when both go to a terminal.
        out.flush()?;
        let line = describe(number, args.calls(), &outcome, elapsed, tried.as_deref());
        if line.is_some() {
            progress.clear();
        }
        match outcome {
            Ok(()) => {
                tally.ok += 1;
                if let Some(line) = line {
                    crate::logging::say(line);
                }
            }
            Err(error) => {
                // Several calls: one stdout line per call, so results match call numbers.
                if args.calls() > 1 {
                    let failed = serde_json::json!({"error": {
                        "kind": label(error.kind()),
                        "message": crate::error_chain::chain_text(&error),
                    }});
                    writeln!(out, "{failed}")?;
                }
                if last_error.is_none()
                    && crate::error_chain::provider_said(&error, "Fail to decode request")
                {
                    let known = items_typed(&types, items, &knowledge);
                    hint = Some(crate::decode_hint::hint(
                        &crate::error_chain::chain_text(&error),
                        &crate::decode_hint::Call {
                            interface,
                            method,
                            types: &types,
                            version: args.version.as_deref(),
                            group: args.group.as_deref(),
                            by_url: args.url.is_some(),
                            given_types: args.types.is_some(),
                            generic: args.generic,
                            objects: items.iter().any(serde_json::Value::is_object),
                            strings: items
                                .iter()
                                .map(|i| i.as_str().map(str::to_owned))
                                .collect(),
                            fields_known: known,
                        },
                    ));
                }
                if hint.is_none() {
                    let said = crate::error_chain::chain_text(&error);
                    hint = crate::decode_hint::generic_date_hint(&said, args.generic)
                        .map(str::to_owned);
                }
                *tally.failed.entry(label(error.kind())).or_insert(0) += 1;
                if args.calls() > 1 || args.verbose {
                    crate::logging::say(line.unwrap_or_default());
                }
                last_error = Some(error);
            }
        }
        progress.tick(number, args.calls(), tally.ok, tally.failed.values().sum());
    }
    progress.clear();
    if args.calls() > 1 {
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
    match (last_error, hint) {
        // One call and a hint: the error first, then where to look.
        (Some(error), Some(hint)) if args.calls() == 1 && !args.verbose => {
            crate::logging::say(format!(
                "{} {}: {}",
                crate::logging::error_label(),
                label(error.kind()),
                crate::error_chain::chain_text(&error)
            ));
            crate::logging::say(hint);
            Err(Reported(error.kind()).into())
        }
        (last_error, Some(hint)) => {
            crate::logging::say(hint);
            finish(last_error, args)
        }
        (last_error, None) => finish(last_error, args),
    }
}

/// Where the parameter types `-v` shows came from.
fn types_origin(method: &str, args: &InvokeArgs, knowledge: &RegistryKnowledge) -> &'static str {
    if knowledge.overloads.iter().any(|o| o.name == method) {
        "the registry's metadata"
    } else if args.types.is_some() {
        "--types"
    } else {
        "inferred from the JSON: give --types for other Java types"
    }
}

/// The command's outcome after its calls, each already reported unless there was one.
fn finish(last_error: Option<RpcError>, args: &InvokeArgs) -> Result<()> {
    match last_error {
        // One call: its error is the command's (`error: <kind>: <message>`).
        Some(error) if args.calls() == 1 && !args.verbose => Err(error.into()),
        Some(error) => Err(Reported(error.kind()).into()),
        None => Ok(()),
    }
}

/// Whether the metadata gave the field types of every object argument's class.
fn items_typed(
    types: &[String],
    items: &[serde_json::Value],
    knowledge: &RegistryKnowledge,
) -> bool {
    types
        .iter()
        .zip(items)
        .filter(|(_, item)| item.is_object())
        .all(|(t, _)| knowledge.field_types.knows(t))
}

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

/// The `--args` text: given, `@FILE`, or `-` for stdin, at most [`MAX_ARGS_BYTES`].
pub(crate) fn read_arguments(spec: &str) -> Result<String> {
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
pub(crate) fn excerpt(text: &str) -> String {
    const SHOWN: usize = 200;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}... ({} bytes)", &text[..end], text.len()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_are_cut_in_messages() {
        let long = "x".repeat(5000);
        assert_eq!(excerpt(&long).len(), 200 + "... (5000 bytes)".len());
        assert_eq!(excerpt("[1]"), "[1]");
    }
}
