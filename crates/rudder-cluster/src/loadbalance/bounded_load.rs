//! Consistent hashing with bounded loads (`hash.balance-factor`): a key keeps its provider while that
//! provider is not overloaded.
//!
//! A plain consistent-hash ring sends every call of a key to one provider, so a hot key (one big
//! customer, one popular item) puts all of its load on one provider while the others idle. Mirrokni,
//! Thorup and Zadimoghaddam ("Consistent Hashing with Bounded Loads", 2016) keep the ring but give every
//! provider a capacity: with `n` providers, `m` calls in flight in total and a balance factor `c > 1`,
//!
//! ```text
//! bound = ⌈c · (m + 1) / n⌉        (the + 1 is the call being placed)
//! ```
//!
//! A call goes to its key's owner on the ring if the owner has fewer than `bound` calls in flight, else
//! it walks the ring clockwise to the next *distinct* provider under the bound. Some provider is always
//! under it: the average load `m / n` is below `(m + 1) / n ≤ bound`. So no provider ever takes more
//! than `c` times the average, and a key moves only while its owner is full: when a provider joins or
//! leaves, the keys that move are the ring's own movers plus a few overflowing ones (the paper bounds
//! these as a function of `c`; the README gives measured figures). `c` near 1 balances tightly and moves
//! more keys; a large `c` is the plain ring. This is the form Google Cloud Pub/Sub, Vimeo's HAProxy
//! patch (`hash-balance-factor`) and Envoy (`hash_balance_factor`) use.
//!
//! # What counts as load
//!
//! The calls of this method in flight to each provider from this process (every reference), the
//! counters `leastactive` and `p2c` read. They are live, so the bound is computed per pick from their
//! sum: O(n) over adjacent counters, skipped when the owner has nothing in flight (a call is always
//! under the bound then). Everything else (the ring, the factor) is built when the snapshot is
//! published.
//!
//! # The walk
//!
//! Providers checked so far are marked in a bitset on the stack, so each one's counter is read at most
//! once per pick and the walk stops once every provider has been seen: no allocation. Past
//! [`TRACKED_PROVIDERS`] a provider cannot be marked and is simply read again where its next point
//! comes (the answer is the same, only the early stop is lost). Providers the pick excludes (already
//! tried by failover) are stepped over, as the plain ring steps over them. If no allowed provider is
//! under the bound (the excluded ones held the spare capacity, or the counters moved under the walk)
//! the call goes where the plain ring sends it: the first allowed provider on the walk.
//!
//! # Differences from Envoy
//!
//! Envoy probes the hosts in a pseudo-random order seeded by the hash (to spread overflow from one
//! full host over several), allocating a permutation per overloaded pick, and weights the bound by host
//! weight. rudder walks the ring clockwise as the paper, HAProxy and Vimeo do, and, as Dubbo's ring
//! ignores weights, so does its bound.

use rudder_common::url::ranges::warn_once;
use rudder_common::url::DubboUrl;

use super::{MethodView, Pick};

/// The parameter's key; `<method>.hash.balance-factor` sets it for one method.
pub const BALANCE_FACTOR_KEY: &str = "hash.balance-factor";

/// The largest balance factor: past it no realistic load ever reaches the bound.
pub const MAX_BALANCE_FACTOR: f64 = 100.0;

/// Providers the walk can mark as checked; the bitset is `TRACKED_PROVIDERS / 8` bytes of stack.
pub const TRACKED_PROVIDERS: usize = 1024;

/// The factor is kept in millionths, so the bound is exact integer arithmetic.
const MILLIONTHS: u64 = 1_000_000;

