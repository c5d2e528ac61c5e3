//! The wrapper messages against bytes a Java Dubbo 3.3.6 provider (it/java-provider, exported over
//! tri://) actually sent and accepted, captured once with curl on loopback.

use prost::Message;
use rudder_common::invocation::Invocation;
use rudder_common::value::Value;
use rudder_hessian::DecodeLimits;

use super::*;

fn limits() -> DecodeLimits {
    DecodeLimits::for_payload(8 << 20)
}

/// `sayHello("rust")` as Java accepted it (and a plain grpcio client sent it):
/// `0a 08 "hessian4" 12 05 04 "rust" 1a 10 "java.lang.String"`.
#[test]
fn a_request_wrapper_is_byte_for_byte_what_java_accepts() {
    let call = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("rust")],
    );
    let mut expected = vec![0x0a, 0x08];
    expected.extend_from_slice(b"hessian4");
    expected.extend_from_slice(&[0x12, 0x05, 0x04]);
    expected.extend_from_slice(b"rust");
    expected.extend_from_slice(&[0x1a, 0x10]);
    expected.extend_from_slice(b"java.lang.String");
    assert_eq!(request_wrapper(&call).encode_to_vec(), expected);
}

#[test]
fn each_argument_is_its_own_hessian_stream() {
    let call = Invocation::new(
        "add",
        vec!["int".into(), "int".into()],
        vec![Value::Int(2), Value::Int(3)],
    );
    let wrapper = request_wrapper(&call);
    assert_eq!(wrapper.args, vec![vec![0x92], vec![0x93]]);
    assert_eq!(wrapper.arg_types, vec!["int", "int"]);
}

#[test]
fn a_generic_call_wraps_method_types_and_arguments() {
    let call = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("x")],
    )
    .into_generic();
    let wrapper = request_wrapper(&call);
    assert_eq!(wrapper.args.len(), 3);
    assert_eq!(wrapper.args[0], [&[0x08][..], b"sayHello"].concat());
    assert_eq!(
        wrapper.arg_types,
        [
            "java.lang.String",
            "[Ljava.lang.String;",
            "[Ljava.lang.Object;"
        ]
    );
}

/// Java's answer to `sayHello("rust")` from the provider named java-25051.
const JAVA_SAY_HELLO: &[u8] = &[
    0x0a, 0x08, 0x68, 0x65, 0x73, 0x73, 0x69, 0x61, 0x6e, 0x34, 0x12, 0x1c, 0x1b, 0x48, 0x65, 0x6c,
    0x6c, 0x6f, 0x20, 0x72, 0x75, 0x73, 0x74, 0x2c, 0x20, 0x66, 0x72, 0x6f, 0x6d, 0x20, 0x6a, 0x61,
    0x76, 0x61, 0x2d, 0x32, 0x35, 0x30, 0x35, 0x31, 0x1a, 0x10, 0x6a, 0x61, 0x76, 0x61, 0x2e, 0x6c,
    0x61, 0x6e, 0x67, 0x2e, 0x53, 0x74, 0x72, 0x69, 0x6e, 0x67,
];
/// Java's answer to `add(2, 3)`: `data` is hessian2 `0x95` (5), `type` is `int`.
const JAVA_ADD: &[u8] = &[
    0x0a, 0x08, 0x68, 0x65, 0x73, 0x73, 0x69, 0x61, 0x6e, 0x34, 0x12, 0x01, 0x95, 0x1a, 0x03, 0x69,
    0x6e, 0x74,
];

#[test]
fn java_response_wrappers_decode_to_their_values() {
    let hello = TripleResponseWrapper::decode(JAVA_SAY_HELLO).unwrap();
    assert_eq!(hello.r#type, "java.lang.String");
    assert_eq!(
        response_value(&hello, limits()).unwrap(),
        Value::from("Hello rust, from java-25051")
    );
    let sum = TripleResponseWrapper::decode(JAVA_ADD).unwrap();
    assert_eq!(
        (sum.serialize_type.as_str(), sum.r#type.as_str()),
        (HESSIAN4, "int")
    );
    assert_eq!(response_value(&sum, limits()).unwrap(), Value::Int(5));
}

/// Java's answer to `fail("boom")` (sent with header `tri-exception-code: 3` and grpc-status 0): the
/// serialized `GreetingException`, stack trace and all.
#[test]
fn a_java_exception_answer_decodes_to_the_exception() {
    let bytes = include_bytes!("java_fail_response.bin");
    let wrapper = TripleResponseWrapper::decode(&bytes[..]).unwrap();
    let exception = response_exception(&wrapper, limits()).unwrap();
    assert_eq!(exception.class, "org.rudder.it.GreetingException");
    assert_eq!(exception.message.as_deref(), Some("boom"));
}

#[test]
fn hostile_answers_fail_cleanly() {
    // A hessian2 list claiming 2^31 elements in a few bytes: the decode budget refuses it.
    let huge = TripleResponseWrapper {
        serialize_type: HESSIAN4.into(),
        data: vec![0x56, 0x91, 0xd7, 0xff, 0xff, 0xff],
        r#type: String::new(),
    };
    assert!(matches!(
        response_value(&huge, limits()),
        Err(WrapperError::Hessian(_))
    ));
    let json = TripleResponseWrapper {
        serialize_type: "fastjson2".into(),
        data: b"1".to_vec(),
        r#type: "int".into(),
    };
    assert_eq!(
        response_value(&json, limits()),
        Err(WrapperError::Serialization("fastjson2".into()))
    );
    // A truncated protobuf message is a decode error, not a panic or a partial value.
    assert!(TripleResponseWrapper::decode(&JAVA_SAY_HELLO[..20]).is_err());
    let empty = TripleResponseWrapper::default();
    assert_eq!(response_value(&empty, limits()).unwrap(), Value::Null);
}

#[test]
fn java_class_names_are_class_get_name() {
    for (source, name) in [
        ("int", "int"),
        ("java.lang.String", "java.lang.String"),
        ("java.lang.String[]", "[Ljava.lang.String;"),
        ("int[][]", "[[I"),
        ("java.util.List<java.lang.String>", "java.util.List"),
        ("[Ljava.lang.Object;", "[Ljava.lang.Object;"),
    ] {
        assert_eq!(java_class_name(source), name, "{source}");
    }
}

/// Every truncation and every single-byte corruption of Java's answers decodes to a value or a clean
/// error, never a panic (the fuzz target's job in miniature, deterministic).
#[test]
fn corrupted_java_answers_never_panic() {
    let fail = include_bytes!("java_fail_response.bin");
    for sample in [JAVA_SAY_HELLO, JAVA_ADD, &fail[..]] {
        let read = |bytes: &[u8]| {
            if let Ok(wrapper) = TripleResponseWrapper::decode(bytes) {
                let _ = response_value(&wrapper, limits());
                let _ = response_exception(&wrapper, limits());
            }
        };
        for end in 0..sample.len().min(600) {
            read(&sample[..end]);
        }
        let mut corrupted = sample.to_vec();
        for at in 0..sample.len().min(600) {
            for bits in [0x01, 0x80, 0xff] {
                corrupted[at] ^= bits;
                read(&corrupted);
                corrupted[at] ^= bits;
            }
        }
    }
}
