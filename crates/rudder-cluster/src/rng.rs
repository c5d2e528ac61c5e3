//! Randomness for picks, injectable so tests and `rudder simulate --seed` are reproducible.

use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

/// A uniform random source for balancers.
///
/// Implemented for every [`rand::RngCore`], so a seeded `SmallRng` or `StdRng` can be passed directly.
///
/// ```
/// use rand::{rngs::SmallRng, SeedableRng};
/// use rudder_cluster::rng::PickRng;
/// let mut rng = SmallRng::seed_from_u64(7);
/// assert!(rng.below(10) < 10);
/// ```
pub trait PickRng {
    /// A uniform value in `0..bound`; `bound` must be at least 1.
    fn below(&mut self, bound: u64) -> u64;
}

impl<R: RngCore + ?Sized> PickRng for R {
    fn below(&mut self, bound: u64) -> u64 {
        self.random_range(0..bound)
    }
}

/// Where a balancer's randomness comes from: a fast per-thread generator, or one seeded generator.
#[derive(Debug)]
pub enum RngSource {
    /// A per-thread generator seeded from the OS (the default).
    ThreadLocal,
    /// One generator from a fixed seed, for reproducible runs; picks then serialise on its lock.
    Seeded(std::sync::Mutex<SmallRng>),
}

impl RngSource {
    /// A reproducible source.
    pub fn seeded(seed: u64) -> RngSource {
        RngSource::Seeded(std::sync::Mutex::new(SmallRng::seed_from_u64(seed)))
    }

    /// Runs `f` with a generator from this source.
    pub fn with<T>(&self, f: impl FnOnce(&mut dyn PickRng) -> T) -> T {
        match self {
            RngSource::ThreadLocal => THREAD_RNG.with(|rng| f(&mut *rng.borrow_mut())),
            RngSource::Seeded(rng) => {
                let mut guard = rng
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                f(&mut *guard)
            }
        }
    }
}

thread_local! {
    static THREAD_RNG: std::cell::RefCell<SmallRng> = std::cell::RefCell::new(SmallRng::from_os_rng());
}
