//! Fault-tolerance modes and how they are read from consumer parameters.

use std::fmt;

use rudder_common::url::ranges::IntRange;
use rudder_common::url::DubboUrl;

/// Dubbo's default `retries` for failover.
pub const DEFAULT_RETRIES: u32 = 2;

/// `retries`: 0 ..= 100 extra attempts (negative is 0, as in Dubbo; more than 100 attempts of one call is a
/// retry storm, not fault tolerance).
pub const RETRIES: IntRange = IntRange {
    key: "retries",
    default: DEFAULT_RETRIES as i64,
    min: 0,
    max: 100,
};

/// What the cluster invoker does when a call fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClusterMode {
    /// Retry on other providers; `retries` extra attempts.
    Failover {
        /// Extra attempts after the first.
        retries: u32,
    },
    /// Fail at once.
    Failfast,
    /// Return an empty result instead of failing.
    Failsafe,
    /// Call the first listed provider, no balancing.
    Available,
}

impl Default for ClusterMode {
    fn default() -> Self {
        ClusterMode::Failover {
            retries: DEFAULT_RETRIES,
        }
    }
}

/// The `cluster` name is not one rudder implements.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported cluster mode {0:?}; supported: failover, failfast, failsafe, available")]
pub struct UnsupportedClusterMode(pub String);

impl ClusterMode {
    /// Reads `cluster` and (for failover) `<method>.retries`/`retries` from consumer parameters, as Dubbo 3
    /// does: from the consumer's own configuration, never from provider URLs. Negative retries mean 0.
    ///
    /// ```
    /// use rudder_cluster::cluster::ClusterMode;
    /// use rudder_common::url::DubboUrl;
    /// let consumer = DubboUrl::parse("consumer://10.0.0.9/S?retries=4&save.retries=0").unwrap();
    /// assert_eq!(ClusterMode::from_consumer(&consumer, "get").unwrap(), ClusterMode::Failover { retries: 4 });
    /// assert_eq!(ClusterMode::from_consumer(&consumer, "save").unwrap(), ClusterMode::Failover { retries: 0 });
    /// ```
    ///
    /// # Errors
    /// [`UnsupportedClusterMode`] for a name rudder does not implement (e.g. `forking`).
    pub fn from_consumer(
        consumer: &DubboUrl,
        method: &str,
    ) -> Result<ClusterMode, UnsupportedClusterMode> {
        match consumer.parameter("cluster").unwrap_or("failover") {
            "" | "failover" => Ok(ClusterMode::Failover {
                retries: RETRIES.method_value(consumer, method) as u32,
            }),
            "failfast" => Ok(ClusterMode::Failfast),
            "failsafe" => Ok(ClusterMode::Failsafe),
            "available" => Ok(ClusterMode::Available),
            other => Err(UnsupportedClusterMode(other.to_owned())),
        }
    }
}

impl fmt::Display for ClusterMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterMode::Failover { retries } => write!(f, "failover (retries={retries})"),
            ClusterMode::Failfast => f.write_str("failfast"),
            ClusterMode::Failsafe => f.write_str("failsafe"),
            ClusterMode::Available => f.write_str("available"),
        }
    }
}
