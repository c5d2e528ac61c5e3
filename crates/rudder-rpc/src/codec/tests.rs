//! Body codec tests against the captured Java exchanges (wire-protocols.md §2.5) and round trips.

use bytes::BytesMut;
use rudder_common::invocation::Invocation;
use rudder_common::value::{JavaException, Value};

use super::*;
use crate::response::{ResponseStatus, RpcResponse};

const SERVICE: &str = "org.apache.dubbo.demo.DemoService";
const DUBBO_ATTACHMENTS: &[u8] = b"\x48\x05dubbo\x052.0.2\x5a";

fn with_header(head: &[u8], body: &[u8]) -> Vec<u8> {
    [head, body].concat()
}

fn decode_one(bytes: &[u8]) -> Frame {
    let mut buf = BytesMut::from(bytes);
    let frame = FrameDecoder::new(DEFAULT_PAYLOAD_LIMIT)
        .decode(&mut buf)
        .unwrap()
        .expect("one whole frame");
    assert!(buf.is_empty(), "exactly one frame");
    frame
}

fn captured_say_hello() -> Vec<u8> {
    let body = [
        b"\x052.0.2\x30\x21".as_slice(),
        SERVICE.as_bytes(),
        b"\x052.0.0\x08sayHello\x12Ljava/lang/String;\x04rust",
        b"\x48\x04path\x30\x21",
        SERVICE.as_bytes(),
        b"\x09interface\x30\x21",
        SERVICE.as_bytes(),
        b"\x07version\x052.0.0\x07timeout\x043000\x5a",
    ]
    .concat();
    with_header(b"\xda\xbb\xc2\x00\0\0\0\0\0\0\0\x01\x00\x00\x00\xc2", &body)
}

fn target() -> ServiceTarget<'static> {
    ServiceTarget {
        path: SERVICE,
        interface: SERVICE,
        version: "2.0.0",
        group: None,
    }
}

fn say_hello() -> Invocation {
    Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("rust")],
    )
}

fn ok_response(frame: &Frame) -> RpcResponse {
    match decode_response(&frame.header, &frame.body).unwrap() {
        Answer::Ok(response) => response,
        other => panic!("expected an OK answer, got {other:?}"),
    }
}

#[test]
fn say_hello_request_matches_the_capture_byte_for_byte() {
    let bytes = encode_request(1, &target(), &say_hello(), 3000, DEFAULT_PAYLOAD_LIMIT).unwrap();
    assert_eq!(&bytes[..], &captured_say_hello()[..]);
}

#[test]
fn captured_request_decodes_on_the_provider_side() {
    let frame = decode_one(&captured_say_hello());
    assert!(frame.header.flags.is_request() && frame.header.flags.is_twoway());
    let req = decode_request(&frame.body).unwrap();
    assert_eq!(req.dubbo_version, "2.0.2");
    assert_eq!(req.invocation.method_name(), "sayHello");
    assert_eq!(req.invocation.parameter_types(), ["java.lang.String"]);
    assert_eq!(req.invocation.arguments(), [Value::from("rust")]);
    assert_eq!(req.invocation.attachment("path"), Some(SERVICE));
    assert_eq!(req.invocation.attachment("timeout"), Some("3000"));
    assert!(!req.invocation.is_generic());
}

#[test]
fn captured_response_decodes() {
    let body = [
        b"\x94\x30\x22Hello rust, from java hessian peer".as_slice(),
        DUBBO_ATTACHMENTS,
    ]
    .concat();
    let bytes = with_header(b"\xda\xbb\x02\x14\0\0\0\0\0\0\0\x01\x00\x00\x00\x33", &body);
    let frame = decode_one(&bytes);
    let response = ok_response(&frame);
    assert_eq!(
        response.value(),
        Some(&Value::from("Hello rust, from java hessian peer"))
    );
    assert_eq!(response.attachment("dubbo"), Some(&Value::from("2.0.2")));

    let outcome = Ok(Value::from("Hello rust, from java hessian peer"));
    let encoded = encode_response(
        1,
        &outcome,
        Some(&[("dubbo", "2.0.2")]),
        DEFAULT_PAYLOAD_LIMIT,
    )
    .unwrap();
    assert_eq!(&encoded[..], &bytes[..]);
}

