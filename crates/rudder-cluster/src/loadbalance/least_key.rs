//! Dubbo's "lowest key wins, weighted random among ties", shared by `leastactive` and
//! `shortestresponse` (and by `random` while weights change with time).
//!
//! Dubbo walks the providers once, collecting the indexes tied for the lowest key, then draws among them.
//! rudder reaches the same decision, with the same random draws, in passes over contiguous arrays that
//! the compiler turns into straight-line, mostly vector code:
//!
//! 1. **Read.** Every provider's key (an `i32`: four fit one vector register) is read once into a
//!    per-thread buffer, since live counters change under us and one decision must see one set of
//!    values, noting whether all keys are equal.
//! 2. **All equal** (an idle service: nothing in flight, nothing measured yet) with the snapshot's
//!    precomputed weights: the draw is the binary search over prefix sums that
//!    [`random`](super::random) does. Done.
//! 3. **Tally.** The lowest key, then how many providers tie on it, their weight sum, and whether all
//!    their weights are equal, with masks instead of branches.
//! 4. **Draw.** An offset in `0..total` (weighted) or a rank in `0..ties` (uniform), exactly as Dubbo
//!    draws, then a walk to the provider it lands on, skipping strides of eight providers whose tied
//!    weight (or count) the draw exceeds.
//!
//! The tests compare the outcome and the random draws with a literal transcription of Dubbo's loop.

use std::cell::RefCell;

use super::{MethodView, Pick, PickRng};

/// The weight that marks an excluded provider; real weights are never negative.
const EXCLUDED: i32 = -1;

/// Per-thread buffers, reused by every pick of the thread.
#[derive(Default)]
struct Scratch {
    keys: Vec<i32>,
    weights: Vec<i32>,
}

/// The lowest-key decision for one pick: `entries` yields one entry per provider, in view order, and
/// `key` gives each entry's key.
///
/// In the steady state (nothing excluded, no warmup in progress, no weight hook) the weights are the
/// view's precomputed ones; otherwise they are computed for every allowed provider, as Dubbo does.
pub(crate) fn least_key_weighted<E>(
    view: &MethodView,
    pick: &Pick<'_>,
    rng: &mut dyn PickRng,
    entries: impl Iterator<Item = E>,
    key: impl Fn(E) -> i32,
) -> Option<usize> {
    thread_local! {
        static SCRATCH: RefCell<Scratch> = RefCell::default();
    }
    let mut decide = |Scratch { keys, weights }: &mut Scratch, entries| {
        let all_equal = read_keys(entries, &key, view.len(), keys);
        if let Some(sums) = all_equal.then(|| view.static_prefix(pick)).flatten() {
            return sums.choose(rng);
        }
        lowest_tied(keys, weights_for(view, pick, weights), rng)
    };
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => decide(&mut scratch, entries),
        // Re-entered from inside a pick (a weight hook that picks): use fresh buffers.
        Err(_) => decide(&mut Scratch::default(), entries),
    })
}

/// The weights of one pick, in view order.
#[derive(Debug, Clone, Copy)]
struct Weights<'a> {
    /// A negative weight ([`EXCLUDED`]) marks a provider the pick may not choose.
    values: &'a [i32],
    heaviest: i32,
    any_excluded: bool,
}

/// The view's precomputed weights in the steady state, otherwise weights computed into `buffer`.
fn weights_for<'a>(view: &'a MethodView, pick: &Pick<'_>, buffer: &'a mut Vec<i32>) -> Weights<'a> {
    if let (true, Some(precomputed)) = (pick.excluded.is_empty(), view.static_weights(pick)) {
        return Weights {
            values: precomputed,
            heaviest: view.heaviest(),
            any_excluded: false,
        };
    }
    buffer.clear();
    buffer.extend((0..view.len()).map(|i| {
        if pick.allows(view, i) {
            view.weight(i, pick)
        } else {
            EXCLUDED
        }
    }));
    Weights {
        heaviest: buffer.iter().copied().max().unwrap_or(0),
        any_excluded: buffer.contains(&EXCLUDED),
        values: buffer,
    }
}

/// Reads provider `i`'s key into `keys[i]`, once each, for `len` providers, and returns whether all
/// keys are equal, found without a branch per key: they are when every bit is set in all of them or
/// in none.
#[inline]
fn read_keys<E>(
    entries: impl Iterator<Item = E>,
    key: &impl Fn(E) -> i32,
    len: usize,
    keys: &mut Vec<i32>,
) -> bool {
    keys.resize(len, 0);
    let (mut any, mut all) = (0, !0);
    for (slot, entry) in keys.iter_mut().zip(entries) {
        *slot = key(entry);
        any |= *slot;
        all &= *slot;
    }
    len == 0 || any == all
}

