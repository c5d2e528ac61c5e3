//! Outlier ejection for every policy (Envoy's passive health checking; Dubbo has none, apache/dubbo#896).
//!
//! With `outlier.consecutive-errors=N` set (consumer or provider side, per method too:
//! `<method>.outlier.consecutive-errors`), a provider whose calls of the method fail N times in a row
//! (RPC errors: refused, reset, timed out; and exceptions thrown by the provider's method, except the
//! classes `outlier.ignore-exceptions=a.B,c.D` names as business results) is left out of picks for
//! `outlier.base-ejection-ms` (30 s) × the number of times it has been ejected (at most 10 ×), then let
//! back in. At most `outlier.max-ejection-percent` (50) of a method's providers are out at once, the
//! first in list order; when every provider a call may still use is out, the call picks among them
//! anyway, so a whole-service outage still reaches someone.
//!
//! Relative to the others: the N-th failure in a row ejects only while another provider of the
//! method is healthy (its last call of the method succeeded, and it is not ejected). A request that
//! fails everywhere (a bad argument, the whole service or its database down) ejects nobody: the
//! failure is not the provider's. Each further failure asks again, so the provider is ejected as
//! soon as another one answers. Off unless `outlier.consecutive-errors` is
//! set.
//!
//! Beside consecutive errors, or alone: detection relative to the method's other providers, as
//! Envoy's `success_rate` and `failure_percentage` ([`outlier_relative`](super::outlier_relative);
//! on with `outlier.enforcing-success-rate` or `outlier.enforcing-failure-percentage` above 0). The state is the provider's method counters ([`OutlierState`](rudder_common::status::OutlierState)).
//!
//! ```
//! use rudder_cluster::loadbalance::outlier::OutlierSettings;
//! use rudder_common::url::DubboUrl;
//! let url = DubboUrl::parse("dubbo://10.0.0.1:20880/S?outlier.consecutive-errors=5&m.outlier.base-ejection-ms=1000")?;
//! let settings = OutlierSettings::of(&url, "m").unwrap();
//! assert_eq!((settings.consecutive_errors, settings.base_ejection_ms, settings.max_ejection_percent), (5, 1000, 50));
//! assert!(OutlierSettings::of(&DubboUrl::parse("dubbo://10.0.0.1:20880/S")?, "m").is_none());
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::sync::Arc;

use crate::provider::Provider;
pub use crate::view::outlier::{
    ignored_exceptions, Ejection, OutlierSettings, BASE_EJECTION_MS, CONSECUTIVE_ERRORS,
    IGNORE_EXCEPTIONS_KEY, MAX_EJECTION_PERCENT, MAX_IGNORED,
};
pub use crate::view::outlier_relative::{FailurePercentage, RelativeSettings, SuccessRate};
use crate::view::MethodView;

/// The providers of `view` a pick at `now` leaves out as ejected, on top of `excluded`: `None` when
/// none is (the common case, which allocates nothing).
pub(crate) fn ejected(
    view: &MethodView,
    settings: &OutlierSettings,
    excluded: &[Arc<Provider>],
    now: i64,
) -> Option<Vec<Arc<Provider>>> {
    let allowed = (view.len() * usize::from(settings.max_ejection_percent)) / 100;
    if allowed == 0 {
        return None;
    }
    let mut out: Option<Vec<Arc<Provider>>> = None;
    for (i, provider) in view.providers().iter().enumerate() {
        if view.method_status(i).outlier().is_ejected(now) {
            let list = out.get_or_insert_with(|| excluded.to_vec());
            list.push(Arc::clone(provider));
            if list.len() - excluded.len() == allowed {
                break;
            }
        }
    }
    out
}

/// The ejected providers of `view` at `now`, with when each ejection ends: for `--explain` and
/// `rudder providers`.
pub fn ejections(view: &MethodView, now: i64) -> Vec<(Arc<Provider>, i64)> {
    view.providers()
        .iter()
        .enumerate()
        .filter(|(i, _)| view.method_status(*i).outlier().is_ejected(now))
        .map(|(i, p)| {
            (
                Arc::clone(p),
                view.method_status(i).outlier().ejected_until(),
            )
        })
        .collect()
}