/// A balance factor `c`, `1 < c ≤ 100`, to six decimal places.
///
/// ```
/// use rudder_cluster::loadbalance::bounded_load::BalanceFactor;
/// use rudder_common::url::DubboUrl;
///
/// let url = DubboUrl::parse("dubbo://10.0.0.1:20880/S?hash.balance-factor=1.25&get.hash.balance-factor=2")?;
/// let c = BalanceFactor::read(&url, "put").unwrap();
/// assert_eq!(c.bound(100, 10), 13); // ⌈1.25 · 101 / 10⌉
/// assert_eq!(BalanceFactor::read(&url, "get").unwrap().bound(100, 10), 21);
/// assert!(BalanceFactor::read(&DubboUrl::parse("dubbo://10.0.0.1:20880/S")?, "get").is_none());
/// # Ok::<(), rudder_common::url::UrlError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceFactor {
    millionths: u64,
}

impl BalanceFactor {
    /// `raw` as a factor: `None` when absent or empty, and, with a warning naming `shown`, when not a
    /// number or outside `1 < c ≤ 100`.
    pub fn parse(raw: Option<&str>, shown: &str) -> Option<BalanceFactor> {
        let raw = raw?;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return None;
        }
        let Ok(c) = trimmed.parse::<f64>() else {
            warn_once(
                shown,
                raw,
                format_args!("parameter {shown}={raw:?} is not a number; ignoring it (plain ring)"),
            );
            return None;
        };
        // NaN and infinities fail the comparisons; 1.0000001 rounds to 1 and is out of range too.
        let millionths = (c * MILLIONTHS as f64).round();
        let in_range = c > 1.0 && c <= MAX_BALANCE_FACTOR && millionths > MILLIONTHS as f64;
        if !in_range {
            warn_once(
                shown,
                raw,
                format_args!(
                    "parameter {shown}={raw:?} is outside 1 < c <= {MAX_BALANCE_FACTOR}; ignoring it (plain ring)"
                ),
            );
            return None;
        }
        Some(BalanceFactor {
            millionths: millionths as u64,
        })
    }

    /// The factor for `method`: `<method>.hash.balance-factor`, else `hash.balance-factor`, else none;
    /// an unusable method-level value is warned about and the service-level one is used, as for
    /// `hash.nodes`.
    pub fn read(url: &DubboUrl, method: &str) -> Option<BalanceFactor> {
        if let Some(raw) = url.strict_method_parameter(method, BALANCE_FACTOR_KEY) {
            let shown = format!("{method}.{BALANCE_FACTOR_KEY}");
            if let Some(c) = BalanceFactor::parse(Some(raw), &shown) {
                return Some(c);
            }
        }
        BalanceFactor::parse(url.parameter(BALANCE_FACTOR_KEY), BALANCE_FACTOR_KEY)
    }

    /// The factor as a number.
    pub fn value(self) -> f64 {
        self.millionths as f64 / MILLIONTHS as f64
    }

    /// The most calls in flight a provider may hold, counting the call being placed:
    /// `⌈c · (in_flight + 1) / providers⌉`, for `in_flight` calls in flight over `providers` providers.
    pub fn bound(self, in_flight: u64, providers: usize) -> u64 {
        let slots = u128::from(self.millionths) * (u128::from(in_flight) + 1);
        let per = u128::from(MILLIONTHS) * providers.max(1) as u128;
        slots.div_ceil(per) as u64
    }

    /// Whether a provider with `load` calls in flight is under the bound: `load < ⌈x⌉` is `load < x`
    /// for a whole `load`, so this multiplies instead of dividing.
    #[inline]
    fn admits(self, load: u64, in_flight: u64, providers: usize) -> bool {
        u128::from(load) * providers as u128 * u128::from(MILLIONTHS)
            < u128::from(self.millionths) * (u128::from(in_flight) + 1)
    }
}

/// Providers checked during one walk, by view index.
struct Checked {
    bits: [u64; TRACKED_PROVIDERS / 64],
    count: usize,
}

impl Checked {
    /// Marks `index`; false when it was marked already. Indexes past the bitset are never marked.
    #[inline]
    fn mark(&mut self, index: usize) -> bool {
        let Some(word) = self.bits.get_mut(index / 64) else {
            return true;
        };
        let bit = 1u64 << (index % 64);
        let fresh = *word & bit == 0;
        *word |= bit;
        self.count += usize::from(fresh);
        fresh
    }
}

