//! Per-provider call statistics: Dubbo's `RpcStatus`, always on.
//!
//! Every call through rudder is counted twice, once for the provider and once for the provider's method,
//! from the moment it is sent until its answer (or failure) arrives. `leastactive` reads the active count,
//! `shortestresponse` the succeeded elapsed times. In Dubbo Java only the `actives` filter feeds these
//! counters, so those balancers silently degrade to random without it (apache/dubbo#9650); in rudder the
//! invoke path always counts.
//!
//! Counters are atomics: a call touches two [`RpcStatus`] values and never takes a lock. Statistics are keyed
//! by provider identity (`protocol://host:port/path`), so they survive a registry update that only changes
//! parameters. A method's counters for many providers are allocated side by side ([`MethodStatus`],
//! [`ProviderStatus::methods_of`]), because balancers read all of them on every pick.
//!
//! ```
//! # #[allow(unused_imports)] use rudder_common::status::record::*;
//! use rudder_common::status::StatusRegistry;
//!
//! let registry = StatusRegistry::default();
//! let provider = registry.provider("dubbo://10.0.0.1:20880/com.acme.Greeter");
//! let call = provider.begin("sayHello", 0).expect("no limit configured");
//! assert_eq!(provider.method("sayHello").active(), 1);
//! call.finish(12, true);
//! assert_eq!(provider.method("sayHello").succeeded(), 1);
//! assert_eq!(provider.service().total_elapsed(), 12);
//! ```

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use dashmap::DashMap;

use crate::url::ranges::IntRange;
use crate::url::DubboUrl;

/// `actives`, calls in flight per provider and method: ≤ 0 is no limit (Dubbo's), up to 2^31-1.
/// Declared here, beside the counters it limits, for both the cluster's picks and rudder-rpc's
/// `invoke_counted`.
pub const ACTIVES: IntRange = IntRange {
    key: "actives",
    default: 0,
    min: i32::MIN as i64,
    max: i32::MAX as i64,
};

/// The `actives` limit of `method` on the provider at `url`: `<method>.actives`, else `actives`; 0 is
/// no limit (so is anything ≤ 0, as in Dubbo), a bad method-level value disables only itself.
///
/// ```
/// use rudder_common::{status::max_active, url::DubboUrl};
/// let url = DubboUrl::parse("dubbo://h:1/S?actives=5&a.actives=-1&b.actives=x&c.actives=99999999999")?;
/// assert_eq!([max_active(&url, "a"), max_active(&url, "b"), max_active(&url, "c"), max_active(&url, "d")],
///            [0, 5, i32::MAX, 5]);
/// # Ok::<(), rudder_common::url::UrlError>(())
/// ```
pub fn max_active(url: &DubboUrl, method: &str) -> i32 {
    // Within i32 after `max(0)`: the range's bounds are i32's.
    i32::try_from(ACTIVES.method_value(url, method).max(0)).unwrap_or(i32::MAX)
}

mod adaptive;
pub mod availability;
mod call;
mod outlier;
pub mod record;
mod registry;
// The write side, for the unit tests and the guards below (the inherent `write_*` methods are its bodies).
pub use adaptive::{AdaptiveMetrics, ADAPTIVE_ATTACHMENT, ADAPTIVE_REQUEST};
pub use call::{ActiveCall, BorrowedCall};
pub use outlier::{ejections_ever, ejections_in_force, OutlierState};
#[allow(unused_imports)]
use record::{
    RecordAdaptive, RecordAvailability, RecordCall, RecordException, RecordOutcome, RecordProviders,
};
pub use registry::StatusRegistry;

/// Counters for one provider, or one method of one provider (Dubbo's `RpcStatus`).
#[derive(Debug, Default)]
pub struct RpcStatus {
    /// Calls in flight (low 32 bits) and calls completed, modulo 2^32 (high 32 bits): one word, so a
    /// call's end is one update and a balancer learns whether anything changed from one load.
    activity: AtomicU64,
    total: AtomicI64,
    failed: AtomicI64,
    total_elapsed: AtomicI64,
    failed_elapsed: AtomicI64,
    max_elapsed: AtomicI64,
    failed_max_elapsed: AtomicI64,
    succeeded_max_elapsed: AtomicI64,
    /// Consecutive errors and ejection (`outlier.*` parameters).
    outlier: OutlierState,
    /// Answers that carried a business exception (counted as successes everywhere else).
    exceptions: AtomicI64,
}

