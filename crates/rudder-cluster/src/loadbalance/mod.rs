//! Load balancing: which provider serves the next call, decided exactly as Dubbo Java 3.3 decides it.
//!
//! A balancer is one small trait, [`LoadBalance`], with one method: pick an index into a [`MethodView`].
//! The view (the provider snapshot seen from one method, with weights and statistics handles resolved
//! ahead of time) is kept apart from the policy, as Envoy keeps its host set apart from its picking
//! policies; state a policy needs per snapshot (prefix sums, a hash ring, round-robin counters) lives in
//! the view under the policy's [`StateKey`] ([`MethodView::with_state`]) and is built when the snapshot
//! is published ([`LoadBalance::prepare`]), never on the pick path.
//!
//! The built-in policies carry Dubbo's names: [`random`], [`round_robin`] (`roundrobin`),
//! [`least_active`] (`leastactive`), [`shortest_response`] (`shortestresponse`) and [`consistent_hash`]
//! (`consistenthash`), and Dubbo 3.2's [`adaptive`]; rudder adds two that react to slow and failing
//! providers, [`p2c`] (two random choices, fewer calls in flight wins) and [`peak_ewma`] (`peakewma`:
//! two random choices over peak-EWMA latency × load) and [`prequal`] (a few random candidates: the
//! cold ones by latency, the hot by calls in flight). A [`LoadBalanceRegistry`] maps names to policies, the Rust counterpart of Dubbo's
//! SPI: the policy for a call is the first provider's `loadbalance` parameter for the method.
//!
//! # Examples
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::loadbalance::{select, LoadBalanceRegistry, MethodView, Pick};
//! use rudder_cluster::provider::Provider;
//! use rudder_common::{invocation::Invocation, url::DubboUrl};
//! use rudder_common::status::StatusRegistry;
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
//!         let pick = Pick::at(0);
//!         select(&*balancer, &view, &call, &pick, &mut rng).unwrap()
//!     })
//!     .collect();
//! assert_eq!(picks, [1, 0, 1, 1]);
//! # Ok::<(), rudder_cluster::loadbalance::UnknownLoadBalance>(())
//! ```

pub mod adaptive;
pub mod bounded_load;
pub mod consistent_hash;
pub mod least_active;
mod least_key;
pub mod outlier;
pub mod outlier_relative;
pub mod p2c;
pub mod peak_ewma;
pub mod prequal;
pub mod random;
mod registry;
pub mod round_robin;
pub mod shortest_response;

use rudder_common::invocation::Invocation;

pub use crate::rng::PickRng;
use least_key::least_key_weighted;
pub use registry::{LoadBalanceRegistry, BUILTINS};
// The view, the pick and the policy interface live below both this module and the routers.
pub use crate::view::weight;
pub use crate::view::{
    LoadBalance, MethodView, Pick, PrefixSums, StateKey, UnknownLoadBalance, ACTIVES,
    DEFAULT_LOADBALANCE,
};

/// Dubbo's `AbstractLoadBalance.select`: no candidate gives `None`, a single candidate is returned without
/// consulting the policy (even with weight 0), otherwise the policy decides.
pub fn select(
    balancer: &dyn LoadBalance,
    view: &MethodView,
    invocation: &Invocation,
    pick: &Pick<'_>,
    rng: &mut dyn PickRng,
) -> Option<usize> {
    if pick.excluded.is_empty() {
        return match view.len() {
            0 => None,
            1 => Some(0),
            _ => balancer.pick(view, invocation, pick, rng),
        };
    }
    let mut allowed = (0..view.len()).filter(|&i| pick.allows(view, i));
    let first = allowed.next()?;
    if allowed.next().is_none() {
        return Some(first);
    }
    balancer.pick(view, invocation, pick, rng)
}
