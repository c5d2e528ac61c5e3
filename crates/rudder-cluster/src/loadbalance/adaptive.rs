//! `adaptive`: power of two choices over the providers' reported load (`AdaptiveLoadBalance`, Dubbo 3.2+).
//!
//! Two distinct providers are drawn (with two providers, both are taken), and the one with the lower
//! [`AdaptiveMetrics::load`](rudder_common::status::AdaptiveMetrics::load) wins: the CPU load the provider last reported × (√ latency EWMA + 1) × (calls
//! in flight + 1) ÷ (success ratio × weight + 1). Equal loads (a provider not picked for two timeouts
//! counts 0, as does one that never reported) are broken by weight, as Dubbo breaks them. The pick
//! counts the call in the chosen provider's metrics and asks, through [`Pick::ask_load_report`], that
//! the request carry `lb_adaptive=mem,load`; a Java provider answers with `lb_adaptive=curTime:…,load:…`,
//! which the cluster feeds back with the call's time ([`AdaptiveMetrics::answered`](rudder_common::status::AdaptiveMetrics::answered)).
//!
//! The metrics are the provider's ([`ProviderStatus::adaptive`](rudder_common::status::ProviderStatus::adaptive)),
//! shared by every reference and method of the consumer as Dubbo's application-wide bean is. The
//! arithmetic is Dubbo's, checked against Dubbo's own classes (`tests/vectors/adaptive.txt`).
//!
//! # Differences from Dubbo
//!
//! * Dubbo updates the metrics from a response on a background thread (a 1024-slot queue that drops the
//!   oldest); rudder updates them before the call returns, so the next pick sees them.
//! * A `timeout` attachment of 0 or less makes Dubbo divide by zero (the pick throws); rudder uses 1.
//! * With providers excluded by a retry, Dubbo picks among all and then re-selects; rudder draws the pair
//!   among the providers that may still be tried.

use rudder_common::invocation::Invocation;
use rudder_common::url::ranges::IntRange;

use super::{LoadBalance, MethodView, Pick, PickRng, StateKey};
use rudder_common::status::record::RecordAdaptive;

/// `timeout` as `RpcUtils.getTimeout` reads it for the load formula: `<method>.timeout`, `timeout`,
/// else 1000 ms; positive.
pub const ADAPTIVE_TIMEOUT: IntRange = IntRange {
    key: "timeout",
    default: 1_000,
    min: 1,
    max: i32::MAX as i64,
};

/// Dubbo's adaptive balancer.
///
/// ```
/// use rudder_cluster::loadbalance::{adaptive::Adaptive, LoadBalance};
/// let policy: Box<dyn LoadBalance> = Box::new(Adaptive::default());
/// ```
#[derive(Debug)]
pub struct Adaptive {
    key: StateKey,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive {
            key: StateKey::unique(),
        }
    }
}

/// Each provider's timeout for the view's method, read once per snapshot.
struct Timeouts(Box<[i32]>);

impl Timeouts {
    fn of(view: &MethodView) -> Timeouts {
        let method = view.method();
        Timeouts(
            view.providers()
                .iter()
                .map(|p| ADAPTIVE_TIMEOUT.method_value(p.url(), method) as i32)
                .collect(),
        )
    }
}

/// The `timeout` an invocation attachment sets for the call, as Dubbo reads it before the URL's.
fn attached_timeout(invocation: &Invocation) -> Option<i32> {
    let raw = invocation.attachment("timeout")?;
    raw.trim()
        .parse::<i64>()
        .ok()
        .map(|t| t.clamp(1, i64::from(i32::MAX)) as i32)
}

/// Two distinct positions among `allowed` candidates, drawn as Dubbo draws them: `rand(n)`, then
/// `rand(n - 1)` moved past the first.
pub(crate) fn two_of(allowed: usize, rng: &mut dyn PickRng) -> (usize, usize) {
    let first = rng.below(allowed as u64) as usize;
    let mut second = rng.below(allowed as u64 - 1) as usize;
    if second >= first {
        second += 1;
    }
    (first, second)
}

