//! A live connection (driver, writer, pending calls) against a provider whose bytes are the fuzz
//! input, cut into arbitrary reads, with up to eight calls in flight, in paused time. Nothing may
//! panic, every call must end with `Ok` or an error, and no task or socket may outlive the last
//! handle. Memory stays bounded by the 4 KiB payload limit (run with `-rss_limit_mb`).
//!
//! Work per input is bounded, so the run explores many inputs instead of a few slow ones (34 s once
//! made 3,357 executions): inputs are at most 8 KiB (`options/connection`, room for a frame over the
//! 4 KiB payload limit and the answer after it), and the provider's bytes arrive in at most
//! [`MAX_READS`] reads: a long script's read size is raised to fit, since every read costs a wake-up
//! of the connection's driver (a 5 KiB script read a byte at a time took half a second under ASan).
//! Short scripts are still cut anywhere, a byte at a time included.
//!
//! Run: `bash scripts/fuzz.sh connection` (seeds in `seeds/connection`, flags in
//! `options/connection`).
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use rudder_rpc::wire::drive_scripted_peer;

/// Most reads the provider's bytes are cut into.
const MAX_READS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let calls = usize::from(data.first().map_or(0, |b| b % 8)) + 1;
    let run = drive_scripted_peer(&bounded(data));
    if data.len() >= 2 {
        assert_eq!(run.answered + run.failed, calls, "every call ends");
    }
});

/// `data` with its read size (bits 2..8 of byte 1 as n: n² + 1 bytes, see `drive_scripted_peer`)
/// raised, if needed, so the script after the two leading bytes arrives in at most [`MAX_READS`]
/// reads. The other bits of byte 1 (whether the provider reads, whether it hangs up) stay.
fn bounded(data: &[u8]) -> Cow<'_, [u8]> {
    let [_, mode, script @ ..] = data else {
        return Cow::Borrowed(data);
    };
    let least = script.len().div_ceil(MAX_READS);
    let read_size = |n: u8| usize::from(n).pow(2) + 1;
    if read_size(mode >> 2) >= least {
        return Cow::Borrowed(data);
    }
    let n = (0..64u8).find(|&n| read_size(n) >= least).unwrap_or(63);
    let mut raised = data.to_vec();
    raised[1] = n << 2 | mode & 0b11;
    Cow::Owned(raised)
}
