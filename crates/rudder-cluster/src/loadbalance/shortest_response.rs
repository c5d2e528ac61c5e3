//! `shortestresponse`: the provider expected to answer soonest (`ShortestResponseLoadBalance`, Dubbo 3.x).
//!
//! A provider's estimate is its average succeeded-call time within the current window multiplied by
//! `active + 1`; the lowest estimate wins, ties broken by weight as in [`least_active`](super::least_active).
//! A provider with no success in the window estimates 0 and is preferred, so unexplored providers get
//! tried. The window is tumbling: every `slide period` (30 s) all providers' window offsets are reset at
//! once. Dubbo resets on a background thread after the pick that noticed the period ended; rudder resets
//! synchronously after that pick's decision, which decides identically and is deterministic.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};
use std::sync::Arc;

use dashmap::DashMap;
use rudder_common::invocation::Invocation;
use rudder_rpc::status::RpcStatus;

use super::{least_key_weighted, owner_id, LoadBalance, MethodView, Pick, PickRng};

/// The window of each of one view's providers, in view order, next to its status: one pass over this
/// array reads everything a pick needs without chasing a pointer from window to status.
type Windows = Box<[(Arc<RpcStatus>, Arc<Window>)]>;

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
    slide_period: i64,
    /// Start of the current window; `i64::MIN` until the first pick sets it.
    window_start: AtomicI64,
    resetting: AtomicBool,
    windows: DashMap<usize, Arc<Window>>,
}

impl Default for ShortestResponse {
    fn default() -> Self {
        ShortestResponse::with_slide_period(DEFAULT_SLIDE_PERIOD_MILLIS)
    }
}

/// The window of one method-level status: counters at the window's start, and the window's average.
#[derive(Debug)]
struct Window {
    status: Arc<RpcStatus>,
    succeeded_offset: AtomicI64,
    elapsed_offset: AtomicI64,
    /// The completed-call count (`total`) `cached_average` was computed at; -1 when stale.
    cached_for: AtomicI64,
    cached_average: AtomicI64,
}

impl Window {
    fn new(status: Arc<RpcStatus>) -> Window {
        Window {
            status,
            succeeded_offset: AtomicI64::new(0),
            elapsed_offset: AtomicI64::new(0),
            cached_for: AtomicI64::new(-1),
            cached_average: AtomicI64::new(0),
        }
    }

    /// Dubbo's estimate: the window's succeeded average times `active + 1`. `status` is this window's.
    #[inline]
    fn estimate(&self, status: &RpcStatus) -> i64 {
        // The average only moves when a call completes; most providers completed none since the
        // previous pick, so the completed count is checked first and the two subtractions and the
        // 64-bit division are skipped.
        let completed = status.total();
        let average = if self.cached_for.load(Relaxed) == completed {
            self.cached_average.load(Relaxed)
        } else {
            let succeeded = status.succeeded() - self.succeeded_offset.load(Relaxed);
            let average = if succeeded <= 0 {
                0
            } else {
                (status.succeeded_elapsed() - self.elapsed_offset.load(Relaxed)) / succeeded
            };
            // Racing a reset can leave an average from the old window cached until this provider's
            // next completed call; Dubbo's unsynchronised window data has the same window of doubt.
            self.cached_average.store(average, Relaxed);
            self.cached_for.store(completed, Relaxed);
            average
        };
        average.saturating_mul(i64::from(status.active()) + 1)
    }

    fn reset(&self) {
        self.succeeded_offset
            .store(self.status.succeeded(), Relaxed);
        self.elapsed_offset
            .store(self.status.succeeded_elapsed(), Relaxed);
        self.cached_for.store(-1, Relaxed);
    }
}

impl ShortestResponse {
    /// A policy whose window lasts `millis`.
    pub fn with_slide_period(millis: i64) -> ShortestResponse {
        ShortestResponse {
            slide_period: millis,
            window_start: AtomicI64::new(i64::MIN),
            resetting: AtomicBool::new(false),
            windows: DashMap::new(),
        }
    }

    fn resolve(&self, view: &MethodView) -> Windows {
        (0..view.len())
            .map(|i| {
                let status = view.providers()[i].status().method(view.method());
                let key = Arc::as_ptr(&status) as usize;
                let window = self
                    .windows
                    .entry(key)
                    .or_insert_with(|| Arc::new(Window::new(Arc::clone(&status))));
                (status, Arc::clone(&window))
            })
            .collect()
    }

    fn maybe_reset(&self, now: i64) {
        let start = self.window_start.load(Relaxed);
        if start == i64::MIN {
            let _ = self
                .window_start
                .compare_exchange(start, now, Relaxed, Relaxed);
            return;
        }
        if now - start > self.slide_period
            && self
                .resetting
                .compare_exchange(false, true, Relaxed, Relaxed)
                .is_ok()
        {
            for window in self.windows.iter() {
                window.reset();
            }
            self.window_start.store(now, Relaxed);
            self.resetting.store(false, Relaxed);
        }
    }

    /// Moves the start of the current window (tests use it to end a window without waiting).
    pub fn set_window_start(&self, millis: i64) {
        self.window_start.store(millis, Relaxed);
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
            owner_id(self),
            |view| self.resolve(view),
            |windows: &Windows| {
                least_key_weighted(view, pick, rng, windows, |(status, window)| {
                    window.estimate(status)
                })
            },
        );
        self.maybe_reset(pick.now);
        chosen
    }
}
