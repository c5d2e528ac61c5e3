//! Any bytes as the JSON of a Nacos 2.x push (`NotifySubscriberRequest`) or a subscription's answer:
//! read down to each instance's JSON, each instance read and turned into a provider's node name,
//! through the subscription's name cache and without it. Never panics; the cache gives the names
//! made afresh, and holds no more entries than the list has instances.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rudder_registry::fuzzing::check_push(data);
});
