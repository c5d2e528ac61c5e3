//! `peakewma`: power of two choices over each provider's expected cost, peak-EWMA latency × (calls in
//! flight + 1) ÷ weight (Finagle's and Linkerd's balancer), rudder's own.
//!
//! * **Latency.** A moving average of the provider's call times for the method that jumps to any
//!   higher observation at once (the *peak*) and decays toward lower ones with time constant `decay`
//!   (10 s): one slow call makes a provider look slow immediately, and only a run of fast calls makes
//!   it look fast again.
//! * **Decay on read.** Between observations the estimate decays toward 0 with the same constant, so a
//!   provider that was avoided (and so observed no more) is tried again after a few decay periods, and
//!   a recovered provider wins its traffic back.
//! * **Failure penalty.** A failed call (an RPC error: refused, reset, timed out) is observed as taking
//!   at least the method's `timeout` (1000 ms by default), and so is an answer carrying a business
//!   exception: a provider that fails fast does not look fast.
//! * **Load.** The estimate is multiplied by calls in flight + 1, so a provider that stalls collects
//!   calls in flight and loses every comparison before any of them completes, and divided by the
//!   weight (warmup included), so weights keep their meaning.
//!
//! The observations are the call statistics the consumer keeps anyway ([`RpcStatus`]): every
//! completed call of the method on that provider, by any reference of the process. A pick reads the
//! counters of its two candidates; when calls completed since the last look, their mean time (failures
//! raised to the penalty) is one observation at the pick's time. Estimates belong to the policy, keyed
//! by provider identity and method, so they outlive registry snapshots; those no view holds any more are
//! dropped when the next snapshot is prepared. A pick allocates nothing and takes no lock it would wait
//! on.
//!
//! ```
//! use rudder_cluster::loadbalance::{peak_ewma::PeakEwma, LoadBalance};
//! let policy: Box<dyn LoadBalance> = Box::new(PeakEwma::with_decay_millis(5_000));
//! ```

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use rudder_common::invocation::Invocation;
use rudder_common::status::{MethodStatus, RpcStatus};

use super::adaptive::{pair, weighted_coin, ADAPTIVE_TIMEOUT};
use super::{LoadBalance, MethodView, Pick, PickRng, StateKey};

/// Finagle's default decay time.
pub const DEFAULT_DECAY_MILLIS: i64 = 10_000;

/// Peak-EWMA power of two choices.
#[derive(Debug)]
pub struct PeakEwma {
    key: StateKey,
    decay: f64,
    smoothing: Smoothing,
    estimates: DashMap<(Arc<str>, Arc<str>), Arc<Estimate>>,
}

/// How an estimate takes in an observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Smoothing {
    /// Finagle's peak EWMA: a higher observation replaces the estimate (`peakewma`).
    Peak,
    /// A moving mean over about the last [`MEAN_CALLS`] calls (`prequal`). A peak holds a provider
    /// near its worst call for seconds: under load a fast provider's worst call is as long as a slow
    /// provider's typical one, and comparing peaks no longer tells them apart; means do.
    Mean,
}

/// The calls [`Smoothing::Mean`] averages over, about: each call's weight is 1 / this.
pub(crate) const MEAN_CALLS: f64 = 10.0;

impl Default for PeakEwma {
    fn default() -> Self {
        PeakEwma::with_decay_millis(DEFAULT_DECAY_MILLIS)
    }
}

/// One provider's latency estimate for one method.
#[derive(Debug)]
pub(crate) struct Estimate {
    status: MethodStatus,
    /// The estimate in ms (f64 bits) as of `stamp`.
    cost: AtomicU64,
    stamp: AtomicI64,
    /// `status.total()` when last observed: a pick compares one word to learn whether to observe.
    seen_total: AtomicI64,
    /// The counters the last observation was taken from; held only while observing.
    seen: Mutex<Seen>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    total: i64,
    elapsed: i64,
    failed: i64,
    failed_elapsed: i64,
    exceptions: i64,
}

