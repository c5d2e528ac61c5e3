//! How long a provider slot waits before reconnecting after consecutive failures: exponential, with
//! jitter so that many consumers that lost the same provider do not come back in lockstep. The rule
//! of every rudder protocol client: dubbo:// here, tri:// in rudder-triple.
//!
//! The delay after the n-th consecutive failure is drawn uniformly from `[c/2, c]` where
//! `c = min(100 ms · 2^(n-1), 10 s)` ("equal jitter"): never less than half the ceiling, so a flood
//! of reconnects stays bounded, and spread over the other half. The random source is a seedable
//! SplitMix64 stream, so tests can fix it.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Delay ceiling after the first failure.
pub const BACKOFF_BASE: Duration = Duration::from_millis(100);
/// Largest delay ceiling, however many failures.
pub const BACKOFF_MAX: Duration = Duration::from_secs(10);

const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Reconnect delays with jitter; shared by every pool of a protocol.
///
/// ```
/// use std::time::Duration;
/// use rudder_rpc::backoff::Backoff;
/// let wait = Backoff::seeded(7).delay(3);
/// assert!(wait >= Duration::from_millis(200) && wait <= Duration::from_millis(400));
/// ```
#[derive(Debug)]
pub struct Backoff {
    state: AtomicU64,
}

impl Default for Backoff {
    /// Seeded from the process's random hash keys: different in every process.
    fn default() -> Backoff {
        Backoff::seeded(RandomState::new().hash_one(0x5eed_u64))
    }
}

impl Backoff {
    /// A backoff whose jitter is the SplitMix64 stream from `seed`.
    pub fn seeded(seed: u64) -> Backoff {
        Backoff {
            state: AtomicU64::new(seed),
        }
    }

    /// The ceiling after `failures` consecutive failures (at least one is assumed).
    pub fn ceiling(failures: u32) -> Duration {
        BACKOFF_BASE
            .saturating_mul(1u32 << failures.saturating_sub(1).min(16))
            .min(BACKOFF_MAX)
    }

    /// The wait after `failures` consecutive failures: uniform in `[ceiling/2, ceiling]`.
    pub fn delay(&self, failures: u32) -> Duration {
        let ceiling = Backoff::ceiling(failures);
        let half = ceiling / 2;
        // 53 random bits as a fraction in [0, 1).
        let fraction = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        half + (ceiling - half).mul_f64(fraction)
    }

    fn next_u64(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(GOLDEN_GAMMA, Ordering::Relaxed)
            .wrapping_add(GOLDEN_GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_doubles_up_to_the_cap() {
        assert_eq!(Backoff::ceiling(1), Duration::from_millis(100));
        assert_eq!(Backoff::ceiling(2), Duration::from_millis(200));
        assert_eq!(Backoff::ceiling(5), Duration::from_millis(1600));
        assert_eq!(Backoff::ceiling(40), BACKOFF_MAX);
        assert_eq!(Backoff::ceiling(0), Duration::from_millis(100));
    }

    #[test]
    fn delays_stay_in_the_upper_half_and_spread() {
        let backoff = Backoff::seeded(7);
        for failures in 1..20 {
            let ceiling = Backoff::ceiling(failures);
            let draws: Vec<Duration> = (0..200).map(|_| backoff.delay(failures)).collect();
            assert!(draws.iter().all(|d| *d >= ceiling / 2 && *d <= ceiling));
            let (low, high) = (draws.iter().min().unwrap(), draws.iter().max().unwrap());
            // 200 uniform draws cover most of the range: consumers do not reconnect in lockstep.
            assert!(*high - *low > ceiling / 3, "{failures}: {low:?}..{high:?}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_delays() {
        let (a, b) = (Backoff::seeded(42), Backoff::seeded(42));
        let xs: Vec<_> = (1..10).map(|n| a.delay(n)).collect();
        let ys: Vec<_> = (1..10).map(|n| b.delay(n)).collect();
        assert_eq!(xs, ys);
        assert_ne!(
            xs,
            (1..10)
                .map(|n| Backoff::seeded(43).delay(n))
                .collect::<Vec<_>>()
        );
    }
}