impl RpcStatus {
    /// Calls sent and not yet answered.
    #[inline]
    pub fn active(&self) -> i32 {
        self.activity().active()
    }
    /// Calls in flight and a count of completed calls, read together; it changes whenever a call
    /// begins or ends.
    #[inline]
    pub fn activity(&self) -> Activity {
        Activity(self.activity.load(Relaxed))
    }
    /// Calls completed.
    #[inline]
    pub fn total(&self) -> i64 {
        self.total.load(Relaxed)
    }
    /// Calls that failed.
    #[inline]
    pub fn failed(&self) -> i64 {
        self.failed.load(Relaxed)
    }
    /// Calls that succeeded (`total - failed`).
    #[inline]
    pub fn succeeded(&self) -> i64 {
        self.total() - self.failed()
    }
    /// Sum of elapsed milliseconds over all completed calls.
    #[inline]
    pub fn total_elapsed(&self) -> i64 {
        self.total_elapsed.load(Relaxed)
    }
    /// Sum of elapsed milliseconds over failed calls.
    #[inline]
    pub fn failed_elapsed(&self) -> i64 {
        self.failed_elapsed.load(Relaxed)
    }
    /// Sum of elapsed milliseconds over succeeded calls.
    #[inline]
    pub fn succeeded_elapsed(&self) -> i64 {
        self.total_elapsed() - self.failed_elapsed()
    }
    /// Longest call, in milliseconds.
    pub fn max_elapsed(&self) -> i64 {
        self.max_elapsed.load(Relaxed)
    }
    /// Longest failed call.
    pub fn failed_max_elapsed(&self) -> i64 {
        self.failed_max_elapsed.load(Relaxed)
    }
    /// Longest succeeded call.
    pub fn succeeded_max_elapsed(&self) -> i64 {
        self.succeeded_max_elapsed.load(Relaxed)
    }
    /// Answers that carried a business exception: successes for Dubbo's statistics, failures for
    /// `peakewma`'s penalty.
    #[inline]
    pub fn exceptions(&self) -> i64 {
        self.exceptions.load(Relaxed)
    }
    /// Counts an answer that carried a business exception (the cluster does, after the call ended).
    pub(crate) fn write_record_exception(&self) {
        self.exceptions.fetch_add(1, Relaxed);
    }
    /// Outlier ejection state: consecutive RPC errors and the ejection in force, if any.
    pub fn outlier(&self) -> &OutlierState {
        &self.outlier
    }
    /// `total_elapsed / total` (integer division; 0 with no calls).
    pub fn average_elapsed(&self) -> i64 {
        average(self.total_elapsed(), self.total())
    }
    /// `failed_elapsed / failed`.
    pub fn failed_average_elapsed(&self) -> i64 {
        average(self.failed_elapsed(), self.failed())
    }
    /// `succeeded_elapsed / succeeded`.
    pub fn succeeded_average_elapsed(&self) -> i64 {
        average(self.succeeded_elapsed(), self.succeeded())
    }
    /// Calls per second over the elapsed time, as Dubbo computes it.
    pub fn average_tps(&self) -> i64 {
        let elapsed = self.total_elapsed();
        if elapsed >= 1000 {
            self.total() / (elapsed / 1000)
        } else {
            self.total()
        }
    }

    /// Takes an active slot if fewer than `max` are taken (`max <= 0` means no limit).
    fn try_acquire(&self, max: i32) -> bool {
        if max <= 0 {
            self.activity.fetch_add(1, Relaxed);
            return true;
        }
        self.activity
            .fetch_update(Relaxed, Relaxed, |word| {
                (Activity(word).active() < max).then_some(word + 1)
            })
            .is_ok()
    }

    fn record_end(&self, elapsed_millis: i64, succeeded: bool) {
        // One fewer in flight, one more completed. The active half is at least 1 here (this call
        // is in it), so the subtraction never borrows from the completed half.
        self.activity.fetch_add(ONE_COMPLETED - 1, Relaxed);
        self.total.fetch_add(1, Relaxed);
        // Calls under a millisecond (most, on a LAN) add nothing to the sums: no read-modify-write.
        if elapsed_millis != 0 {
            self.total_elapsed.fetch_add(elapsed_millis, Relaxed);
            raise(&self.max_elapsed, elapsed_millis);
        }
        if succeeded {
            raise(&self.succeeded_max_elapsed, elapsed_millis);
        } else {
            self.failed.fetch_add(1, Relaxed);
            if elapsed_millis != 0 {
                self.failed_elapsed.fetch_add(elapsed_millis, Relaxed);
            }
            raise(&self.failed_max_elapsed, elapsed_millis);
        }
    }
}

