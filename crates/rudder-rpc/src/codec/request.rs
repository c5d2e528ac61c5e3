//! Request bodies (`DubboCodec.encodeRequestData` / `DecodeableRpcInvocation.decode`).
//!
//! One Hessian stream: dubbo version, service name, service version, method, parameter descriptor,
//! each argument, then the attachments map. The provider finds the exporter by the `path`,
//! `version` and `group` *attachments*, so they are always sent (group only when set).

use bytes::Bytes;
use rudder_common::invocation::{Invocation, GENERIC_ASYNC_METHOD, GENERIC_METHOD};
use rudder_common::value::Value;
use rudder_hessian::Hessian2Reader;

use super::descriptor::{parameter_descriptor, parse_descriptor};
use super::error::{BodyError, FrameError};
use super::frame::{finish_frame, start_frame};
use super::header::Flags;
use super::response::body_limits;

/// The protocol version rudder speaks; with it, providers answer with response attachments.
pub(crate) const DUBBO_VERSION: &str = "2.0.2";
/// Descriptor of `$invoke(String method, String[] types, Object[] args)`.
pub(crate) const GENERIC_DESCRIPTOR: &str =
    "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;";
/// Version sent when the service has none; providers treat it as "no version".
pub(crate) const NO_VERSION: &str = "0.0.0";

// Hessian's own type names for `String[]` and `Object[]`, as Java's serializer writes them.
const STRING_ARRAY: &str = "[string";
const OBJECT_ARRAY: &str = "[object";

/// Which exported service a request is for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServiceTarget<'a> {
    pub(crate) path: &'a str,
    pub(crate) interface: &'a str,
    pub(crate) version: &'a str,
    pub(crate) group: Option<&'a str>,
}

/// A whole request frame (header and body) for `invocation`.
///
/// # Errors
/// [`FrameError::TooLong`] when the body is over `limit`.
pub(crate) fn encode_request(
    request_id: i64,
    target: &ServiceTarget<'_>,
    invocation: &Invocation,
    timeout_ms: u64,
    limit: usize,
) -> Result<Bytes, FrameError> {
    let mut w = start_frame();
    w.write_utf(DUBBO_VERSION);
    w.write_utf(target.interface);
    w.write_utf(target.version);
    w.write_utf(invocation.wire_method_name());
    if invocation.is_generic() {
        w.write_utf(GENERIC_DESCRIPTOR);
        w.write_string(invocation.method_name());
        w.write_value(&Value::List {
            type_name: Some(STRING_ARRAY.into()),
            items: invocation
                .parameter_types()
                .iter()
                .map(|t| Value::from(t.as_str()))
                .collect(),
        });
        w.write_value(&Value::List {
            type_name: Some(OBJECT_ARRAY.into()),
            items: invocation.arguments().to_vec(),
        });
    } else {
        w.write_utf(&parameter_descriptor(invocation.parameter_types()));
        for arg in invocation.arguments() {
            w.write_value(arg);
        }
    }
    let timeout = timeout_ms.to_string();
    let mut attachments: Vec<(&str, &str)> = vec![
        ("path", target.path),
        ("interface", target.interface),
        ("version", target.version),
    ];
    if let Some(group) = target.group.filter(|g| !g.is_empty()) {
        attachments.push(("group", group));
    }
    attachments.push(("timeout", &timeout));
    for (k, v) in invocation.attachments() {
        if !attachments.iter().any(|(seen, _)| seen == k) {
            attachments.push((k, v));
        }
    }
    if invocation.is_generic() && invocation.attachment("generic").is_none() {
        attachments.push(("generic", "true"));
    }
    w.write_attachments(attachments);
    finish_frame(w, Flags::REQUEST, 0, request_id, limit)
}

/// A request as a provider sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecodedRequest {
    /// The caller's protocol version; decides whether the response carries attachments.
    pub(crate) dubbo_version: String,
    /// The call, generic or direct, with every string attachment.
    pub(crate) invocation: Invocation,
}

/// Decodes a request body.
///
/// # Errors
/// [`BodyError`] for malformed Hessian (including a body over its decoded-memory budget,
/// [`body_limits`]), descriptors or generic arguments.
pub(crate) fn decode_request(body: &[u8]) -> Result<DecodedRequest, BodyError> {
    let mut r = Hessian2Reader::with_limits(body, body_limits(body.len()));
    let mut header = [""; 5].map(|_| String::new());
    for (slot, part) in header.iter_mut().zip([
        "dubbo version",
        "service",
        "version",
        "method",
        "descriptor",
    ]) {
        *slot = r.read_string().map_err(BodyError::hessian(part))?;
    }
    let [dubbo_version, service, version, method, desc] = header;
    let types = parse_descriptor(&desc)?;
    let mut args = Vec::with_capacity(types.len().min(64));
    for _ in 0..types.len() {
        args.push(r.read_value().map_err(BodyError::hessian("argument"))?);
    }
    let attachments = if r.is_at_end() {
        Value::Null
    } else {
        r.read_value().map_err(BodyError::hessian("attachments"))?
    };
    let generic = method == GENERIC_METHOD || method == GENERIC_ASYNC_METHOD;
    let mut invocation = if generic && desc == GENERIC_DESCRIPTOR {
        generic_invocation(args)?
    } else {
        Invocation::new(method, types, args)
    };
    if let Value::Map { entries, .. } = attachments {
        for (k, v) in entries {
            if let (Some(k), Some(v)) = (k.as_str(), attachment_text(&v)) {
                invocation.set_attachment(k, &v);
            }
        }
    }
    for (key, fallback) in [
        ("path", &service),
        ("interface", &service),
        ("version", &version),
    ] {
        if invocation.attachment(key).is_none() {
            invocation.set_attachment(key, fallback);
        }
    }
    Ok(DecodedRequest {
        dubbo_version,
        invocation,
    })
}

fn generic_invocation(args: Vec<Value>) -> Result<Invocation, BodyError> {
    let [method, types, args]: [Value; 3] = args
        .try_into()
        .map_err(|_| BodyError::BadGenericCall("expected 3 arguments"))?;
    let method = match method {
        Value::String(m) => m,
        _ => return Err(BodyError::BadGenericCall("method name is not a string")),
    };
    let types = match types {
        Value::List { items, .. } => items
            .into_iter()
            .map(|t| match t {
                Value::String(s) => Ok(s),
                _ => Err(BodyError::BadGenericCall(
                    "a parameter type is not a string",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Value::Null => Vec::new(),
        _ => return Err(BodyError::BadGenericCall("parameter types are not a list")),
    };
    let args = match args {
        Value::List { items, .. } => items,
        Value::Null => Vec::new(),
        _ => return Err(BodyError::BadGenericCall("arguments are not a list")),
    };
    Ok(Invocation::new(method, types, args).into_generic())
}

/// Dubbo 3 attachments are `Map<String, Object>`; rudder keeps the textual ones.
fn attachment_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Long(l) => Some(l.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
