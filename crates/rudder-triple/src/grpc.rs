//! Calls of protobuf (IDL) services: the gRPC requests a tonic-generated client builds, sent as they
//! are on the provider's connection, with the Triple headers the provider URL asks for.
//!
//! The client's codec did the protobuf and the gRPC framing; this layer only carries the HTTP/2
//! exchange, so any message type works. A request of one message (unary, server streaming) is
//! buffered ([`GrpcRequest`]) so that it can be sent again to another provider; its answer is read
//! whole (bounded by `payload`) so that the call's outcome is known when the cluster counts it, unless
//! it turns out to be a stream, which is then handed on as it arrives. A streaming request is sent
//! once ([`TripleProtocol::grpc_stream`]).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue};
use http::uri::PathAndQuery;
use http::{HeaderMap, Method, Uri};
use http_body_util::BodyExt;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use tonic::body::Body;
use tonic::transport::Channel;
use tonic::Code;
use tower::{Service, ServiceExt};

use crate::body::{Buffered, Prefixed};
use crate::protocol::TripleProtocol;
use crate::settings;
use crate::status::{is_answer, status_error};

/// The gRPC length prefix: a compressed flag and a 4-byte big-endian length.
pub const FRAME_HEADER: usize = 5;

/// Headers this layer sets from the provider URL and the call's deadline, whatever the client sent.
const REPLACED: [&str; 4] = [
    "grpc-timeout",
    "tri-service-version",
    "tri-service-group",
    "tri-consumer-appname",
];

/// A gRPC request whose body has been read whole (one message, or a client stream that had ended):
/// what failover sends again to the next provider.
#[derive(Debug, Clone)]
pub struct GrpcRequest {
    path: PathAndQuery,
    headers: HeaderMap,
    body: Bytes,
}

impl GrpcRequest {
    /// The request to `path` (`/{package.Service}/{Method}`) with the client's headers and its framed
    /// body (gRPC length-prefixed messages, as the client's codec wrote them).
    pub fn new(path: PathAndQuery, headers: HeaderMap, body: Bytes) -> GrpcRequest {
        GrpcRequest {
            path,
            headers,
            body,
        }
    }

    /// The request path.
    pub fn path(&self) -> &PathAndQuery {
        &self.path
    }

    /// The framed body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

/// A provider's answer to a gRPC call: complete (its messages and final status read), or a stream
/// still arriving.
#[derive(Debug)]
pub struct GrpcReply {
    status: http::StatusCode,
    headers: HeaderMap,
    body: ReplyBody,
}

#[derive(Debug)]
enum ReplyBody {
    /// Every message and the trailers (empty for a Trailers-Only answer, whose status is in
    /// `headers`); `code` and `message` are the final status.
    Complete {
        data: Bytes,
        trailers: Option<HeaderMap>,
        code: Code,
        message: String,
    },
    /// The answer's first bytes and the rest as they come.
    Stream(Prefixed),
}

impl GrpcReply {
    /// An answer of no message and status OK: what `failsafe` gives for a failed call (a unary
    /// tonic client reports the missing message).
    pub fn empty() -> GrpcReply {
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from_static("0"));
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
        GrpcReply {
            status: http::StatusCode::OK,
            headers,
            body: ReplyBody::Complete {
                data: Bytes::new(),
                trailers: Some(trailers),
                code: Code::Ok,
                message: String::new(),
            },
        }
    }

    /// The provider's error status, when it answered the call with one (`INVALID_ARGUMENT`,
    /// `INTERNAL`... raised by the service itself): the gRPC counterpart of a business exception,
    /// an answer that is never sent again to another provider.
    pub fn error_status(&self) -> Option<(Code, &str)> {
        match &self.body {
            ReplyBody::Complete { code, message, .. } if *code != Code::Ok => {
                Some((*code, message.as_str()))
            }
            _ => None,
        }
    }

    /// Whether the answer is a stream still arriving.
    pub fn is_stream(&self) -> bool {
        matches!(self.body, ReplyBody::Stream(_))
    }