impl Seen {
    fn of(status: &RpcStatus) -> Seen {
        Seen {
            total: status.total(),
            elapsed: status.total_elapsed(),
            failed: status.failed(),
            failed_elapsed: status.failed_elapsed(),
            exceptions: status.exceptions(),
        }
    }
}

impl Estimate {
    fn new(status: MethodStatus, now: i64) -> Estimate {
        let seen = Seen::of(&status);
        Estimate {
            status,
            cost: AtomicU64::new(0f64.to_bits()),
            stamp: AtomicI64::new(now),
            seen_total: AtomicI64::new(seen.total),
            seen: Mutex::new(seen),
        }
    }

    /// The estimate at `now`, after folding in the calls completed since the last look.
    fn cost_at(&self, now: i64, penalty: f64, decay: f64, smoothing: Smoothing) -> f64 {
        if self.status.total() != self.seen_total.load(Relaxed) {
            // Another pick observing the same provider does the same work; use the last estimate.
            if let Ok(mut seen) = self.seen.try_lock() {
                self.observe(&mut seen, now, penalty, decay, smoothing);
            }
        }
        let cost = f64::from_bits(self.cost.load(Relaxed));
        let age = now.saturating_sub(self.stamp.load(Relaxed)).max(0) as f64;
        cost * (-age / decay).exp()
    }

    /// How long the provider has had calls in flight without an answer seen (ms; 0 with none in
    /// flight). Read after [`Estimate::cost_at`], which moves the stamp to the last look that found
    /// answers; a call started after that look counts from the look, so this is an upper bound.
    fn silent_for(&self, now: i64) -> f64 {
        if self.status.active() <= 0 {
            return 0.0;
        }
        now.saturating_sub(self.stamp.load(Relaxed)).max(0) as f64
    }

    fn observe(&self, seen: &mut Seen, now: i64, penalty: f64, decay: f64, smoothing: Smoothing) {
        let current = Seen::of(&self.status);
        let calls = current.total - seen.total;
        if calls <= 0 {
            return;
        }
        // The counters are read one by one while calls end; clamp what a race could skew.
        let failed = (current.failed - seen.failed).clamp(0, calls);
        let failed_elapsed = (current.failed_elapsed - seen.failed_elapsed).max(0);
        let succeeded_elapsed = (current.elapsed - seen.elapsed - failed_elapsed).max(0);
        let failed_cost = match failed {
            0 => 0.0,
            n => (failed_elapsed as f64 / n as f64).max(penalty) * n as f64,
        };
        // A business exception is an answer, but a provider throwing fast must not look fast either.
        let exceptions = (current.exceptions - seen.exceptions).clamp(0, calls - failed);
        let rtt =
            (succeeded_elapsed as f64 + failed_cost + exceptions as f64 * penalty) / calls as f64;
        *seen = current;
        self.seen_total.store(current.total, Relaxed);
        let (cost, stamp) = (
            f64::from_bits(self.cost.load(Relaxed)),
            self.stamp.load(Relaxed),
        );
        let next = match smoothing {
            Smoothing::Peak => peak_ewma(cost, stamp, rtt, now, decay),
            Smoothing::Mean => mean_ewma(cost, stamp, rtt, calls, now, decay),
        };
        self.cost.store(next.to_bits(), Relaxed);
        self.stamp.store(now, Relaxed);
    }
}

/// Finagle's peak EWMA step: an observation above the estimate replaces it; one below pulls it down by
/// the weight the time since the last step gives it (`1 - e^(-Δt/decay)`).
pub(crate) fn peak_ewma(cost: f64, stamp: i64, rtt: f64, now: i64, decay: f64) -> f64 {
    if rtt > cost {
        return rtt;
    }
    let age = now.saturating_sub(stamp).max(0) as f64;
    let keep = (-age / decay).exp();
    cost * keep + rtt * (1.0 - keep)
}

