//! Arbitrary bytes as a dubbo:// byte stream, delivered in arbitrary read sizes, with a small and
//! the default payload limit; every complete frame's body is decoded as a response and a request.
//! The input is also decoded as one response body under every kind of status. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_rpc::wire::{decode_response_body, decode_stream};

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(control & 0x3f) + 1;
    for limit in [64, 8 << 20] {
        decode_stream(rest, chunk, limit);
    }
    let status = [20, 30, 40, 70, 80, 100, control][usize::from(control >> 5) % 7];
    decode_response_body(0x02, status, rest);
});
