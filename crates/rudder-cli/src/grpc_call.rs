//! One protobuf call through [`tonic::client::Grpc`], with messages as prost-reflect
//! [`DynamicMessage`]s: a codec that encodes whatever message it is given and decodes the method's
//! output type, and the four call shapes (unary, server, client and bidi streaming). Generic over the
//! transport (`T: GrpcService<Body>`), so a tonic `Channel` to one URL and a reference's
//! discovery-and-balancing channel are called the same way.

use std::time::Duration;

use bytes::Bytes;
use http::uri::PathAndQuery;
use prost::Message as _;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};
use rudder_common::error::RpcError;
use tonic::body::Body;
use tonic::client::GrpcService;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::MetadataMap;
use tonic::Status;

/// What tonic accepts as a transport's error.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Encodes any [`DynamicMessage`]; decodes messages of one type.
#[derive(Debug, Clone)]
pub(crate) struct DynamicCodec {
    output: MessageDescriptor,
}

impl DynamicCodec {
    /// A codec whose decoder reads `output` messages.
    pub(crate) fn new(output: MessageDescriptor) -> DynamicCodec {
        DynamicCodec { output }
    }
}

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicEncoder;
    type Decoder = DynamicDecoder;

    fn encoder(&mut self) -> DynamicEncoder {
        DynamicEncoder
    }

    fn decoder(&mut self) -> DynamicDecoder {
        DynamicDecoder(self.output.clone())
    }
}

/// Writes a message into tonic's frame buffer (tonic checks the length against its encoding limit).
#[derive(Debug)]
pub(crate) struct DynamicEncoder;

impl Encoder for DynamicEncoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn encode(&mut self, item: DynamicMessage, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(dst)
            .map_err(|e| Status::internal(format!("encoding the request: {e}")))
    }
}

/// Reads one message of its type from a frame tonic has already bounded by the decoding limit.
#[derive(Debug)]
pub(crate) struct DynamicDecoder(MessageDescriptor);

impl Decoder for DynamicDecoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, Status> {
        // Every length prost reads is checked against what is left of the frame.
        DynamicMessage::decode(self.0.clone(), src)
            .map(Some)
            .map_err(|e| {
                Status::internal(format!("the answer is not a {}: {e}", self.0.full_name()))
            })
    }
}

/// What one call sends.
#[derive(Debug, Clone)]
pub(crate) struct ProtoRequest {
    /// The method (its path and types).
    pub(crate) method: MethodDescriptor,
    /// The request messages: one, or for a client- or bidi-streaming method every message of the stream.
    pub(crate) messages: Vec<DynamicMessage>,
    /// Headers of this call (attachments).
    pub(crate) metadata: MetadataMap,
    /// The whole call's deadline, sent as `grpc-timeout` and kept here too.
    pub(crate) timeout: Duration,
    /// The largest message sent or accepted, bytes.
    pub(crate) payload: usize,
}

/// Calls `request.method` through `channel`, handing each answer to `on_reply` as it arrives (a server
/// stream is printed as it comes, never collected), and returns the failure as gRPC status.
pub(crate) async fn call<T>(
    channel: T,
    request: ProtoRequest,
    on_reply: &mut dyn FnMut(DynamicMessage),
) -> Result<(), Status>
where
    T: GrpcService<Body>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let timeout = request.timeout;
    match tokio::time::timeout(timeout, call_inner(channel, request, on_reply)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Status::deadline_exceeded(format!(
            "no answer within {} ms",
            timeout.as_millis()
        ))),
    }
}

async fn call_inner<T>(
    channel: T,
    request: ProtoRequest,
    on_reply: &mut dyn FnMut(DynamicMessage),
) -> Result<(), Status>
where
    T: GrpcService<Body>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let ProtoRequest {
        method,
        messages,
        metadata,
        timeout,
        payload,
    } = request;
    let path = PathAndQuery::try_from(crate::proto_descriptors::grpc_path(&method))
        .map_err(|e| Status::invalid_argument(format!("method path: {e}")))?;
    let codec = DynamicCodec::new(method.output());
    let mut grpc = tonic::client::Grpc::new(channel)
        .max_decoding_message_size(payload)
        .max_encoding_message_size(payload);
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(format!("not ready: {}", e.into())))?;
    // tonic's own check fails mid-stream as an HTTP/2 reset (status UNKNOWN): refuse an oversized
    // request here, before anything is sent, as the tri:// client does.
    if let Some(too_big) = messages
        .iter()
        .map(|m| m.encoded_len())
        .find(|n| *n > payload)
    {
        return Err(Status::out_of_range(format!(
            "the request is {too_big} bytes, over payload={payload}"
        )));
    }
    let streamed_in = method.is_client_streaming();
    let streamed_out = method.is_server_streaming();
    if !streamed_in && messages.len() != 1 {
        return Err(Status::invalid_argument(format!(
            "{} takes one request message, not {}",
            method.full_name(),
            messages.len()
        )));
    }
    if streamed_in {
        let stream = tokio_stream::iter(messages);
        let request = with_headers(stream, &metadata, timeout);
        if streamed_out {
            let mut replies = grpc.streaming(request, path, codec).await?.into_inner();
            while let Some(reply) = replies.message().await? {
                on_reply(reply);
            }
        } else {
            on_reply(
                grpc.client_streaming(request, path, codec)
                    .await?
                    .into_inner(),
            );
        }
        return Ok(());
    }
    let Some(message) = messages.into_iter().next() else {
        return Err(Status::invalid_argument("no request message"));
    };
    let request = with_headers(message, &metadata, timeout);
    if streamed_out {
        let mut replies = grpc
            .server_streaming(request, path, codec)
            .await?
            .into_inner();
        while let Some(reply) = replies.message().await? {
            on_reply(reply);
        }
    } else {
        on_reply(grpc.unary(request, path, codec).await?.into_inner());
    }
    Ok(())
}

