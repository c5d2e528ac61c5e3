//! `shortestresponse`: the provider expected to answer soonest (`ShortestResponseLoadBalance`, Dubbo 3.x).
//!
//! A provider's estimate is its average succeeded-call time within the current window multiplied by
//! `active + 1`; the lowest estimate wins, ties broken by weight as in [`least_active`](super::least_active).
//! A provider with no success in the window estimates 0 and is preferred, so unexplored providers get
//! tried. The window is tumbling: every `slide period` (30 s) all providers' window offsets are reset at
//! once. Dubbo resets on a background thread after the pick that noticed the period ended; rudder resets
//! synchronously after that pick's decision, which decides identically and is deterministic.
//!
//! The windows (each provider's counters at the window's start) belong to the policy and outlive
//! snapshots, as Dubbo keys them by `RpcStatus`. Each view keeps, next to every provider's status, the
//! estimate it last computed and the status's [`Activity`] it computed it at: an estimate only moves
//! when a call begins or ends, so most picks read one word per provider and divide nothing.
//!
//! # Differences from Dubbo
//!
//! Estimates are capped at `i32::MAX` milliseconds (24.8 days), so that all keys of a pick fit 32 bits;
//! providers expected to take longer than that tie with each other. Dubbo multiplies in 64 bits and
//! wraps on overflow, which can make the slowest provider look the fastest; the cap never does.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use rudder_common::invocation::Invocation;
use rudder_common::status::{Activity, MethodStatus, RpcStatus};

use super::{least_key_weighted, LoadBalance, MethodView, Pick, PickRng, StateKey};

/// Dubbo's default `shortestResponseSlidePeriod`.
pub const DEFAULT_SLIDE_PERIOD_MILLIS: i64 = 30_000;

/// Shortest expected response.
///
/// ```
/// use rudder_cluster::loadbalance::shortest_response::ShortestResponse;
/// let policy = ShortestResponse::with_slide_period(10_000);
/// ```
#[derive(Debug)]
pub struct ShortestResponse {
    key: StateKey,
    slide_period: i64,
    /// Start of the current window; `i64::MIN` until the first pick sets it.
    window_start: AtomicI64,
    resetting: AtomicBool,
    /// Counts window resets; a view whose cached estimates predate the last one drops them.
    epoch: AtomicU64,
    /// The window of each provider identity and method; a window no view holds is dropped at the next
    /// reset or preparation.
    windows: DashMap<(Arc<str>, Arc<str>), Arc<Window>>,
}

impl Default for ShortestResponse {
    fn default() -> Self {
        ShortestResponse::with_slide_period(DEFAULT_SLIDE_PERIOD_MILLIS)
    }
}

/// The window of one method-level status: its counters at the window's start.
#[derive(Debug)]
struct Window {
    status: MethodStatus,
    succeeded_offset: AtomicI64,
    elapsed_offset: AtomicI64,
}

impl Window {
    fn new(status: MethodStatus) -> Window {
        Window {
            status,
            succeeded_offset: AtomicI64::new(0),
            elapsed_offset: AtomicI64::new(0),
        }
    }

    /// The average elapsed time of the calls that succeeded in this window (0 with none).
    fn average(&self) -> i64 {
        let succeeded = self.status.succeeded() - self.succeeded_offset.load(Ordering::Relaxed);
        if succeeded <= 0 {
            return 0;
        }
        (self.status.succeeded_elapsed() - self.elapsed_offset.load(Ordering::Relaxed)) / succeeded
    }

    fn reset(&self) {
        self.succeeded_offset
            .store(self.status.succeeded(), Ordering::Relaxed);
        self.elapsed_offset
            .store(self.status.succeeded_elapsed(), Ordering::Relaxed);
    }
}

/// What one view keeps for shortestresponse, per provider in view order.
struct ViewState {
    /// The policy's epoch the cached estimates belong to.
    epoch: AtomicU64,
    /// Read with each provider's status on every pick: 16 bytes per provider.
    estimators: Box<[Estimator]>,
    /// Read only to recompute an estimate.
    windows: Box<[Arc<Window>]>,
}

/// The view's cache of one provider's estimate.
struct Estimator {
    /// The status's activity `estimate` was computed at; [`STALE`] when there is none.
    seen: AtomicU64,
    estimate: AtomicI32,
    /// The provider's position in the view.
    index: u32,
}

/// An activity word no status can have: `u32::MAX` calls in flight.
const STALE: u64 = u64::MAX;

impl ViewState {
    /// Dubbo's estimate for the provider whose counters are `status` and whose cache is `estimator`:
    /// the window's succeeded average times `active + 1`, capped at `i32::MAX`.
    #[inline]
    fn estimate(&self, status: &RpcStatus, estimator: &Estimator) -> i32 {
        let activity = status.activity();
        if estimator.seen.load(Ordering::Relaxed) == activity.to_bits() {
            return estimator.estimate.load(Ordering::Relaxed);
        }
        self.refresh(estimator, activity)
    }

