//! [`GrpcChannel`]: a reference as the channel of a tonic-generated client, for protobuf (IDL)
//! services over tri://, with discovery, routing, balancing and the cluster mode underneath.
//!
//! The cluster calls providers through a [`Caller`], which sees an [`Invocation`] (what routers and
//! balancers read: the method, the client's metadata as attachments, its deadline). The gRPC request
//! itself, which only the wire needs, travels beside it: in a task-local scoped around the one
//! cluster call, so that every attempt of that call (failover, forking, broadcast) finds it and no
//! layer below the facade learns of HTTP bodies. Failback's background retries run outside that
//! scope and fail at once: a gRPC answer has nowhere to go after its call returned.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http_body::Body as _;
use rudder_cluster::cluster::ClusterMode;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::ranges::IntRange;
use rudder_triple::grpc::{first_message_len, prefixed_body, FRAME_HEADER};
use rudder_triple::{GrpcReply, GrpcRequest};
use tonic::body::Body;
use tonic::Code;

use crate::grpc_caller::{Pending, PENDING};
use crate::reference::Reference;

/// The largest request message read before a provider is picked (the provider URL's own `payload`
/// bounds it again when sent): the reference's `payload`, 8 MiB by default.
const PAYLOAD: IntRange = IntRange {
    key: "payload",
    default: 8 << 20,
    min: 256,
    max: 64 << 20,
};

/// A [`Reference`] as a tonic channel: `GreeterClient::new(reference.grpc_channel())` calls the
/// reference's protobuf (IDL) service over tri://.
///
/// Each call goes through the reference like any other: its directory, routers, load balance and
/// cluster mode pick a tri:// provider, and the request goes on the consumer's HTTP/2 connection to
/// it (one per address, `connections=N`), with `tri-service-version` / `tri-service-group` from the
/// provider URL, `grpc-timeout` from the merged `timeout` (a deadline the client set wins) and the
/// consumer application. Calls are counted in the providers' statistics and metrics, and their
/// metadata is what tag and condition rules see as attachments.
///
/// * A request of one message (unary, server streaming) is read whole (at most `payload`) so that
///   failover can send it again to another provider when one did not run it: no connection,
///   `UNAVAILABLE`, `UNIMPLEMENTED` / `NOT_FOUND` (which fail as "no such service or method at this
///   group/version" on the last provider). An error status the service answered with
///   (`INVALID_ARGUMENT`, `INTERNAL`...) is the gRPC counterpart of a business exception: handed to
///   the client as it came, never sent again. The answer is read whole too (at most `payload`), unless
///   a second message begins: then it is a stream, passed on as it comes.
/// * A streaming request (the client's body has not ended with its first message when read, which
///   never waits: a bidirectional client may write only after the answer began), or a method
///   declared with [`GrpcChannel::streaming`], picks one provider and is never sent again; as with
///   Dubbo's Java consumer, no `timeout` setting bounds a stream (a deadline the client sets does).
///
/// Failures are answered as gRPC statuses, so the client sees a `tonic::Status`: `UNAVAILABLE` for
/// no provider or no connection, `DEADLINE_EXCEEDED` for a timeout, `UNIMPLEMENTED` for no such
/// service or method, `RESOURCE_EXHAUSTED` for a message over `payload`; the message says which
/// providers were tried. The service's error type is therefore [`Infallible`].
///
/// ```
/// use rudder::Reference;
/// use tower_service::Service;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Nothing listens on port 1: the call fails over and ends as a status, as any gRPC call would.
/// let greeter = Reference::builder("org.rudder.it.proto.Greeter")
///     .provider("tri://127.0.0.1:1/org.rudder.it.proto.Greeter?version=1.0.0")
///     .build()
///     .await?;
/// // What `GreeterClient::new(greeter.grpc_channel())` sends, written out by hand.
/// let mut channel = greeter.grpc_channel();
/// let request = http::Request::builder()
///     .uri("/org.rudder.it.proto.Greeter/SayHello")
///     .header("content-type", "application/grpc")
///     .body(tonic::body::Body::new(http_body_util::Full::new(bytes::Bytes::from_static(
///         &[0, 0, 0, 0, 0],
///     ))))?;
/// let response = channel.call(request).await?;
/// let status = tonic::Status::from_header_map(response.headers()).expect("a Trailers-Only answer");
/// assert_eq!(status.code(), tonic::Code::Unavailable);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct GrpcChannel {
    reference: Reference,
    /// Methods whose answer is a stream, declared by the user.
    streaming: Arc<[Box<str>]>,
}

