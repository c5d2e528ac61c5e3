//! How a gRPC request is read and classified, and how failures become statuses.

use super::*;

/// A client body: each `Some` a data frame, each `None` one poll that finds nothing yet.
struct Pieces(std::collections::VecDeque<Option<&'static [u8]>>);

impl http_body::Body for Pieces {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, tonic::Status>>> {
        match self.0.pop_front() {
            Some(Some(data)) => {
                Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(data)))))
            }
            // A real body would wake the task later; the reader looks once and moves on.
            Some(None) => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}

fn body(pieces: &[Option<&'static [u8]>]) -> Body {
    Body::new(Pieces(pieces.iter().copied().collect()))
}

const HI: &[u8] = &[0, 0, 0, 0, 2, b'h', b'i'];

#[tokio::test]
async fn a_body_that_ends_after_its_message_is_read_whole_and_one_that_goes_on_is_a_stream() {
    // Split across frames, ended: replayable.
    let mut whole = body(&[Some(&HI[..3]), Some(&HI[3..])]);
    match read_first_message(&mut whole, 1024).await.unwrap() {
        Read::Whole(bytes) => assert_eq!(&bytes[..], HI),
        Read::Started(_) => panic!("the body ended"),
    }
    // A second message already there, or nothing yet after the first: a stream, and what was
    // read goes first.
    for pieces in [[Some(HI), Some(HI)], [Some(HI), None]] {
        let mut going_on = body(&pieces);
        match read_first_message(&mut going_on, 1024).await.unwrap() {
            Read::Started(bytes) => assert!(bytes.starts_with(HI)),
            Read::Whole(_) => panic!("the body goes on: {pieces:?}"),
        }
    }
    // A declared length over `payload` is refused before anything is sent.
    let mut big = body(&[Some(&[0, 0, 1, 0, 0])]);
    let error = match read_first_message(&mut big, 1024).await {
        Err(error) => error,
        Ok(_) => panic!("a 65536-byte message is over payload=1024"),
    };
    assert_eq!(error.kind(), RpcErrorKind::Serialization, "{error}");
}

#[test]
fn grpc_timeouts_become_milliseconds() {
    assert_eq!(grpc_timeout_millis("3000m"), Some(3000));
    assert_eq!(grpc_timeout_millis("2S"), Some(2000));
    assert_eq!(grpc_timeout_millis("1H"), Some(3_600_000));
    assert_eq!(
        grpc_timeout_millis("10u"),
        Some(1),
        "rounded up to the smallest deadline"
    );
    assert_eq!(grpc_timeout_millis("123456789m"), None, "at most 8 digits");
    assert_eq!(grpc_timeout_millis("5x"), None);
    assert_eq!(grpc_timeout_millis("m"), None);
}

#[test]
fn metadata_becomes_attachments_but_transport_headers_do_not() {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", "application/grpc".parse().unwrap());
    headers.insert("te", "trailers".parse().unwrap());
    headers.insert("grpc-timeout", "250m".parse().unwrap());
    headers.insert("dubbo.tag", "gray".parse().unwrap());
    headers.insert("trace-bin", "AAEC".parse().unwrap());
    headers.insert("tri-service-version", "9.9.9".parse().unwrap());
    let invocation = invocation_of("SayHello", &headers);
    assert_eq!(invocation.method_name(), "SayHello");
    assert_eq!(invocation.attachment("dubbo.tag"), Some("gray"));
    assert_eq!(invocation.attachment("timeout"), Some("250"));
    assert_eq!(
        invocation.attachments().len(),
        2,
        "{:?}",
        invocation.attachments()
    );
}

#[test]
fn a_provider_status_keeps_its_code_and_a_kind_gives_one_otherwise() {
    let provider = RpcError::new(RpcErrorKind::MethodNotFound, "no such service or method")
        .with_source(tonic::Status::not_found("Service not found"));
    let wrapped = RpcError::new(provider.kind(), "failed after 3 attempts").with_source(provider);
    let response = status_response(&wrapped);
    let status = tonic::Status::from_header_map(response.headers()).unwrap();
    assert_eq!(status.code(), Code::NotFound);
    assert!(
        status.message().contains("failed after 3 attempts"),
        "{}",
        status.message()
    );

    let java = RpcError::new(RpcErrorKind::MethodNotFound, "no such service or method")
        .with_source(tonic::Status::unknown("\"methodDescriptors\" is null"));
    let status = tonic::Status::from_header_map(status_response(&java).headers()).unwrap();
    assert_eq!(status.code(), Code::Unimplemented);

    let none = status_response(&RpcError::new(RpcErrorKind::NoProvider, "no provider"));
    let status = tonic::Status::from_header_map(none.headers()).unwrap();
    assert_eq!(status.code(), Code::Unavailable);
}
