//! What a pick reads, below the routers and the load balancers that both read it: the per-method
//! view of a provider snapshot ([`MethodView`]), the context of one pick ([`Pick`]), weights, prefix
//! sums, per-view state keys and outlier data, and the policy interface ([`LoadBalance`]) whose
//! resolved instance a view caches. Public through [`loadbalance`](crate::loadbalance), which adds
//! the built-in policies; the routers build and cache views for routed subsets without importing
//! any policy.

mod method_view;
pub(crate) mod outlier;
pub(crate) mod outlier_relative;
mod pick;
mod prefix_sums;
mod state_key;
pub mod weight;

pub(crate) use method_view::ResolvedPolicy;
pub use method_view::{LoadBalance, MethodView, UnknownLoadBalance, ACTIVES, DEFAULT_LOADBALANCE};
pub(crate) use outlier::Ejection;
pub use pick::Pick;
pub use prefix_sums::PrefixSums;
pub use state_key::StateKey;