#[test]
fn captured_get_user_decodes_to_an_object() {
    let body = [
        b"\x94\x43\x1aorg.apache.dubbo.demo.User\x92\x04name\x03age\x60\x05alice\xba".as_slice(),
        DUBBO_ATTACHMENTS,
    ]
    .concat();
    let mut head = *b"\xda\xbb\x02\x14\0\0\0\0\0\0\0\x02\0\0\0\0";
    head[15] = body.len() as u8;
    let response = ok_response(&decode_one(&with_header(&head, &body)));
    let user = response.value().unwrap();
    assert_eq!(user.get("name"), Some(&Value::from("alice")));
    assert_eq!(user.get("age"), Some(&Value::Int(42)));
}

#[test]
fn captured_boom_is_a_business_exception() {
    let body = [
        b"\x93\x43\x1fjava.lang.IllegalStateException\x94".as_slice(),
        b"\x0ddetailMessage\x05cause\x0astackTrace\x14suppressedExceptions",
        b"\x60\x0eboom from java\x51\x90",
        b"\x70\x1c[java.lang.StackTraceElement",
        b"\x70\x1fjava.util.Collections$EmptyList",
        DUBBO_ATTACHMENTS,
    ]
    .concat();
    let mut head = *b"\xda\xbb\x02\x14\0\0\0\0\0\0\0\x03\0\0\0\0";
    head[15] = body.len() as u8;
    let response = ok_response(&decode_one(&with_header(&head, &body)));
    let e = response.exception().expect("a business exception");
    assert_eq!(e.class, "java.lang.IllegalStateException");
    assert_eq!(e.message.as_deref(), Some("boom from java"));
    assert!(e.cause.is_none());
    assert!(response.value().is_none());
}

#[test]
fn heartbeat_exchange_matches_the_java_peer() {
    let request = b"\xda\xbb\xe2\x00\0\0\0\0\0\0\0\x63\0\0\0\x01\x4e";
    let frame = decode_one(request);
    assert!(frame.header.flags.is_event() && frame.header.flags.is_twoway());
    assert_eq!(event_name(&frame.body), None, "a heartbeat body is null");
    assert_eq!(&encode_heartbeat(0x63, true)[..], &request[..]);
    assert_eq!(
        &encode_heartbeat(0x63, false)[..],
        b"\xda\xbb\x22\x14\0\0\0\0\0\0\0\x63\0\0\0\x01\x4e"
    );
}

#[test]
fn readonly_event_is_named() {
    assert_eq!(event_name(b"\x01R").as_deref(), Some("R"));
}