/// [`Smoothing::Mean`]'s step: each of the `calls` observed moves the estimate 1 / [`MEAN_CALLS`]
/// of the way to their mean `rtt`; an estimate `decay` old counts 1/e as much (so a provider observed
/// again after being avoided for long is judged on its new calls), and the first observation is taken
/// whole.
pub(crate) fn mean_ewma(cost: f64, stamp: i64, rtt: f64, calls: i64, now: i64, decay: f64) -> f64 {
    if cost == 0.0 {
        return rtt;
    }
    let age = now.saturating_sub(stamp).max(0) as f64;
    let by_calls = (1.0 - 1.0 / MEAN_CALLS).powi(calls.clamp(0, 1 << 20) as i32);
    let keep = by_calls * (-age / decay).exp();
    cost * keep + rtt * (1.0 - keep)
}

/// What one view keeps: each provider's estimate and failure penalty, in view order.
struct ViewState {
    estimates: Box<[Arc<Estimate>]>,
    penalties: Box<[f64]>,
}

impl PeakEwma {
    /// A policy whose estimates decay with time constant `millis` (at least 1).
    pub fn with_decay_millis(millis: i64) -> PeakEwma {
        PeakEwma::with_smoothing(millis, Smoothing::Peak)
    }

    /// Estimates that take in observations as `smoothing` says (`prequal`'s are means).
    pub(crate) fn with_smoothing(millis: i64, smoothing: Smoothing) -> PeakEwma {
        PeakEwma {
            key: StateKey::unique(),
            decay: millis.max(1) as f64,
            smoothing,
            estimates: DashMap::new(),
        }
    }

    fn resolve(&self, view: &MethodView, now: i64) -> ViewState {
        let method: Arc<str> = view.method().into();
        let estimates = view
            .method_statuses()
            .iter()
            .zip(view.providers())
            .map(|(status, provider)| {
                let key = (Arc::clone(provider.shared_identity()), Arc::clone(&method));
                let mut estimate = self
                    .estimates
                    .entry(key)
                    .or_insert_with(|| Arc::new(Estimate::new(status.clone(), now)));
                // A provider that left and came back has new counters.
                if !estimate.status.same(status) {
                    *estimate = Arc::new(Estimate::new(status.clone(), now));
                }
                Arc::clone(&estimate)
            })
            .collect();
        let penalties = view
            .providers()
            .iter()
            .map(|p| ADAPTIVE_TIMEOUT.method_value(p.url(), view.method()) as f64)
            .collect();
        ViewState {
            estimates,
            penalties,
        }
    }

    /// Provider `index`'s expected cost at this pick: latency × (in flight + 1) ÷ weight.
    fn score(&self, state: &ViewState, view: &MethodView, index: usize, pick: &Pick<'_>) -> f64 {
        let weight = view.weight(index, pick);
        if weight <= 0 {
            return f64::INFINITY;
        }
        let estimate = &state.estimates[index];
        let latency = estimate.cost_at(
            pick.now(),
            state.penalties[index],
            self.decay,
            self.smoothing,
        );
        let active = f64::from(estimate.status.active().max(0));
        // +1 ms: providers answering within the clock's resolution still differ by calls in flight.
        (latency + 1.0) * (active + 1.0) / f64::from(weight)
    }

    /// Runs `f` with a reader of each provider's latency estimate (ms) for this view at `now`: the
    /// estimates `peakewma` keeps, shared with the policies that read latency the same way
    /// (`prequal`). `key` keeps the caller's view state apart from `peakewma`'s own. With
    /// [`Smoothing::Mean`] a provider with calls in flight reads as at least as slow as the time since
    /// its last answer seen.
    pub(crate) fn with_latencies<R>(
        &self,
        view: &MethodView,
        now: i64,
        f: impl FnOnce(&dyn Fn(usize) -> f64) -> R,
    ) -> R {
        view.with_state(
            self.key,
            |view| self.resolve(view, now),
            |state: &ViewState| {
                let latency = |index: usize| {
                    let estimate = &state.estimates[index];
                    let cost =
                        estimate.cost_at(now, state.penalties[index], self.decay, self.smoothing);
                    match self.smoothing {
                        Smoothing::Peak => cost,
                        // A provider that has not answered for longer than it usually takes is at
                        // least that slow now: a stall shows before its first late answer.
                        Smoothing::Mean => cost.max(estimate.silent_for(now)),
                    }
                };
                f(&latency)
            },
        )
    }

