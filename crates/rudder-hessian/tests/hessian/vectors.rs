//! Byte vectors captured from Java peers (wire-protocols.md 2.5), in both directions.

use rudder_common::value::{JavaException, Value};

use rudder_hessian::{Hessian2Reader, Hessian2Writer};

const SERVICE: &str = "org.apache.dubbo.demo.DemoService";

fn concat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn encode(value: &Value) -> Vec<u8> {
    let mut w = Hessian2Writer::new();
    w.write_value(value);
    w.into_bytes()
}

fn decode_one(bytes: &[u8]) -> Value {
    let mut r = Hessian2Reader::new(bytes);
    let v = r.read_value().expect("decodes");
    assert!(r.is_at_end(), "trailing bytes after {v:?}");
    v
}

fn dubbo_attachments() -> Vec<u8> {
    concat(&[b"\x48\x05dubbo\x052.0.2\x5a"])
}

fn say_hello_request() -> Vec<u8> {
    concat(&[
        b"\x052.0.2",
        b"\x30\x21",
        SERVICE.as_bytes(),
        b"\x052.0.0",
        b"\x08sayHello",
        b"\x12Ljava/lang/String;",
        b"\x04rust",
        b"\x48\x04path\x30\x21",
        SERVICE.as_bytes(),
        b"\x09interface\x30\x21",
        SERVICE.as_bytes(),
        b"\x07version\x052.0.0\x07timeout\x043000\x5a",
    ])
}

#[test]
fn request_body_matches_the_captured_bytes() {
    let mut w = Hessian2Writer::new();
    for header in ["2.0.2", SERVICE, "2.0.0", "sayHello", "Ljava/lang/String;"] {
        w.write_utf(header);
    }
    w.write_value(&Value::from("rust"));
    w.write_attachments([
        ("path", SERVICE),
        ("interface", SERVICE),
        ("version", "2.0.0"),
        ("timeout", "3000"),
    ]);
    let body = w.into_bytes();
    assert_eq!(body.len(), 0xc2, "body length in the captured header");
    assert_eq!(body, say_hello_request());
}

#[test]
fn request_body_decodes() {
    let body = say_hello_request();
    let mut r = Hessian2Reader::new(&body);
    let headers: Vec<String> = (0..5).map(|_| r.read_string().unwrap()).collect();
    assert_eq!(
        headers,
        ["2.0.2", SERVICE, "2.0.0", "sayHello", "Ljava/lang/String;"]
    );
    assert_eq!(r.read_value().unwrap(), Value::from("rust"));
    let attachments = r.read_value().unwrap();
    assert_eq!(
        attachments.get("path").and_then(Value::as_str),
        Some(SERVICE)
    );
    assert_eq!(
        attachments.get("timeout").and_then(Value::as_str),
        Some("3000")
    );
    assert!(r.is_at_end());
}

#[test]
fn response_body_round_trips() {
    let body = concat(&[
        b"\x94\x30\x22Hello rust, from java hessian peer",
        &dubbo_attachments(),
    ]);
    assert_eq!(body.len(), 0x33);
    let mut r = Hessian2Reader::new(&body);
    assert_eq!(r.read_int().unwrap(), 4);
    assert_eq!(
        r.read_string().unwrap(),
        "Hello rust, from java hessian peer"
    );
    let attachments = r.read_value().unwrap();
    assert_eq!(
        attachments,
        Value::map(vec![("dubbo".into(), "2.0.2".into())])
    );
    assert!(r.is_at_end());

    let mut w = Hessian2Writer::new();
    w.write_int(4);
    w.write_string("Hello rust, from java hessian peer");
    w.write_attachments([("dubbo", "2.0.2")]);
    assert_eq!(w.into_bytes(), body);
}

#[test]
fn get_user_class_definition_and_object() {
    let body = concat(&[
        b"\x94\x43\x1aorg.apache.dubbo.demo.User\x92\x04name\x03age\x60\x05alice\xba",
        &dubbo_attachments(),
    ]);
    let user = Value::Object {
        class: "org.apache.dubbo.demo.User".into(),
        fields: vec![
            ("name".into(), "alice".into()),
            ("age".into(), Value::Int(42)),
        ],
    };
    let mut r = Hessian2Reader::new(&body);
    assert_eq!(r.read_int().unwrap(), 4);
    assert_eq!(r.read_value().unwrap(), user);
    assert!(r.read_value().unwrap().get("dubbo").is_some());

    let mut w = Hessian2Writer::new();
    w.write_int(4);
    w.write_value(&user);
    w.write_attachments([("dubbo", "2.0.2")]);
    assert_eq!(w.into_bytes(), body);
}

#[test]
fn a_second_object_of_a_class_reuses_its_definition() {
    let user = |name: &str| Value::Object {
        class: "org.apache.dubbo.demo.User".into(),
        fields: vec![("name".into(), name.into())],
    };
    let list = Value::list(vec![user("a"), user("b")]);
    let bytes = encode(&list);
    assert_eq!(
        bytes,
        concat(&[b"\x7a\x43\x1aorg.apache.dubbo.demo.User\x91\x04name\x60\x01a\x60\x01b"])
    );
    assert_eq!(decode_one(&bytes), list);
}

