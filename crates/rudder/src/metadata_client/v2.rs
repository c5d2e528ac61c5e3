//! MetadataServiceV2: `GetMetadataInfo(MetadataRequest) returns (MetadataInfoV2)`, protobuf over
//! tri://, what a Java 3.3 consumer calls on an instance that says `meta-v=2.0.0`
//! (`MetadataUtils.referMetadataService`). The messages are in `metadata_service_v2.proto` beside
//! this file; the structs here follow it tag by tag (hand-written, as rudder-triple's wrapper
//! messages are: three small messages do not pay for a protobuf compiler in every build).
//!
//! The answer is read with its counts bounded before anything is collected: the services map is
//! walked entry by entry and stops at [`MetadataInfo::MAX_SERVICES`] services, each service's
//! parameters at [`MetadataInfo::MAX_PARAMS`]; what prost decodes whole is one entry, at most the
//! message, itself bounded by the tri:// client's `payload`. Unknown fields are skipped. Java writes
//! `""` for a null group, version or path (`MetadataServiceVersionUtils.toV2`): read back as none.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::pin::Pin;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use http::uri::PathAndQuery;
use http_body::Body as _;
use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
use prost::Message;
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_registry::{MetadataInfo, ServiceInfo};
use rudder_triple::grpc::FRAME_HEADER;
use rudder_triple::GrpcRequest;

use crate::protocols::Protocols;

/// The service (its path, and the `interface` of its URL).
pub(super) const SERVICE: &str = "org.apache.dubbo.metadata.MetadataServiceV2";
/// The one method's gRPC path.
const PATH: &str = "/org.apache.dubbo.metadata.MetadataServiceV2/GetMetadataInfo";
/// The version it is exported with, and the `meta-v` of the instances that export it.
pub(super) const VERSION: &str = "2.0.0";

/// `MetadataRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct MetadataRequest {
    /// The revision asked for.
    #[prost(string, tag = "1")]
    pub(super) revision: String,
}

/// `MetadataInfoV2` without its `services` (field 3), which [`metadata_info`] reads entry by entry.
#[derive(Clone, PartialEq, prost::Message)]
struct MetadataInfoHead {
    #[prost(string, tag = "1")]
    app: String,
    /// The revision.
    #[prost(string, tag = "2")]
    version: String,
}

/// `ServiceInfoV2` without its `params` (field 7).
#[derive(Clone, PartialEq, prost::Message)]
struct ServiceInfoHead {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    group: String,
    #[prost(string, tag = "3")]
    version: String,
    #[prost(string, tag = "4")]
    protocol: String,
    #[prost(int32, tag = "5")]
    port: i32,
    #[prost(string, tag = "6")]
    path: String,
}

/// One entry of `map<string, ServiceInfoV2>`, the value left encoded (on the wire a map is a
/// repeated message of `key = 1`, `value = 2`).
#[derive(Clone, PartialEq, prost::Message)]
struct ServiceEntry {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(bytes = "bytes", tag = "2")]
    value: Bytes,
}

/// One entry of `map<string, string>`.
#[derive(Clone, PartialEq, prost::Message)]
struct ParamEntry {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(string, tag = "2")]
    value: String,
}

/// Why the V2 call gave no MetadataInfo.
#[derive(Debug)]
pub(super) enum Failure {
    /// The instance serves no MetadataServiceV2 (`UNIMPLEMENTED`, `NOT_FOUND`, Java's "no such
    /// method"): the V1 interface may still answer.
    NotServed(String),
    /// Anything else (no connection, timeout, an error status, an unreadable answer).
    Failed(String),
}

/// The MetadataServiceV2 URL of the instance whose MetadataService URL is `url`: the same address,
/// group and settings, path and `interface` MetadataServiceV2, version 2.0.0 (what
/// `MetadataUtils.referMetadataService` sets).
pub(super) fn url(url: &DubboUrl) -> DubboUrl {
    let mut v2 = DubboUrl::new(url.protocol(), url.host(), url.port(), SERVICE);
    for (key, value) in url.parameters() {
        v2 = v2.with_parameter(key, value);
    }
    v2.with_parameter("interface", SERVICE)
        .with_parameter("version", VERSION)
}

/// Calls `GetMetadataInfo(revision)` on the tri:// MetadataServiceV2 at `url` (see [`url`]).
pub(super) async fn fetch(
    protocol: &Protocols,
    url: &DubboUrl,
    revision: &str,
) -> Result<MetadataInfo, Failure> {
    let request = grpc_request(revision);
    let invocation = Invocation::new("GetMetadataInfo", Vec::new(), Vec::new());
    let failed = |what: String| Failure::Failed(format!("{SERVICE} on {}: {what}", url.address()));
    let reply = match protocol.grpc_unary(url, &invocation, &request).await {
        Ok(reply) => reply,
        Err(e) if e.kind() == RpcErrorKind::MethodNotFound => {
            return Err(Failure::NotServed(e.to_string()))
        }
        Err(e) => return Err(failed(e.to_string())),
    };
    if let Some((code, message)) = reply.error_status() {
        let said = format!("answered {code:?}: {message}");
        return Err(
            if rudder_triple::error_kind(code, message) == RpcErrorKind::MethodNotFound {
                Failure::NotServed(said)
            } else {
                failed(said)
            },
        );
    }
    if reply.is_stream() {
        return Err(failed("answered more than one message".to_owned()));
    }
    let mut body = reply.into_http().into_body();
    let mut data = BytesMut::new();
    // A unary answer that is not a stream has been read whole already (within `payload`): these
    // frames are ready at once.
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|status| failed(status.to_string()))?;
        if let Ok(chunk) = frame.into_data() {
            data.extend_from_slice(&chunk);
        }
    }
    let message = only_message(data.freeze()).map_err(failed)?;
    metadata_info(message).map_err(failed)
}

