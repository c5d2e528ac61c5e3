//! The gRPC pass-through against a scripted HTTP/2 provider (h2's server): what it sends, and how
//! each kind of answer ends the call.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::BodyExt;
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use tokio::net::TcpListener;
use tonic::Code;

use super::{GrpcReply, GrpcRequest};
use crate::TripleProtocol;

/// How the scripted provider answers.
#[derive(Clone)]
enum Script {
    /// These messages, then trailers with this `grpc-status`.
    Messages(Vec<&'static [u8]>, &'static str),
    /// A Trailers-Only answer.
    Status(&'static str, &'static str),
    /// An HTTP error status and nothing else.
    Http(u16),
    /// One message, then the stream ends with no trailers.
    NoTrailers,
    /// One message, then RST_STREAM.
    Reset,
}

type Seen = Arc<Mutex<Vec<(http::request::Parts, Vec<u8>)>>>;

async fn provider(script: Script) -> (DubboUrl, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (script, record) = (script.clone(), Arc::clone(&record));
            tokio::spawn(async move {
                let mut connection = h2::server::handshake(socket).await.unwrap();
                while let Some(Ok((request, respond))) = connection.accept().await {
                    tokio::spawn(answer(
                        request,
                        respond,
                        script.clone(),
                        Arc::clone(&record),
                    ));
                }
            });
        }
    });
    let url = DubboUrl::parse(&format!(
        "tri://{addr}/org.rudder.it.proto.Greeter?version=1.0.0&group=g1&timeout=2000"
    ))
    .unwrap();
    (url, seen)
}

async fn answer(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    script: Script,
    record: Seen,
) {
    let (parts, mut body) = request.into_parts();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    record.lock().unwrap().push((parts, bytes));
    let head = |status: u16| {
        http::Response::builder()
            .status(status)
            .header("content-type", "application/grpc")
    };
    match script {
        Script::Status(code, message) => {
            let head = head(200)
                .header("grpc-status", code)
                .header("grpc-message", message);
            let _ = respond.send_response(head.body(()).unwrap(), true);
        }
        Script::Http(status) => {
            let _ = respond.send_response(head(status).body(()).unwrap(), true);
        }
        Script::Messages(messages, code) => {
            let mut send = respond
                .send_response(head(200).body(()).unwrap(), false)
                .unwrap();
            for message in messages {
                send.send_data(frame(message), false).unwrap();
            }
            let mut trailers = HeaderMap::new();
            trailers.insert("grpc-status", code.parse().unwrap());
            let _ = send.send_trailers(trailers);
        }
        Script::NoTrailers => {
            let mut send = respond
                .send_response(head(200).body(()).unwrap(), false)
                .unwrap();
            send.send_data(frame(b"hi"), true).unwrap();
        }
        Script::Reset => {
            let mut send = respond
                .send_response(head(200).body(()).unwrap(), false)
                .unwrap();
            send.send_data(frame(b"hi"), false).unwrap();
            send.send_reset(h2::Reason::INTERNAL_ERROR);
        }
    }
}

/// One gRPC message frame.
fn frame(message: &[u8]) -> Bytes {
    let mut frame = vec![0];
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(message);
    Bytes::from(frame)
}

fn request(body: Bytes) -> GrpcRequest {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", "application/grpc".parse().unwrap());
    headers.insert("te", "trailers".parse().unwrap());
    headers.insert("x-trace", "abc".parse().unwrap());
    // The client's own deadline header and a forged version: replaced by the URL's.
    headers.insert("grpc-timeout", "99S".parse().unwrap());
    headers.insert("tri-service-version", "forged".parse().unwrap());
    GrpcRequest::new(
        "/org.rudder.it.proto.Greeter/SayHello".parse().unwrap(),
        headers,
        body,
    )
}

fn call() -> Invocation {
    Invocation::new("SayHello", vec![], vec![])
}

async fn body_of(reply: GrpcReply) -> (Vec<u8>, Option<HeaderMap>) {
    let collected = reply.into_http().into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned();
    (collected.to_bytes().to_vec(), trailers)
}

#[tokio::test]
async fn a_unary_call_sends_the_triple_headers_and_hands_back_the_answer_whole() {
    let (url, seen) = provider(Script::Messages(vec![b"reply"], "0")).await;
    let protocol = TripleProtocol::new(Some("rudder-test".into()));
    let reply = protocol
        .grpc_unary(&url, &call(), &request(frame(b"req")))
        .await
        .unwrap();
    assert_eq!(reply.error_status(), None);
    assert!(!reply.is_stream());
    let (body, trailers) = body_of(reply).await;
    assert_eq!(body, frame(b"reply"));
    assert_eq!(trailers.unwrap()["grpc-status"], "0");

    let seen = seen.lock().unwrap();
    let (parts, body) = &seen[0];
    assert_eq!(parts.uri.path(), "/org.rudder.it.proto.Greeter/SayHello");
    assert_eq!(body, &frame(b"req"));
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    assert_eq!(header("tri-service-version").as_deref(), Some("1.0.0"));
    assert_eq!(header("tri-service-group").as_deref(), Some("g1"));
    assert_eq!(
        header("tri-consumer-appname").as_deref(),
        Some("rudder-test")
    );
    assert_eq!(
        header("grpc-timeout").as_deref(),
        Some("2000m"),
        "the URL's timeout"
    );
    assert_eq!(header("x-trace").as_deref(), Some("abc"));
    assert_eq!(header("content-type").as_deref(), Some("application/grpc"));
}