    /// The answer as the HTTP response a tonic client decodes: the provider's headers, messages and
    /// trailers, unchanged.
    pub fn into_http(self) -> http::Response<Body> {
        let body = match self.body {
            ReplyBody::Complete { data, trailers, .. } => Body::new(Buffered::new(data, trailers)),
            ReplyBody::Stream(rest) => Body::new(rest),
        };
        let mut response = http::Response::new(body);
        *response.status_mut() = self.status;
        *response.headers_mut() = self.headers;
        response
    }
}

impl TripleProtocol {
    /// Sends a buffered gRPC request to the provider at `url` (a `tri://` URL) and reads its answer,
    /// within the deadline `invocation` and `url` give (`timeout`, sent as `grpc-timeout`).
    ///
    /// An error status the provider's service answered with is an `Ok` [`GrpcReply`] (see
    /// [`GrpcReply::error_status`]); an answer of more than one message is handed on as a stream
    /// from its second message on.
    ///
    /// # Errors
    /// As [`TripleProtocol::invoke`]: `Network` when no connection could be made in time, the
    /// connection failed or the provider answered `UNAVAILABLE` (nothing ran: failover may send the
    /// request again); `Timeout`; `MethodNotFound` for `UNIMPLEMENTED` / `NOT_FOUND` (no such service
    /// or method at the group and version sent); `Serialization` for a message over `payload`
    /// either way (a request over it is not sent).
    pub async fn grpc_unary(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
        request: &GrpcRequest,
    ) -> Result<GrpcReply, RpcError> {
        let timeout = settings::call_timeout(url, invocation);
        let payload = settings::payload(url);
        let target = Target::new(url, request.path.as_str());
        if let Some(len) = first_message_len(&request.body).filter(|len| *len > payload) {
            return Err(target.over_payload("request", len, payload));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let channel = self.connected(url, timeout, deadline).await?;
        let mut http = http::Request::new(Body::new(Buffered::new(request.body.clone(), None)));
        *http.method_mut() = Method::POST;
        *http.uri_mut() = Uri::from(request.path.clone());
        *http.headers_mut() = request.headers.clone();
        self.grpc_headers(url, http.headers_mut(), Some(timeout));
        let exchange = async {
            let response = send(channel, http, &target).await?;
            read_reply(response, payload, &target).await
        };
        match tokio::time::timeout_at(deadline, exchange).await {
            Ok(reply) => reply,
            Err(_) => Err(RpcError::new(
                RpcErrorKind::Timeout,
                format!("{target}: no answer within {} ms", timeout.as_millis()),
            )),
        }
    }

    /// Sends a streaming gRPC request (its body still being written by the client) to the provider at
    /// `url` and returns once the provider's response headers arrived; its messages then pass through
    /// as they come. The deadline is the client's own (`grpc-timeout`, the invocation's `timeout`
    /// attachment), if any: as Dubbo's Java consumer, no `timeout` setting bounds a stream.
    ///
    /// # Errors
    /// As [`TripleProtocol::grpc_unary`]; the request cannot be sent again, whatever failed.
    pub async fn grpc_stream(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
        head: http::request::Parts,
        body: Body,
    ) -> Result<GrpcReply, RpcError> {
        let timeout = settings::attached_timeout(invocation);
        let connect = settings::connect_timeout(url);
        let deadline = tokio::time::Instant::now() + timeout.unwrap_or(connect);
        let target = Target::new(url, head.uri.path());
        let channel = self
            .connected(url, timeout.unwrap_or(connect), deadline)
            .await?;
        let mut http = http::Request::from_parts(head, body);
        *http.method_mut() = Method::POST;
        self.grpc_headers(url, http.headers_mut(), timeout);
        let response = match timeout {
            Some(timeout) => {
                let deadline = tokio::time::Instant::now() + timeout;
                tokio::time::timeout_at(deadline, send(channel, http, &target))
                    .await
                    .map_err(|_| {
                        RpcError::new(
                            RpcErrorKind::Timeout,
                            format!("{target}: no answer within {} ms", timeout.as_millis()),
                        )
                    })??
            }
            None => send(channel, http, &target).await?,
        };
        let (parts, body) = response.into_parts();
        match head_status(&parts) {
            Some((code, message)) => finish(parts, Bytes::new(), None, code, message, &target),
            None => Ok(GrpcReply {
                status: parts.status,
                headers: parts.headers,
                body: ReplyBody::Stream(Prefixed::new(Bytes::new(), body)),
            }),
        }
    }

    /// The client's headers, less those this layer owns, plus `tri-service-version` and
    /// `tri-service-group` from the provider URL (only when set), `grpc-timeout` and the consumer
    /// application.
    fn grpc_headers(&self, url: &DubboUrl, headers: &mut HeaderMap, timeout: Option<Duration>) {
        for name in REPLACED {
            headers.remove(name);
        }
        let mut put = |name: &'static str, value: &str| match HeaderValue::try_from(value) {
            Ok(value) => {
                headers.insert(HeaderName::from_static(name), value);
            }
            Err(_) => tracing::debug!(name, "not a valid header value; not sent over tri://"),
        };
        if let Some(version) = nonempty(url.parameter("version")) {
            put("tri-service-version", version);
        }
        if let Some(group) = nonempty(url.parameter("group")) {
            put("tri-service-group", group);
        }
        if let Some(application) = self.application() {
            put("tri-consumer-appname", application);
        }
        if let Some(timeout) = timeout {
            // gRPC allows at most 8 digits: milliseconds cover 27 hours, more than `timeout` allows.
            put("grpc-timeout", &format!("{}m", timeout.as_millis()));
        }
    }
}

