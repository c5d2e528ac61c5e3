//! `leastactive`: the provider with the fewest calls in flight (`LeastActiveLoadBalance`).
//!
//! Reads the method-level active count of each provider; among those tied for the fewest, picks by weight
//! (warmup included) as [`random`](super::random) does. O(n) per pick, no allocation.
//!
//! # Differences from Dubbo
//!
//! In Dubbo the active counts are only maintained when the `actives` filter is configured, so without it
//! this policy silently behaves as `random` (apache/dubbo#9650). rudder counts every call, so it works as
//! its name says.

use rudder_common::invocation::Invocation;

use super::{weighted_choice, with_candidates, LoadBalance, MethodView, Pick, PickRng};

/// Fewest active calls, weighted random among ties.
///
/// ```
/// use rudder_cluster::loadbalance::{least_active::LeastActive, LoadBalance};
/// let policy: Box<dyn LoadBalance> = Box::new(LeastActive);
/// ```
#[derive(Debug, Default)]
pub struct LeastActive;

impl LoadBalance for LeastActive {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        with_candidates(|tied| {
            let mut least = i32::MAX;
            for i in (0..view.len()).filter(|&i| pick.allows(view, i)) {
                // Each counter is read once: it changes under us, and the decision must be consistent.
                let active = view.method_status(i).active();
                if active < least {
                    least = active;
                    tied.clear();
                }
                if active == least {
                    tied.push((i, view.weight(i, pick)));
                }
            }
            weighted_choice(tied, rng)
        })
    }
}