/// One completed call in [`RpcStatus::activity`]'s word.
const ONE_COMPLETED: u64 = 1 << 32;

/// An [`RpcStatus`]'s calls in flight and completed-call count, read in one load. Two readings are
/// equal exactly when no call began or ended in between (barring 2^32 completions, which cannot happen
/// between two picks of a balancer that counts its own calls).
///
/// ```
/// # #[allow(unused_imports)] use rudder_common::status::record::*;
/// use rudder_common::status::StatusRegistry;
/// let provider = StatusRegistry::default().provider("dubbo://10.0.0.1:20880/S");
/// let before = provider.method("m").activity();
/// let call = provider.begin("m", 0).unwrap();
/// assert_eq!(provider.method("m").activity().active(), 1);
/// call.finish(3, true);
/// let after = provider.method("m").activity();
/// assert_eq!(after.active(), 0);
/// assert_ne!(before, after);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity(u64);

impl Activity {
    /// Calls in flight.
    #[inline]
    pub fn active(self) -> i32 {
        self.0 as u32 as i32
    }

    /// The raw word, to store in an atomic.
    #[inline]
    pub fn to_bits(self) -> u64 {
        self.0
    }
}

/// Raises `max` to `value`. Most calls are not the slowest, so a plain read first skips an atomic update
/// that would otherwise move the cache line between threads on every call.
fn raise(max: &AtomicI64, value: i64) {
    if value > max.load(Relaxed) {
        max.fetch_max(value, Relaxed);
    }
}

fn average(sum: i64, count: i64) -> i64 {
    if count == 0 {
        0
    } else {
        sum / count
    }
}

/// The counters of one method of one provider, dereferencing to its [`RpcStatus`].
///
/// The counters of many providers for one method are allocated together, in one block, when a balancer
/// first asks for all of them ([`ProviderStatus::methods_of`]): a balancer that reads every provider's
/// counters on each pick then reads adjacent memory instead of one scattered object per provider. This
/// handle is one entry of such a block; cloning it is one reference-count increment.
///
/// ```
/// # #[allow(unused_imports)] use rudder_common::status::record::*;
/// use rudder_common::status::{ProviderStatus, StatusRegistry};
/// let registry = StatusRegistry::default();
/// let (a, b) = (registry.provider("dubbo://10.0.0.1:1/S"), registry.provider("dubbo://10.0.0.2:1/S"));
/// let both = ProviderStatus::methods_of([&*a, &*b], "sayHello");
/// assert!(both[1].follows(&both[0]));
/// assert!(a.method("sayHello").same(&both[0]));
/// ```
#[derive(Clone)]
pub struct MethodStatus {
    block: Arc<[RpcStatus]>,
    index: usize,
}

impl MethodStatus {
    fn alone() -> MethodStatus {
        MethodStatus {
            block: Arc::from([RpcStatus::default()]),
            index: 0,
        }
    }

    /// Whether both handles are the same counters.
    pub fn same(&self, other: &MethodStatus) -> bool {
        Arc::ptr_eq(&self.block, &other.block) && self.index == other.index
    }

    /// Whether these counters sit right after `previous`'s in the same block.
    pub fn follows(&self, previous: &MethodStatus) -> bool {
        Arc::ptr_eq(&self.block, &previous.block) && self.index == previous.index + 1
    }

    /// The counters from these on, in their block: `len` of them, when the block holds that many.
    pub fn run(&self, len: usize) -> Option<&[RpcStatus]> {
        self.block.get(self.index..self.index.checked_add(len)?)
    }
}

impl Deref for MethodStatus {
    type Target = RpcStatus;

    #[inline]
    fn deref(&self) -> &RpcStatus {
        &self.block[self.index]
    }
}

impl fmt::Debug for MethodStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The statistics of one provider: the provider-wide [`RpcStatus`] and one per method.
#[derive(Debug, Default)]
pub struct ProviderStatus {
    service: RpcStatus,
    methods: DashMap<Box<str>, MethodStatus>,
    adaptive: AdaptiveMetrics,
}

impl ProviderStatus {
    /// Provider-wide counters.
    pub fn service(&self) -> &RpcStatus {
        &self.service
    }

