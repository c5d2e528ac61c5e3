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
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use rudder_common::invocation::Invocation;

use super::{LoadBalance, MethodView, Pick, PickRng, StateKey};

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
    key: StateKey,
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
            key: StateKey::unique(),
            recycle_period: millis,
            groups: DashMap::new(),
        }
    }

    /// How many provider identities are tracked under `key` (`service key + "." + method`).
    pub fn tracked(&self, key: &str) -> usize {
        self.groups.get(key).map_or(0, |g| {
            g.table
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .by_identity
                .len()
        })
    }

    fn group(&self, view: &MethodView) -> Arc<Group> {
        let key = format!("{}.{}", view.service_key(), view.method());
        Arc::clone(&self.groups.entry(key.into()).or_default())
    }
}

/// The counters of one `service.method`: one contiguous table, slots found by provider identity.
#[derive(Debug, Default)]
struct Group {
    /// Held for the whole pick, so the pick is one transaction and the counters are plain integers.
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    slots: Vec<Slot>,
    by_identity: HashMap<Box<str>, u32>,
    free: Vec<u32>,
    /// Increases whenever slots are freed: a view's slot indices are valid while it saw this epoch.
    epoch: u64,
    last_recycle: i64,
}

/// Dubbo's `WeightedRoundRobin` for one provider identity.
#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    weight: i32,
    current: i64,
    last_update: i64,
}

/// A view's providers mapped to table slots, resolved by identity on first use and again after the
/// table freed slots (a new epoch), so the pick loop itself only indexes.
#[derive(Debug)]
struct ViewSlots {
    group: Arc<Group>,
    /// The table epoch the indices below were resolved in; `u64::MAX` before the first pick.
    epoch: AtomicU64,
    slots: Box<[AtomicU32]>,
}

impl Table {
    fn slot_for(&mut self, identity: &str) -> u32 {
        if let Some(&index) = self.by_identity.get(identity) {
            return index;
        }
        let index = match self.free.pop() {
            Some(index) => {
                self.slots[index as usize] = Slot::default();
                index
            }
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        };
        self.by_identity.insert(identity.into(), index);
        index
    }

    /// Forgets identities not picked from for `period` ms; scans at most once per second of clock time.
    fn recycle(&mut self, now: i64, period: i64) {
        if now - self.last_recycle < period.min(1000) {
            return;
        }
        self.last_recycle = now;
        let slots = &self.slots;
        let free = &mut self.free;
        let before = free.len();
        self.by_identity.retain(|_, &mut index| {
            let keep = now - slots[index as usize].last_update <= period;
            if !keep {
                free.push(index);
            }
            keep
        });
        if free.len() != before {
            self.epoch += 1;
        }
    }
}

impl ViewSlots {
    /// Makes every provider's slot index valid for the table's current epoch.
    fn validate(&self, table: &mut Table, view: &MethodView) {
        if self.epoch.load(Relaxed) == table.epoch {
            return;
        }
        for (slot, provider) in self.slots.iter().zip(view.providers()) {
            slot.store(table.slot_for(provider.identity()), Relaxed);
        }
        self.epoch.store(table.epoch, Relaxed);
    }
}

impl RoundRobin {
    fn resolve(&self, view: &MethodView) -> ViewSlots {
        ViewSlots {
            group: self.group(view),
            epoch: AtomicU64::new(u64::MAX),
            slots: (0..view.len()).map(|_| AtomicU32::new(0)).collect(),
        }
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
        view.with_state(
            self.key,
            |view| self.resolve(view),
            |state: &ViewSlots| {
                let static_weights = view.static_weights(pick);
                let now = pick.now();
                let mut table = state
                    .group
                    .table
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                state.validate(&mut table, view);
                let (mut total, mut best, mut best_slot, mut max) =
                    (0i64, usize::MAX, 0usize, i64::MIN);
                let mut candidates = 0usize;
                let check = !pick.excluded.is_empty();
                for (i, cached) in state.slots.iter().enumerate() {
                    if check && !pick.allows(view, i) {
                        continue;
                    }
                    candidates += 1;
                    let weight = match static_weights {
                        Some(weights) => weights[i],
                        None => view.weight(i, pick),
                    };
                    let index = cached.load(Relaxed) as usize;
                    let slot = &mut table.slots[index];
                    if slot.weight != weight {
                        slot.weight = weight;
                        slot.current = 0;
                    }
                    slot.current += i64::from(weight);
                    slot.last_update = now;
                    // Strictly greater: the earliest provider wins a tie, as in Dubbo.
                    if slot.current > max {
                        (best, best_slot, max) = (i, index, slot.current);
                    }
                    total += i64::from(weight);
                }
                if candidates != table.by_identity.len() {
                    table.recycle(now, self.recycle_period);
                }
                if best == usize::MAX {
                    return None;
                }
                table.slots[best_slot].current -= total;
                Some(best)
            },
        )
    }

    fn prepare(&self, view: &MethodView) {
        // Counter groups that no view uses any more (every reference to that service is gone) go; the
        // current snapshot's views still hold theirs.
        self.groups.retain(|_, group| Arc::strong_count(group) > 1);
        view.with_state(
            self.key,
            |view| self.resolve(view),
            |state: &ViewSlots| {
                let mut table = state
                    .group
                    .table
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                state.validate(&mut table, view);
            },
        );
    }
}