impl Reference {
    /// This reference as the channel of a tonic-generated client, for protobuf (IDL) services over
    /// tri:// (see [`GrpcChannel`]). Cheap: clones share the reference.
    pub fn grpc_channel(&self) -> GrpcChannel {
        GrpcChannel {
            reference: self.clone(),
            streaming: Arc::new([]),
        }
    }
}

impl GrpcChannel {
    /// Declares `method` (as in the request path, e.g. `SayHelloStream`) a streaming method: one
    /// provider, never sent again, no `timeout` from the settings, the answer passed on from its first
    /// byte (undeclared, a server stream's first message waits for its second).
    #[must_use]
    pub fn streaming(mut self, method: &str) -> GrpcChannel {
        let mut methods = self.streaming.to_vec();
        methods.push(method.into());
        self.streaming = methods.into();
        self
    }
}

impl fmt::Debug for GrpcChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcChannel")
            .field(
                "service",
                &self.reference.consumer_url().service_interface(),
            )
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}

impl tower_service::Service<http::Request<Body>> for GrpcChannel {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Always ready: each call picks its provider, and a refusal is that call's status.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let channel = self.clone();
        Box::pin(async move {
            Ok(match channel.route(request).await {
                Ok(reply) => reply.into_http(),
                Err(error) => status_response(&error),
            })
        })
    }
}

/// What a request turned out to be once its first message was read.
enum Read {
    /// The whole body: it ended.
    Whole(Bytes),
    /// The bytes read so far of a body that goes on.
    Started(Bytes),
}

impl GrpcChannel {
    async fn route(&self, request: http::Request<Body>) -> Result<GrpcReply, RpcError> {
        let inner = &self.reference.inner;
        if inner.consumer.is_shut_down() {
            return Err(RpcError::new(
                RpcErrorKind::ShutDown,
                "the consumer is shut down",
            ));
        }
        let (head, mut body) = request.into_parts();
        let path = head
            .uri
            .path_and_query()
            .cloned()
            .ok_or_else(|| RpcError::new(RpcErrorKind::Unknown, "the request has no path"))?;
        let method = path.path().rsplit('/').next().unwrap_or_default();
        let invocation = invocation_of(method, &head.headers);
        if !self.streaming.iter().any(|m| **m == *method) {
            let payload = usize::try_from(PAYLOAD.value(&inner.consumer_url)).unwrap_or(8 << 20);
            match read_first_message(&mut body, payload).await? {
                Read::Whole(bytes) => {
                    let mode = inner.modes.get(method);
                    let request = GrpcRequest::new(path, head.headers, bytes);
                    let call = inner.grpc.invoke_in_mode(&invocation, &mode);
                    return PENDING.scope(Arc::new(Pending::Whole(request)), call).await;
                }
                Read::Started(bytes) => body = prefixed_body(bytes, body),
            }
        }
        let pending = Pending::Stream(Mutex::new(Some((head, body))));
        let call = inner
            .grpc
            .invoke_in_mode(&invocation, &ClusterMode::Failfast);
        PENDING.scope(Arc::new(pending), call).await
    }
}

/// Reads what `body` has ready, up to the end of its first message (at most `payload`), and says
/// whether it ends there. Never waits: a client that writes its first message only after the answer
/// began (a bidirectional call) would wait for this forever; what is not ready now is a stream.
async fn read_first_message(body: &mut Body, payload: usize) -> Result<Read, RpcError> {
    let mut data = BytesMut::new();
    loop {
        if let Some(len) = first_message_len(&data) {
            if len > payload {
                return Err(RpcError::new(
                    RpcErrorKind::Serialization,
                    format!("the request message is {len} bytes, over payload={payload}; not sent"),
                ));
            }
            if data.len() >= FRAME_HEADER + len && body.is_end_stream() {
                return Ok(Read::Whole(data.freeze()));
            }
        }
        let complete = first_message_len(&data).is_some_and(|len| data.len() >= FRAME_HEADER + len);
        match std::future::poll_fn(|cx| Poll::Ready(poll_once(body, cx))).await {
            Some(None) => return Ok(Read::Whole(data.freeze())),
            Some(Some(Ok(frame))) => {
                if let Ok(chunk) = frame.into_data() {
                    data.extend_from_slice(&chunk);
                }
                // More after the first message: a stream.
                if complete {
                    return Ok(Read::Started(data.freeze()));
                }
            }
            Some(Some(Err(status))) => return Err(client_body_failed(status)),
            // Nothing ready now.
            None => return Ok(Read::Started(data.freeze())),
        }
    }
}

