//! What a provider's answer goes through before it is a value, for the fuzz targets in
//! `crates/rudder-triple/fuzz` (feature `fuzzing`). Not a stable API.
//!
//! A hostile or broken provider controls every byte of a response's DATA frames and its trailers.
//! These entry points feed arbitrary bytes to the same decoders a call uses: tonic's gRPC message
//! framing bounded by `payload`, rudder's `TripleResponseWrapper` decoder, and the hessian2 value and
//! exception inside it within the payload's decode budget. They return nothing: a fuzz target only
//! needs them not to panic, hang or allocate without bound.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body::{Body, Frame};
use prost::Message;
use rudder_hessian::DecodeLimits;
use tonic::codec::Codec;

use crate::codec::WrapperCodec;
use crate::wrapper::{self, TripleRequestWrapper, TripleResponseWrapper};

/// Decodes `bytes` as one `TripleResponseWrapper`, then its content as a value and as an exception,
/// within the decode budget of `payload`.
pub fn check_response_wrapper(bytes: &[u8], payload: usize) {
    if let Ok(answer) = TripleResponseWrapper::decode(bytes) {
        read_wrapper(&answer, payload);
    }
}

/// Reads `body` as the DATA of a gRPC response, delivered in pieces of `chunk` bytes and ended by
/// trailers with `grpc-status: status`, through tonic's framing with the largest message `payload`
/// and rudder's wrapper decoder; each message is then read as a call reads it.
pub fn check_grpc_body(body: &[u8], chunk: usize, status: u8, payload: usize) {
    let body = ScriptedBody::new(body, chunk.max(1), status);
    let decoder = WrapperCodec::<TripleRequestWrapper, TripleResponseWrapper>::default().decoder();
    let mut stream =
        tonic::codec::Streaming::new_response(decoder, body, StatusCode::OK, None, Some(payload));
    RUNTIME.with(|runtime| {
        runtime.block_on(async {
            // Bounded: each message consumes at least its 5-byte prefix, and the body is finite.
            while let Ok(Some(answer)) = stream.message().await {
                read_wrapper(&answer, payload);
            }
            let _ = stream.trailers().await;
        })
    });
}

thread_local! {
    // One runtime for all inputs: building one per input would be most of the fuzzer's time.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
}

fn read_wrapper(answer: &TripleResponseWrapper, payload: usize) {
    let limits = DecodeLimits::for_payload(payload);
    let _ = wrapper::response_value(answer, limits);
    let _ = wrapper::response_exception(answer, limits);
}

/// A response body that yields `data` in fixed pieces, then trailers.
struct ScriptedBody {
    pieces: VecDeque<Bytes>,
    trailers: Option<HeaderMap>,
}

impl ScriptedBody {
    fn new(data: &[u8], chunk: usize, status: u8) -> ScriptedBody {
        let pieces = data.chunks(chunk).map(Bytes::copy_from_slice).collect();
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from(u16::from(status % 17)));
        ScriptedBody {
            pieces,
            trailers: Some(trailers),
        }
    }
}

impl Body for ScriptedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(piece) = self.pieces.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }
}
