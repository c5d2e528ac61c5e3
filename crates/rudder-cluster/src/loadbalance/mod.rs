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
//! two random choices over peak-EWMA latency × load). A [`LoadBalanceRegistry`] maps names to policies, the Rust counterpart of Dubbo's
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
pub mod p2c;
pub mod peak_ewma;
mod pick;
mod prefix_sums;
pub mod random;
mod registry;
pub mod round_robin;
pub mod shortest_response;
pub(crate) mod view;
pub mod weight;

use std::any::TypeId;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use rudder_common::invocation::Invocation;

pub use crate::rng::PickRng;
use least_key::least_key_weighted;
pub use pick::Pick;
pub use prefix_sums::PrefixSums;
pub use registry::{LoadBalanceRegistry, UnknownLoadBalance, BUILTINS};
pub use view::{MethodView, ACTIVES};

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

    /// Builds the per-view state this policy's picks read (a ring, counter slots), so the first pick
    /// after a registry change finds it ready. Called by the directory for every method view of a
    /// snapshot before the snapshot is published; the default builds nothing.
    fn prepare(&self, view: &MethodView) {
        let _ = view;
    }
}

/// What per-view state is filed under in a [`MethodView`]: one key per policy instance
/// ([`StateKey::unique`]), or one per type for state that any instance would build the same way
/// ([`StateKey::of`]).
///
/// ```
/// use rudder_cluster::loadbalance::StateKey;
/// assert_ne!(StateKey::unique(), StateKey::unique());
/// assert_eq!(StateKey::of::<Vec<u32>>(), StateKey::of::<Vec<u32>>());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateKey(Key);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Instance(u64),
    Type(TypeId),
}

impl StateKey {
    /// A key no other call returns: for state that belongs to one policy (or balancer) instance.
    pub fn unique() -> StateKey {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        StateKey(Key::Instance(NEXT.fetch_add(1, Ordering::Relaxed)))
    }

    /// The key of state of type `T` that depends only on the view.
    pub fn of<T: 'static>() -> StateKey {
        StateKey(Key::Type(TypeId::of::<T>()))
    }
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