/// The gRPC request of `GetMetadataInfo(revision)`: one uncompressed length-prefixed message.
fn grpc_request(revision: &str) -> GrpcRequest {
    let message = MetadataRequest {
        revision: revision.to_owned(),
    }
    .encode_to_vec();
    let mut body = BytesMut::with_capacity(FRAME_HEADER + message.len());
    body.put_u8(0);
    // A revision is a short hash; the registry bounds instance nodes well below 4 GiB.
    body.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
    body.put_slice(&message);
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    headers.insert("te", HeaderValue::from_static("trailers"));
    GrpcRequest::new(PathAndQuery::from_static(PATH), headers, body.freeze())
}

/// The one message of a unary answer's body.
fn only_message(mut data: Bytes) -> Result<Bytes, String> {
    if data.is_empty() {
        return Err("answered no message".to_owned());
    }
    if data.len() < FRAME_HEADER {
        return Err(format!("a {}-byte answer, no gRPC frame", data.len()));
    }
    if data[0] != 0 {
        return Err("answered a compressed message, which was not asked for".to_owned());
    }
    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    if data.len() - FRAME_HEADER != len {
        return Err(format!(
            "a {len}-byte message in {} bytes of answer",
            data.len() - FRAME_HEADER
        ));
    }
    Ok(data.split_off(FRAME_HEADER))
}

/// `MetadataInfoV2` as the registry's [`MetadataInfo`], its counts bounded while it is read.
pub(super) fn metadata_info(message: Bytes) -> Result<MetadataInfo, String> {
    let head =
        MetadataInfoHead::decode(message.clone()).map_err(|e| format!("MetadataInfoV2: {e}"))?;
    let mut services: BTreeMap<String, ServiceInfo> = BTreeMap::new();
    each_field(&message, 3, |entry| {
        // An unreadable entry is left out, as an unreadable V1 service is.
        let Ok(entry) = ServiceEntry::decode(entry) else {
            return ControlFlow::Continue(());
        };
        // Protobuf maps keep the last entry of a key; new keys stop at the bound.
        if services.len() >= MetadataInfo::MAX_SERVICES && !services.contains_key(&entry.key) {
            return ControlFlow::Break(());
        }
        if let Some(service) = service_info(entry.value) {
            services.insert(entry.key, service);
        }
        ControlFlow::Continue(())
    })
    .map_err(|e| format!("MetadataInfoV2 services: {e}"))?;
    Ok(MetadataInfo {
        app: head.app,
        revision: head.version,
        services: services.into_values().collect(),
    })
}

fn service_info(message: Bytes) -> Option<ServiceInfo> {
    let head = ServiceInfoHead::decode(message.clone()).ok()?;
    if head.name.is_empty() {
        return None;
    }
    let mut params = BTreeMap::new();
    each_field(&message, 7, |entry| {
        let Ok(entry) = ParamEntry::decode(entry) else {
            return ControlFlow::Continue(());
        };
        if params.len() >= MetadataInfo::MAX_PARAMS && !params.contains_key(&entry.key) {
            return ControlFlow::Break(());
        }
        params.insert(entry.key, entry.value);
        ControlFlow::Continue(())
    })
    .ok()?;
    let nonempty = |s: String| (!s.is_empty()).then_some(s);
    let protocol = nonempty(head.protocol).unwrap_or_else(|| "dubbo".to_owned());
    let mut service = ServiceInfo::new(&head.name, &protocol);
    service.path = nonempty(head.path).unwrap_or_else(|| head.name.clone());
    service.group = nonempty(head.group);
    service.version = nonempty(head.version);
    // Java writes the port it has; 0 or less means none, as -1 does.
    service.port = if head.port > 0 { head.port } else { -1 };
    service.params = params;
    Some(service)
}

/// Hands each length-delimited field `tag` of `message` to `visit`, in order, as a slice of it (no
/// copy), until `visit` breaks; other fields are skipped.
fn each_field(
    message: &Bytes,
    tag: u32,
    mut visit: impl FnMut(Bytes) -> ControlFlow<()>,
) -> Result<(), String> {
    let mut buf = message.clone();
    while !buf.is_empty() {
        let (field, wire_type) = decode_key(&mut buf).map_err(|e| e.to_string())?;
        if field != tag || wire_type != WireType::LengthDelimited {
            skip_field(wire_type, field, &mut buf, DecodeContext::default())
                .map_err(|e| e.to_string())?;
            continue;
        }
        let len = decode_varint(&mut buf).map_err(|e| e.to_string())?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&len| len <= buf.len())
            .ok_or_else(|| format!("field {tag}: {len} bytes, more than its message has left"))?;
        if visit(buf.split_to(len)).is_break() {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "v2_tests.rs"]
mod tests;