/// The provider, the path and the group and version asked for, for errors.
struct Target {
    address: String,
    service: String,
    method: String,
    asked: String,
}

impl Target {
    fn new(url: &DubboUrl, path: &str) -> Target {
        let mut parts = path.trim_start_matches('/').rsplitn(2, '/');
        let method = parts.next().unwrap_or_default().to_owned();
        let service = parts.next().unwrap_or_default().to_owned();
        Target {
            address: url.address(),
            service,
            method,
            asked: crate::protocol::target_description(url),
        }
    }

    fn over_payload(&self, what: &str, len: usize, payload: usize) -> RpcError {
        RpcError::new(
            RpcErrorKind::Serialization,
            format!("{self}: the {what} message is {len} bytes, over payload={payload}"),
        )
    }

    fn status(&self, code: Code, message: &str) -> RpcError {
        let status = tonic::Status::new(code, message.to_owned());
        status_error(
            status,
            &self.address,
            &self.service,
            &self.method,
            &self.asked,
        )
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tri://{} {}.{}", self.address, self.service, self.method)
    }
}

/// Sends `request` on `channel`; a failure before any answer is a network error.
async fn send(
    mut channel: Channel,
    request: http::Request<Body>,
    target: &Target,
) -> Result<http::Response<Body>, RpcError> {
    let network = |e: tonic::transport::Error| {
        RpcError::new(
            RpcErrorKind::Network,
            format!(
                "{target}: the call failed before any answer: {}",
                rudder_common::error::causes_text(&e)
            ),
        )
    };
    let ready = channel.ready().await.map_err(network)?;
    let response = ready.call(request).await.map_err(network)?;
    Ok(response.map(Body::new))
}