/// All-ones for a tied, allowed provider, else zero: arithmetic instead of branches.
#[inline]
fn tied(key: i32, weight: i32, least: i32) -> i32 {
    -i32::from(key == least) & !(weight >> 31)
}

/// Dubbo's decision over `keys[i]` and `weights`: among the allowed providers with the lowest key,
/// weighted random unless all their weights are equal or sum to zero, then uniform. `None` when no
/// provider is allowed.
fn lowest_tied(keys: &[i32], weights: Weights<'_>, rng: &mut dyn PickRng) -> Option<usize> {
    let Weights {
        values: weights,
        heaviest,
        any_excluded,
    } = weights;
    let least = if any_excluded {
        let allowed = |(&k, &w): (&i32, &i32)| if w >= 0 { k } else { i32::MAX };
        keys.iter()
            .zip(weights)
            .map(allowed)
            .fold(i32::MAX, i32::min)
    } else {
        keys.iter().copied().fold(i32::MAX, i32::min)
    };
    let first = keys
        .iter()
        .zip(weights)
        .position(|(&k, &w)| tied(k, w, least) != 0)?;
    let (keys, weights) = (&keys[first..], &weights[first..]);
    // 32-bit sums when they cannot overflow: twice as many lanes per instruction.
    let narrow_sums = i64::from(heaviest) * keys.len() as i64 <= i64::from(i32::MAX);
    let tally = match narrow_sums {
        true => tally::<i32>(keys, weights, least),
        false => tally::<i64>(keys, weights, least),
    };
    if tally.ties == 1 {
        return Some(first);
    }
    let found = if tally.differ != 0 && tally.total > 0 {
        // The first tied provider whose running weight exceeds an offset drawn in 0..total.
        let offset = rng.below(tally.total as u64) as i64;
        walk(keys, weights, least, offset, |mask, weight| mask & weight)
    } else {
        // The n-th tied provider, n uniform in 0..ties.
        let rank = rng.below(u64::from(tally.ties)) as i64;
        walk(keys, weights, least, rank, |mask, _| mask & 1)
    };
    // Always found: the draw is below the tied total. The first tied provider is a safe answer.
    Some(first + found.unwrap_or(0))
}

/// Providers the walk steps over at once when the draw lies beyond them.
const STRIDE: usize = 8;

/// The index at which `remaining`, less `step` of each tied provider in order, goes negative. Strides
/// of providers are summed in one go and skipped while the draw lies beyond them.
#[inline]
fn walk(
    keys: &[i32],
    weights: &[i32],
    least: i32,
    mut remaining: i64,
    step: impl Fn(i32, i32) -> i32,
) -> Option<usize> {
    let step_at = |k: i32, w: i32| i64::from(step(tied(k, w, least), w));
    let mut start = 0;
    for (keys, weights) in keys.chunks_exact(STRIDE).zip(weights.chunks_exact(STRIDE)) {
        let stride: i64 = keys.iter().zip(weights).map(|(&k, &w)| step_at(k, w)).sum();
        if remaining < stride {
            break;
        }
        remaining -= stride;
        start += STRIDE;
    }
    let rest = keys[start..].iter().zip(&weights[start..]);
    for (i, (&k, &w)) in rest.enumerate() {
        remaining -= step_at(k, w);
        if remaining < 0 {
            return Some(start + i);
        }
    }
    None
}

/// The providers that tie on the lowest key, from the first of them on.
#[derive(Debug, Clone, Copy)]
struct Tally {
    ties: u32,
    total: i64,
    /// Zero when all their weights equal the first's.
    differ: i32,
}

