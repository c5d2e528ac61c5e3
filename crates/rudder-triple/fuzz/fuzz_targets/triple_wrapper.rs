//! Arbitrary bytes as a `TripleResponseWrapper` (protobuf), then its hessian2 content as a value and
//! as an exception, within a small and the default payload's decode budget. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_triple::fuzzing::check_response_wrapper;

fuzz_target!(|data: &[u8]| {
    for payload in [64, 8 << 20] {
        check_response_wrapper(data, payload);
    }
});
