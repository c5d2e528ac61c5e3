//! Where call durations come from: a monotonic clock with microsecond ticks, injectable for tests.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A monotonic clock read at the start and end of every call, for the latency histogram.
///
/// The consumer's [`Clock`](rudder_common::clock::Clock) is wall time in milliseconds (what Dubbo's
/// warmup arithmetic needs); a latency histogram needs finer, monotonic ticks, hence this.
pub trait Ticker: Send + Sync + fmt::Debug {
    /// Microseconds since an arbitrary fixed origin; never decreases.
    fn now_micros(&self) -> u64;
}

/// The process's monotonic clock ([`Instant`]).
#[derive(Debug, Clone, Copy)]
pub struct SystemTicker {
    origin: Instant,
}

impl Default for SystemTicker {
    fn default() -> SystemTicker {
        SystemTicker {
            origin: Instant::now(),
        }
    }
}

impl Ticker for SystemTicker {
    fn now_micros(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

/// A ticker that moves only when told to (tests: a provider that "takes" exactly 300 ms).
///
/// ```
/// use rudder::metrics::{ManualTicker, Ticker};
/// let ticker = ManualTicker::default();
/// ticker.advance_micros(1_500);
/// assert_eq!(ticker.now_micros(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualTicker {
    now: AtomicU64,
}

impl ManualTicker {
    /// Moves the ticker forward.
    pub fn advance_micros(&self, micros: u64) {
        self.now.fetch_add(micros, Ordering::SeqCst);
    }
}

impl Ticker for ManualTicker {
    fn now_micros(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}
