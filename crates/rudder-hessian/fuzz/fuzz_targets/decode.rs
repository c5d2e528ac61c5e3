//! Decodes arbitrary bytes as one Hessian stream: values are read until the input ends or an error
//! occurs. Nothing may panic, hang or allocate without bound (libFuzzer's `-rss_limit_mb` and
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
    for body in body::bodies(data) {
        for limits in [DecodeLimits::default(), small] {
            let mut reader = Hessian2Reader::with_limits(&body, limits);
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
    }
});
