//! Time as the load balancers see it: milliseconds since the Unix epoch, injectable for tests.
//!
//! Warmup, the round-robin recycle period and the shortest-response window all read a [`Clock`], so tests
//! and `rudder simulate --now` can fix time instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in epoch milliseconds (Java's `System.currentTimeMillis`).
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64;
}

/// The system clock.
///
/// ```
/// use rudder_common::clock::{Clock, SystemClock};
/// assert!(SystemClock.now_millis() > 1_700_000_000_000);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}

/// A clock that moves only when told to.
///
/// ```
/// use rudder_common::clock::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance(500);
/// assert_eq!(clock.now_millis(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    /// A clock reading `now` epoch milliseconds.
    pub fn new(now: i64) -> ManualClock {
        ManualClock {
            now: AtomicI64::new(now),
        }
    }

    /// Sets the time.
    pub fn set(&self, now: i64) {
        self.now.store(now, Ordering::Relaxed);
    }

    /// Moves the time forward by `millis`.
    pub fn advance(&self, millis: i64) {
        self.now.fetch_add(millis, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        self.now.load(Ordering::Relaxed)
    }
}
