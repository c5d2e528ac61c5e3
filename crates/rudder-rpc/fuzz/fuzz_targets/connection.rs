//! A live connection (driver, writer, pending calls) against a provider whose bytes are the fuzz
//! input, cut into arbitrary reads, with up to eight calls in flight, in paused time. Nothing may
//! panic, every call must end with `Ok` or an error, and no task or socket may outlive the last
//! handle. Memory stays bounded by the 4 KiB payload limit (run with `-rss_limit_mb`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_rpc::wire::drive_scripted_peer;

fuzz_target!(|data: &[u8]| {
    let calls = usize::from(data.first().map_or(0, |b| b % 8)) + 1;
    let run = drive_scripted_peer(data);
    if data.len() >= 2 {
        assert_eq!(run.answered + run.failed, calls, "every call ends");
    }
});
