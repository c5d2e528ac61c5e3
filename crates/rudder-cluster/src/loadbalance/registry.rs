//! Policies by name: the Rust counterpart of Dubbo's `LoadBalance` SPI.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::adaptive::Adaptive;
use super::consistent_hash::ConsistentHash;
use super::least_active::LeastActive;
use super::p2c::PowerOfTwo;
use super::peak_ewma::PeakEwma;
use super::prequal::Prequal;
use super::random::Random;
use super::round_robin::RoundRobin;
use super::shortest_response::ShortestResponse;
use super::{LoadBalance, UnknownLoadBalance};

/// The names of the built-in policies, as [`LoadBalanceRegistry::with_builtins`] registers them: Dubbo's
/// six, then rudder's own.
pub const BUILTINS: [&str; 9] = [
    "random",
    "roundrobin",
    "leastactive",
    "shortestresponse",
    "consistenthash",
    "adaptive",
    "p2c",
    "peakewma",
    "prequal",
];

/// Load-balancing policies by name. Each policy is one shared instance, so its state (round-robin
/// counters, response-time windows) is shared by every service of the consumer and separated by the keys
/// Dubbo uses, as a Dubbo extension singleton is.
///
/// ```
/// use std::sync::Arc;
/// use rudder_cluster::loadbalance::{random::Random, LoadBalanceRegistry};
///
/// let mut registry = LoadBalanceRegistry::with_builtins();
/// registry.register("myrandom", Arc::new(Random));
/// assert!(registry.get("myrandom").is_ok());
/// let err = registry.get("nosuch").unwrap_err();
/// assert!(err.to_string().contains("leastactive, myrandom, p2c, peakewma, prequal, random, roundrobin"));
/// ```
#[derive(Clone, Default)]
pub struct LoadBalanceRegistry {
    policies: BTreeMap<String, Arc<dyn LoadBalance>>,
}

impl LoadBalanceRegistry {
    /// An empty registry.
    pub fn new() -> LoadBalanceRegistry {
        LoadBalanceRegistry::default()
    }

    /// The six Dubbo policies under their Dubbo names, and rudder's `p2c`, `peakewma` and `prequal`.
    pub fn with_builtins() -> LoadBalanceRegistry {
        let mut registry = LoadBalanceRegistry::new();
        registry.register("random", Arc::new(Random));
        registry.register("roundrobin", Arc::new(RoundRobin::default()));
        registry.register("leastactive", Arc::new(LeastActive));
        registry.register("shortestresponse", Arc::new(ShortestResponse::default()));
        registry.register("consistenthash", Arc::new(ConsistentHash));
        registry.register("adaptive", Arc::new(Adaptive::default()));
        registry.register("p2c", Arc::new(PowerOfTwo));
        registry.register("peakewma", Arc::new(PeakEwma::default()));
        registry.register("prequal", Arc::new(Prequal::default()));
        registry
    }

    /// Registers (or replaces) the policy called `name`.
    pub fn register(&mut self, name: &str, policy: Arc<dyn LoadBalance>) {
        self.policies.insert(name.to_owned(), policy);
    }

    /// The policy called `name`.
    ///
    /// # Errors
    /// [`UnknownLoadBalance`], listing the registered names.
    pub fn get(&self, name: &str) -> Result<Arc<dyn LoadBalance>, UnknownLoadBalance> {
        self.policies
            .get(name)
            .cloned()
            .ok_or_else(|| UnknownLoadBalance {
                name: name.to_owned(),
                registered: self.names().map(str::to_owned).collect(),
            })
    }

    /// Registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.policies.keys().map(String::as_str)
    }
}

impl fmt::Debug for LoadBalanceRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtins_list_names_what_with_builtins_registers() {
        let mut listed: Vec<&str> = BUILTINS.to_vec();
        listed.sort_unstable();
        let registry = LoadBalanceRegistry::with_builtins();
        assert_eq!(registry.names().collect::<Vec<_>>(), listed);
    }
}
