//! Decodes arbitrary bytes, then converts every value read into a few representative serde types
//! (structs with `Option`, `Vec`, `HashMap`, enum and nested struct fields; `String`, `i64`,
//! `Vec<u8>`) and reads it as a Java exception. A conversion may fail; it may not panic, hang, or
//! allocate without bound.
//!
//! Work per input is bounded so the run explores many small inputs instead of a few big ones
//! (34 s once made 1,586 executions, a 200-byte reference bomb taking over a second): inputs are at
//! most 8 KiB (`options/from_value`), a recipe input's body (see `body.rs`) at most 8 KiB too, and
//! each body is read under the default limits but a 64 KiB allowance (as in `decode`), so whatever
//! decodes, and so gets converted, is at most 64 KiB + 32 × the body's length. The full-size hostile
//! bodies are the regression tests in `tests/hessian/amplification.rs`, which the budget refuses
//! before any value would reach a conversion; their shapes stay here as short recipe seeds.
//!
//! Run: `bash scripts/fuzz.sh from_value` (seeds in `seeds/from_value`, flags in
//! `options/from_value`: small inputs, `-max_len=8192`).
#![no_main]

mod body;

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use rudder_common::value::{from_value, JavaException, Value};
use rudder_hessian::{DecodeLimits, Hessian2Reader};
use serde::de::DeserializeOwned;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
enum Role {
    Admin,
    User,
    Guest,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
enum Shape {
    Point,
    Circle(f64),
    Rect { width: f64, height: f64 },
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Address {
    street: String,
    zip: Option<i32>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct User {
    name: String,
    age: i64,
    email: Option<String>,
    tags: Vec<String>,
    scores: HashMap<String, i64>,
    role: Role,
    home: Option<Address>,
    shapes: Vec<Shape>,
    avatar: Option<Vec<u8>>,
    active: bool,
    ratio: f64,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Page {
    items: Vec<User>,
    total: u32,
    next: Option<Box<Page>>,
}

fn convert<T: DeserializeOwned>(value: &Value) {
    let _ = from_value::<T>(value.clone());
}

/// Values converted per body: what matters is their shape, and a body of a million one-byte values
/// converted nine times each made one input take 12 s under ASan (the `decode` target covers
/// reading all of them).
const VALUES_PER_BODY: usize = 64;

fuzz_target!(|data: &[u8]| {
    // The default limits with a 64 KiB allowance instead of 8 MiB: the same code paths, but a short
    // body decodes to at most 64 KiB + 32 × its length, each value of which is converted nine times.
    let limits = DecodeLimits {
        decoded_bytes_allowance: 64 << 10,
        ..DecodeLimits::default()
    };
    for body in body::bodies(data) {
        let mut reader = Hessian2Reader::with_limits(&body, limits);
        for _ in 0..VALUES_PER_BODY {
            if reader.is_at_end() {
                break;
            }
            let Ok(value) = reader.read_value() else {
                break;
            };
            convert::<User>(&value);
            convert::<Page>(&value);
            convert::<Vec<User>>(&value);
            convert::<HashMap<String, Option<String>>>(&value);
            convert::<Shape>(&value);
            convert::<String>(&value);
            convert::<i64>(&value);
            convert::<Vec<u8>>(&value);
            let _ = JavaException::from_value(&value);
        }
    }
});
