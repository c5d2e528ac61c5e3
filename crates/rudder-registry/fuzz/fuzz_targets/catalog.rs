//! Arbitrary child lists for providers and configurators fed through a `Catalog`: no panic, output
//! bounded by the input, and the deltas a sink is given always add up to the full list.
//!
//! Input, line by line (lossy UTF-8):
//! * line 1, the consumer: `interface|version|group|protocol|k=v&k=v` (any part may be empty or
//!   missing; the interface defaults to `S`);
//! * `p<name>`: a provider child name as ZooKeeper lists it; `P<url>`: a plain URL, listed encoded;
//! * `c<name>` / `C<url>`: the same for configurators;
//! * `l`: a listing: the configurators then the providers gathered since the last `l` are set, as the
//!   subscription task does it (a full list when the rules changed, otherwise a delta).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rudder_registry::fuzzing::check_catalog(data);
});
