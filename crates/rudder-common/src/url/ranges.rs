//! Valid ranges of the numeric URL parameters a consumer reads, and how a bad value is handled.
//!
//! A provider URL comes from someone else: a registry, an operator's configurator, a typo. A value a
//! consumer cannot use must neither crash it (a `hash.nodes` of 2^32 once asked for a 68 GB ring) nor drop
//! the whole provider (a bad `sayHello.weight` once made rudder skip the provider for every method). So:
//!
//! * absent or empty: the next source is asked (`<method>.<key>`, then `<key>`, then the default);
//! * not a number: that value is ignored as if absent, with a warning;
//! * a number outside the range: clamped into it, with a warning.
//!
//! Warnings are logged once per (parameter, value), not per snapshot or call, and the set of values
//! remembered for that is bounded.
//!
//! ```
//! use rudder_common::url::{ranges::IntRange, DubboUrl};
//!
//! const WEIGHT: IntRange = IntRange { key: "weight", default: 100, min: 0, max: i32::MAX as i64 };
//! let url = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=300&sayHello.weight=heavy&bye.weight=-5")?;
//! assert_eq!(WEIGHT.method_value(&url, "sayHello"), 300); // a bad method value falls back to `weight`
//! assert_eq!(WEIGHT.method_value(&url, "bye"), 0);        // clamped
//! assert_eq!(WEIGHT.value(&DubboUrl::parse("dubbo://h:1/S")?), 100);
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;

use super::DubboUrl;

/// An integer parameter: its key, its default and the range values are clamped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntRange {
    /// The parameter's key (`weight`; the method form is `<method>.weight`).
    pub key: &'static str,
    /// Used when no source gives a usable value.
    pub default: i64,
    /// Smallest valid value.
    pub min: i64,
    /// Largest valid value.
    pub max: i64,
}

impl IntRange {
    /// `raw` as a value in range: `None` when absent, empty or not a number (warned about).
    pub fn read(&self, raw: Option<&str>, shown: &str) -> Option<i64> {
        let raw = raw?;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return None;
        }
        match trimmed.parse::<i64>() {
            Err(_) => {
                warn_once(
                    shown,
                    raw,
                    format_args!("parameter {shown}={raw:?} is not a whole number; ignoring it"),
                );
                None
            }
            Ok(v) => Some(self.clamped(v, raw, shown)),
        }
    }

    /// The service-level value: `key`, else the default.
    pub fn value(&self, url: &DubboUrl) -> i64 {
        self.read(url.parameter(self.key), self.key)
            .unwrap_or(self.default)
    }

    /// The value for `method`: `<method>.<key>`, else `key`, else the default; a source whose value is
    /// unusable is skipped, so a bad method-level value disables only itself.
    pub fn method_value(&self, url: &DubboUrl, method: &str) -> i64 {
        let strict = url.strict_method_parameter(method, self.key);
        if strict.is_some() {
            let shown = Shown(method, self.key).to_string();
            if let Some(v) = self.read(strict, &shown) {
                return v;
            }
        }
        self.value(url)
    }
}

// Dubbo's `getPositiveParameter` reading, for settings where zero or less means "not set"
// (`timeout`, `payload`, `heartbeat`...): the readings above clamp `timeout=0` to 1 ms, these give the
// default, as Dubbo does.
impl IntRange {
    /// `raw` in range; the default when absent or empty, and (warned about once) when not a
    /// positive whole number.
    pub fn positive(&self, raw: Option<&str>, shown: &str) -> i64 {
        let Some(raw) = raw.filter(|r| !r.trim().is_empty()) else {
            return self.default;
        };
        match raw.trim().parse::<i64>() {
            Ok(v) if v > 0 => self.clamped(v, raw, shown),
            _ => {
                warn_once(
                    shown,
                    raw,
                    format_args!(
                        "parameter {shown}={raw:?} is not a positive whole number; using the default {}",
                        self.default
                    ),
                );
                self.default
            }
        }
    }

