//! Every compact-form boundary, checked byte for byte in both directions.

use rudder_common::value::Value;

use rudder_hessian::{Hessian2Reader, Hessian2Writer};

fn encode(value: &Value) -> Vec<u8> {
    let mut w = Hessian2Writer::new();
    w.write_value(value);
    w.into_bytes()
}

fn decode(bytes: &[u8]) -> Value {
    let mut r = Hessian2Reader::new(bytes);
    let v = r.read_value().expect("decodes");
    assert!(r.is_at_end(), "trailing bytes after {v:?}");
    v
}

/// Asserts `value` encodes to exactly `bytes` and decodes back.
fn check(value: Value, bytes: &[u8]) {
    assert_eq!(encode(&value), bytes, "encoding {value:?}");
    assert_eq!(decode(bytes), value, "decoding {bytes:02x?}");
}

#[test]
fn int_boundaries() {
    check(Value::Int(0), &[0x90]);
    check(Value::Int(-16), &[0x80]);
    check(Value::Int(47), &[0xbf]);
    check(Value::Int(-17), &[0xc7, 0xef]);
    check(Value::Int(48), &[0xc8, 0x30]);
    check(Value::Int(-2048), &[0xc0, 0x00]);
    check(Value::Int(2047), &[0xcf, 0xff]);
    check(Value::Int(-2049), &[0xd3, 0xf7, 0xff]);
    check(Value::Int(2048), &[0xd4, 0x08, 0x00]);
    check(Value::Int(-262144), &[0xd0, 0x00, 0x00]);
    check(Value::Int(262143), &[0xd7, 0xff, 0xff]);
    check(Value::Int(-262145), &[b'I', 0xff, 0xfb, 0xff, 0xff]);
    check(Value::Int(262144), &[b'I', 0x00, 0x04, 0x00, 0x00]);
    check(Value::Int(i32::MIN), &[b'I', 0x80, 0, 0, 0]);
    check(Value::Int(i32::MAX), &[b'I', 0x7f, 0xff, 0xff, 0xff]);
}

