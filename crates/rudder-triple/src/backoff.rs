//! How long a provider address waits before the next connect after consecutive failed ones: the rule
//! dubbo:// uses (rudder-rpc's backoff), so a dead provider still listed costs each call a fast
//! refusal, not a connect attempt.
//!
//! After the n-th consecutive failure the wait is drawn uniformly from `[c/2, c]`, with
//! `c = min(100 ms · 2^(n-1), 10 s)`: never under half the ceiling, and spread so that consumers that
//! lost one provider do not all come back at once. The jitter is a SplitMix64 stream, seedable.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const BASE: Duration = Duration::from_millis(100);
const MAX: Duration = Duration::from_secs(10);
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Reconnect waits with jitter; one per protocol.
#[derive(Debug)]
pub(crate) struct Backoff {
    state: AtomicU64,
}

impl Default for Backoff {
    /// Seeded from the process's random hash keys: different in every process.
    fn default() -> Backoff {
        Backoff::seeded(RandomState::new().hash_one(0x7219_u64))
    }
}

impl Backoff {
    /// A backoff whose jitter is the SplitMix64 stream from `seed`.
    pub(crate) fn seeded(seed: u64) -> Backoff {
        Backoff {
            state: AtomicU64::new(seed),
        }
    }

    /// The ceiling after `failures` consecutive failures (at least one assumed).
    pub(crate) fn ceiling(failures: u32) -> Duration {
        BASE.saturating_mul(1u32 << failures.saturating_sub(1).min(16))
            .min(MAX)
    }

    /// The wait after `failures` consecutive failures: uniform in `[ceiling/2, ceiling]`.
    pub(crate) fn delay(&self, failures: u32) -> Duration {
        let ceiling = Backoff::ceiling(failures);
        let half = ceiling / 2;
        let mut z = self
            .state
            .fetch_add(GOLDEN_GAMMA, Ordering::Relaxed)
            .wrapping_add(GOLDEN_GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // 53 random bits as a fraction in [0, 1).
        let fraction = (z >> 11) as f64 / (1u64 << 53) as f64;
        half + (ceiling - half).mul_f64(fraction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_ten_seconds_within_the_upper_half() {
        let backoff = Backoff::seeded(7);
        for (failures, ceiling_ms) in [(1, 100), (2, 200), (3, 400), (8, 10_000), (40, 10_000)] {
            assert_eq!(
                Backoff::ceiling(failures),
                Duration::from_millis(ceiling_ms)
            );
            for _ in 0..100 {
                let wait = backoff.delay(failures);
                let ceiling = Duration::from_millis(ceiling_ms);
                assert!(
                    wait >= ceiling / 2 && wait <= ceiling,
                    "{wait:?} after {failures}"
                );
            }
        }
    }
}