    /// The service-level value, read as [`IntRange::positive`] does.
    pub fn positive_value(&self, url: &DubboUrl) -> i64 {
        self.positive(url.parameter(self.key), self.key)
    }

    /// `<method>.<key>`, else `key`, read as [`IntRange::positive`] does. As in Dubbo's
    /// `getMethodPositiveParameter`, the value found first decides: a bad method-level value gives the
    /// default, not the service-level value.
    ///
    /// ```
    /// use rudder_common::url::{ranges::IntRange, DubboUrl};
    ///
    /// const TIMEOUT: IntRange = IntRange { key: "timeout", default: 1000, min: 1, max: 3_600_000 };
    /// let url = DubboUrl::parse("dubbo://h:1/S?timeout=3000&a.timeout=0&b.timeout=x&c.timeout=9999999999")?;
    /// assert_eq!(TIMEOUT.positive_method_value(&url, "a"), 1000); // zero: the default, not `timeout`
    /// assert_eq!(TIMEOUT.positive_method_value(&url, "b"), 1000); // not a number: the default (warned)
    /// assert_eq!(TIMEOUT.positive_method_value(&url, "c"), 3_600_000); // clamped (warned)
    /// assert_eq!(TIMEOUT.positive_method_value(&url, "d"), 3000); // no method value: `timeout`
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn positive_method_value(&self, url: &DubboUrl, method: &str) -> i64 {
        self.positive(url.method_parameter(method, self.key), self.key)
    }

    /// `v` clamped into the range, warned about once when it was outside.
    fn clamped(&self, v: i64, raw: &str, shown: &str) -> i64 {
        if (self.min..=self.max).contains(&v) {
            return v;
        }
        let clamped = v.clamp(self.min, self.max);
        warn_once(
            shown,
            raw,
            format_args!(
                "parameter {shown}={v} is outside {}..={}; using {clamped}",
                self.min, self.max
            ),
        );
        clamped
    }
}

/// `<method>.<key>`, for messages.
struct Shown<'a>(&'a str, &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// Distinct (parameter, value) pairs warned about; past this many, new ones are neither remembered nor
/// warned about, so hostile URLs cannot grow the set without bound.
const MAX_WARNED: usize = 1024;

static WARNED: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

/// Logs `message` as a warning unless this (key, value) pair was warned about already; whether it logged.
pub fn warn_once(key: &str, value: &str, message: fmt::Arguments<'_>) -> bool {
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    let set = warned.get_or_insert_with(HashSet::new);
    if set.len() >= MAX_WARNED || !set.insert((key.to_owned(), value.to_owned())) {
        return false;
    }
    tracing::warn!("{message}");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: IntRange = IntRange {
        key: "knob",
        default: 7,
        min: 1,
        max: 10,
    };

    fn url(s: &str) -> DubboUrl {
        DubboUrl::parse(s).unwrap()
    }

    #[test]
    fn sources_are_asked_in_order_and_bad_ones_skipped() {
        assert_eq!(R.method_value(&url("d://h:1/S?m.knob=3&knob=5"), "m"), 3);
        assert_eq!(R.method_value(&url("d://h:1/S?m.knob=x&knob=5"), "m"), 5);
        assert_eq!(R.method_value(&url("d://h:1/S?m.knob=x&knob=y"), "m"), 7);
        assert_eq!(R.method_value(&url("d://h:1/S?m.knob=&knob=4"), "m"), 4);
        assert_eq!(R.method_value(&url("d://h:1/S?m.knob=99"), "m"), 10);
        assert_eq!(R.method_value(&url("d://h:1/S?knob=-3"), "m"), 1);
        assert_eq!(R.value(&url("d://h:1/S?knob=99999999999999999999"),), 7);
    }

    #[test]
    fn a_bad_value_is_warned_about_once() {
        assert!(warn_once("ranges-test", "abc", format_args!("first")));
        assert!(!warn_once("ranges-test", "abc", format_args!("again")));
        assert!(warn_once(
            "ranges-test",
            "abd",
            format_args!("another value")
        ));
    }
}
