//! The HTTP bodies the gRPC pass-through sends and hands back: buffered bytes (a request that can be
//! sent again to another provider, a complete answer with its trailers) and a stream of which the
//! first bytes were already read.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};

/// Bytes read already, then their trailers: a buffered request (no trailers) or a complete answer.
#[derive(Debug, Default)]
pub(crate) struct Buffered {
    data: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Buffered {
    pub(crate) fn new(data: Bytes, trailers: Option<HeaderMap>) -> Buffered {
        Buffered {
            data: Some(data).filter(|d| !d.is_empty()),
            trailers,
        }
    }
}

impl Body for Buffered {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let len = self.data.as_ref().map_or(0, |d| d.len() as u64);
        let mut hint = SizeHint::with_exact(len);
        if self.trailers.is_some() {
            // Trailers are no data, but an exact hint would let hyper end the stream early.
            hint = SizeHint::new();
            hint.set_lower(len);
        }
        hint
    }
}

/// The bytes read while deciding what a body is, then the rest of it, unchanged.
#[derive(Debug)]
pub(crate) struct Prefixed {
    head: Option<Bytes>,
    rest: tonic::body::Body,
}

impl Prefixed {
    pub(crate) fn new(head: Bytes, rest: tonic::body::Body) -> Prefixed {
        Prefixed {
            head: Some(head).filter(|h| !h.is_empty()),
            rest,
        }
    }
}

impl Body for Prefixed {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(head) = self.head.take() {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.rest.is_end_stream()
    }
}
