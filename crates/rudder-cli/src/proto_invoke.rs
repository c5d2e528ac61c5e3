//! `rudder invoke` of protobuf (IDL) services over tri:// / gRPC, as handy as grpcurl:
//!
//! ```text
//! rudder invoke --proto proto/greeter.proto --url tri://127.0.0.1:50051/org.rudder.it.proto.Greeter \
//!     --method SayHello --args '[{"name":"rust"}]'
//! {"message":"Hello rust","servedBy":"python-grpc"}
//! rudder invoke --proto proto/greeter.proto --list
//! ```
//!
//! The descriptors come from `--proto` files (parsed at run time, no protoc), else from the provider's
//! gRPC server reflection; the request is `--args`' one object as proto3 JSON, each answer is printed
//! as one proto3 JSON line, failures and `--calls N` summaries as the POJO path prints them. Without
//! `--proto`, a tri:// call whose `--args` are JSON objects (and no `--types`) first asks the provider's
//! reflection for the service: a provider that does not know it there gets the POJO call as before.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use prost_reflect::{DynamicMessage, SerializeOptions};
use rudder::Reference;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::url::DubboUrl;
use serde_json::Value as Json;
use tonic::body::Body;
use tonic::client::GrpcService;

use crate::call_report::{self, Reported, Tally};
use crate::grpc_call::{self, ProtoRequest};
use crate::grpc_channel::{self, GrpcTarget};
use crate::invoke_args::InvokeArgs;
use crate::invoke_target;
use crate::logging::{self, AttemptLog, AttemptRecord};
use crate::proto_descriptors;
use crate::proto_messages::{attachment_headers, request_messages, write_json};
use crate::reflection::{self, ReflectionError};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Before any consumer exists: `--list` of files, and every protobuf call by `--url`. `None` when the
/// command is not a protobuf one (the POJO path runs).
pub(crate) async fn without_registry(
    args: &InvokeArgs,
    json: &Json,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Option<Result<()>> {
    let proto = &args.proto;
    if proto.list && args.url.is_none() && !args.registry.is_given() {
        return Some(list_files(args, out));
    }
    let text = args.url.as_deref()?;
    let protocol = DubboUrl::parse_any(text).map(|u| u.protocol().to_owned());
    match protocol.as_deref() {
        Ok("tri") => {}
        Ok(_) if proto.explicit() => {
            // A Dubbo interface's methods come from the registry's metadata (telnet `ls -l`).
            let methods = if proto.list {
                "; a Dubbo interface's methods and classes: rudder list --registry R SERVICE"
            } else {
                ""
            };
            return Some(Err(anyhow::anyhow!(
                "--proto and --list are for protobuf services over tri:// (gRPC); --url {text} is not tri://{methods}"
            )));
        }
        _ => return None,
    }
    if !proto.explicit() && !looks_like_messages(args, json) {
        return None;
    }
    if crate::tls_args::installed().is_some() {
        // `by_url`'s bare tonic channel speaks plaintext: under --tls* the call goes through the
        // reference instead (its channel does TLS as every other call), as through a registry.
        if args.interface.is_none() && invoke_target::direct_url(text, None, None, None).is_err() {
            return Some(Err(anyhow::anyhow!(
                "--list by --url over TLS needs the service: --url tri://HOST:PORT/SERVICE or --interface"
            )));
        }
        return None;
    }
    by_url(args, text, json, attempts, out).await.transpose()
}

async fn by_url(
    args: &InvokeArgs,
    text: &str,
    json: &Json,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Result<Option<()>> {
    // `--list` may name no service (`tri://HOST:PORT`): it lists them all.
    let url = match invoke_target::direct_url(
        text,
        args.interface.as_deref(),
        args.version.as_deref(),
        args.group.as_deref(),
    ) {
        Ok(url) => url,
        Err(_) if args.proto.list => {
            DubboUrl::parse_any(text).with_context(|| format!("--url {text}"))?
        }
        Err(e) => return Err(e),
    };
    let interface = Some(url.service_interface().to_owned()).filter(|i| !i.is_empty());
    let merged = args
        .consumer
        .merge(interface.as_deref().unwrap_or_default())?
        .merge(&url);
    let target = GrpcTarget::new(merged);
    let channel = target.channel()?;
    run(
        channel,
        &target,
        interface.as_deref(),
        args,
        json,
        attempts,
        out,
    )
    .await
}

/// With the registry's reference (after its providers are known): the same for the providers of
/// `--registry`. `None` when the command is not a protobuf one.
pub(crate) async fn through_registry(
    reference: &Reference,
    providers: &[DubboUrl],
    interface: &str,
    items: &[Json],
    args: &InvokeArgs,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Option<Result<()>> {
    let json = Json::Array(items.to_vec());
    let wanted = args.proto.explicit()
        || (providers.iter().any(|p| p.protocol() == "tri") && looks_like_messages(args, &json));
    if !wanted {
        return None;
    }
    let merge = |url: &DubboUrl| match args.consumer.merge(interface) {
        Ok(params) => params.merge(url),
        Err(_) => url.clone(),
    };
    let (channel, target) = match grpc_channel::registry_channel(reference, providers, merge) {
        Ok(found) => found,
        Err(e) if args.proto.explicit() => return Some(Err(e)),
        Err(_) => return None,
    };
    run(
        channel,
        &target,
        Some(interface),
        args,
        &json,
        attempts,
        out,
    )
    .await
    .transpose()
}

/// `--args` that can be request messages: a non-empty array of objects, no `--types`, not generic.
fn looks_like_messages(args: &InvokeArgs, json: &Json) -> bool {
    args.types.is_none()
        && !args.generic
        && matches!(json.as_array(), Some(items) if !items.is_empty() && items.iter().all(Json::is_object))
}

fn list_files(args: &InvokeArgs, out: &mut dyn Write) -> Result<()> {
    if args.proto.files.is_empty() {
        bail!("--list needs --proto FILE, or --url / --registry of a provider that serves gRPC reflection");
    }
    let descriptors = proto_descriptors::load_files(&args.proto.files, &args.proto.import_paths)?;
    let only = match args.interface.as_deref() {
        Some(name) => Some(proto_descriptors::find_service(&descriptors, name)?),
        None => None,
    };
    write!(
        out,
        "{}",
        proto_descriptors::listing(&descriptors, only.as_ref())
    )?;
    Ok(())
}

/// Gets the descriptors (files, else reflection) and lists or calls. `Ok(None)`: reflection does not
/// know the service and the command did not ask for protobuf (the POJO path runs).
async fn run<T>(
    channel: T,
    target: &GrpcTarget,
    interface: Option<&str>,
    args: &InvokeArgs,
    json: &Json,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Result<Option<()>>
where
    T: GrpcService<Body> + Clone,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let proto = &args.proto;
    if proto.explicit() && (args.types.is_some() || args.generic) {
        bail!("--types and --generic are for Java interface calls; a protobuf method's types are its messages");
    }
    let descriptors = if proto.files.is_empty() {
        let timeout = target.timeout("ServerReflectionInfo", args.timeout);
        // Descriptors are no call messages: `payload` does not bound them (reflection has its own).
        let limit = target.payload.max(reflection::MAX_ANSWER);
        match reflection::descriptors(channel.clone(), interface, timeout, limit).await {
            Ok(descriptors) => descriptors,
            Err(e) if proto.explicit() => return Err(reflection_failure(e, target)),
            Err(e) => {
                if args.verbose {
                    logging::say(format!(
                        "not a protobuf call ({e}); calling {} as a Java interface",
                        interface.unwrap_or("?")
                    ));
                }
                return Ok(None);
            }
        }
    } else {
        proto_descriptors::load_files(&proto.files, &proto.import_paths)?
    };
    if args.metrics_addr.is_some() && args.url.is_some() {
        bail!(
            "--metrics-addr counts calls through the cluster; a protobuf call by --url goes to the \
             provider directly (use --registry)"
        );
    }
    if proto.list {
        let only = match interface {
            Some(name) => Some(proto_descriptors::find_service(&descriptors, name)?),
            None => None,
        };
        write!(
            out,
            "{}",
            proto_descriptors::listing(&descriptors, only.as_ref())
        )?;
        return Ok(Some(()));
    }
    let Some(interface) = interface else {
        bail!("--url names no service: write tri://HOST:PORT/package.Service or give --interface");
    };
    let service = proto_descriptors::find_service(&descriptors, interface)?;
    let Some(method_name) = args.method.as_deref() else {
        bail!("--method is required (or --list)");
    };
    let method = proto_descriptors::find_method(&service, method_name)?;
    if args.verbose {
        logging::say(format!(
            "{} ({}) from {}",
            proto_descriptors::grpc_path(&method),
            proto_descriptors::streaming_kind(&method),
            descriptors.origin
        ));
    }
    let request = ProtoRequest {
        messages: request_messages(&method, json)?,
        metadata: attachment_headers(args.attachments())?,
        timeout: target.timeout(method.name(), args.timeout),
        payload: target.payload,
        method,
    };
    calls(channel, target, request, args, attempts, out).await?;
    Ok(Some(()))
}

fn reflection_failure(error: ReflectionError, target: &GrpcTarget) -> anyhow::Error {
    match error {
        ReflectionError::Failed(status) => {
            let kind = grpc_call::error_kind(status.code(), status.message());
            RpcError::new(
                kind,
                format!(
                    "{}: server reflection: grpc-status {} {:?}: {}",
                    target.shown,
                    i32::from(status.code()),
                    status.code(),
                    status.message()
                ),
            )
            .into()
        }
        // The provider answered: no reflection there, or not for this service. A call's failure
        // (exit code 1), not a usage error.
        other => RpcError::new(
            RpcErrorKind::MethodNotFound,
            format!("{}: {other}", target.shown),
        )
        .into(),
    }
}

/// Makes `--calls` calls one after another, printing each answer as one JSON line and each failure as
/// the POJO path does.
async fn calls<T>(
    channel: T,
    target: &GrpcTarget,
    request: ProtoRequest,
    args: &InvokeArgs,
    attempts: Option<AttemptLog>,
    out: &mut dyn Write,
) -> Result<()>
where
    T: GrpcService<Body> + Clone,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let options = SerializeOptions::new().skip_default_fields(!args.proto.emit_defaults);
    let method = request.method.clone();
    let total = args.calls();
    let mut tally = Tally::default();
    let mut last_error = None;
    for number in 1..=total {
        if let Some(log) = &attempts {
            log.take();
        }
        let started = Instant::now();
        let mut written = Ok(());
        let mut print = |reply: DynamicMessage| {
            if written.is_ok() {
                written = write_json(&mut *out, &reply, &options);
            }
        };
        let result = grpc_call::call(channel.clone(), request.clone(), &mut print).await;
        written?;
        let elapsed = started.elapsed();
        let outcome =
            result.map_err(|status| grpc_call::status_error(&status, &target.shown, &method));
        out.flush()?;
        let tried = attempts.as_ref().map(|log| {
            let mut tried = log.take();
            // By URL no cluster runs, so no attempt spans: the one attempt is the URL's provider.
            if tried.is_empty() {
                tried.push(AttemptRecord {
                    address: target.address.clone(),
                    outcome: Some(match &outcome {
                        Ok(()) => "ok".to_owned(),
                        Err(e) => call_report::label(e.kind()),
                    }),
                });
            }
            tried
        });
        let line = call_report::describe(number, total, &outcome, elapsed, tried.as_deref());
        match outcome {
            Ok(()) => {
                tally.ok += 1;
                if let Some(line) = line {
                    logging::say(line);
                }
            }
            Err(error) => {
                *tally
                    .failed
                    .entry(call_report::label(error.kind()))
                    .or_insert(0) += 1;
                if total > 1 || args.verbose {
                    logging::say(line.unwrap_or_default());
                }
                last_error = Some(error);
            }
        }
    }
    if total > 1 {
        logging::say(tally.summary());
    }
    match last_error {
        Some(error) if total == 1 && !args.verbose => Err(error.into()),
        Some(error) => Err(Reported(error.kind()).into()),
        None => Ok(()),
    }
}
