//! What the client puts on the wire and how it reads answers, against a scripted HTTP/2 provider (h2's
//! server) that records each request's headers and body and answers as the Java 3.3.6 provider did.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use prost::Message;
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use tokio::net::TcpListener;

use super::TripleProtocol;
use crate::wrapper::{TripleRequestWrapper, TripleResponseWrapper, HESSIAN4};

/// How the scripted provider answers.
#[derive(Clone)]
enum Script {
    /// `grpc-status 0` with this wrapper (plus `tri-exception-code` when set).
    Answer(TripleResponseWrapper, Option<&'static str>),
    /// A Trailers-Only answer with this status and message.
    Status(&'static str, &'static str),
    /// A gRPC frame that claims this many bytes (and sends them).
    Oversized(usize),
}

type Seen = Arc<Mutex<Vec<(http::request::Parts, Vec<u8>)>>>;

async fn provider(script: Script) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve(socket, script.clone(), Arc::clone(&record)));
        }
    });
    (addr, seen)
}

/// One HTTP/2 connection: each request is answered by its own task, while `accept` drives the
/// connection.
async fn serve(socket: tokio::net::TcpStream, script: Script, record: Seen) {
    let mut connection = h2::server::handshake(socket).await.unwrap();
    while let Some(Ok((request, mut respond))) = connection.accept().await {
        // Method `goAway`, whatever the script: the connection ends under the call (GOAWAY, and the
        // stream reset), as when a provider's process stops.
        if request.uri().path().ends_with("/goAway") {
            connection.abrupt_shutdown(h2::Reason::INTERNAL_ERROR);
            let _ = std::future::poll_fn(|cx| connection.poll_closed(cx)).await;
            return;
        }
        // Method `html`: an answer that is not gRPC at all (a proxy's error page).
        if request.uri().path().ends_with("/html") {
            let head = http::Response::builder()
                .status(200)
                .header("content-type", "text/html")
                .body(())
                .unwrap();
            let mut send = respond.send_response(head, false).unwrap();
            let _ = send.send_data(Bytes::from_static(b"<html>bad gateway</html>"), true);
            continue;
        }
        let (script, record) = (script.clone(), Arc::clone(&record));
        tokio::spawn(async move {
            let (parts, mut body) = request.into_parts();
            let mut bytes = Vec::new();
            while let Some(Ok(chunk)) = body.data().await {
                let _ = body.flow_control().release_capacity(chunk.len());
                bytes.extend_from_slice(&chunk);
            }
            record.lock().unwrap().push((parts, bytes));
            let head = http::Response::builder()
                .status(200)
                .header("content-type", "application/grpc");
            let head = match &script {
                Script::Answer(_, Some(code)) => head.header("tri-exception-code", *code),
                Script::Status(code, message) => head
                    .header("grpc-status", *code)
                    .header("grpc-message", *message),
                _ => head,
            };
            let trailers_only = matches!(script, Script::Status(..));
            let mut send = respond
                .send_response(head.body(()).unwrap(), trailers_only)
                .unwrap();
            let message = match script {
                Script::Answer(wrapper, _) => wrapper.encode_to_vec(),
                Script::Oversized(len) => vec![0; len],
                Script::Status(..) => return,
            };
            let mut frame = vec![0];
            frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
            frame.extend_from_slice(&message);
            send.send_data(Bytes::from(frame), false).unwrap();
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            let _ = send.send_trailers(trailers);
        });
    }
}

fn answer(data: Vec<u8>, class: &str) -> TripleResponseWrapper {
    TripleResponseWrapper {
        serialize_type: HESSIAN4.into(),
        data,
        r#type: class.into(),
    }
}

fn hello() -> Invocation {
    let mut call = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("rust")],
    );
    call.set_attachment("Trace-Id", "abc");
    call.set_attachment("tri-service-version", "forged");
    // Not ASCII: a header cannot carry it as text, so it goes as `user-name-bin`.
    call.set_attachment("User-Name", "Zoë 张");
    call
}

