//! The write side of the statistics, for the layers that count calls (the cluster invoker, the
//! transports' `invoke_counted`, the balancers' own bookkeeping) and for tests that set counters up.
//!
//! The counters' types ([`RpcStatus`], [`ProviderStatus`], [`StatusRegistry`], [`OutlierState`],
//! [`AdaptiveMetrics`]) only read; writing takes one of these traits in scope. The `rudder` facade
//! re-exports the types for strategies and tools to read, and not this module: through the facade the
//! statistics are read-only, and what a user's code sees is what calls did.
//!
//! ```
//! use rudder_common::status::record::{RecordCall, RecordProviders};
//! use rudder_common::status::StatusRegistry;
//!
//! let registry = StatusRegistry::default();
//! let provider = registry.provider("dubbo://10.0.0.1:20880/com.acme.Greeter");
//! provider.begin("sayHello", 0).expect("no limit").finish(3, true);
//! assert_eq!(provider.method("sayHello").succeeded(), 1);
//! ```

use std::sync::Arc;

use super::availability::Availability;
use super::{
    ActiveCall, AdaptiveMetrics, BorrowedCall, MethodStatus, OutlierState, ProviderStatus,
    RpcStatus, StatusRegistry,
};

/// Counting one call of a provider, from before the send to its end.
pub trait RecordCall {
    /// Starts a call of `method`, if fewer than `max_active` (≤ 0: no limit) are in flight for it.
    fn begin(self: &Arc<Self>, method: &str, max_active: i32) -> Option<ActiveCall>;

    /// [`RecordCall::begin`] with the method's counters already in hand.
    fn begin_with(self: &Arc<Self>, method: MethodStatus, max_active: i32) -> Option<ActiveCall>;

    /// [`RecordCall::begin_with`] for a caller that holds the counters for the whole call: the guard
    /// borrows them instead of taking reference counts.
    fn begin_borrowed<'a>(
        &'a self,
        method: &'a MethodStatus,
        max_active: i32,
    ) -> Option<BorrowedCall<'a>>;
}

impl RecordCall for ProviderStatus {
    fn begin(self: &Arc<Self>, method: &str, max_active: i32) -> Option<ActiveCall> {
        ProviderStatus::write_begin(self, method, max_active)
    }

    fn begin_with(self: &Arc<Self>, method: MethodStatus, max_active: i32) -> Option<ActiveCall> {
        ProviderStatus::write_begin_with(self, method, max_active)
    }

    fn begin_borrowed<'a>(
        &'a self,
        method: &'a MethodStatus,
        max_active: i32,
    ) -> Option<BorrowedCall<'a>> {
        ProviderStatus::write_begin_borrowed(self, method, max_active)
    }
}

/// Counting an answer that carried a business exception.
pub trait RecordException {
    /// Counts one (the cluster does, after the call ended).
    fn record_exception(&self);
}

impl RecordException for RpcStatus {
    fn record_exception(&self) {
        RpcStatus::write_record_exception(self);
    }
}

/// Feeding outlier ejection a call's outcome.
pub trait RecordOutcome {
    /// Records a call's outcome at `now`; the `threshold`-th error in a row ejects the provider for
    /// `base_millis` × the times it has been ejected (at most 10 ×). Returns whether this call ejected it.
    fn record(&self, ok: bool, threshold: u32, base_millis: i64, now: i64) -> bool {
        self.record_unless(ok, threshold, base_millis, now, &|| true)
    }

    /// [`RecordOutcome::record`], ejecting only if `allowed` answers `true` when asked (it is asked
    /// only when the threshold is reached: what the other providers say of the failure). Refused,
    /// the errors go on counting, so the next one asks again.
    fn record_unless(
        &self,
        ok: bool,
        threshold: u32,
        base_millis: i64,
        now: i64,
        allowed: &dyn Fn() -> bool,
    ) -> bool;

