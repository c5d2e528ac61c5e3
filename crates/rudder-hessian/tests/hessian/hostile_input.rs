//! Truncated, malformed and malicious input: always an error with an offset, never a panic.

use rudder_common::value::Value;

use rudder_hessian::{DecodeError, DecodeLimits, Hessian2Reader, Hessian2Writer};

fn read_all(bytes: &[u8]) -> Result<Vec<Value>, DecodeError> {
    let mut r = Hessian2Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_at_end() {
        out.push(r.read_value()?);
    }
    Ok(out)
}

fn first_error(bytes: &[u8]) -> DecodeError {
    read_all(bytes).expect_err("must not decode")
}

fn rich_value() -> Value {
    let user = |name: &str| Value::Object {
        class: "org.example.User".into(),
        fields: vec![
            ("name".into(), name.into()),
            ("age".into(), Value::Int(300_000)),
            (
                "tags".into(),
                Value::List {
                    type_name: Some("[java.lang.String".into()),
                    items: vec!["é😀".into(); 9],
                },
            ),
        ],
    };
    Value::map(vec![
        (
            "users".into(),
            Value::list(vec![user("a"), user("b"), Value::Ref(0)]),
        ),
        ("long".into(), Value::Long(-(1 << 40))),
        ("double".into(), Value::Double(0.1)),
        ("date".into(), Value::Date(1_700_000_000_123)),
        ("bytes".into(), Value::Binary(vec![7; 1_500])),
        ("text".into(), Value::from("z".repeat(1_500))),
        (
            "typed".into(),
            Value::Map {
                type_name: Some("java.util.TreeMap".into()),
                entries: vec![(Value::Bool(true), Value::Null)],
            },
        ),
    ])
}

#[test]
fn every_prefix_of_a_value_is_an_error() {
    let mut samples = vec![
        rich_value(),
        Value::Int(-262145),
        Value::Long(1 << 40),
        Value::Date(1),
    ];
    samples.push(Value::Double(std::f64::consts::E));
    for value in samples {
        let mut w = Hessian2Writer::new();
        w.write_value(&value);
        let bytes = w.into_bytes();
        assert_eq!(read_all(&bytes).unwrap(), vec![value.clone()]);
        for len in 0..bytes.len() {
            assert_prefix_fails(&bytes, len);
        }
    }
}

fn assert_prefix_fails(bytes: &[u8], len: usize) {
    let e = Hessian2Reader::new(&bytes[..len])
        .read_value()
        .expect_err("a strict prefix must not decode");
    assert!(e.offset() <= len, "prefix {len}: {e}");
}

/// Chunked strings and binaries are large, so only prefixes near their chunk headers are tried.
#[test]
fn prefixes_of_chunked_values_are_errors() {
    for value in [
        Value::from("é".repeat(40_000)),
        Value::Binary(vec![1; 70_000]),
    ] {
        let mut w = Hessian2Writer::new();
        w.write_value(&value);
        let bytes = w.into_bytes();
        let near = |at: usize| at.saturating_sub(4)..(at + 4).min(bytes.len());
        let lengths = near(0)
            .chain(near(32_771))
            .chain(near(65_539))
            .chain(near(80_003));
        for len in lengths.chain((0..bytes.len()).step_by(997)) {
            assert_prefix_fails(&bytes, len);
        }
    }
}

#[test]
fn truncation_is_reported_as_such() {
    let e = first_error(b"S\x00\x05ab");
    assert!(e.is_truncation(), "{e}");
    assert_eq!(e.offset(), 5);
    assert!(first_error(b"\xc9").is_truncation());
    assert!(first_error(b"H\x01a").is_truncation());
    assert!(first_error(b"B\xff\xff\x01").is_truncation());
}

#[test]
fn unknown_tags_are_named_with_their_offset() {
    assert_eq!(
        first_error(b"Z"),
        DecodeError::UnknownTag {
            tag: b'Z',
            offset: 0
        }
    );
    assert_eq!(
        first_error(b"\x90\x40"),
        DecodeError::UnknownTag {
            tag: 0x40,
            offset: 1
        }
    );
    assert!(matches!(
        first_error(b"X\x01"),
        DecodeError::UnexpectedTag {
            tag: 0x01,
            offset: 1,
            ..
        }
    ));
}

#[test]
fn hostile_lengths_fail_before_allocating() {
    // Two billion list items declared, none present.
    assert!(matches!(
        first_error(b"XI\x7f\xff\xff\xff"),
        DecodeError::LengthOverLimit {
            what: "list",
            len: 2_147_483_647,
            ..
        }
    ));
    assert!(matches!(
        first_error(b"X\x8f"),
        DecodeError::LengthOverLimit { len: -1, .. }
    ));
    assert!(matches!(
        first_error(b"C\x01xI\x7f\xff\xff\xff"),
        DecodeError::LengthOverLimit {
            what: "class definition",
            ..
        }
    ));
    // Nested fixed lists each claiming everything left must not preallocate per level.
    let mut nested = Vec::new();
    for _ in 0..100 {
        nested.extend_from_slice(b"XI\x00\x00\x01\x00");
    }
    nested.resize(nested.len() + 400, b'N');
    assert!(read_all(&nested).is_err());
}

