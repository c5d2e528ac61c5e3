//! `roundrobin`: smooth weighted round robin (`RoundRobinLoadBalance`, nginx's algorithm).
//!
//! Every pick adds each provider's weight to its `current` counter, picks the largest (the earliest
//! provider on a tie), and subtracts the total weight from the winner. Weights 1:2:3 give the sequence
//! C, B, A, C, B, C and repeat. State is kept per `service key + "." + method` and per provider identity,
//! so it survives registry updates that do not change the identity; a provider's counter restarts at 0
//! when its weight changes, and an identity unused for the recycle period (60 s) is forgotten.
//!
//! The per-provider counters of a snapshot are resolved once per view, so a pick walks the providers
//! without hashing: O(n), no allocation. A pick is one short critical section per `service.method`, so
//! concurrent callers together see exactly the smooth sequence; Dubbo updates each counter atomically but
//! not the pick as a whole, so its concurrent callers only approximate it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use rudder_common::invocation::Invocation;

use super::{owner_id, LoadBalance, MethodView, Pick, PickRng};

/// Dubbo's `RECYCLE_PERIOD`.
pub const DEFAULT_RECYCLE_PERIOD_MILLIS: i64 = 60_000;

/// Smooth weighted round robin.
///
/// ```
/// use rudder_cluster::loadbalance::round_robin::RoundRobin;
/// let policy = RoundRobin::with_recycle_period(5_000);
/// assert_eq!(policy.tracked("com.acme.Greeter.sayHello"), 0);
/// ```
#[derive(Debug)]
pub struct RoundRobin {
    recycle_period: i64,
    groups: DashMap<Box<str>, Arc<Group>>,
}

impl Default for RoundRobin {
    fn default() -> Self {
        RoundRobin::with_recycle_period(DEFAULT_RECYCLE_PERIOD_MILLIS)
    }
}

impl RoundRobin {
    /// A policy that forgets identities unused for `millis` (Dubbo: 60000, not configurable there).
    pub fn with_recycle_period(millis: i64) -> RoundRobin {
        RoundRobin {
            recycle_period: millis,
            groups: DashMap::new(),
        }
    }

    /// How many provider identities are tracked under `key` (`service key + "." + method`).
    pub fn tracked(&self, key: &str) -> usize {
        self.groups.get(key).map_or(0, |g| g.count.load(Relaxed))
    }

    fn group(&self, view: &MethodView) -> Arc<Group> {
        let key = format!("{}.{}", view.service_key(), view.method());
        Arc::clone(&self.groups.entry(key.into()).or_default())
    }
}

/// The counters of one `service.method`, by provider identity.
#[derive(Debug, Default)]
struct Group {
    /// Held for the whole pick: the counters below are then read and written without read-modify-write
    /// instructions, and the pick is one transaction.
    pick: Mutex<()>,
    entries: Mutex<HashMap<Box<str>, Arc<Counter>>>,
    count: AtomicUsize,
    last_recycle: AtomicI64,
}

#[derive(Debug, Default)]
struct Counter {
    weight: AtomicI32,
    current: AtomicI64,
    last_update: AtomicI64,
}

/// A view's providers resolved to their counters, in view order.
#[derive(Debug)]
struct ViewCounters {
    group: Arc<Group>,
    counters: Box<[Arc<Counter>]>,
}

impl Group {
    fn resolve(self: Arc<Self>, view: &MethodView) -> ViewCounters {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let counters = view
            .providers()
            .iter()
            .map(|p| Arc::clone(entries.entry(p.identity().into()).or_default()))
            .collect();
        self.count.store(entries.len(), Relaxed);
        drop(entries);
        ViewCounters {
            group: self,
            counters,
        }
    }

    /// Forgets identities not picked from for `period` ms; runs at most once per second of clock time.
    fn recycle(&self, now: i64, period: i64) {
        let last = self.last_recycle.load(Relaxed);
        if now - last < period.min(1000)
            || self
                .last_recycle
                .compare_exchange(last, now, Relaxed, Relaxed)
                .is_err()
        {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|_, c| now - c.last_update.load(Relaxed) <= period);
        self.count.store(entries.len(), Relaxed);
    }
}

impl LoadBalance for RoundRobin {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        _: &mut dyn PickRng,
    ) -> Option<usize> {
        let resolve = |view: &MethodView| self.group(view).resolve(view);
        view.with_state(owner_id(self), resolve, |state: &ViewCounters| {
            let chosen = state.pick(view, pick);
            state
                .group
                .recycle_if_needed(state, view, pick, self.recycle_period);
            chosen
        })
    }
}

impl ViewCounters {
    fn pick(&self, view: &MethodView, pick: &Pick<'_>) -> Option<usize> {
        let _pick = self
            .group
            .pick
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut total = 0i64;
        let mut best: Option<(usize, i64)> = None;
        for (i, counter) in self.counters.iter().enumerate() {
            if !pick.allows(view, i) {
                continue;
            }
            let weight = view.weight(i, pick);
            let mut current = counter.current.load(Relaxed);
            if counter.weight.load(Relaxed) != weight {
                counter.weight.store(weight, Relaxed);
                current = 0;
            }
            current += i64::from(weight);
            counter.current.store(current, Relaxed);
            counter.last_update.store(pick.now, Relaxed);
            if best.is_none_or(|(_, max)| current > max) {
                best = Some((i, current));
            }
            total += i64::from(weight);
        }
        let (chosen, max) = best?;
        self.counters[chosen].current.store(max - total, Relaxed);
        Some(chosen)
    }
}

impl Group {
    /// Dubbo scans for stale identities whenever the list size differs from the tracked count.
    fn recycle_if_needed(
        &self,
        state: &ViewCounters,
        view: &MethodView,
        pick: &Pick<'_>,
        period: i64,
    ) {
        let candidates = if pick.excluded.is_empty() {
            state.counters.len()
        } else {
            (0..view.len()).filter(|&i| pick.allows(view, i)).count()
        };
        if candidates != self.count.load(Relaxed) {
            self.recycle(pick.now, period);
        }
    }
}