    #[cold]
    #[inline(never)]
    fn refresh(&self, estimator: &Estimator, activity: Activity) -> i32 {
        let window = &self.windows[estimator.index as usize];
        let estimate = capped_estimate(window.average(), activity.active());
        // Racing a reset can cache an estimate from the old window until this provider's next call
        // begins or ends; Dubbo's unsynchronised window data has the same window of doubt.
        estimator.estimate.store(estimate, Ordering::Relaxed);
        estimator.seen.store(activity.to_bits(), Ordering::Relaxed);
        estimate
    }
}

/// `average * (active + 1)`, capped at `i32::MAX`.
fn capped_estimate(average: i64, active: i32) -> i32 {
    let estimate = average.saturating_mul(i64::from(active) + 1);
    i32::try_from(estimate).unwrap_or(i32::MAX)
}

impl ShortestResponse {
    /// A policy whose window lasts `millis`.
    pub fn with_slide_period(millis: i64) -> ShortestResponse {
        ShortestResponse {
            key: StateKey::unique(),
            slide_period: millis,
            window_start: AtomicI64::new(i64::MIN),
            resetting: AtomicBool::new(false),
            epoch: AtomicU64::new(0),
            windows: DashMap::new(),
        }
    }

    fn resolve(&self, view: &MethodView) -> ViewState {
        let method: Arc<str> = view.method().into();
        let windows = view
            .method_statuses()
            .iter()
            .zip(view.providers())
            .map(|(status, provider)| {
                let key = (Arc::clone(provider.shared_identity()), Arc::clone(&method));
                let mut window = self
                    .windows
                    .entry(key)
                    .or_insert_with(|| Arc::new(Window::new(status.clone())));
                // A provider that left and came back has new counters: its old window measures nothing.
                if !window.status.same(status) {
                    *window = Arc::new(Window::new(status.clone()));
                }
                Arc::clone(&window)
            })
            .collect();
        let estimators = (0..view.len() as u32)
            .map(|index| Estimator {
                seen: AtomicU64::new(STALE),
                estimate: AtomicI32::new(0),
                index,
            })
            .collect();
        ViewState {
            epoch: AtomicU64::new(self.epoch.load(Ordering::Acquire)),
            estimators,
            windows,
        }
    }

    fn maybe_reset(&self, now: i64) {
        let start = self.window_start.load(Ordering::Relaxed);
        if start == i64::MIN {
            let _ = self.window_start.compare_exchange(
                start,
                now,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            return;
        }
        if now - start > self.slide_period
            && self
                .resetting
                .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.windows
                .retain(|_, window| Arc::strong_count(window) > 1);
            for window in self.windows.iter() {
                window.reset();
            }
            // Release: a view that sees the new epoch sees the new offsets.
            self.epoch.fetch_add(1, Ordering::Release);
            self.window_start.store(now, Ordering::Relaxed);
            self.resetting.store(false, Ordering::Relaxed);
        }
    }

    /// Moves the start of the current window (tests use it to end a window without waiting).
    pub fn set_window_start(&self, millis: i64) {
        self.window_start.store(millis, Ordering::Relaxed);
    }
}

impl LoadBalance for ShortestResponse {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        let chosen = view.with_state(
            self.key,
            |view| self.resolve(view),
            |state: &ViewState| {
                let epoch = self.epoch.load(Ordering::Acquire);
                if state.epoch.load(Ordering::Relaxed) != epoch {
                    for estimator in &state.estimators {
                        estimator.seen.store(STALE, Ordering::Relaxed);
                    }
                    state.epoch.store(epoch, Ordering::Relaxed);
                }
                let estimate = |(status, estimator): (&RpcStatus, &Estimator)| {
                    state.estimate(status, estimator)
                };
                let estimators = state.estimators.iter();
                match view.adjacent_statuses() {
                    Some(statuses) => least_key_weighted(
                        view,
                        pick,
                        rng,
                        statuses.iter().zip(estimators),
                        estimate,
                    ),
                    None => {
                        let statuses = view.status_runs().flatten();
                        least_key_weighted(view, pick, rng, statuses.zip(estimators), estimate)
                    }
                }
            },
        );
        self.maybe_reset(pick.now());
        chosen
    }

    fn prepare(&self, view: &MethodView) {
        view.with_state(self.key, |view| self.resolve(view), |_: &ViewState| ());
    }
}

#[cfg(test)]
mod tests {
    use super::capped_estimate;

    #[test]
    fn estimates_are_capped_not_wrapped() {
        assert_eq!(capped_estimate(0, 7), 0);
        assert_eq!(capped_estimate(120, 2), 360);
        assert_eq!(capped_estimate(1 << 30, 1), i32::MAX);
        // Java's long arithmetic would wrap to a negative estimate here, and pick this provider first.
        assert_eq!(capped_estimate(i64::MAX / 2, 3), i32::MAX);
    }
}
