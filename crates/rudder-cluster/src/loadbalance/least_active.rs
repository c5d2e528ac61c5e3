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
use rudder_common::status::RpcStatus;

use super::{least_key_weighted, LoadBalance, MethodView, Pick, PickRng};

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
        match view.adjacent_statuses() {
            Some(statuses) => {
                least_key_weighted(view, pick, rng, statuses.iter(), RpcStatus::active)
            }
            None => {
                let statuses = view.status_runs().flatten();
                least_key_weighted(view, pick, rng, statuses, RpcStatus::active)
            }
        }
    }
}