#[tokio::test]
async fn an_error_the_service_answered_is_an_answer_but_unavailable_is_an_error() {
    let (url, _) = provider(Script::Status("3", "bad%20name")).await;
    let protocol = TripleProtocol::default();
    let reply = protocol
        .grpc_unary(&url, &call(), &request(frame(b"req")))
        .await
        .unwrap();
    assert_eq!(
        reply.error_status(),
        Some((Code::InvalidArgument, "bad name"))
    );
    let response = reply.into_http();
    assert_eq!(
        response.headers()["grpc-status"],
        "3",
        "handed on as it came"
    );

    for (code, kind) in [
        ("14", RpcErrorKind::Network),
        ("12", RpcErrorKind::MethodNotFound),
        ("5", RpcErrorKind::MethodNotFound),
        ("4", RpcErrorKind::Timeout),
    ] {
        let (url, _) = provider(Script::Status(code, "no")).await;
        let error = protocol
            .grpc_unary(&url, &call(), &request(frame(b"req")))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), kind, "grpc-status {code}: {error}");
        if kind == RpcErrorKind::MethodNotFound {
            assert!(
                error
                    .message()
                    .contains("no such service or method at group g1, version 1.0.0"),
                "{error}"
            );
        }
    }
    let (url, _) = provider(Script::Http(404)).await;
    let error = protocol
        .grpc_unary(&url, &call(), &request(frame(b"req")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::MethodNotFound, "{error}");
}

#[tokio::test]
async fn a_second_message_makes_the_answer_a_stream_passed_on_whole() {
    let (url, _) = provider(Script::Messages(vec![b"one", b"two", b"three"], "0")).await;
    let protocol = TripleProtocol::default();
    let reply = protocol
        .grpc_unary(&url, &call(), &request(frame(b"req")))
        .await
        .unwrap();
    assert!(reply.is_stream());
    let (body, trailers) = body_of(reply).await;
    let expected: Vec<u8> = [frame(b"one"), frame(b"two"), frame(b"three")].concat();
    assert_eq!(body, expected);
    assert_eq!(trailers.unwrap()["grpc-status"], "0");
}

#[tokio::test]
async fn broken_answers_fail_their_call_as_network_errors() {
    let protocol = TripleProtocol::default();
    for script in [Script::NoTrailers, Script::Reset] {
        let (url, _) = provider(script).await;
        let error = protocol
            .grpc_unary(&url, &call(), &request(frame(b"req")))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), RpcErrorKind::Network, "{error}");
    }
}

#[tokio::test]
async fn messages_over_payload_fail_and_a_request_over_it_is_not_sent() {
    let big: &'static [u8] = Box::leak(vec![7u8; 1000].into_boxed_slice());
    let (url, seen) = provider(Script::Messages(vec![big], "0")).await;
    let small = DubboUrl::parse(&format!("{url}&payload=300")).unwrap();
    let protocol = TripleProtocol::default();
    let error = protocol
        .grpc_unary(&small, &call(), &request(frame(big)))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Serialization, "{error}");
    assert!(seen.lock().unwrap().is_empty(), "not sent");
    let error = protocol
        .grpc_unary(&small, &call(), &request(frame(b"req")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Serialization, "{error}");
    assert!(
        error.message().contains("answer message is 1000 bytes"),
        "{error}"
    );
}

#[tokio::test]
async fn no_connection_is_a_network_error_and_a_shut_down_protocol_refuses() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = DubboUrl::parse(&format!("tri://{addr}/S?timeout=500")).unwrap();
    let protocol = TripleProtocol::default();
    let error = protocol
        .grpc_unary(&url, &call(), &request(frame(b"req")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Network, "{error}");
    protocol.shutdown();
    let error = protocol
        .grpc_unary(&url, &call(), &request(frame(b"req")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::ShutDown, "{error}");
}

#[tokio::test]
async fn a_stream_is_sent_once_with_no_timeout_of_its_own() {
    let (url, seen) = provider(Script::Messages(vec![b"a", b"b"], "0")).await;
    let protocol = TripleProtocol::default();
    let (head, _) = http::Request::builder()
        .uri("/org.rudder.it.proto.Greeter/SayHelloStream")
        .header("content-type", "application/grpc")
        .body(())
        .unwrap()
        .into_parts();
    let body = tonic::body::Body::new(http_body_util::Full::new(frame(b"req")));
    let reply = protocol
        .grpc_stream(&url, &call(), head, body)
        .await
        .unwrap();
    assert!(reply.is_stream());
    let (body, _) = body_of(reply).await;
    assert_eq!(body, [frame(b"a"), frame(b"b")].concat());
    let seen = seen.lock().unwrap();
    assert!(
        seen[0].0.headers.get("grpc-timeout").is_none(),
        "streams carry no timeout setting"
    );
    assert_eq!(seen[0].0.headers["tri-service-version"], "1.0.0");
}
