//! Relative outlier detection: each method's providers compared with each other once per
//! `outlier.interval-ms`, as Envoy's `success_rate` and `failure_percentage` outlier detection do,
//! beside consecutive errors ([`outlier`](super::outlier)).
//!
//! Every call's outcome of the method (RPC errors, and exceptions thrown by the provider except the
//! classes `outlier.ignore-exceptions` names) is counted per provider. When an interval has passed,
//! the first call to end compares the providers with at least the request volume of calls in it:
//!
//! - **success rate** (`outlier.enforcing-success-rate` > 0): with at least
//!   `outlier.success-rate-minimum-hosts` such providers, one whose success rate is below
//!   mean − `stdev-factor`/1000 × σ is ejected. When every provider fails alike σ is 0 and nobody
//!   is below the mean: nothing is ejected.
//! - **failure percentage** (`outlier.enforcing-failure-percentage` > 0): with at least
//!   `outlier.failure-percentage-minimum-hosts` such providers, one whose failed share reaches
//!   `outlier.failure-percentage-threshold` is ejected, only while another of them is under the
//!   threshold (Envoy ejects them all when every one fails; rudder ejects nobody, as a failure
//!   shared by every provider is not theirs).
//!
//! A provider found is ejected with the `enforcing-*` chance, for `outlier.base-ejection-ms` × its
//! ejections so far (the same ejection as consecutive errors'), and picks leave out at most
//! `outlier.max-ejection-percent` of the providers. The counts start afresh each interval, so a
//! provider back from an ejection is judged on its calls since.
//!
//! ```
//! use rudder_cluster::loadbalance::outlier::{FailurePercentage, RelativeSettings};
//! use rudder_cluster::loadbalance::outlier_relative::{outliers, Counts};
//! let settings = RelativeSettings {
//!     interval_ms: 10_000,
//!     success_rate: None,
//!     failure_percentage: Some(FailurePercentage { enforcing: 100, threshold: 85, minimum_hosts: 3, request_volume: 50 }),
//! };
//! let one_failing = [Counts::new(0, 100), Counts::new(100, 0), Counts::new(100, 0), Counts::new(100, 0)];
//! assert_eq!(outliers(&one_failing, &settings, &mut |_| true), [0]);
//! let all_failing = [Counts::new(0, 100); 4];
//! assert!(outliers(&all_failing, &settings, &mut |_| true).is_empty());
//! ```

pub use crate::view::outlier_relative::{
    FailurePercentage, RelativeSettings, SuccessRate, ENFORCING_FAILURE_PERCENTAGE,
    ENFORCING_SUCCESS_RATE, FAILURE_PERCENTAGE_MINIMUM_HOSTS, FAILURE_PERCENTAGE_REQUEST_VOLUME,
    FAILURE_PERCENTAGE_THRESHOLD, INTERVAL_MS, RANGES, SUCCESS_RATE_MINIMUM_HOSTS,
    SUCCESS_RATE_REQUEST_VOLUME, SUCCESS_RATE_STDEV_FACTOR,
};

/// One provider's calls of the method in the interval just ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Calls that succeeded.
    pub ok: u64,
    /// Calls that failed (as ejection counts failures).
    pub failed: u64,
    /// Already ejected: compared with the others, never ejected again.
    pub ejected: bool,
}

impl Counts {
    /// `ok` successes and `failed` failures of a provider not ejected.
    pub fn new(ok: u64, failed: u64) -> Counts {
        Counts {
            ok,
            failed,
            ejected: false,
        }
    }

    fn total(&self) -> u64 {
        self.ok.saturating_add(self.failed)
    }

    /// Success rate, percent.
    fn success_rate(&self) -> f64 {
        100.0 * self.ok as f64 / self.total().max(1) as f64
    }
}

/// The providers (indexes into `counts`) the interval's comparison ejects, in order. `enforce` is
/// asked, with the `enforcing-*` percentage, whether to eject one found (a roll of the balancer's
/// random source in use; `|_| true` in tests that want no chance).
pub fn outliers(
    counts: &[Counts],
    settings: &RelativeSettings,
    enforce: &mut dyn FnMut(u8) -> bool,
) -> Vec<usize> {
    let mut found: Vec<usize> = Vec::new();
    let mut eject = |index: usize, enforcing: u8, found: &mut Vec<usize>| {
        if !counts[index].ejected && !found.contains(&index) && enforce(enforcing) {
            found.push(index);
        }
    };
    if let Some(rule) = &settings.success_rate {
        for index in below_success_rate(counts, rule) {
            eject(index, rule.enforcing, &mut found);
        }
    }
    if let Some(rule) = &settings.failure_percentage {
        for index in over_failure_percentage(counts, rule) {
            eject(index, rule.enforcing, &mut found);
        }
    }
    found.sort_unstable();
    found
}

/// The providers more than the stdev factor below the mean success rate.
fn below_success_rate(counts: &[Counts], rule: &SuccessRate) -> Vec<usize> {
    let rates: Vec<(usize, f64)> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.total() >= rule.request_volume)
        .map(|(i, c)| (i, c.success_rate()))
        .collect();
    if rates.is_empty() || rates.len() < rule.minimum_hosts as usize {
        return Vec::new();
    }
    let n = rates.len() as f64;
    let mean = rates.iter().map(|(_, r)| r).sum::<f64>() / n;
    let variance = rates.iter().map(|(_, r)| (r - mean).powi(2)).sum::<f64>() / n;
    let threshold = mean - f64::from(rule.stdev_factor) / 1000.0 * variance.sqrt();
    rates
        .into_iter()
        .filter(|(_, rate)| *rate < threshold)
        .map(|(i, _)| i)
        .collect()
}

/// The providers at or over the failure threshold, while another is under it.
fn over_failure_percentage(counts: &[Counts], rule: &FailurePercentage) -> Vec<usize> {
    let shares: Vec<(usize, f64)> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.total() >= rule.request_volume)
        .map(|(i, c)| (i, 100.0 - c.success_rate()))
        .collect();
    if shares.is_empty() || shares.len() < rule.minimum_hosts as usize {
        return Vec::new();
    }
    let threshold = f64::from(rule.threshold);
    let healthy = shares.iter().any(|(_, share)| *share < threshold);
    if !healthy {
        return Vec::new();
    }
    shares
        .into_iter()
        .filter(|(_, share)| *share >= threshold)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests;