    /// Ejects the provider at `now` (relative detection found it an outlier) for `base_millis` × the
    /// times it has been ejected, unless it is already; returns whether it was.
    fn eject(&self, base_millis: i64, now: i64) -> bool;

    /// The outcomes counted since the comparison interval began (successes, failures), starting
    /// the next interval at `now`.
    fn take_interval(&self, now: i64) -> (u64, u64);
}

impl RecordOutcome for OutlierState {
    fn record_unless(
        &self,
        ok: bool,
        threshold: u32,
        base_millis: i64,
        now: i64,
        allowed: &dyn Fn() -> bool,
    ) -> bool {
        OutlierState::write_record(self, ok, threshold, base_millis, now, allowed)
    }

    fn eject(&self, base_millis: i64, now: i64) -> bool {
        OutlierState::write_eject(self, base_millis, now)
    }

    fn take_interval(&self, now: i64) -> (u64, u64) {
        OutlierState::write_take_interval(self, now)
    }
}

/// What the `adaptive` balancer counts of its picks and their answers (Dubbo's `AdaptiveMetrics`).
pub trait RecordAdaptive {
    /// The balancer picked this provider at `now` (`addConsumerReq` and `setPickTime`).
    fn picked(&self, now: i64);
    /// Counts a call picked for this provider, without moving its pick time (`addConsumerReq`).
    fn count_request(&self, now: i64);
    /// Sets the time the provider was last picked (`setPickTime`).
    fn set_pick_time(&self, millis: i64);
    /// A picked call was answered at `now`, `rt_millis` after its pick, with the provider's
    /// `lb_adaptive` attachment if it sent one.
    fn answered(&self, attachment: Option<&str>, rt_millis: i64, now: i64);
    /// A picked call failed with an RPC error (`addErrorReq`).
    fn failed(&self, now: i64);
}

impl RecordAdaptive for AdaptiveMetrics {
    fn picked(&self, now: i64) {
        AdaptiveMetrics::write_picked(self, now);
    }
    fn count_request(&self, now: i64) {
        AdaptiveMetrics::write_count_request(self, now);
    }
    fn set_pick_time(&self, millis: i64) {
        AdaptiveMetrics::write_set_pick_time(self, millis);
    }
    fn answered(&self, attachment: Option<&str>, rt_millis: i64, now: i64) {
        AdaptiveMetrics::write_answered(self, attachment, rt_millis, now);
    }
    fn failed(&self, now: i64) {
        AdaptiveMetrics::write_failed(self, now);
    }
}

/// Adding and pruning providers' statistics.
pub trait RecordProviders {
    /// The statistics of the provider `identity` (`protocol://host:port/path`), made on first use.
    fn provider(&self, identity: &str) -> Arc<ProviderStatus>;
    /// Forgets the provider `identity`.
    fn remove(&self, identity: &str);
    /// Keeps the providers `keep` accepts; returns how many were forgotten.
    fn retain(&self, keep: impl Fn(&str) -> bool) -> usize;
}

impl RecordProviders for StatusRegistry {
    fn provider(&self, identity: &str) -> Arc<ProviderStatus> {
        StatusRegistry::write_provider(self, identity)
    }
    fn remove(&self, identity: &str) {
        StatusRegistry::write_remove(self, identity);
    }
    fn retain(&self, keep: impl Fn(&str) -> bool) -> usize {
        StatusRegistry::write_retain(self, keep)
    }
}

/// Setting a connection's [`Availability`] (the transport that owns the connection does).
pub trait RecordAvailability {
    /// Down: not picked (unless every provider is) until `until`, when a call may try again.
    fn mark_down_until(&self, until: std::time::Instant);
    /// Up: a connection is open.
    fn mark_up(&self);
}

impl RecordAvailability for Availability {
    fn mark_down_until(&self, until: std::time::Instant) {
        Availability::write_down_until(self, until);
    }
    fn mark_up(&self) {
        Availability::write_up(self);
    }
}
