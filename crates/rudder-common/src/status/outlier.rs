//! Outlier ejection state of one provider's method counters (Envoy's passive health checking).
//!
//! The cluster records each call's outcome here when `outlier.consecutive-errors` is set; the balancer
//! leaves an ejected provider out of its picks until the ejection ends. The policy (thresholds, the
//! share of providers that may be out at once) lives in `rudder-cluster`; this is only the state.
//!
//! ```
//! # #[allow(unused_imports)] use rudder_common::status::record::*;
//! use rudder_common::status::RpcStatus;
//! let status = RpcStatus::default();
//! let outlier = status.outlier();
//! assert!(!outlier.record(false, 2, 30_000, 1_000)); // one error of two
//! assert!(outlier.record(false, 2, 30_000, 1_001)); // the second: ejected for 30 s
//! assert!(outlier.is_ejected(30_000));
//! assert!(!outlier.is_ejected(31_001));
//! assert_eq!(outlier.ejections(), 1);
//! ```

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};

/// The longest a growing ejection lasts: ten base intervals.
const MAX_MULTIPLIER: i64 = 10;

/// When the last ejection of any provider of the process ends: picks skip looking for ejected
/// providers (one load) once it has passed.
static LAST_EJECTION_END: AtomicI64 = AtomicI64::new(i64::MIN);

/// Whether some provider of the process may be ejected at `now`.
#[inline]
pub fn ejections_in_force(now: i64) -> bool {
    now < LAST_EJECTION_END.load(Relaxed)
}

/// Whether any provider was ever ejected (so a pick must read the clock to know more).
#[inline]
pub fn ejections_ever() -> bool {
    LAST_EJECTION_END.load(Relaxed) != i64::MIN
}

/// Consecutive RPC errors, the calls of the current comparison interval, and the ejection in force,
/// of one provider's method.
#[derive(Debug, Default)]
pub struct OutlierState {
    consecutive: AtomicU32,
    ejected_until: AtomicI64,
    ejections: AtomicU32,
    /// Successes and failures since the interval began (relative detection).
    interval_ok: AtomicU64,
    interval_failed: AtomicU64,
    /// When this provider's current interval began (epoch ms; 0 before the first call).
    interval_started: AtomicI64,
}

impl OutlierState {
    /// Records a call's outcome at `now` (`ok`: not a failure as the cluster counts them). The
    /// `threshold`-th error in a row (and every later one) ejects the provider for `base_millis` × the
    /// number of times it has been ejected (at most 10 ×) if `allowed` says so; returns whether this
    /// call ejected it.
    pub(crate) fn write_record(
        &self,
        ok: bool,
        threshold: u32,
        base_millis: i64,
        now: i64,
        allowed: &dyn Fn() -> bool,
    ) -> bool {
        let counter = if ok {
            &self.interval_ok
        } else {
            &self.interval_failed
        };
        counter.fetch_add(1, Relaxed);
        if ok {
            if self.consecutive.load(Relaxed) != 0 {
                self.consecutive.store(0, Relaxed);
            }
            return false;
        }
        let errors = self.consecutive.fetch_add(1, Relaxed).saturating_add(1);
        if threshold == 0 || errors < threshold || self.is_ejected(now) || !allowed() {
            return false;
        }
        self.consecutive.store(0, Relaxed);
        self.eject(base_millis, now);
        true
    }

    /// Ejects the provider at `now` for `base_millis` × the times it has been ejected (at most 10 ×).
    fn eject(&self, base_millis: i64, now: i64) {
        let times = self.ejections.fetch_add(1, Relaxed).saturating_add(1);
        let until =
            now.saturating_add(base_millis.saturating_mul(i64::from(times).min(MAX_MULTIPLIER)));
        self.ejected_until.store(until, Relaxed);
        LAST_EJECTION_END.fetch_max(until, Relaxed);
    }

    /// Ejects the provider as relative detection found it an outlier, unless it is ejected already;
    /// returns whether it was.
    pub(crate) fn write_eject(&self, base_millis: i64, now: i64) -> bool {
        if self.is_ejected(now) {
            return false;
        }
        self.consecutive.store(0, Relaxed);
        self.eject(base_millis, now);
        true
    }

    /// The successes and failures counted since the interval began, starting the next one at `now`.
    pub(crate) fn write_take_interval(&self, now: i64) -> (u64, u64) {
        self.interval_started.store(now, Relaxed);
        (
            self.interval_ok.swap(0, Relaxed),
            self.interval_failed.swap(0, Relaxed),
        )
    }

    /// Whether `interval_millis` have passed at `now` since this provider's interval began (a call
    /// ending then starts the comparison of the method's providers).
    #[inline]
    pub fn interval_due(&self, interval_millis: i64, now: i64) -> bool {
        now.saturating_sub(self.interval_started.load(Relaxed)) >= interval_millis
    }

    /// Successes and failures counted in the current interval.
    pub fn interval_counts(&self) -> (u64, u64) {
        (
            self.interval_ok.load(Relaxed),
            self.interval_failed.load(Relaxed),
        )
    }

    /// Whether the provider is ejected at `now`.
    #[inline]
    pub fn is_ejected(&self, now: i64) -> bool {
        now < self.ejected_until.load(Relaxed)
    }

    /// When the last ejection ends (epoch ms; 0 if never ejected).
    pub fn ejected_until(&self) -> i64 {
        self.ejected_until.load(Relaxed)
    }

    /// How many times the provider has been ejected.
    pub fn ejections(&self) -> u32 {
        self.ejections.load(Relaxed)
    }

    /// RPC errors in a row since the last success or ejection.
    pub fn consecutive_errors(&self) -> u32 {
        self.consecutive.load(Relaxed)
    }
}
