//! Relative outlier detection's settings: Envoy's `success_rate` and `failure_percentage` outlier
//! detection, read from `outlier.*` URL parameters (per method too). The detection itself is
//! [`loadbalance::outlier_relative`](crate::loadbalance::outlier_relative).

use rudder_common::url::ranges::IntRange;
use rudder_common::url::DubboUrl;

/// `outlier.interval-ms`: how often each method's providers are compared (Envoy's `interval`).
pub const INTERVAL_MS: IntRange = IntRange {
    key: "outlier.interval-ms",
    default: 10_000,
    min: 1,
    max: 86_400_000,
};

/// `outlier.enforcing-success-rate`: the chance, percent, that a provider found below the success
/// rate threshold is ejected; 0 (the default): success-rate detection off. Envoy's default is 100,
/// rudder's detection is opt-in.
pub const ENFORCING_SUCCESS_RATE: IntRange = IntRange {
    key: "outlier.enforcing-success-rate",
    default: 0,
    min: 0,
    max: 100,
};

/// `outlier.success-rate-minimum-hosts`: providers with enough calls in the interval needed for
/// success-rate detection to compare them.
pub const SUCCESS_RATE_MINIMUM_HOSTS: IntRange = IntRange {
    key: "outlier.success-rate-minimum-hosts",
    default: 5,
    min: 1,
    max: 1_000_000,
};

/// `outlier.success-rate-request-volume`: calls a provider needs in the interval to be compared.
pub const SUCCESS_RATE_REQUEST_VOLUME: IntRange = IntRange {
    key: "outlier.success-rate-request-volume",
    default: 100,
    min: 1,
    max: 1_000_000_000,
};

/// `outlier.success-rate-stdev-factor`: thousandths of a standard deviation below the mean success
/// rate under which a provider is an outlier (1900: 1.9 σ). Among n providers one outlier is at most
/// (n − 1)/√n σ below the mean (1.5 σ for four), so fewer providers need a smaller factor.
pub const SUCCESS_RATE_STDEV_FACTOR: IntRange = IntRange {
    key: "outlier.success-rate-stdev-factor",
    default: 1900,
    min: 0,
    max: 100_000,
};

/// `outlier.enforcing-failure-percentage`: the chance, percent, that a provider at or over the
/// failure percentage threshold is ejected; 0 (the default, as Envoy's): off.
pub const ENFORCING_FAILURE_PERCENTAGE: IntRange = IntRange {
    key: "outlier.enforcing-failure-percentage",
    default: 0,
    min: 0,
    max: 100,
};

/// `outlier.failure-percentage-threshold`: the share of failed calls, percent, from which a provider
/// is an outlier.
pub const FAILURE_PERCENTAGE_THRESHOLD: IntRange = IntRange {
    key: "outlier.failure-percentage-threshold",
    default: 85,
    min: 0,
    max: 100,
};

/// `outlier.failure-percentage-minimum-hosts`: providers with enough calls in the interval needed
/// for failure-percentage detection.
pub const FAILURE_PERCENTAGE_MINIMUM_HOSTS: IntRange = IntRange {
    key: "outlier.failure-percentage-minimum-hosts",
    default: 5,
    min: 1,
    max: 1_000_000,
};

/// `outlier.failure-percentage-request-volume`: calls a provider needs in the interval for its
/// failure percentage to count.
pub const FAILURE_PERCENTAGE_REQUEST_VOLUME: IntRange = IntRange {
    key: "outlier.failure-percentage-request-volume",
    default: 50,
    min: 1,
    max: 1_000_000_000,
};

/// Every relative-detection parameter, for the documentation check.
pub const RANGES: [IntRange; 9] = [
    INTERVAL_MS,
    ENFORCING_SUCCESS_RATE,
    SUCCESS_RATE_MINIMUM_HOSTS,
    SUCCESS_RATE_REQUEST_VOLUME,
    SUCCESS_RATE_STDEV_FACTOR,
    ENFORCING_FAILURE_PERCENTAGE,
    FAILURE_PERCENTAGE_THRESHOLD,
    FAILURE_PERCENTAGE_MINIMUM_HOSTS,
    FAILURE_PERCENTAGE_REQUEST_VOLUME,
];

/// Success-rate detection: a provider whose success rate is more than `stdev_factor` standard
/// deviations below the mean of the providers with enough calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuccessRate {
    /// Chance of ejecting a provider found, percent (1..=100).
    pub enforcing: u8,
    /// Providers with enough calls needed.
    pub minimum_hosts: u32,
    /// Calls in the interval a provider needs.
    pub request_volume: u64,
    /// Thousandths of a standard deviation.
    pub stdev_factor: u32,
}

/// Failure-percentage detection: a provider whose share of failed calls reaches `threshold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailurePercentage {
    /// Chance of ejecting a provider found, percent (1..=100).
    pub enforcing: u8,
    /// Failed share from which a provider is an outlier, percent.
    pub threshold: u8,
    /// Providers with enough calls needed.
    pub minimum_hosts: u32,
    /// Calls in the interval a provider needs.
    pub request_volume: u64,
}

/// The relative detection of one method: how often it runs and which kinds are on (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelativeSettings {
    /// Time between two comparisons, ms.
    pub interval_ms: i64,
    /// Success-rate detection, when `outlier.enforcing-success-rate` is above 0.
    pub success_rate: Option<SuccessRate>,
    /// Failure-percentage detection, when `outlier.enforcing-failure-percentage` is above 0.
    pub failure_percentage: Option<FailurePercentage>,
}

impl RelativeSettings {
    /// The settings for `method` in `url`; `None` when neither kind is enforced.
    ///
    /// ```
    /// use rudder_cluster::loadbalance::outlier::RelativeSettings;
    /// use rudder_common::url::DubboUrl;
    /// let url = DubboUrl::parse(
    ///     "dubbo://10.0.0.1:20880/S?outlier.enforcing-failure-percentage=100&outlier.failure-percentage-minimum-hosts=3",
    /// )?;
    /// let relative = RelativeSettings::of(&url, "m").unwrap();
    /// assert_eq!(relative.interval_ms, 10_000);
    /// assert!(relative.success_rate.is_none());
    /// assert_eq!(relative.failure_percentage.unwrap().minimum_hosts, 3);
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn of(url: &DubboUrl, method: &str) -> Option<RelativeSettings> {
        let value = |range: IntRange| range.method_value(url, method);
        let success_rate = match value(ENFORCING_SUCCESS_RATE) {
            0 => None,
            enforcing => Some(SuccessRate {
                enforcing: enforcing as u8,
                minimum_hosts: value(SUCCESS_RATE_MINIMUM_HOSTS) as u32,
                request_volume: value(SUCCESS_RATE_REQUEST_VOLUME) as u64,
                stdev_factor: value(SUCCESS_RATE_STDEV_FACTOR) as u32,
            }),
        };
        let failure_percentage = match value(ENFORCING_FAILURE_PERCENTAGE) {
            0 => None,
            enforcing => Some(FailurePercentage {
                enforcing: enforcing as u8,
                threshold: value(FAILURE_PERCENTAGE_THRESHOLD) as u8,
                minimum_hosts: value(FAILURE_PERCENTAGE_MINIMUM_HOSTS) as u32,
                request_volume: value(FAILURE_PERCENTAGE_REQUEST_VOLUME) as u64,
            }),
        };
        (success_rate.is_some() || failure_percentage.is_some()).then(|| RelativeSettings {
            interval_ms: value(INTERVAL_MS),
            success_rate,
            failure_percentage,
        })
    }
}