#[test]
fn status_errors_carry_the_message() {
    let bytes = encode_status(5, ResponseStatus::ServerError, "oops", 1024).unwrap();
    let frame = decode_one(&bytes);
    assert_eq!(frame.header.status, 80);
    match decode_response(&frame.header, &frame.body).unwrap() {
        Answer::Status(e) => {
            assert_eq!(e.status(), ResponseStatus::ServerError);
            assert_eq!(e.message(), "oops");
        }
        other => panic!("{other:?}"),
    }
    // An unknown status byte with garbage for a body is still a status answer, not a panic.
    let mut head = frame.header;
    head.status = 77;
    match decode_response(&head, b"\xff").unwrap() {
        Answer::Status(e) => assert_eq!(e.status(), ResponseStatus::Unknown(77)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_response_kind_round_trips() {
    let boom = JavaException {
        class: "java.lang.RuntimeException".into(),
        message: Some("outer".into()),
        cause: Some(Box::new(JavaException {
            class: "java.io.IOException".into(),
            message: None,
            cause: None,
        })),
    };
    let outcomes = [Ok(Value::from(7)), Ok(Value::Null), Err(boom)];
    for attachments in [None, Some(&[("dubbo", "2.0.2")][..])] {
        for outcome in &outcomes {
            let bytes = encode_response(9, outcome, attachments, DEFAULT_PAYLOAD_LIMIT).unwrap();
            let response = ok_response(&decode_one(&bytes));
            assert_eq!(&response.clone().into_result(), outcome);
            assert_eq!(
                response.attachments().len(),
                usize::from(attachments.is_some())
            );
        }
    }
}

#[test]
fn unknown_response_flag_and_serialization_are_body_errors() {
    let frame = decode_one(&encode_response(1, &Ok(Value::Null), None, 64).unwrap());
    assert!(matches!(
        decode_response(&frame.header, b"\x99"),
        Err(BodyError::UnknownResponseFlag(9))
    ));
    let mut header = frame.header;
    header.flags = header::Flags::from_byte(0x17);
    assert!(matches!(
        decode_response(&header, &frame.body),
        Err(BodyError::UnsupportedSerialization(23))
    ));
}

#[test]
fn generic_call_round_trips() {
    let mut call = Invocation::new(
        "add",
        vec!["int".into(), "int".into()],
        vec![Value::Int(2), Value::Int(3)],
    )
    .into_generic();
    call.set_attachment("trace", "abc");
    let target = ServiceTarget {
        group: Some("blue"),
        ..target()
    };
    let frame =
        decode_one(&encode_request(4, &target, &call, 1000, DEFAULT_PAYLOAD_LIMIT).unwrap());
    assert!(frame
        .body
        .windows(GENERIC_DESC.len())
        .any(|w| w == GENERIC_DESC));
    let req = decode_request(&frame.body).unwrap();
    assert!(req.invocation.is_generic());
    assert_eq!(req.invocation.method_name(), "add");
    assert_eq!(req.invocation.wire_method_name(), "$invoke");
    assert_eq!(req.invocation.parameter_types(), ["int", "int"]);
    assert_eq!(req.invocation.arguments(), [Value::Int(2), Value::Int(3)]);
    for (k, v) in [
        ("generic", "true"),
        ("group", "blue"),
        ("trace", "abc"),
        ("timeout", "1000"),
    ] {
        assert_eq!(req.invocation.attachment(k), Some(v), "{k}");
    }
}

const GENERIC_DESC: &[u8] = b"Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;";

#[test]
fn response_attachments_depend_on_the_callers_version() {
    for (v, yes) in [
        ("2.0.2", true),
        ("2.0.99", true),
        ("2.0.0", false),
        ("2.0.100", false),
        ("3.0.0", false),
        ("", false),
    ] {
        assert_eq!(supports_response_attachments(v), yes, "{v}");
    }
}

#[test]
fn oversized_request_is_refused_by_the_encoder() {
    let big = Invocation::new(
        "echo",
        vec!["java.lang.String".into()],
        vec![Value::from("x".repeat(2000))],
    );
    let err = encode_request(1, &target(), &big, 1000, 1024).unwrap_err();
    assert!(matches!(err, FrameError::TooLong { limit: 1024, .. }));
}

#[test]
fn truncated_request_bodies_are_errors_not_panics() {
    let frame = decode_one(&captured_say_hello());
    for cut in 0..frame.body.len() - 1 {
        let _ = decode_request(&frame.body[..cut]);
    }
    assert!(decode_request(&frame.body[..40]).is_err());
}

#[test]
fn bare_null_body_from_sofa_rpc_node_is_a_null_value() {
    // sofa-rpc-node writes no response flag for a null result: the body is just `N`.
    let frame = decode_one(&with_header(
        b"\xda\xbb\x02\x14\0\0\0\0\0\0\0\x07\x00\x00\x00\x01",
        b"N",
    ));
    assert_eq!(ok_response(&frame).value(), Some(&Value::Null));
}