/// Counts the providers tied on `least` (the first of which is `keys[0]`), summing weights in `S`.
#[inline]
fn tally<S>(keys: &[i32], weights: &[i32], least: i32) -> Tally
where
    S: Copy + Default + From<i32> + std::ops::AddAssign + Into<i64>,
{
    let first_weight = weights[0];
    let (mut ties, mut total, mut differ) = (0i32, S::default(), 0i32);
    for (&k, &w) in keys.iter().zip(weights) {
        let mask = tied(k, w, least);
        ties -= mask;
        total += S::from(mask & w);
        differ |= mask & (w ^ first_weight);
    }
    Tally {
        ties: ties as u32,
        total: total.into(),
        differ,
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{RngCore, SeedableRng};

    use super::super::PrefixSums;
    use super::*;

    /// Dubbo's `LeastActiveLoadBalance.doSelect` loop, transcribed literally (minus warmup, which the
    /// weights already include): the reference the branch-free passes must agree with.
    fn dubbo_loop(keys: &[i64], weights: &[i32], rng: &mut dyn PickRng) -> Option<usize> {
        let mut least = i64::MAX;
        let mut least_indexes = Vec::new();
        let (mut total, mut first_weight, mut same_weight) = (0i64, 0i32, true);
        for (i, (&k, &w)) in keys.iter().zip(weights).enumerate() {
            if w == EXCLUDED {
                continue;
            }
            if least_indexes.is_empty() || k < least {
                least = k;
                least_indexes = vec![i];
                total = i64::from(w);
                first_weight = w;
                same_weight = true;
            } else if k == least {
                least_indexes.push(i);
                total += i64::from(w);
                if same_weight && w != first_weight {
                    same_weight = false;
                }
            }
        }
        match least_indexes.len() {
            0 => None,
            1 => Some(least_indexes[0]),
            n => {
                if !same_weight && total > 0 {
                    let mut offset = rng.below(total as u64) as i64;
                    for &i in &least_indexes {
                        offset -= i64::from(weights[i]);
                        if offset < 0 {
                            return Some(i);
                        }
                    }
                }
                Some(least_indexes[rng.below(n as u64) as usize])
            }
        }
    }

    /// Runs the passes the way `least_key_weighted` does, with 32- and 64-bit weight sums, and checks
    /// that both decide alike with the same draws.
    fn passes(keys: &[i64], weights: &[i32], rng: &mut SmallRng) -> Option<usize> {
        let keys: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
        let mut buffer = Vec::new();
        let all_equal = read_keys(keys.iter(), &|&k| k, keys.len(), &mut buffer);
        assert_eq!(buffer, keys);
        assert_eq!(all_equal, keys.windows(2).all(|k| k[0] == k[1]));
        let mut twin = rng.clone();
        let weights = Weights {
            values: weights,
            heaviest: weights.iter().copied().max().unwrap_or(0),
            any_excluded: weights.contains(&EXCLUDED),
        };
        let chosen = lowest_tied(&keys, weights, rng);
        // Heavy weights take the 64-bit sums.
        let heavy = Weights {
            heaviest: i32::MAX,
            ..weights
        };
        assert_eq!(lowest_tied(&keys, heavy, &mut twin), chosen);
        assert_eq!(twin.next_u64(), rng.clone().next_u64(), "draws differ");
        chosen
    }

    #[test]
    fn agrees_with_dubbos_loop_on_random_inputs() {
        let mut input = SmallRng::seed_from_u64(0x5eed);
        for case in 0..20_000 {
            let n = 1 + (input.next_u32() % 150) as usize;
            // Few distinct keys and weights, so ties (and equal-weight ties) are common.
            let key_range = 1 + u64::from(input.next_u32() % 4);
            let keys: Vec<i64> = (0..n)
                .map(|_| (input.next_u64() % key_range) as i64)
                .collect();
            let weights: Vec<i32> = (0..n)
                .map(|_| match input.next_u32() % 10 {
                    0 => EXCLUDED,
                    1 => 0,
                    2..=5 => 100,
                    r => (r as i32) * 37,
                })
                .collect();
            let seed = input.next_u64();
            let (mut a, mut b) = (SmallRng::seed_from_u64(seed), SmallRng::seed_from_u64(seed));
            let expected = dubbo_loop(&keys, &weights, &mut a);
            assert_eq!(
                passes(&keys, &weights, &mut b),
                expected,
                "case {case}: {keys:?} {weights:?}"
            );
            // Same number of draws: the next value of both generators agrees.
            assert_eq!(a.next_u64(), b.next_u64(), "case {case}: draws differ");
        }
    }

    #[test]
    fn prefix_choice_agrees_with_the_loop_when_all_tie() {
        let mut input = SmallRng::seed_from_u64(7);
        for case in 0..5_000 {
            // `select` consults a policy only with two candidates or more.
            let n = 2 + (input.next_u32() % 30) as usize;
            let weights: Vec<i32> = (0..n).map(|_| (input.next_u32() % 4) as i32 * 50).collect();
            let sums = PrefixSums::new(&weights);
            let seed = input.next_u64();
            let (mut a, mut b) = (SmallRng::seed_from_u64(seed), SmallRng::seed_from_u64(seed));
            let expected = dubbo_loop(&vec![0; n], &weights, &mut a);
            assert_eq!(sums.choose(&mut b), expected, "case {case}: {weights:?}");
            assert_eq!(a.next_u64(), b.next_u64(), "case {case}: draws differ");
        }
    }
}