    /// Builds this policy's state of `view` and drops the estimates no view holds any more.
    pub(crate) fn prepare_view(&self, view: &MethodView) {
        LoadBalance::prepare(self, view);
    }

    /// The estimated latency (ms) of provider `index` of `view` at `now`, if this policy has seen
    /// the view: what `rudder providers` and tests show.
    pub fn latency_estimate(&self, view: &MethodView, index: usize, now: i64) -> Option<f64> {
        let provider = view.providers().get(index)?;
        let key = (
            Arc::clone(provider.shared_identity()),
            Arc::from(view.method()),
        );
        let estimate = self.estimates.get(&key)?;
        let penalty = ADAPTIVE_TIMEOUT.method_value(provider.url(), view.method()) as f64;
        Some(estimate.cost_at(now, penalty, self.decay, self.smoothing))
    }
}

impl LoadBalance for PeakEwma {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        let (a, b) = pair(view, pick, rng)?;
        let now = pick.now();
        view.with_state(
            self.key,
            |view| self.resolve(view, now),
            |state: &ViewState| {
                let (sa, sb) = (
                    self.score(state, view, a, pick),
                    self.score(state, view, b, pick),
                );
                if sa < sb {
                    Some(a)
                } else if sb < sa {
                    Some(b)
                } else {
                    let weights = (view.weight(a, pick), view.weight(b, pick));
                    Some(weighted_coin((a, weights.0), (b, weights.1), rng))
                }
            },
        )
    }

    fn prepare(&self, view: &MethodView) {
        // Estimates no view holds (their providers left) go; the new view's are taken first.
        let now = i64::MIN;
        view.with_state(self.key, |view| self.resolve(view, now), |_: &ViewState| ());
        self.estimates.retain(|_, e| Arc::strong_count(e) > 1);
    }
}

#[cfg(test)]
mod tests {
    use super::{mean_ewma, peak_ewma, MEAN_CALLS};

    #[test]
    fn means_move_by_calls_and_old_estimates_count_less() {
        // The first observation is taken whole.
        assert_eq!(mean_ewma(0.0, 0, 20.0, 1, 0, 1000.0), 20.0);
        // One call moves a fresh estimate 1/MEAN_CALLS of the way; a peak would jump to it.
        let one = mean_ewma(4.0, 5, 30.0, 1, 5, 1000.0);
        assert!((one - (4.0 + 26.0 / MEAN_CALLS)).abs() < 1e-9, "{one}");
        // Many calls at once weigh as many.
        let many = mean_ewma(4.0, 5, 30.0, 50, 5, 1000.0);
        assert!(many > 29.0, "{many}");
        // An estimate three decay periods old is mostly replaced by one call.
        let stale = mean_ewma(4.0, 0, 20.0, 1, 3000, 1000.0);
        assert!(stale > 19.0, "{stale}");
    }

    #[test]
    fn peaks_jump_and_lows_decay_with_time() {
        assert_eq!(peak_ewma(10.0, 0, 50.0, 0, 1000.0), 50.0);
        // One decay period later, a lower observation has pulled the estimate 63 % of the way.
        let pulled = peak_ewma(50.0, 0, 10.0, 1000, 1000.0);
        assert!(
            (pulled - (10.0 + 40.0 / std::f64::consts::E)).abs() < 1e-9,
            "{pulled}"
        );
        // No time passed: a lower observation does not move it at all.
        assert_eq!(peak_ewma(50.0, 7, 10.0, 7, 1000.0), 50.0);
    }
}