/// The "boom" exception response, with its elided stack trace filled in by four frames.
fn boom_body() -> Vec<u8> {
    let frame = |method: &[u8], line: u8| -> Vec<u8> {
        concat(&[
            b"\x61\x17org.example.BoomService",
            method,
            b"\x10BoomService.java",
            &[line],
        ])
    };
    concat(&[
        b"\x93\x43\x1fjava.lang.IllegalStateException\x94",
        b"\x0ddetailMessage\x05cause\x0astackTrace\x14suppressedExceptions",
        b"\x60\x0eboom from java\x51\x90",
        b"\x74\x1c[java.lang.StackTraceElement",
        b"\x43\x1bjava.lang.StackTraceElement\x94",
        b"\x0edeclaringClass\x0amethodName\x08fileName\x0alineNumber",
        &frame(b"\x04boom", 0xa0),
        &frame(b"\x06invoke", 0xa1),
        &frame(b"\x03run", 0xa2),
        &frame(b"\x04main", 0xa3),
        b"\x70\x1fjava.util.Collections$EmptyList",
        &dubbo_attachments(),
    ])
}

#[test]
fn boom_exception_decodes_into_java_exception() {
    let body = boom_body();
    let mut r = Hessian2Reader::new(&body);
    assert_eq!(
        r.read_int().unwrap(),
        3,
        "RESPONSE_WITH_EXCEPTION_WITH_ATTACHMENTS"
    );
    let thrown = r.read_value().unwrap();
    assert_eq!(thrown.get("cause"), Some(&Value::Ref(0)), "cause is itself");
    let trace = thrown.get("stackTrace").unwrap();
    match trace {
        Value::List { type_name, items } => {
            assert_eq!(type_name.as_deref(), Some("[java.lang.StackTraceElement"));
            assert_eq!(items.len(), 4);
            assert_eq!(
                items[3].get("methodName").and_then(Value::as_str),
                Some("main")
            );
            assert_eq!(items[3].get("lineNumber"), Some(&Value::Int(19)));
        }
        other => panic!("stackTrace is {other:?}"),
    }
    assert_eq!(
        r.read_value().unwrap().get("dubbo").and_then(Value::as_str),
        Some("2.0.2")
    );
    assert!(r.is_at_end());

    let e = JavaException::from_value(&thrown).expect("a throwable");
    assert_eq!(e.class, "java.lang.IllegalStateException");
    assert_eq!(e.message.as_deref(), Some("boom from java"));
    assert!(e.cause.is_none());
    assert_eq!(
        e.to_string(),
        "java.lang.IllegalStateException: boom from java"
    );

    // Written back, the same tree gives the same bytes (self-reference and both class definitions).
    let mut w = Hessian2Writer::new();
    w.write_int(3);
    w.write_value(&thrown);
    w.write_attachments([("dubbo", "2.0.2")]);
    assert_eq!(w.into_bytes(), body);
}

#[test]
fn exception_with_a_distinct_cause_keeps_the_chain() {
    let inner = Value::Object {
        class: "java.io.IOException".into(),
        fields: vec![
            ("detailMessage".into(), "disk".into()),
            ("cause".into(), Value::Ref(1)),
        ],
    };
    let outer = Value::Object {
        class: "java.lang.RuntimeException".into(),
        fields: vec![
            ("detailMessage".into(), Value::Null),
            ("cause".into(), inner),
        ],
    };
    let decoded = decode_one(&encode(&outer));
    let e = JavaException::from_value(&decoded).unwrap();
    assert_eq!(e.message, None);
    let cause = e.cause.expect("a cause");
    assert_eq!(cause.class, "java.io.IOException");
    assert_eq!(cause.message.as_deref(), Some("disk"));
    assert!(cause.cause.is_none());
    assert!(JavaException::from_value(&Value::from("not one")).is_none());
}

#[test]
fn caucho_test_vectors() {
    let cases: Vec<(Value, &[u8])> = vec![
        (Value::from("é😀"), b"\x03\xc3\xa9\xed\xa0\xbd\xed\xb8\x80"),
        (Value::Long(1), b"\xe1"),
        (Value::Int(300), b"\xc9\x2c"),
        (Value::Double(2.5), b"\x5f\x00\x00\x09\xc4"),
        (Value::Date(0), b"\x4b\x00\x00\x00\x00"),
        (Value::list(vec!["a".into()]), b"\x79\x01\x61"),
        (Value::Binary(vec![1, 2]), b"\x22\x01\x02"),
        (Value::Bool(true), b"\x54"),
    ];
    for (value, bytes) in cases {
        assert_eq!(encode(&value), bytes, "encoding {value:?}");
        assert_eq!(decode_one(bytes), value, "decoding {bytes:02x?}");
    }
}

#[test]
fn attachments_take_a_reference_slot_like_any_java_map() {
    let mut w = Hessian2Writer::new();
    w.write_value(&Value::list(vec![]));
    w.write_attachments([("a", "b")]);
    assert_eq!(w.ref_count(), 2);
    w.write_value(&Value::Ref(1));
    let bytes = w.into_bytes();
    let mut r = Hessian2Reader::new(&bytes);
    r.read_value().unwrap();
    let attachments = r.read_value().unwrap();
    assert_eq!(
        r.read_value().unwrap(),
        attachments,
        "the reference expands to a copy"
    );
}
