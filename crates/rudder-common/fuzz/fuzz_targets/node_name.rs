//! Any registry child name: decoding, parsing, lookups, re-encoding and redaction must never panic, and
//! redaction must hide the password of every URL that parses with one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_common::url::DubboUrl;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = rudder_common::redact::url(text);
    if let Ok(url) = DubboUrl::parse_any(text) {
        let identity = url.identity();
        let shown = rudder_common::redact::url(&identity);
        // The user information at the head of the identity never survives redaction.
        let start = identity.find("://").map_or(0, |i| i + 3);
        if let Some(at) = identity[start..].find('@').map(|at| start + at) {
            let head = &identity[..=at];
            if at > start && !head.contains(rudder_common::redact::MASK) {
                assert!(!shown.starts_with(head), "{identity} -> {shown}");
            }
        }
        let _ = url.service_key();
        let _ = url.identity();
        let _ = url.method_parameter("sayHello", "weight");
        let _ = url.to_string();
        let _ = DubboUrl::from_node_name(&url.to_node_name());
    }
});
