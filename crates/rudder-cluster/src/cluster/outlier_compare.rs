//! The cluster's side of relative outlier detection: once per interval, the call that ends first
//! compares the method's providers ([`outliers`]) and ejects the ones found.

use rudder_common::status::record::RecordOutcome;

use crate::balancer::Balancer;
use crate::loadbalance::outlier::OutlierSettings;
use crate::loadbalance::outlier_relative::{outliers, Counts};

/// Compares the providers of `method` (all of them, before routing: the comparison is of providers,
/// not of one call's route) if no other call is doing it for this interval, and ejects the outliers.
pub(super) fn compare(balancer: &Balancer, method: &str, settings: &OutlierSettings, now: i64) {
    let Some(relative) = &settings.relative else {
        return;
    };
    balancer.directory().with_current(|snapshot| {
        snapshot.with_view(method, |view| {
            if !view.claim_outlier_interval(relative.interval_ms, now) {
                return;
            }
            let counts: Vec<Counts> = view
                .method_statuses()
                .iter()
                .map(|status| {
                    let outlier = status.outlier();
                    let (ok, failed) = outlier.take_interval(now);
                    Counts {
                        ok,
                        failed,
                        ejected: outlier.is_ejected(now),
                    }
                })
                .collect();
            let found = balancer.with_rng(|rng| {
                outliers(&counts, relative, &mut |chance| {
                    chance >= 100 || rng.below(100) < u64::from(chance)
                })
            });
            for index in found {
                let outlier = view.method_status(index).outlier();
                if outlier.eject(settings.base_ejection_ms, now) {
                    let Counts { ok, failed, .. } = counts[index];
                    tracing::warn!(
                        provider = view.providers()[index].address(),
                        method,
                        until = outlier.ejected_until(),
                        "outlier ejected: {failed} of {} calls failed in the interval, against \
                         the method's other providers",
                        ok + failed
                    );
                }
            }
        })
    });
}