#[test]
fn configured_length_limit_applies_to_strings_binaries_and_lists() {
    let limits = DecodeLimits {
        max_length: 10,
        ..DecodeLimits::default()
    };
    for bytes in [
        b"\x0bxxxxxxxxxxx".as_slice(),
        b"\x2b\0\0\0\0\0\0\0\0\0\0\0",
        b"X\x9bNNNNNNNNNNN",
    ] {
        let e = Hessian2Reader::with_limits(bytes, limits)
            .read_value()
            .unwrap_err();
        assert!(
            matches!(e, DecodeError::LengthOverLimit { limit: 10, .. }),
            "{e}"
        );
    }
}

#[test]
fn depth_is_limited_without_exhausting_the_stack() {
    let mut ok = vec![0x79u8; 127];
    ok.push(b'N');
    assert!(read_all(&ok).is_ok());

    let deep = vec![b'H'; 1_000_000];
    assert_eq!(
        first_error(&deep),
        DecodeError::TooDeep {
            limit: 128,
            offset: 128
        }
    );
    let limits = DecodeLimits {
        max_depth: 3,
        ..DecodeLimits::default()
    };
    let e = Hessian2Reader::with_limits(b"\x79\x79\x79\x79N", limits)
        .read_value()
        .unwrap_err();
    assert_eq!(
        e,
        DecodeError::TooDeep {
            limit: 3,
            offset: 3
        }
    );
}

#[test]
fn bad_references_are_rejected() {
    assert_eq!(
        first_error(b"Q\x90"),
        DecodeError::BadRef {
            index: 0,
            count: 0,
            offset: 0
        }
    );
    assert_eq!(
        first_error(b"\x79Q\x91"),
        DecodeError::BadRef {
            index: 1,
            count: 1,
            offset: 1
        }
    );
    assert!(matches!(
        first_error(b"Q\x8f"),
        DecodeError::BadRef { index: -1, .. }
    ));
    assert_eq!(
        first_error(b"\x60"),
        DecodeError::BadClassRef {
            index: 0,
            count: 0,
            offset: 0
        }
    );
    assert_eq!(
        first_error(b"O\xa0"),
        DecodeError::BadClassRef {
            index: 16,
            count: 0,
            offset: 0
        }
    );
    assert_eq!(
        first_error(b"\x70\x95"),
        DecodeError::BadTypeRef {
            index: 5,
            count: 0,
            offset: 1
        }
    );
    assert!(matches!(
        first_error(b"C\x00\x90\x60"),
        DecodeError::InvalidClassDef { offset: 0, .. }
    ));
    assert!(matches!(
        first_error(b"C\x01x\x91\x90"),
        DecodeError::UnexpectedTag { .. }
    ));
}

#[test]
fn invalid_string_bytes_are_rejected() {
    assert_eq!(
        first_error(b"\x01\x80"),
        DecodeError::InvalidString {
            byte: 0x80,
            offset: 1
        }
    );
    assert_eq!(
        first_error(b"\x01\xff"),
        DecodeError::InvalidString {
            byte: 0xff,
            offset: 1
        }
    );
}

/// Each list holds two references to the one before: 2^40 copies from a few hundred bytes.
#[test]
fn reference_bombs_hit_the_expansion_limit() {
    let mut bomb = vec![b'X', 0xb9, 0x79, 0x90];
    let mut w = Hessian2Writer::new();
    for i in 1..41 {
        w.write_value(&Value::list(vec![Value::Ref(i), Value::Ref(i)]));
    }
    bomb.extend_from_slice(w.as_bytes());
    // With room in the memory budget, the expansion limit is what stops it...
    let limits = DecodeLimits {
        max_ref_expansion: 1 << 20,
        decoded_bytes_allowance: 1 << 30,
        max_decoded_bytes: 1 << 30,
        ..DecodeLimits::default()
    };
    let e = Hessian2Reader::with_limits(&bomb, limits)
        .read_value()
        .unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::RefExpansionOverLimit {
                limit: 1_048_576,
                ..
            }
        ),
        "{e}"
    );
    // ...and with the defaults the copies exhaust the budget first.
    let e = Hessian2Reader::new(&bomb).read_value().unwrap_err();
    assert!(matches!(e, DecodeError::BudgetExceeded { .. }), "{e}");

    // Six levels are small enough to expand: the last holds 2^6 copies of the first.
    let mut small = vec![0x7f, 0x79, 0x90];
    small.extend_from_slice(&w.as_bytes()[..5 * 6]);
    let Value::List { items, .. } = read_all(&small).unwrap().remove(0) else {
        panic!("not a list");
    };
    let mut level = &items[6];
    let mut doublings = 0;
    while let Value::List { items, .. } = level {
        if items.len() != 2 {
            break;
        }
        assert_eq!(items[0], items[1]);
        level = &items[0];
        doublings += 1;
    }
    assert_eq!(doublings, 6);
    assert_eq!(level, &Value::list(vec![Value::Int(0)]));
}

#[test]
fn a_reader_is_usable_for_several_values_until_the_end() {
    let mut r = Hessian2Reader::new(b"\x91\x02ab");
    assert_eq!(r.read_int().unwrap(), 1);
    assert_eq!(r.position(), 1);
    assert_eq!(r.read_string().unwrap(), "ab");
    assert!(r.is_at_end());
    assert!(r.read_value().unwrap_err().is_truncation());
    assert!(matches!(
        Hessian2Reader::new(b"N").read_string(),
        Err(DecodeError::UnexpectedTag { tag: b'N', .. })
    ));
}