#[tokio::test]
async fn a_call_sends_what_a_java_consumer_sends() {
    let (addr, seen) = provider(Script::Answer(
        answer(vec![0x02, b'h', b'i'], "java.lang.String"),
        None,
    ))
    .await;
    let url = DubboUrl::parse(&format!(
        "tri://{addr}/org.rudder.it.GreetingService?version=1.0.0&group=g1&timeout=2500"
    ))
    .unwrap();
    let protocol = TripleProtocol::new(Some("shop".into()));
    let response = protocol.invoke(&url, &hello()).await.unwrap();
    assert_eq!(response.value(), Some(&Value::from("hi")));

    let (parts, body) = seen.lock().unwrap().remove(0);
    assert_eq!(parts.method, http::Method::POST);
    assert_eq!(parts.uri.path(), "/org.rudder.it.GreetingService/sayHello");
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(
        header("content-type").as_deref(),
        Some("application/grpc+proto")
    );
    assert_eq!(header("te").as_deref(), Some("trailers"));
    // From the provider URL, never from an attachment.
    assert_eq!(header("tri-service-version").as_deref(), Some("1.0.0"));
    assert_eq!(header("tri-service-group").as_deref(), Some("g1"));
    assert_eq!(header("tri-consumer-appname").as_deref(), Some("shop"));
    assert_eq!(header("trace-id").as_deref(), Some("abc"));
    // gRPC binary metadata: base64 of the UTF-8 bytes (unpadded or padded, both are valid gRPC).
    assert!(parts.headers.get("user-name").is_none());
    let binary = header("user-name-bin").expect("a non-ASCII attachment is sent as -bin");
    let expected = "Wm/DqyDlvKA"; // base64 of "Zoë 张" without padding
    assert_eq!(binary.trim_end_matches('='), expected, "{binary}");
    let timeout = header("grpc-timeout").expect("grpc-timeout sent");
    assert!(
        timeout.ends_with('m') || timeout.ends_with('u'),
        "{timeout}"
    );
    // One gRPC frame: uncompressed, length-prefixed, the request wrapper.
    assert_eq!(body[0], 0);
    let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
    assert_eq!(len, body.len() - 5);
    let wrapper = TripleRequestWrapper::decode(&body[5..]).unwrap();
    assert_eq!(wrapper.serialize_type, HESSIAN4);
    assert_eq!(wrapper.arg_types, ["java.lang.String"]);
}

#[tokio::test]
async fn no_version_or_group_sends_no_placeholder() {
    let (addr, seen) = provider(Script::Answer(answer(vec![0x90], "int"), None)).await;
    let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Calc")).unwrap();
    let call = Invocation::new("zero", vec![], vec![]);
    let response = TripleProtocol::new(None).invoke(&url, &call).await.unwrap();
    assert_eq!(response.value(), Some(&Value::Int(0)));
    let (parts, _) = seen.lock().unwrap().remove(0);
    for absent in [
        "tri-service-version",
        "tri-service-group",
        "tri-consumer-appname",
    ] {
        assert!(parts.headers.get(absent).is_none(), "{absent} sent");
    }
}

#[tokio::test]
async fn a_tri_exception_code_answer_is_the_business_exception() {
    let bytes = include_bytes!("../wrapper/java_fail_response.bin");
    let thrown = TripleResponseWrapper::decode(&bytes[..]).unwrap();
    let (addr, _) = provider(Script::Answer(thrown, Some("3"))).await;
    let url = DubboUrl::parse(&format!("tri://{addr}/org.rudder.it.GreetingService")).unwrap();
    let response = TripleProtocol::new(None)
        .invoke(&url, &hello())
        .await
        .unwrap();
    let exception = response.exception().expect("a business exception");
    assert_eq!(exception.class, "org.rudder.it.GreetingException");
    assert_eq!(exception.message.as_deref(), Some("boom"));
}