    /// What the `adaptive` balancer knows of this provider (Dubbo keys it by address and service, as
    /// this provider's identity is).
    pub fn adaptive(&self) -> &AdaptiveMetrics {
        &self.adaptive
    }

    /// Counters of `method`, created on first use. Hold on to the handle on hot paths.
    pub fn method(&self, method: &str) -> MethodStatus {
        if let Some(status) = self.methods.get(method) {
            return status.clone();
        }
        self.methods
            .entry(method.into())
            .or_insert_with(MethodStatus::alone)
            .clone()
    }

    /// Counters of `method` if a call of it was ever counted; unlike [`ProviderStatus::method`] this
    /// creates nothing (for readers such as `--explain` and the metrics).
    pub fn find_method(&self, method: &str) -> Option<MethodStatus> {
        self.methods.get(method).map(|status| status.clone())
    }

    /// Counters of `method` for each of `providers`, in order. Those created here are allocated in
    /// one block, in this order.
    pub fn methods_of<'a>(
        providers: impl IntoIterator<Item = &'a ProviderStatus>,
        method: &str,
    ) -> Vec<MethodStatus> {
        let providers: Vec<&ProviderStatus> = providers.into_iter().collect();
        let missing = providers
            .iter()
            .filter(|p| !p.methods.contains_key(method))
            .count();
        let block: Arc<[RpcStatus]> = (0..missing).map(|_| RpcStatus::default()).collect();
        let mut next = 0;
        let mut take = || {
            // Only providers missing the method when counted get here (methods are never
            // removed), so the block has room; `alone` covers a provider listed twice.
            let status = match next < block.len() {
                true => MethodStatus {
                    block: Arc::clone(&block),
                    index: next,
                },
                false => MethodStatus::alone(),
            };
            next += 1;
            status
        };
        providers
            .iter()
            .map(|p| match p.methods.get(method) {
                Some(status) => status.clone(),
                None => p
                    .methods
                    .entry(method.into())
                    .or_insert_with(&mut take)
                    .clone(),
            })
            .collect()
    }

    /// Starts counting a call of `method`; `None` if `max_active` (> 0) calls of it are already running.
    ///
    /// The limit applies to the method counter only, as in Dubbo; the provider-wide counter just counts.
    pub(crate) fn write_begin(
        self: &Arc<Self>,
        method: &str,
        max_active: i32,
    ) -> Option<ActiveCall> {
        let method = self.method(method);
        self.begin_with(method, max_active)
    }

    /// As [`ProviderStatus::begin`], with the method counters already looked up.
    pub(crate) fn write_begin_with(
        self: &Arc<Self>,
        method: MethodStatus,
        max_active: i32,
    ) -> Option<ActiveCall> {
        self.admit(&method, max_active).then(|| ActiveCall {
            provider: Arc::clone(self),
            method,
            done: false,
        })
    }

    /// As [`ProviderStatus::begin_with`], for a caller that holds the counters for the whole call
    /// anyway (the cluster invoker does): the guard borrows them instead of taking two reference
    /// counts, four atomic read-modify-writes fewer per call.
    ///
    /// ```
    /// # #[allow(unused_imports)] use rudder_common::status::record::*;
    /// use rudder_common::status::StatusRegistry;
    /// let provider = StatusRegistry::default().provider("dubbo://10.0.0.1:20880/S");
    /// let method = provider.method("m");
    /// let call = provider.begin_borrowed(&method, 1).expect("a free slot");
    /// assert!(provider.begin_borrowed(&method, 1).is_none(), "actives=1 is taken");
    /// call.finish(7, true);
    /// assert_eq!((method.active(), method.succeeded(), method.max_elapsed()), (0, 1, 7));
    /// ```
    pub(crate) fn write_begin_borrowed<'a>(
        &'a self,
        method: &'a MethodStatus,
        max_active: i32,
    ) -> Option<BorrowedCall<'a>> {
        // `then`, not `then_some`: a guard built eagerly and dropped on refusal would count a call
        // that never began.
        self.admit(method, max_active).then(|| BorrowedCall {
            service: &self.service,
            method,
            done: false,
        })
    }

    /// Takes a slot of `method` (within `max_active`) and counts the call provider-wide.
    fn admit(&self, method: &RpcStatus, max_active: i32) -> bool {
        if !method.try_acquire(max_active) {
            return false;
        }
        self.service.activity.fetch_add(1, Relaxed);
        true
    }
}

#[cfg(test)]
mod tests;
