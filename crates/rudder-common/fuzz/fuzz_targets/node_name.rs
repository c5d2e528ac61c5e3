//! Any registry child name: decoding, parsing, lookups and re-encoding must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_common::url::DubboUrl;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(url) = DubboUrl::parse_any(text) {
        let _ = url.service_key();
        let _ = url.identity();
        let _ = url.method_parameter("sayHello", "weight");
        let _ = url.to_string();
        let _ = DubboUrl::from_node_name(&url.to_node_name());
    }
});