#[test]
fn long_boundaries() {
    check(Value::Long(0), &[0xe0]);
    check(Value::Long(-8), &[0xd8]);
    check(Value::Long(15), &[0xef]);
    check(Value::Long(-9), &[0xf7, 0xf7]);
    check(Value::Long(16), &[0xf8, 0x10]);
    check(Value::Long(-2048), &[0xf0, 0x00]);
    check(Value::Long(2047), &[0xff, 0xff]);
    check(Value::Long(-2049), &[0x3b, 0xf7, 0xff]);
    check(Value::Long(2048), &[0x3c, 0x08, 0x00]);
    check(Value::Long(-262144), &[0x38, 0x00, 0x00]);
    check(Value::Long(262143), &[0x3f, 0xff, 0xff]);
    check(Value::Long(-262145), &[0x59, 0xff, 0xfb, 0xff, 0xff]);
    check(Value::Long(262144), &[0x59, 0x00, 0x04, 0x00, 0x00]);
    check(Value::Long(i32::MIN.into()), &[0x59, 0x80, 0, 0, 0]);
    check(
        Value::Long(i32::MAX.into()),
        &[0x59, 0x7f, 0xff, 0xff, 0xff],
    );
    check(
        Value::Long(i64::from(i32::MAX) + 1),
        &[b'L', 0, 0, 0, 0, 0x80, 0, 0, 0],
    );
    check(
        Value::Long(i64::from(i32::MIN) - 1),
        &[b'L', 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff],
    );
    check(Value::Long(i64::MIN), &[b'L', 0x80, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn double_forms() {
    check(Value::Double(0.0), &[0x5b]);
    check(Value::Double(1.0), &[0x5c]);
    check(Value::Double(127.0), &[0x5d, 0x7f]);
    check(Value::Double(-128.0), &[0x5d, 0x80]);
    check(Value::Double(128.0), &[0x5e, 0x00, 0x80]);
    check(Value::Double(-129.0), &[0x5e, 0xff, 0x7f]);
    check(Value::Double(32767.0), &[0x5e, 0x7f, 0xff]);
    check(Value::Double(-32768.0), &[0x5e, 0x80, 0x00]);
    // Past a short, a whole number is a whole number of thousandths.
    check(Value::Double(32768.0), &[0x5f, 0x01, 0xf4, 0x00, 0x00]);
    // A float value such as 1.5f is exact in thousandths.
    check(
        Value::Double(f64::from(1.5f32)),
        &[0x5f, 0x00, 0x00, 0x05, 0xdc],
    );
    check(Value::Double(-2.5), &[0x5f, 0xff, 0xff, 0xf6, 0x3c]);
    let pi = std::f64::consts::PI;
    let mut expected = vec![b'D'];
    expected.extend_from_slice(&pi.to_bits().to_be_bytes());
    check(Value::Double(pi), &expected);
    // Too big for int mills.
    let mut expected = vec![b'D'];
    expected.extend_from_slice(&1e10f64.to_bits().to_be_bytes());
    check(Value::Double(1e10), &expected);
}

#[test]
fn double_oddities_follow_java() {
    // Java's (int) cast makes -0.0 a zero.
    assert_eq!(encode(&Value::Double(-0.0)), [0x5b]);
    let nan = encode(&Value::Double(f64::NAN));
    assert_eq!(nan[0], b'D');
    assert!(matches!(decode(&nan), Value::Double(d) if d.is_nan()));
    assert_eq!(encode(&Value::Double(f64::INFINITY))[0], b'D');
}

#[test]
fn date_forms() {
    check(Value::Date(0), &[0x4b, 0, 0, 0, 0]);
    check(Value::Date(60_000), &[0x4b, 0, 0, 0, 1]);
    check(Value::Date(-60_000), &[0x4b, 0xff, 0xff, 0xff, 0xff]);
    check(Value::Date(1), &[0x4a, 0, 0, 0, 0, 0, 0, 0, 1]);
    let far = 60_000 * (i64::from(i32::MAX) + 1);
    let mut expected = vec![0x4a];
    expected.extend_from_slice(&far.to_be_bytes());
    check(Value::Date(far), &expected);
}

fn string_of(units: usize) -> String {
    "x".repeat(units)
}

fn with_header(header: &[u8], body: &str) -> Vec<u8> {
    [header, body.as_bytes()].concat()
}

#[test]
fn string_length_forms() {
    check(Value::from(""), &[0x00]);
    check(
        Value::from(string_of(31)),
        &with_header(&[0x1f], &string_of(31)),
    );
    check(
        Value::from(string_of(32)),
        &with_header(&[0x30, 0x20], &string_of(32)),
    );
    check(
        Value::from(string_of(1023)),
        &with_header(&[0x33, 0xff], &string_of(1023)),
    );
    check(
        Value::from(string_of(1024)),
        &with_header(b"S\x04\x00", &string_of(1024)),
    );
    check(
        Value::from(string_of(32768)),
        &with_header(b"S\x80\x00", &string_of(32768)),
    );
}

#[test]
fn long_strings_are_chunked_at_32768_units() {
    let s = string_of(32769);
    let expected = [b"R\x80\x00".as_slice(), &s.as_bytes()[..32768], b"\x01x"].concat();
    check(Value::from(s), &expected);

    let s = string_of(70_000);
    let tail = 70_000 - 2 * 32768;
    let expected = [
        b"R\x80\x00".as_slice(),
        &s.as_bytes()[..32768],
        b"R\x80\x00",
        &s.as_bytes()[32768..65536],
        &[b'S', (tail >> 8) as u8, tail as u8],
        &s.as_bytes()[65536..],
    ]
    .concat();
    check(Value::from(s), &expected);
}

#[test]
fn a_chunk_never_ends_between_surrogates() {
    // The pair would occupy units 32767 and 32768: Java shortens the chunk to 32767 units.
    let s = format!("{}😀{}", string_of(32767), string_of(10));
    let expected = [
        b"R\x7f\xff".as_slice(),
        string_of(32767).as_bytes(),
        &[0x0c, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80],
        string_of(10).as_bytes(),
    ]
    .concat();
    check(Value::from(s), &expected);
}

#[test]
fn string_lengths_count_utf16_units() {
    // Two units for the emoji, one each for é and ü.
    check(
        Value::from("😀"),
        &[0x02, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80],
    );
    check(Value::from("éü"), &[0x02, 0xc3, 0xa9, 0xc3, 0xbc]);
    check(Value::from("\0"), &[0x01, 0x00]);
    check(Value::from("€"), &[0x01, 0xe2, 0x82, 0xac]);
}

#[test]
fn lone_and_split_surrogates_decode_leniently() {
    // A lone high surrogate, and a lone low one, become U+FFFD.
    assert_eq!(
        decode(&[0x02, 0xed, 0xa0, 0xbd, b'x']),
        Value::from("\u{fffd}x")
    );
    assert_eq!(decode(&[0x01, 0xed, 0xb8, 0x80]), Value::from("\u{fffd}"));
    assert_eq!(decode(&[0x01, 0xed, 0xa0, 0xbd]), Value::from("\u{fffd}"));
    // A pair split across chunks by a non-Java writer still combines.
    let split = [b"R\x00\x01\xed\xa0\xbd".as_slice(), b"\x01\xed\xb8\x80"].concat();
    assert_eq!(decode(&split), Value::from("😀"));
    // Four-byte UTF-8 from non-Java writers counts as two units.
    assert_eq!(decode(&[0x02, 0xf0, 0x9f, 0x98, 0x80]), Value::from("😀"));
}

#[test]
fn binary_forms() {
    let bin = |n: usize| (0..n).map(|i| i as u8).collect::<Vec<u8>>();
    let with = |header: &[u8], n: usize| [header, &bin(n)].concat();
    check(Value::Binary(vec![]), &[0x20]);
    check(Value::Binary(bin(15)), &with(&[0x2f], 15));
    check(Value::Binary(bin(16)), &with(&[0x34, 0x10], 16));
    check(Value::Binary(bin(1023)), &with(&[0x37, 0xff], 1023));
    check(Value::Binary(bin(1024)), &with(b"B\x04\x00", 1024));
    check(Value::Binary(bin(32768)), &with(b"B\x80\x00", 32768));
    let big = bin(32769);
    let expected = [b"A\x80\x00".as_slice(), &big[..32768], &[0x21, big[32768]]].concat();
    check(Value::Binary(big), &expected);
}

#[test]
fn list_forms() {
    let ints = |n: i32| (0..n).map(Value::Int).collect::<Vec<_>>();
    let body = |n: i32| (0..n).map(|i| 0x90 + i as u8).collect::<Vec<_>>();
    check(Value::list(vec![]), &[0x78]);
    check(
        Value::list(ints(7)),
        &[[0x7f].as_slice(), &body(7)].concat(),
    );
    check(
        Value::list(ints(8)),
        &[[b'X', 0x98].as_slice(), &body(8)].concat(),
    );
    let typed = |n: i32| Value::List {
        type_name: Some("[int".into()),
        items: ints(n),
    };
    check(typed(0), b"\x70\x04[int");
    check(typed(7), &[b"\x77\x04[int".as_slice(), &body(7)].concat());
    check(typed(8), &[b"V\x04[int\x98".as_slice(), &body(8)].concat());
}

#[test]
fn a_repeated_type_name_is_written_as_its_index() {
    let typed = || Value::List {
        type_name: Some("[int".into()),
        items: vec![],
    };
    let outer = Value::list(vec![typed(), typed()]);
    check(outer, b"\x7a\x70\x04[int\x70\x90");
}

#[test]
fn variable_length_lists_decode() {
    assert_eq!(
        decode(b"W\x91\x92Z"),
        Value::list(vec![Value::Int(1), Value::Int(2)])
    );
    assert_eq!(
        decode(b"U\x04[intZ"),
        Value::List {
            type_name: Some("[int".into()),
            items: vec![],
        }
    );
}

#[test]
fn map_forms() {
    check(Value::map(vec![]), b"HZ");
    check(
        Value::map(vec![
            (Value::Int(1), "a".into()),
            (Value::Null, Value::Bool(false)),
        ]),
        b"H\x91\x01aNFZ",
    );
    check(
        Value::Map {
            type_name: Some("java.util.TreeMap".into()),
            entries: vec![("k".into(), Value::Long(1))],
        },
        b"M\x11java.util.TreeMap\x01k\xe1Z",
    );
}

#[test]
fn the_seventeenth_class_uses_the_long_object_form() {
    let objects: Vec<Value> = (0..17)
        .map(|i| Value::Object {
            class: format!("c{i:02}").into(),
            fields: vec![],
        })
        .collect();
    let bytes = encode(&Value::list(objects.clone()));
    let tail = &bytes[bytes.len() - 8..];
    // C "c16" 0 fields, then O with definition index 16.
    assert_eq!(tail, b"C\x03c16\x90O\xa0");
    assert_eq!(decode(&bytes), Value::list(objects));
}

#[test]
fn references_to_finished_values_become_copies() {
    // [ {1: 2}, Q(1) ]: the map is value #1 (the list is #0).
    let shared = Value::map(vec![(Value::Int(1), Value::Int(2))]);
    assert_eq!(
        decode(b"\x7aH\x91\x92ZQ\x91"),
        Value::list(vec![shared.clone(), shared])
    );
}

#[test]
fn references_across_values_of_one_stream() {
    let mut r = Hessian2Reader::new(b"\x79\x01aQ\x90");
    let first = r.read_value().unwrap();
    assert_eq!(r.read_value().unwrap(), first);
}

#[test]
fn a_cycle_becomes_a_ref() {
    // A list that contains itself.
    check(Value::list(vec![Value::Ref(0)]), b"\x79Q\x90");
}