/// A request of `body` with the call's headers and its `grpc-timeout`.
fn with_headers<B>(body: B, metadata: &MetadataMap, timeout: Duration) -> tonic::Request<B> {
    let mut request = tonic::Request::new(body);
    *request.metadata_mut() = metadata.clone();
    request.set_timeout(timeout);
    request
}

/// The error kind of a gRPC status, as rudder's tri:// client classifies one, so `invoke` counts and
/// labels a failure alike over either path.
pub(crate) use rudder_triple::error_kind;

/// A failed call as the [`RpcError`] `invoke` prints: `tri://ADDR pkg.Svc/Method: grpc-status 3
/// InvalidArgument: name is required`, with the causes of a local failure (`tcp connect error:
/// Connection refused`).
pub(crate) fn status_error(status: &Status, target: &str, method: &MethodDescriptor) -> RpcError {
    let code = status.code();
    let mut message = format!(
        "{target} {}/{}: grpc-status {} {code:?}: {}",
        method.parent_service().full_name(),
        method.name(),
        i32::from(code),
        status.message()
    );
    let mut cause = std::error::Error::source(status);
    while let Some(error) = cause {
        let text = error.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = error.source();
    }
    RpcError::new(error_kind(code, status.message()), message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_common::error::RpcErrorKind;
    use tonic::Code;

    fn greeter() -> crate::proto_descriptors::Descriptors {
        let file =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/greeter.proto");
        crate::proto_descriptors::load_files(&[file], &[]).unwrap()
    }

    #[test]
    fn the_codec_round_trips_a_message_of_the_method_types() {
        let descriptors = greeter();
        let reply = descriptors
            .pool
            .get_message_by_name("org.rudder.it.proto.HelloReply")
            .unwrap();
        let mut message = DynamicMessage::new(reply.clone());
        message.set_field_by_name("message", prost_reflect::Value::String("hi".into()));
        let bytes = message.encode_to_vec();
        let decoded = DynamicMessage::decode(reply, bytes.as_slice()).unwrap();
        assert_eq!(decoded, message);
        // Every truncation and every byte flip of an answer decodes to a message or an error, never a
        // panic, and a cut inside a field is an error.
        let reply = descriptors
            .pool
            .get_message_by_name("org.rudder.it.proto.HelloReply")
            .unwrap();
        let mut full = DynamicMessage::new(reply.clone());
        full.set_field_by_name("message", prost_reflect::Value::String("Hello rust".into()));
        full.set_field_by_name("served_by", prost_reflect::Value::String("p".into()));
        let bytes = full.encode_to_vec();
        for cut in 0..bytes.len() {
            let decoded = DynamicMessage::decode(reply.clone(), &bytes[..cut]);
            // Field boundaries: after the first field (2 + 10 bytes) a cut is a shorter message.
            assert_eq!(decoded.is_ok(), cut == 0 || cut == 12, "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                let _ = DynamicMessage::decode(reply.clone(), flipped.as_slice());
            }
        }
    }

    #[test]
    fn statuses_map_to_the_kinds_of_the_tri_client() {
        for (code, kind) in [
            (Code::Unavailable, RpcErrorKind::Network),
            (Code::DeadlineExceeded, RpcErrorKind::Timeout),
            (Code::Unimplemented, RpcErrorKind::MethodNotFound),
            (Code::NotFound, RpcErrorKind::MethodNotFound),
            (Code::ResourceExhausted, RpcErrorKind::LimitExceeded),
            (Code::OutOfRange, RpcErrorKind::Serialization),
            (Code::InvalidArgument, RpcErrorKind::Unknown),
        ] {
            assert_eq!(error_kind(code, ""), kind, "{code:?}");
        }
        let descriptors = greeter();
        let method = descriptors
            .pool
            .get_service_by_name("org.rudder.it.proto.Greeter")
            .unwrap()
            .methods()
            .next()
            .unwrap();
        let error = status_error(
            &Status::invalid_argument("name is required"),
            "tri://127.0.0.1:1",
            &method,
        );
        assert_eq!(
            error.message(),
            "tri://127.0.0.1:1 org.rudder.it.proto.Greeter/SayHello: grpc-status 3 InvalidArgument: name is required"
        );
    }
}
