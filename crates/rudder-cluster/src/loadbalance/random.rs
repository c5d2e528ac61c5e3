//! `random`: weighted random choice, Dubbo's default policy (`RandomLoadBalance`).
//!
//! The offset is uniform in `0..total_weight` and the winner is the first provider whose running weight
//! sum exceeds it; equal weights (or a zero total) give a uniform choice. When no provider is warming up
//! the running sums are precomputed per snapshot and the winner is found by binary search, O(log n);
//! otherwise weights are recomputed for the pick, O(n), without allocating.
//!
//! # Differences from Dubbo
//!
//! Dubbo 3.x first asks whether provider 0 alone carries a `weight` or `timestamp`, and if not it picks
//! uniformly even when other providers carry weights. rudder always honours every provider's weight.

use rudder_common::invocation::Invocation;

use super::{least_key_weighted, LoadBalance, MethodView, Pick, PickRng};

/// Weighted random choice.
///
/// ```
/// use rudder_cluster::loadbalance::{random::Random, LoadBalance};
/// let policy: Box<dyn LoadBalance> = Box::new(Random);
/// ```
#[derive(Debug, Default)]
pub struct Random;

impl LoadBalance for Random {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        if let Some(sums) = view.static_prefix(pick) {
            return sums.choose(rng);
        }
        // Weights change with time (warmup), a hook, or exclusions: all providers tie on the same key,
        // which leaves exactly the weighted choice.
        least_key_weighted(view, pick, rng, view.providers().iter(), |_| 0)
    }
}
