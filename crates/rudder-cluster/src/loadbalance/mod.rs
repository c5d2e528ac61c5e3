//! Load balancing: which provider serves the next call, decided exactly as Dubbo Java 3.3 decides it.
//!
//! A balancer is one small trait, [`LoadBalance`], with one method: pick an index into a [`MethodView`].
//! The view (the provider snapshot seen from one method, with weights and statistics handles resolved
//! ahead of time) is kept apart from the policy, as Envoy keeps its host set apart from its picking
//! policies; state a policy needs per snapshot (prefix sums, a hash ring, round-robin counters) is built
//! once per view through [`MethodView::with_state`], never on the pick path.
//!
//! The built-in policies carry Dubbo's names: [`random`], [`round_robin`] (`roundrobin`),
//! [`least_active`] (`leastactive`), [`shortest_response`] (`shortestresponse`) and [`consistent_hash`]
//! (`consistenthash`). A [`LoadBalanceRegistry`] maps names to policies, the Rust counterpart of Dubbo's
//! SPI: the policy for a call is the first provider's `loadbalance` parameter for the method.
//!
//! # Examples
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::loadbalance::{select, LoadBalanceRegistry, MethodView, Pick};
//! use rudder_cluster::provider::Provider;
//! use rudder_common::{invocation::Invocation, url::DubboUrl};
//! use rudder_rpc::status::StatusRegistry;
//! use rand::{rngs::SmallRng, SeedableRng};
//!
//! let statuses = StatusRegistry::default();
//! let providers: Arc<[Arc<Provider>]> = ["dubbo://10.0.0.1:20880/S?weight=1", "dubbo://10.0.0.2:20880/S?weight=3"]
//!     .iter()
//!     .map(|u| Arc::new(Provider::new(DubboUrl::parse(u).unwrap(), &statuses).unwrap()))
//!     .collect();
//! let view = MethodView::new(providers, "sayHello");
//! let balancer = LoadBalanceRegistry::with_builtins().get("roundrobin")?;
//! let call = Invocation::new("sayHello", vec![], vec![]);
//! let mut rng = SmallRng::seed_from_u64(1);
//! let picks: Vec<usize> = (0..4)
//!     .map(|_| {
//!         let pick = Pick { now: 0, excluded: &[], weight_source: None };
//!         select(&*balancer, &view, &call, &pick, &mut rng).unwrap()
//!     })
//!     .collect();
//! assert_eq!(picks, [1, 0, 1, 1]);
//! # Ok::<(), rudder_cluster::loadbalance::UnknownLoadBalance>(())
//! ```

pub mod consistent_hash;
pub mod least_active;
pub mod random;
mod registry;
pub mod round_robin;
pub mod shortest_response;
mod view;
pub mod weight;

use std::fmt;

use rudder_common::invocation::Invocation;

pub use crate::rng::PickRng;
pub use registry::{LoadBalanceRegistry, UnknownLoadBalance};
pub use view::{MethodView, Pick};

/// The policy used when no provider names one: Dubbo's default.
pub const DEFAULT_LOADBALANCE: &str = "random";

/// A load-balancing policy.
///
/// Implementations pick among the providers of `view` that `pick` allows, and return the index of the
/// chosen one. They are called through [`select`], which has already handled the empty and
/// single-candidate cases. State that must persist across picks lives in the policy (shared by all views,
/// keyed as Dubbo keys it) or in per-view state from [`MethodView::with_state`].
pub trait LoadBalance: Send + Sync + fmt::Debug {
    /// Chooses a provider for `invocation`; `None` only when no candidate is allowed.
    fn pick(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize>;
}

/// Dubbo's `AbstractLoadBalance.select`: no candidate gives `None`, a single candidate is returned without
/// consulting the policy (even with weight 0), otherwise the policy decides.
pub fn select(
    balancer: &dyn LoadBalance,
    view: &MethodView,
    invocation: &Invocation,
    pick: &Pick<'_>,
    rng: &mut dyn PickRng,
) -> Option<usize> {
    let mut allowed = (0..view.len()).filter(|&i| pick.allows(view, i));
    let first = allowed.next()?;
    if allowed.next().is_none() {
        return Some(first);
    }
    balancer.pick(view, invocation, pick, rng)
}

/// Dubbo's "lowest key wins, weighted random among ties" (`leastactive`, `shortestresponse`).
///
/// `key` is read exactly once per allowed provider (live counters change under us, and one decision
/// must see one set of values) into a per-thread buffer; the decision then runs over that buffer and
/// the weights. In the steady state (nothing excluded, no warmup, no weight hook) the weights are the
/// view's precomputed ones; otherwise they are computed for every allowed provider, as Dubbo does.
pub(crate) fn least_key_weighted(
    view: &MethodView,
    pick: &Pick<'_>,
    rng: &mut dyn PickRng,
    key: impl Fn(usize) -> i64,
) -> Option<usize> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<(Vec<i64>, Vec<i32>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    let mut decide = |(keys, weights): &mut (Vec<i64>, Vec<i32>)| {
        keys.clear();
        if let (true, Some(precomputed)) = (pick.excluded.is_empty(), view.static_weights(pick)) {
            keys.extend((0..view.len()).map(&key));
            return least_key_among(keys, precomputed, rng);
        }
        weights.clear();
        for i in 0..view.len() {
            if pick.allows(view, i) {
                keys.push(key(i));
                weights.push(view.weight(i, pick));
            } else {
                // Excluded: a weight of -1, which no real weight is.
                keys.push(i64::MAX);
                weights.push(-1);
            }
        }
        least_key_among(keys, weights, rng)
    };
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => decide(&mut scratch),
        // Re-entered from inside a pick (a weight hook that picks): use fresh buffers.
        Err(_) => decide(&mut (Vec::new(), Vec::new())),
    })
}

/// The decision of [`least_key_weighted`] over `keys[i]` and `weights[i]` (a negative weight marks an
/// excluded provider): the lowest key; among ties, weighted random unless all weights are equal or
/// zero, then uniform. Tight passes over contiguous arrays.
fn least_key_among(keys: &[i64], weights: &[i32], rng: &mut dyn PickRng) -> Option<usize> {
    let mut least = i64::MAX;
    let mut any = false;
    for (&k, &w) in keys.iter().zip(weights) {
        if w >= 0 {
            least = least.min(k);
            any = true;
        }
    }
    if !any {
        return None;
    }
    let (mut ties, mut total, mut first) = (0u64, 0i64, usize::MAX);
    let (mut lightest, mut heaviest) = (i32::MAX, i32::MIN);
    for (i, (&k, &w)) in keys.iter().zip(weights).enumerate() {
        if k == least && w >= 0 {
            first = first.min(i);
            ties += 1;
            total += i64::from(w);
            lightest = lightest.min(w);
            heaviest = heaviest.max(w);
        }
    }
    if ties == 1 {
        return Some(first);
    }
    let tied = |i: usize| keys[i] == least && weights[i] >= 0;
    if lightest != heaviest && total > 0 {
        let mut offset = rng.below(total as u64) as i64;
        for i in (first..keys.len()).filter(|&i| tied(i)) {
            offset -= i64::from(weights[i]);
            if offset < 0 {
                return Some(i);
            }
        }
    }
    (first..keys.len())
        .filter(|&i| tied(i))
        .nth(rng.below(ties) as usize)
}

/// A stable small number identifying a policy instance, for [`MethodView::with_state`].
pub(crate) fn owner_id<T>(policy: &T) -> usize {
    policy as *const T as usize
}
