//! [`LoadBalanceStrategy`]: which load balancer a reference (or one method) uses, by Dubbo name.

use std::fmt;
use std::str::FromStr;

/// A load-balance strategy for [`ReferenceBuilder::loadbalance`](crate::ReferenceBuilder::loadbalance):
/// one of Dubbo's five built-ins, or a strategy registered on the consumer under a name
/// ([`ConsumerBuilder::loadbalance_policy`](crate::ConsumerBuilder::loadbalance_policy)).
///
/// Names as they come from URLs and configuration are accepted as they are: `"roundrobin".into()`
/// is [`LoadBalanceStrategy::RoundRobin`], any other name is [`LoadBalanceStrategy::Custom`].
///
/// ```
/// use rudder::LoadBalanceStrategy;
/// assert_eq!(LoadBalanceStrategy::from("leastactive"), LoadBalanceStrategy::LeastActive);
/// assert_eq!(LoadBalanceStrategy::RoundRobin.name(), "roundrobin");
/// assert_eq!(LoadBalanceStrategy::custom("p2c").name(), "p2c");
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
    /// A strategy registered on the consumer under this name.
    Custom(String),
}

impl LoadBalanceStrategy {
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
