//! Decodes arbitrary bytes as one Hessian stream: values are read until the input ends or an error
//! occurs, with the default limits (but a small allowance, see below) and with small ones. A recipe input's body (up to 8 KiB, see
//! `body.rs`) is decoded with the small limits only: under the defaults it could decode to 10 MiB,
//! which is what the full-size tests in `tests/hessian/amplification.rs` cover, and would make every
//! such input cost milliseconds. Nothing may panic, hang or allocate without bound (libFuzzer's `-rss_limit_mb` and
//! `-malloc_limit_mb` catch the last); whatever decodes must encode again.
//!
//! Run: `bash scripts/fuzz.sh decode` (seeds in `seeds/decode`, flags in `options/decode`: small
//! inputs, `-max_len=8192`).
#![no_main]

mod body;

use libfuzzer_sys::fuzz_target;
use rudder_hessian::{DecodeLimits, Hessian2Reader, Hessian2Writer};

fuzz_target!(|data: &[u8]| {
    // Small limits too, so the limit paths are exercised as well as the defaults.
    let small = DecodeLimits {
        max_depth: 8,
        max_length: 64,
        max_ref_expansion: 256,
        max_decoded_bytes: 64 << 10,
        decoded_bytes_per_input_byte: 4,
        decoded_bytes_allowance: 4096,
    };
    // The default limits with a 64 KiB allowance instead of 8 MiB: the same code paths, but a
    // 200-byte reference bomb is refused after at most 64 KiB + 32 × its length of decoded values
    // instead of 8 MiB (half a second under ASan per input, which starved the run of executions).
    // The 8 MiB allowance itself is what tests/hessian/amplification.rs measures.
    let defaults = DecodeLimits {
        decoded_bytes_allowance: 64 << 10,
        ..DecodeLimits::default()
    };
    decode(data, defaults);
    decode(data, small);
    if let Some(body) = body::expand(data) {
        decode(&body, small);
    }
});

/// Reads values until the end or an error; whatever decodes must encode again.
fn decode(body: &[u8], limits: DecodeLimits) {
    let mut reader = Hessian2Reader::with_limits(body, limits);
    let mut writer = Hessian2Writer::new();
    while !reader.is_at_end() {
        match reader.read_value() {
            Ok(value) => writer.write_value(&value),
            Err(e) => {
                assert!(e.offset() <= body.len(), "offset past the input: {e}");
                break;
            }
        }
    }
}