type Frame = Option<Result<http_body::Frame<Bytes>, tonic::Status>>;

/// The body's next frame if it is there now (`None`: not yet).
fn poll_once(body: &mut Body, cx: &mut Context<'_>) -> Option<Frame> {
    match Pin::new(body).poll_frame(cx) {
        Poll::Ready(frame) => Some(frame),
        Poll::Pending => None,
    }
}

fn client_body_failed(status: tonic::Status) -> RpcError {
    RpcError::new(
        RpcErrorKind::Serialization,
        format!("the client's request body failed: {status}"),
    )
    .with_source(status)
}

/// The invocation routers and balancers see: the method, and the client's text metadata as
/// attachments (`dubbo.tag` among them); its `grpc-timeout` becomes the call's `timeout`.
fn invocation_of(method: &str, headers: &HeaderMap) -> Invocation {
    let mut invocation = Invocation::new(method, Vec::new(), Vec::new());
    for (name, value) in headers {
        let name = name.as_str();
        if name == "grpc-timeout" {
            if let Some(millis) = value.to_str().ok().and_then(grpc_timeout_millis) {
                invocation.set_attachment("timeout", &millis.to_string());
            }
            continue;
        }
        let reserved = matches!(name, "content-type" | "te" | "user-agent" | "timeout")
            || name.starts_with("grpc-")
            || name.starts_with("tri-")
            || name.ends_with("-bin");
        if let (false, Ok(value)) = (reserved, value.to_str()) {
            invocation.set_attachment(name, value);
        }
    }
    invocation
}

/// A `grpc-timeout` value (`<digits><unit>`, unit one of `HMSmun`) in whole milliseconds, at
/// least 1.
fn grpc_timeout_millis(value: &str) -> Option<u64> {
    let value = value.trim();
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let millis = match unit {
        "H" => n * 3_600_000,
        "M" => n * 60_000,
        "S" => n * 1000,
        "m" => n,
        "u" => n / 1000,
        "n" => n / 1_000_000,
        _ => return None,
    };
    Some(millis.max(1))
}

/// The failure as the Trailers-Only answer a gRPC client reads: the provider's own status code when
/// the error carries one (`UNIMPLEMENTED` for any "no such service or method"), else the code of its
/// kind; rudder's message (providers tried, group and version asked for).
fn status_response(error: &RpcError) -> http::Response<Body> {
    let provider = provider_code(error);
    let code = match (error.kind(), provider) {
        // Whatever the provider said: Java 3.3.6 answers a missing method with `UNKNOWN` and a
        // NullPointerException's message.
        (RpcErrorKind::MethodNotFound, Some(Code::NotFound)) => Code::NotFound,
        (RpcErrorKind::MethodNotFound, _) => Code::Unimplemented,
        (_, Some(code)) => code,
        (kind, None) => code_of(kind),
    };
    tonic::Status::new(code, status_message(error)).into_http()
}

/// The error and its causes in one line (a gRPC status has one message, no chain), up to the
/// provider's own status, whose text the cause before it already says.
fn status_message(error: &RpcError) -> String {
    let causes = error.message_with_causes_until(|link| link.is::<tonic::Status>());
    format!("{}: {causes}", error.kind())
}

/// The gRPC code of a failure rudder classified itself (no provider status behind it).
fn code_of(kind: RpcErrorKind) -> Code {
    match kind {
        RpcErrorKind::Network | RpcErrorKind::NoProvider | RpcErrorKind::ShutDown => {
            Code::Unavailable
        }
        RpcErrorKind::Timeout => Code::DeadlineExceeded,
        RpcErrorKind::MethodNotFound => Code::Unimplemented,
        RpcErrorKind::LimitExceeded => Code::ResourceExhausted,
        RpcErrorKind::Serialization => Code::ResourceExhausted,
        RpcErrorKind::Forbidden => Code::PermissionDenied,
        _ => Code::Unknown,
    }
}

/// The status a provider answered with, if `error` was caused by one.
fn provider_code(error: &RpcError) -> Option<Code> {
    let mut cause = std::error::Error::source(error);
    // Bounded: the cluster wraps an attempt's error once or twice.
    for _ in 0..8 {
        let current = cause?;
        if let Some(status) = current.downcast_ref::<tonic::Status>() {
            return Some(status.code());
        }
        cause = current.source();
    }
    None
}

#[cfg(test)]
mod tests;