#[tokio::test]
async fn statuses_become_rudder_error_kinds() {
    for (code, kind) in [
        ("14", RpcErrorKind::Network),
        ("4", RpcErrorKind::Timeout),
        ("12", RpcErrorKind::MethodNotFound),
        ("2", RpcErrorKind::Unknown),
    ] {
        let (addr, _) = provider(Script::Status(code, "scripted")).await;
        let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Calc?version=2.0.0")).unwrap();
        let error = TripleProtocol::new(None)
            .invoke(&url, &hello())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), kind, "grpc-status {code}: {error}");
    }
}

#[tokio::test]
async fn an_answer_over_payload_fails_its_call_only() {
    let (addr, _) = provider(Script::Oversized(4096)).await;
    let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Calc?payload=1024")).unwrap();
    let protocol = TripleProtocol::new(None);
    let error = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert!(error.message().contains("1024"), "{error}");
    assert_eq!(error.kind(), RpcErrorKind::Serialization, "{error}");
}

#[tokio::test]
async fn a_wrong_content_type_or_a_goaway_fails_only_its_call() {
    let (addr, _) = provider(Script::Answer(answer(vec![0x90], "int"), None)).await;
    let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Calc?timeout=3000")).unwrap();
    let protocol = TripleProtocol::new(None);
    let zero = Invocation::new("zero", vec![], vec![]);
    assert_eq!(
        protocol.invoke(&url, &zero).await.unwrap().value(),
        Some(&Value::Int(0))
    );

    let html = Invocation::new("html", vec![], vec![]);
    let error = protocol.invoke(&url, &html).await.unwrap_err();
    // Not an answer of the service: another provider may be tried.
    assert!(error.kind().is_retryable(), "{error}");
    assert!(error.message().contains("compression flag"), "{error}");
    // The same connection answers the next call.
    assert_eq!(
        protocol.invoke(&url, &zero).await.unwrap().value(),
        Some(&Value::Int(0))
    );

    let gone = Invocation::new("goAway", vec![], vec![]);
    let error = protocol.invoke(&url, &gone).await.unwrap_err();
    assert!(error.kind().is_retryable(), "{error}");
    assert!(error.message().contains("transport error"), "{error}");
    // A new connection answers the next call.
    assert_eq!(
        protocol.invoke(&url, &zero).await.unwrap().value(),
        Some(&Value::Int(0))
    );
}

#[tokio::test]
async fn a_request_over_payload_is_not_sent() {
    let (addr, seen) = provider(Script::Answer(answer(vec![0x90], "int"), None)).await;
    let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Calc?payload=256")).unwrap();
    let big = Invocation::new(
        "echo",
        vec!["java.lang.String".into()],
        vec![Value::from("x".repeat(1000))],
    );
    let protocol = TripleProtocol::new(None);
    let error = protocol.invoke(&url, &big).await.unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Serialization, "{error}");
    // The connection serves the next call.
    let small = Invocation::new("zero", vec![], vec![]);
    assert_eq!(
        protocol.invoke(&url, &small).await.unwrap().value(),
        Some(&Value::Int(0))
    );
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .all(|(_, body)| body.len() < 256));
}

#[tokio::test]
async fn connections_n_opens_n_connections_used_in_turn() {
    let (addr, seen) = provider(Script::Answer(answer(vec![0x90], "int"), None)).await;
    let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Calc?connections=3")).unwrap();
    let protocol = TripleProtocol::new(None);
    let call = Invocation::new("zero", vec![], vec![]);
    for _ in 0..6 {
        protocol.invoke(&url, &call).await.unwrap();
    }
    assert_eq!(protocol.open_connections(), 3);
    assert_eq!(seen.lock().unwrap().len(), 6);
    assert_eq!(protocol.retain_addresses(|_| false), 1);
    assert_eq!(protocol.open_connections(), 0);
}
