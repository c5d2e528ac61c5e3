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

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering::Relaxed};

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

/// Consecutive RPC errors and the ejection in force, of one provider's method.
#[derive(Debug, Default)]
pub struct OutlierState {
    consecutive: AtomicU32,
    ejected_until: AtomicI64,
    ejections: AtomicU32,
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
        let times = self.ejections.fetch_add(1, Relaxed).saturating_add(1);
        let until =
            now.saturating_add(base_millis.saturating_mul(i64::from(times).min(MAX_MULTIPLIER)));
        self.ejected_until.store(until, Relaxed);
        LAST_EJECTION_END.fetch_max(until, Relaxed);
        true
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
