//! Whether a provider's connection is up: the signal Dubbo's `invoker.isAvailable()` gives its
//! cluster (`cluster.availablecheck`), set by the transport that owns the connection and read by the
//! balancer on every pick.
//!
//! A transport marks its address down when a connect fails, a connection closes, or a reconnect is
//! under way, and says until when it will not try again (its backoff); it marks it up once a
//! connection is open. Between those, the balancer leaves the provider out of its picks, except when
//! every provider is down. Once the "until" instant has passed the provider is available again: the
//! next call to it is the transport's reconnect attempt (which marks it down again at once), so a dead
//! provider costs one reconnect attempt's worth of calls per backoff period, not a call per pick.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use rudder_common::status::availability::{any_down, Availability};
//! use rudder_common::status::record::RecordAvailability;
//!
//! let connection = Availability::default();
//! assert!(connection.is_available());
//! connection.mark_down_until(Instant::now() + Duration::from_secs(60));
//! assert!(!connection.is_available() && connection.is_down() && any_down());
//! connection.mark_up();
//! assert!(connection.is_available() && !connection.is_down());
//! connection.mark_down_until(Instant::now()); // a probe may go now
//! assert!(connection.is_available() && connection.is_down());
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// How many availabilities of the process are down: picks skip looking (one load) while none is.
static DOWN: AtomicUsize = AtomicUsize::new(0);

/// Whether some availability of the process is marked down now.
#[inline]
pub fn any_down() -> bool {
    DOWN.load(Ordering::Relaxed) != 0
}

/// The process's own monotonic epoch for the "until" instants (an atomic holds a number, not an
/// `Instant`).
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// `at` as milliseconds after the epoch, plus one (0 means "up").
fn ticks(at: Instant) -> u64 {
    let millis = at.saturating_duration_since(epoch()).as_millis();
    u64::try_from(millis).unwrap_or(u64::MAX - 1) + 1
}

/// A connection's availability, shared by the transport that sets it and the providers that read it.
/// Clones share the state. Up until marked down.
#[derive(Clone, Default)]
pub struct Availability {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    /// 0: up; otherwise down, and [`ticks`] of the instant from which a call may try again.
    down_until: AtomicU64,
}

impl Drop for State {
    fn drop(&mut self) {
        if *self.down_until.get_mut() != 0 {
            DOWN.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Availability {
    /// Whether a call may go to the provider now: up, or down with its next attempt due.
    #[inline]
    pub fn is_available(&self) -> bool {
        match self.state.down_until.load(Ordering::Relaxed) {
            0 => true,
            until => ticks(Instant::now()) >= until,
        }
    }

    /// Whether it is marked down (its next attempt may be due already).
    pub fn is_down(&self) -> bool {
        self.state.down_until.load(Ordering::Relaxed) != 0
    }

    pub(crate) fn write_down_until(&self, until: Instant) {
        if self.state.down_until.swap(ticks(until), Ordering::Relaxed) == 0 {
            DOWN.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn write_up(&self) {
        if self.state.down_until.load(Ordering::Relaxed) == 0 {
            return;
        }
        if self.state.down_until.swap(0, Ordering::Relaxed) != 0 {
            DOWN.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Availability")
            .field("down", &self.is_down())
            .field("available", &self.is_available())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::record::RecordAvailability;
    use std::time::Duration;

    #[test]
    fn down_counts_once_per_availability_and_ends_with_it() {
        // Other tests of the process may hold their own down availabilities: compare differences.
        let a = Availability::default();
        let later = Instant::now() + Duration::from_secs(600);
        a.mark_down_until(later);
        let with_one = DOWN.load(Ordering::Relaxed);
        assert!(with_one >= 1);
        a.mark_down_until(later); // marking again does not count twice
        let clone = a.clone();
        assert!(!clone.is_available(), "clones share the state");
        drop(a);
        drop(clone); // the last handle gone: no longer counted
        let b = Availability::default();
        b.mark_down_until(later);
        b.mark_up();
        b.mark_up();
        assert!(b.is_available());
        assert!(DOWN.load(Ordering::Relaxed) < with_one + 1);
    }
}