/// Reads an answer whole, bounded by `payload`, or up to its second message if it is a stream.
async fn read_reply(
    response: http::Response<Body>,
    payload: usize,
    target: &Target,
) -> Result<GrpcReply, RpcError> {
    let (parts, mut body) = response.into_parts();
    if let Some((code, message)) = head_status(&parts) {
        return finish(parts, Bytes::new(), None, code, message, target);
    }
    let mut data = BytesMut::new();
    loop {
        let frame = match body.frame().await {
            Some(Ok(frame)) => frame,
            Some(Err(status)) => {
                return Err(RpcError::new(
                    RpcErrorKind::Network,
                    format!("{target}: the answer broke off: {status}"),
                )
                .with_source(status))
            }
            None => {
                return Err(RpcError::new(
                    RpcErrorKind::Network,
                    format!("{target}: the answer ended without a grpc-status (no trailers)"),
                ))
            }
        };
        let frame = match frame.into_data() {
            Ok(chunk) => {
                data.extend_from_slice(&chunk);
                match first_message_len(&data) {
                    Some(len) if len > payload => {
                        return Err(target.over_payload("answer", len, payload))
                    }
                    // A second message has begun: a stream, handed on as it comes.
                    Some(len) if data.len() > FRAME_HEADER + len => {
                        return Ok(GrpcReply {
                            status: parts.status,
                            headers: parts.headers,
                            body: ReplyBody::Stream(Prefixed::new(data.freeze(), body)),
                        });
                    }
                    _ => continue,
                }
            }
            Err(frame) => frame,
        };
        let Ok(trailers) = frame.into_trailers() else {
            continue;
        };
        let (code, message) = status_in(&trailers).unwrap_or((
            Code::Unknown,
            "the trailers carry no grpc-status".to_owned(),
        ));
        return finish(parts, data.freeze(), Some(trailers), code, message, target);
    }
}

/// The reply of a call whose final status is known: an answer (OK, or an error the service itself
/// answered with), or the error of a call that did not run there.
fn finish(
    parts: http::response::Parts,
    data: Bytes,
    trailers: Option<HeaderMap>,
    code: Code,
    message: String,
    target: &Target,
) -> Result<GrpcReply, RpcError> {
    if code != Code::Ok && !is_answer(code, &message) {
        return Err(target.status(code, &message));
    }
    Ok(GrpcReply {
        status: parts.status,
        headers: parts.headers,
        body: ReplyBody::Complete {
            data,
            trailers,
            code,
            message,
        },
    })
}

/// The status of a Trailers-Only answer, or of an HTTP error answer without one (gRPC's HTTP status
/// mapping).
fn head_status(parts: &http::response::Parts) -> Option<(Code, String)> {
    if let Some(status) = status_in(&parts.headers) {
        return Some(status);
    }
    let code = match parts.status {
        http::StatusCode::OK => return None,
        http::StatusCode::BAD_REQUEST => Code::Internal,
        http::StatusCode::UNAUTHORIZED => Code::Unauthenticated,
        http::StatusCode::FORBIDDEN => Code::PermissionDenied,
        http::StatusCode::NOT_FOUND => Code::Unimplemented,
        http::StatusCode::TOO_MANY_REQUESTS
        | http::StatusCode::BAD_GATEWAY
        | http::StatusCode::SERVICE_UNAVAILABLE
        | http::StatusCode::GATEWAY_TIMEOUT => Code::Unavailable,
        _ => Code::Unknown,
    };
    Some((code, format!("HTTP status {}", parts.status)))
}

/// `grpc-status` and `grpc-message` (percent-decoded), if `headers` has a status.
fn status_in(headers: &HeaderMap) -> Option<(Code, String)> {
    headers.get("grpc-status")?;
    // tonic's parser without the details header, whose undecodable base64 it would not survive.
    let mut plain = HeaderMap::with_capacity(2);
    for name in ["grpc-status", "grpc-message"] {
        if let Some(value) = headers.get(name) {
            plain.insert(name, value.clone());
        }
    }
    let status = tonic::Status::from_header_map(&plain)?;
    Some((status.code(), status.message().to_owned()))
}

/// The length the first gRPC message of `data` declares, once its prefix is there.
pub fn first_message_len(data: &[u8]) -> Option<usize> {
    let prefix = data.get(1..FRAME_HEADER)?;
    let len = u32::from_be_bytes(prefix.try_into().ok()?);
    usize::try_from(len).ok()
}

fn nonempty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// A body of which `head` was read already (while deciding whether a request is one message) and
/// `rest` is still to come, as one body again.
pub fn prefixed_body(head: Bytes, rest: Body) -> Body {
    Body::new(Prefixed::new(head, rest))
}

#[cfg(test)]
mod tests;
