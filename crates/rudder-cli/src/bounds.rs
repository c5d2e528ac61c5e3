//! The accepted range of every numeric flag. A value outside its range is a usage error (clap's
//! message, exit code 2) before anything runs, so no flag can ask for an unbounded allocation, task
//! count or deadline. Counts are also consumed as they go (no flag sizes a buffer up front).

use clap::builder::{RangedI64ValueParser, RangedU64ValueParser};

/// `simulate --calls` and `invoke --calls`: 1 to 10^9 calls, streamed one at a time.
pub(crate) const MAX_CALLS: u64 = 1_000_000_000;
/// `demo --calls`: 1 to 10^6 calls per strategy (each call's latency is kept for the percentiles).
pub(crate) const MAX_DEMO_CALLS: u64 = 1_000_000;
/// `demo --concurrency`: 1 to 1024 calls in flight (one task each).
pub(crate) const MAX_CONCURRENCY: u64 = 1024;
/// `invoke --timeout`: 1 ms to `i32::MAX` ms, the range of Dubbo's `int timeout`.
pub(crate) const MAX_TIMEOUT_MS: u64 = i32::MAX as u64;
/// `providers --connect-timeout`: 1 s to one hour.
pub(crate) const MAX_CONNECT_TIMEOUT_SECS: u64 = 3600;
/// `simulate --now`: 1970-01-01 to 9999-12-31T23:59:59.999Z, in epoch milliseconds.
pub(crate) const MAX_EPOCH_MS: i64 = 253_402_300_799_999;

/// A count in `1..=max`.
pub(crate) fn count(max: u64) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=max)
}

/// A positive number of seconds or milliseconds, at most `max`.
pub(crate) fn positive(max: u64) -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(1..=max)
}

/// An instant in epoch milliseconds between 1970 and the end of year 9999.
pub(crate) fn epoch_millis() -> RangedI64ValueParser<i64> {
    RangedI64ValueParser::new().range(0..=MAX_EPOCH_MS)
}