/// The index in `view` of the `rank`-th provider `pick` allows.
pub(crate) fn nth_allowed(view: &MethodView, pick: &Pick<'_>, rank: usize) -> usize {
    if pick.excluded.is_empty() {
        return rank;
    }
    (0..view.len())
        .filter(|&i| pick.allows(view, i))
        .nth(rank)
        .expect("rank below the allowed count")
}

/// The two candidates of a power-of-two-choices pick; `None` when fewer than two are allowed.
pub(crate) fn pair(
    view: &MethodView,
    pick: &Pick<'_>,
    rng: &mut dyn PickRng,
) -> Option<(usize, usize)> {
    let allowed = match pick.excluded.is_empty() {
        true => view.len(),
        false => (0..view.len()).filter(|&i| pick.allows(view, i)).count(),
    };
    match allowed {
        0 => None,
        1 => Some((nth_allowed(view, pick, 0), nth_allowed(view, pick, 0))),
        2 => Some((nth_allowed(view, pick, 0), nth_allowed(view, pick, 1))),
        n => {
            let (a, b) = two_of(n, rng);
            Some((nth_allowed(view, pick, a), nth_allowed(view, pick, b)))
        }
    }
}

/// Dubbo's tie break between two candidates: by weight, or a coin when both weigh nothing.
pub(crate) fn weighted_coin(a: (usize, i32), b: (usize, i32), rng: &mut dyn PickRng) -> usize {
    let total = a.1.saturating_add(b.1);
    if total > 0 {
        return if (rng.below(total as u64) as i32) < a.1 {
            a.0
        } else {
            b.0
        };
    }
    if rng.below(2) == 0 {
        a.0
    } else {
        b.0
    }
}

impl LoadBalance for Adaptive {
    fn pick(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        let (a, b) = pair(view, pick, rng)?;
        let attached = attached_timeout(invocation);
        let now = pick.now();
        let chosen = if a == b {
            a
        } else {
            view.with_state(self.key, Timeouts::of, |timeouts: &Timeouts| {
                let load = |i: usize, weight: i32| {
                    let timeout = attached.unwrap_or(timeouts.0[i]);
                    view.providers()[i]
                        .status()
                        .adaptive()
                        .load(weight, timeout, now)
                };
                let (wa, wb) = (view.weight(a, pick), view.weight(b, pick));
                let (la, lb) = (load(a, wa), load(b, wb));
                if java_bits(la) == java_bits(lb) {
                    weighted_coin((a, wa), (b, wb), rng)
                } else if java_long_bits_greater(la, lb) {
                    b
                } else {
                    a
                }
            })
        };
        view.providers()[chosen].status().adaptive().picked(now);
        pick.ask_load_report();
        Some(chosen)
    }

    fn prepare(&self, view: &MethodView) {
        view.with_state(self.key, Timeouts::of, |_: &Timeouts| ());
    }
}

/// Dubbo compares `Double.doubleToLongBits` of the loads as signed longs, which orders negative loads
/// (a provider counted more answers than picks) backwards; kept, as the decision is Dubbo's.
fn java_long_bits_greater(a: f64, b: f64) -> bool {
    java_bits(a) > java_bits(b)
}

/// `Double.doubleToLongBits`: every NaN is the canonical one.
fn java_bits(x: f64) -> i64 {
    if x.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        x.to_bits() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::{java_long_bits_greater, two_of};
    use rand::{rngs::SmallRng, SeedableRng};

    #[test]
    fn pairs_are_distinct_and_cover_every_ordered_pair() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut seen = [[0u32; 4]; 4];
        for _ in 0..12_000 {
            let (a, b) = two_of(4, &mut rng);
            assert_ne!(a, b);
            seen[a][b] += 1;
        }
        // 12 ordered pairs, 1000 expected each; 4 standard deviations is about ±120.
        for (a, row) in seen.iter().enumerate() {
            for (b, &n) in row.iter().enumerate() {
                if a != b {
                    assert!((880..=1120).contains(&n), "pair ({a},{b}) drawn {n} times");
                }
            }
        }
    }

    #[test]
    fn load_order_is_dubbos_long_bit_order() {
        assert!(java_long_bits_greater(2.0, 1.0));
        assert!(!java_long_bits_greater(-0.0, 0.0)); // -0.0's bits are the smallest long
        assert!(java_long_bits_greater(-2.0, -1.0));
    }
}
