//! `p2c`: power of two choices over calls in flight.
//!
//! Two distinct providers are drawn uniformly, as Dubbo's `adaptive` draws its pair, and the one with
//! fewer calls of this method in flight wins; a tie goes by weight (warmup included), as `adaptive`
//! breaks ties. Mitzenmacher's result is why two are enough: the busiest provider's queue grows like
//! `log log n` instead of `log n` for a uniform choice, and a provider that slows down or stalls
//! collects calls in flight and stops being chosen, at O(1) per pick and no shared state.
//!
//! # Differences from Dubbo
//!
//! Dubbo Java 3.3 registers no `p2c` (a consumer asking for it fails with "No such extension"): the only
//! `P2CLoadBalance` in Apache Dubbo's history sits on an unmerged pull request (#8967), and dubbo-go's
//! `p2c` compares a remaining-capacity metric only dubbo-go providers report, returning the first
//! candidate when it is missing, which makes it a uniform choice against Java providers. rudder's `p2c`
//! is the classic algorithm over what every consumer knows, the calls it has in flight.

use rudder_common::invocation::Invocation;

use super::adaptive::{pair, weighted_coin};
use super::{LoadBalance, MethodView, Pick, PickRng};

/// Power of two choices, fewer calls in flight wins.
///
/// ```
/// use rudder_cluster::loadbalance::{p2c::PowerOfTwo, LoadBalance};
/// let policy: Box<dyn LoadBalance> = Box::new(PowerOfTwo);
/// ```
#[derive(Debug, Default)]
pub struct PowerOfTwo;

impl LoadBalance for PowerOfTwo {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        let (a, b) = pair(view, pick, rng)?;
        let (active_a, active_b) = (
            view.method_status(a).active(),
            view.method_status(b).active(),
        );
        Some(match active_a.cmp(&active_b) {
            std::cmp::Ordering::Less => a,
            std::cmp::Ordering::Greater => b,
            std::cmp::Ordering::Equal => {
                weighted_coin((a, view.weight(a, pick)), (b, view.weight(b, pick)), rng)
            }
        })
    }
}
