//! Arbitrary bytes as a gRPC response body (length-prefixed messages) in arbitrary DATA frame sizes,
//! ended by trailers with an arbitrary `grpc-status`, read through tonic's framing with rudder's
//! wrapper decoder under a small and the default payload limit. Nothing may panic, and a length
//! prefix may not make anything allocate past the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_triple::fuzzing::check_grpc_body;

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(control & 0x1f) + 1;
    for payload in [64, 8 << 20] {
        check_grpc_body(rest, chunk, control >> 5, payload);
    }
});
