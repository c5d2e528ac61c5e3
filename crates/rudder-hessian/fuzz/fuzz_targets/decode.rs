//! Decodes arbitrary bytes as one Hessian stream: values are read until the input ends or an error
//! occurs. Nothing may panic, hang or allocate without bound; whatever decodes must encode again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_hessian::{DecodeLimits, Hessian2Reader, Hessian2Writer};

fuzz_target!(|data: &[u8]| {
    // Small limits too, so the limit paths are exercised as well as the defaults.
    let small = DecodeLimits {
        max_depth: 8,
        max_length: 64,
        max_ref_expansion: 256,
    };
    for limits in [DecodeLimits::default(), small] {
        let mut reader = Hessian2Reader::with_limits(data, limits);
        let mut writer = Hessian2Writer::new();
        while !reader.is_at_end() {
            match reader.read_value() {
                Ok(value) => writer.write_value(&value),
                Err(e) => {
                    assert!(e.offset() <= data.len(), "offset past the input: {e}");
                    break;
                }
            }
        }
    }
});
