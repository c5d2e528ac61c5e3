//! [`LoadBalanceStrategy`]: which load balancer a reference (or one method) uses, by Dubbo name.

use std::fmt;
use std::str::FromStr;

/// A load-balance strategy for [`ReferenceBuilder::loadbalance`](crate::ReferenceBuilder::loadbalance):
/// one of the nine built-ins (Dubbo's six and rudder's `p2c`, `peakewma` and `prequal`), or a strategy registered on the consumer under a name
/// ([`ConsumerBuilder::loadbalance_policy`](crate::ConsumerBuilder::loadbalance_policy)).
///
/// Names as they come from URLs and configuration are accepted as they are: `"roundrobin".into()`
/// is [`LoadBalanceStrategy::RoundRobin`], any other name is [`LoadBalanceStrategy::Custom`].
///
/// ```
/// use rudder::LoadBalanceStrategy;
/// assert_eq!(LoadBalanceStrategy::from("leastactive"), LoadBalanceStrategy::LeastActive);
/// assert_eq!(LoadBalanceStrategy::RoundRobin.name(), "roundrobin");
/// assert_eq!(LoadBalanceStrategy::from("p2c"), LoadBalanceStrategy::P2c);
/// assert_eq!(LoadBalanceStrategy::custom("mine").name(), "mine");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum LoadBalanceStrategy {
    /// `random` (Dubbo's default): weighted random.
    #[default]
    Random,
    /// `roundrobin`: smooth weighted round robin.
    RoundRobin,
    /// `leastactive`: fewest calls in flight, ties by weight.
    LeastActive,
    /// `shortestresponse`: shortest expected response over the sliding window.
    ShortestResponse,
    /// `consistenthash`: a ring over the call's first argument(s).
    ConsistentHash,
    /// `adaptive`: Dubbo 3's adaptive balancer, from the providers' load reports.
    Adaptive,
    /// `p2c`: power of two choices by calls in flight (rudder's own).
    P2c,
    /// `peakewma`: latency (peak-sensitive moving average) × calls in flight (rudder's own).
    PeakEwma,
    /// `prequal`: a few random candidates, the cold ones (calls in flight not above the others'
    /// 75th percentile) by latency (rudder's own).
    Prequal,
    /// A strategy registered on the consumer under this name.
    Custom(String),
}

impl LoadBalanceStrategy {
    /// Every built-in strategy, in the order the docs list them.
    pub const BUILTINS: [LoadBalanceStrategy; 9] = [
        LoadBalanceStrategy::Random,
        LoadBalanceStrategy::RoundRobin,
        LoadBalanceStrategy::LeastActive,
        LoadBalanceStrategy::ShortestResponse,
        LoadBalanceStrategy::ConsistentHash,
        LoadBalanceStrategy::Adaptive,
        LoadBalanceStrategy::P2c,
        LoadBalanceStrategy::PeakEwma,
        LoadBalanceStrategy::Prequal,
    ];

    /// A strategy registered on the consumer under `name` (a built-in name gives the built-in).
    pub fn custom(name: impl Into<String>) -> LoadBalanceStrategy {
        LoadBalanceStrategy::from(name.into().as_str())
    }

    /// The Dubbo name, as `loadbalance=` carries it.
    pub fn name(&self) -> &str {
        match self {
            LoadBalanceStrategy::Random => "random",
            LoadBalanceStrategy::RoundRobin => "roundrobin",
            LoadBalanceStrategy::LeastActive => "leastactive",
            LoadBalanceStrategy::ShortestResponse => "shortestresponse",
            LoadBalanceStrategy::ConsistentHash => "consistenthash",
            LoadBalanceStrategy::Adaptive => "adaptive",
            LoadBalanceStrategy::P2c => "p2c",
            LoadBalanceStrategy::PeakEwma => "peakewma",
            LoadBalanceStrategy::Prequal => "prequal",
            LoadBalanceStrategy::Custom(name) => name,
        }
    }
}

impl From<&str> for LoadBalanceStrategy {
    fn from(name: &str) -> LoadBalanceStrategy {
        match name {
            "random" => LoadBalanceStrategy::Random,
            "roundrobin" => LoadBalanceStrategy::RoundRobin,
            "leastactive" => LoadBalanceStrategy::LeastActive,
            "shortestresponse" => LoadBalanceStrategy::ShortestResponse,
            "consistenthash" => LoadBalanceStrategy::ConsistentHash,
            "adaptive" => LoadBalanceStrategy::Adaptive,
            "p2c" => LoadBalanceStrategy::P2c,
            "peakewma" => LoadBalanceStrategy::PeakEwma,
            "prequal" => LoadBalanceStrategy::Prequal,
            other => LoadBalanceStrategy::Custom(other.to_owned()),
        }
    }
}

impl FromStr for LoadBalanceStrategy {
    type Err = std::convert::Infallible;

    /// Every name parses; whether a custom one is registered is checked by the builder.
    fn from_str(name: &str) -> Result<LoadBalanceStrategy, Self::Err> {
        Ok(LoadBalanceStrategy::from(name))
    }
}

impl fmt::Display for LoadBalanceStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::LoadBalanceStrategy;

    #[test]
    fn the_variants_are_the_cluster_builtins_in_order_and_round_trip_by_name() {
        let names: Vec<&str> = LoadBalanceStrategy::BUILTINS
            .iter()
            .map(|s| s.name())
            .collect();
        assert_eq!(names, rudder_cluster::loadbalance::BUILTINS);
        for strategy in LoadBalanceStrategy::BUILTINS {
            assert_eq!(LoadBalanceStrategy::from(strategy.name()), strategy);
        }
    }
}