/// The calls of `view`'s method in flight, over all its providers.
fn in_flight(view: &MethodView) -> u64 {
    let sum = |statuses: &[rudder_common::status::RpcStatus]| -> u64 {
        statuses.iter().map(|s| s.active().max(0) as u64).sum()
    };
    match view.adjacent_statuses() {
        Some(statuses) => sum(statuses),
        None => view.status_runs().map(sum).sum(),
    }
}

/// The bounded-load choice on a ring of `(point, provider index)` entries, from the owner at `start`.
pub(crate) fn walk(
    points: &[(u32, u32)],
    start: usize,
    factor: BalanceFactor,
    view: &MethodView,
    pick: &Pick<'_>,
) -> Option<usize> {
    let providers = view.len();
    let load = |index: usize| view.method_status(index).active().max(0) as u64;
    let owner = points[start % points.len()].1 as usize;
    // An owner that would be under the bound even if every call in flight were its own needs no sum.
    let owner_load = load(owner);
    if pick.allows(view, owner) && factor.admits(owner_load, owner_load, providers) {
        return Some(owner);
    }
    let total = in_flight(view);
    let mut checked = Checked {
        bits: [0; TRACKED_PROVIDERS / 64],
        count: 0,
    };
    let mut first_allowed = None;
    for step in 0..points.len() {
        let index = points[(start + step) % points.len()].1 as usize;
        if !checked.mark(index) {
            continue;
        }
        if pick.allows(view, index) {
            if factor.admits(load(index), total, providers) {
                return Some(index);
            }
            first_allowed.get_or_insert(index);
        }
        if checked.count == providers {
            break;
        }
    }
    first_allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factor(raw: &str) -> Option<BalanceFactor> {
        BalanceFactor::parse(Some(raw), "test.hash.balance-factor")
    }

    #[test]
    fn the_bound_is_exact() {
        let c = factor("1.1").unwrap();
        // 1.1 · 10 / 11 is exactly 1; in floating point it comes out just above and would round up.
        assert_eq!(c.bound(9, 11), 1);
        assert!(!c.admits(1, 9, 11));
        assert!(c.admits(0, 9, 11));
        let c = factor("1.25").unwrap();
        assert_eq!(c.bound(0, 10), 1);
        assert_eq!(c.bound(100, 10), 13);
        assert_eq!(c.bound(u64::from(u32::MAX) * 4, 1), 21_474_836_477); // (4 · (2^32 - 1) + 1) · 1.25 = 21,474,836,476.25
        for (load, total, n) in [(12, 100, 10), (13, 100, 10), (0, 0, 1000), (5, 7, 3)] {
            assert_eq!(
                c.admits(load, total, n),
                load < c.bound(total, n),
                "{load} {total} {n}"
            );
        }
    }

    #[test]
    fn the_range_is_open_at_one_and_closed_at_one_hundred() {
        assert_eq!(factor("100").map(BalanceFactor::value), Some(100.0));
        assert_eq!(
            factor(" 1.000001 ").map(BalanceFactor::value),
            Some(1.000001)
        );
        for bad in [
            "1",
            "1.0000001",
            "0.5",
            "-2",
            "100.01",
            "NaN",
            "inf",
            "1,5",
            "x",
        ] {
            assert_eq!(factor(bad), None, "{bad}");
        }
        assert_eq!(factor(""), None);
        assert_eq!(BalanceFactor::parse(None, "k"), None);
    }

    #[test]
    fn checked_marks_each_provider_once() {
        let mut checked = Checked {
            bits: [0; TRACKED_PROVIDERS / 64],
            count: 0,
        };
        assert!(checked.mark(3));
        assert!(!checked.mark(3));
        assert!(checked.mark(TRACKED_PROVIDERS - 1));
        assert!(checked.mark(TRACKED_PROVIDERS));
        assert!(
            checked.mark(TRACKED_PROVIDERS),
            "past the bitset: never marked"
        );
        assert_eq!(checked.count, 2);
    }
}
