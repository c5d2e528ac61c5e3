//! Any bytes as a Nacos server's HTTP/1.1 answer to the config centre (`/nacos/v1/cs/configs` and
//! its long-polling listener): status line, headers, a body framed by `Content-Length`, `chunked` or
//! the connection's end, then the listener's changed keys. Decoding never panics and never yields a
//! body past the 1 MiB bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rudder_registry::fuzzing::check_answer(data);
});
