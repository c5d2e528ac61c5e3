//! Outlier ejection's settings and the ejections in force: plain data about providers, read by the
//! view, the balancer's picks and the routers' explanations (the rules are documented in
//! [`loadbalance::outlier`](crate::loadbalance::outlier)).

use rudder_common::url::ranges::IntRange;
use rudder_common::url::DubboUrl;

use crate::provider::Provider;

/// `outlier.consecutive-errors`: RPC errors in a row that eject a provider; 0 or absent: off.
pub const CONSECUTIVE_ERRORS: IntRange = IntRange {
    key: "outlier.consecutive-errors",
    default: 0,
    min: 0,
    max: 1_000_000,
};

/// `outlier.base-ejection-ms`: the first ejection's length; each further one lasts one more of it.
pub const BASE_EJECTION_MS: IntRange = IntRange {
    key: "outlier.base-ejection-ms",
    default: 30_000,
    min: 1,
    max: 86_400_000,
};

/// `outlier.max-ejection-percent`: the largest share of a method's providers out at once.
pub const MAX_EJECTION_PERCENT: IntRange = IntRange {
    key: "outlier.max-ejection-percent",
    default: 50,
    min: 0,
    max: 100,
};

/// `outlier.ignore-exceptions`: the exception classes (fully qualified, comma-separated) a method
/// throws as business results: not failures for ejection. Other provider exceptions are.
pub const IGNORE_EXCEPTIONS_KEY: &str = "outlier.ignore-exceptions";

/// The classes `outlier.ignore-exceptions` names for `method` in `url` (empty when none), trimmed,
/// at most [`MAX_IGNORED`] of them.
pub fn ignored_exceptions(url: &DubboUrl, method: &str) -> Vec<Box<str>> {
    url.method_parameter(method, IGNORE_EXCEPTIONS_KEY)
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|class| !class.is_empty())
        .take(MAX_IGNORED)
        .map(Box::from)
        .collect()
}

/// The most exception classes `outlier.ignore-exceptions` holds; more are left out.
pub const MAX_IGNORED: usize = 256;

use super::outlier_relative::RelativeSettings;

/// The outlier settings of one method, read from a (consumer-merged) provider URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlierSettings {
    /// Errors in a row that eject (0: only relative detection ejects).
    pub consecutive_errors: u32,
    /// Length of the first ejection, ms.
    pub base_ejection_ms: i64,
    /// Largest share of providers out at once, percent.
    pub max_ejection_percent: u8,
    /// Detection relative to the method's other providers, when on.
    pub relative: Option<RelativeSettings>,
}

impl OutlierSettings {
    /// The settings for `method` in `url`; `None` when ejection is off (neither consecutive errors
    /// nor a relative detection set).
    pub fn of(url: &DubboUrl, method: &str) -> Option<OutlierSettings> {
        let errors = CONSECUTIVE_ERRORS.method_value(url, method);
        let relative = RelativeSettings::of(url, method);
        (errors > 0 || relative.is_some()).then(|| OutlierSettings {
            consecutive_errors: errors as u32,
            base_ejection_ms: BASE_EJECTION_MS.method_value(url, method),
            max_ejection_percent: MAX_EJECTION_PERCENT.method_value(url, method) as u8,
            relative,
        })
    }
}

/// An ejection in force, as `--explain`, the metrics and `rudder bench` report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ejection {
    /// When it ends (epoch ms of the balancer's clock).
    pub until_millis: i64,
    /// How long it still lasts at the time asked, ms.
    pub remaining_millis: i64,
    /// How many times the provider has been ejected for the method, this time included.
    pub times: u32,
    /// Whether picks leave the provider out: `false` when `outlier.max-ejection-percent` is reached
    /// by providers earlier in the list, or every provider left is out, so it is picked anyway.
    pub left_out: bool,
}

impl Ejection {
    /// The ejection of `provider` for `method` at `now`, if one is in force. Reads the counters
    /// without creating any (a method never called has none).
    pub fn of(provider: &Provider, method: &str, now: i64) -> Option<Ejection> {
        let status = provider.status().find_method(method)?;
        let outlier = status.outlier();
        outlier.is_ejected(now).then(|| Ejection {
            until_millis: outlier.ejected_until(),
            remaining_millis: outlier.ejected_until().saturating_sub(now),
            times: outlier.ejections(),
            left_out: true,
        })
    }

    /// The ejections of `providers` (a routed set, in the balancer's order) for `method` at `now`,
    /// decided as a pick decides them: only with `outlier.*` set on the first provider (where the
    /// balancer reads it), at most `max-ejection-percent` of them left out, the first in order, and
    /// none when that would leave nobody.
    pub fn among<'a>(
        providers: impl IntoIterator<Item = &'a Provider>,
        method: &str,
        now: i64,
    ) -> Vec<Option<Ejection>> {
        let providers: Vec<&Provider> = providers.into_iter().collect();
        let Some(settings) = providers
            .first()
            .and_then(|p| OutlierSettings::of(p.url(), method))
        else {
            return vec![None; providers.len()];
        };
        let allowed = (providers.len() * usize::from(settings.max_ejection_percent)) / 100;
        let mut left_out = 0;
        let mut found: Vec<Option<Ejection>> = providers
            .iter()
            .map(|p| {
                let mut ejection = Ejection::of(p, method, now)?;
                ejection.left_out = left_out < allowed;
                left_out += usize::from(ejection.left_out);
                Some(ejection)
            })
            .collect();
        if left_out == providers.len() {
            for ejection in found.iter_mut().flatten() {
                ejection.left_out = false;
            }
        }
        found
    }
}
