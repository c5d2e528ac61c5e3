//! Dubbo's "lowest key wins, weighted random among ties", shared by `leastactive` and
//! `shortestresponse` (and by `random` while weights change with time).
//!
//! Dubbo walks the providers once, keeping the indexes tied for the lowest key in an array, then draws
//! among them. rudder reads every key once into a per-thread buffer (live counters change under us, and
//! one decision must see one set of values), keeping the lowest and highest in registers, then builds the
//! tie list without branches that depend on the keys: each index is written at the end of the list
//! unconditionally and the list grows by `key == least`.
//!
//! When every provider ties (an idle service: nothing in flight, nothing measured yet) and the weights
//! are the snapshot's precomputed ones, the draw is a binary search over the snapshot's prefix sums,
//! exactly as [`random`](super::random) draws: O(log n) after the walk. Otherwise the draw runs over the
//! tie list only.
//!
//! The draws (`below(total)` for a weighted choice, `below(ties)` for a uniform one) are Dubbo's, so a
//! seeded generator gives the same picks as Dubbo's loop does; the tests compare the two on random inputs.

use std::cell::RefCell;

use super::{MethodView, Pick, PickRng};

/// The weight that marks an excluded provider; real weights are never negative.
const EXCLUDED: i32 = -1;

/// Per-thread buffers: the keys of one pick, the tie set, and the weights of a pick that cannot use
/// precomputed ones.
#[derive(Default)]
struct Scratch {
    keys: Vec<i64>,
    ties: Vec<u64>,
    weights: Vec<i32>,
}

/// The lowest-key decision for one pick: `key(&per_provider[i])` is provider `i`'s key, in view order.
///
/// In the steady state (nothing excluded, no warmup in progress, no weight hook) the weights are the
/// view's precomputed ones; otherwise they are computed for every allowed provider, as Dubbo does.
pub(crate) fn least_key_weighted<T>(
    view: &MethodView,
    pick: &Pick<'_>,
    rng: &mut dyn PickRng,
    per_provider: &[T],
    key: impl Fn(&T) -> i64,
) -> Option<usize> {
    debug_assert_eq!(per_provider.len(), view.len(), "one entry per provider");
    thread_local! {
        static SCRATCH: RefCell<Scratch> = RefCell::default();
    }
    let mut decide = |Scratch {
                          keys,
                          ties,
                          weights,
                      }: &mut Scratch| {
        keys.resize(view.len(), 0);
        // Read every key once. Whether they all equal the first is noted on the way (the idle case,
        // decided without a further pass); a running minimum would make each step wait on the last.
        let differ = read_keys(per_provider, &key, keys);
        if let (true, Some(precomputed)) = (pick.excluded.is_empty(), view.static_weights(pick)) {
            if let (0, Some(sums)) = (differ, view.static_prefix(pick)) {
                return sums.choose(rng);
            }
            mark_ties(keys, lowest(keys), ties);
            return choose_among(ties, precomputed, rng);
        }
        weights.clear();
        weights.extend((0..view.len()).map(|i| {
            if pick.allows(view, i) {
                view.weight(i, pick)
            } else {
                EXCLUDED
            }
        }));
        let least = keys
            .iter()
            .zip(weights.iter())
            .filter(|(_, &w)| w != EXCLUDED)
            .map(|(&key, _)| key)
            .min()?;
        mark_ties(keys, least, ties);
        for (i, _) in weights.iter().enumerate().filter(|(_, &w)| w == EXCLUDED) {
            ties[i / 64] &= !(1 << (i % 64));
        }
        choose_among(ties, weights, rng)
    };
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => decide(&mut scratch),
        // Re-entered from inside a pick (a weight hook that picks): use fresh buffers.
        Err(_) => decide(&mut Scratch::default()),
    })
}

/// Reads provider `i`'s key into `keys[i]`, once each, and returns 0 exactly when they are all equal
/// (the OR of each key XOR the first). Four accumulators, so that the reads of consecutive providers
/// do not wait on each other.
#[inline]
fn read_keys<T>(per_provider: &[T], key: &impl Fn(&T) -> i64, keys: &mut [i64]) -> i64 {
    let Some(first) = per_provider.first().map(key) else {
        return 0;
    };
    let mut differ = [0i64; 4];
    let mut slots = keys.chunks_exact_mut(4);
    let mut entries = per_provider.chunks_exact(4);
    for (slots, entries) in (&mut slots).zip(&mut entries) {
        for ((slot, entry), differ) in slots.iter_mut().zip(entries).zip(&mut differ) {
            *slot = key(entry);
            *differ |= *slot ^ first;
        }
    }
    for (slot, entry) in slots.into_remainder().iter_mut().zip(entries.remainder()) {
        *slot = key(entry);
        differ[0] |= *slot ^ first;
    }
    differ[0] | differ[1] | differ[2] | differ[3]
}

/// The lowest key, with four independent running minimums so that consecutive steps do not wait on
/// each other.
#[inline]
fn lowest(keys: &[i64]) -> i64 {
    let mut lanes = [i64::MAX; 4];
    let chunks = keys.chunks_exact(4);
    let rest = chunks.remainder().iter().copied().min().unwrap_or(i64::MAX);
    for chunk in chunks {
        for (lane, &key) in lanes.iter_mut().zip(chunk) {
            *lane = (*lane).min(key);
        }
    }
    lanes.into_iter().fold(rest, i64::min)
}

/// Marks in `ties` (bit `i % 64` of word `i / 64`) the providers whose key is `least`. Each bit is
/// computed apart from the others, so the compiler may do several at once.
#[inline]
fn mark_ties(keys: &[i64], least: i64, ties: &mut Vec<u64>) {
    ties.clear();
    ties.extend(keys.chunks(64).map(|chunk| {
        chunk
            .iter()
            .enumerate()
            .fold(0u64, |bits, (j, &key)| bits | u64::from(key == least) << j)
    }));
}

/// The indexes of the providers marked in `ties`, in order.
fn marked(ties: &[u64]) -> impl Iterator<Item = usize> + '_ {
    ties.iter().enumerate().flat_map(|(word, &bits)| {
        let mut rest = bits;
        std::iter::from_fn(move || {
            let bit = rest.trailing_zeros();
            rest &= rest.wrapping_sub(1);
            (bit < 64).then_some(word * 64 + bit as usize)
        })
    })
}

/// Dubbo's tie-break among the providers marked in `ties` (indexes into `weights`): weighted random
/// unless all their weights are equal or sum to zero, then uniform. Costs O(ties), not O(providers),
/// beyond counting the marks.
fn choose_among(ties: &[u64], weights: &[i32], rng: &mut dyn PickRng) -> Option<usize> {
    let count: u32 = ties.iter().map(|bits| bits.count_ones()).sum();
    match count {
        0 => None,
        1 => marked(ties).next(),
        _ => {
            let (mut total, mut lightest, mut heaviest) = (0i64, i32::MAX, i32::MIN);
            for w in marked(ties).map(|i| weights[i]) {
                total += i64::from(w);
                lightest = lightest.min(w);
                heaviest = heaviest.max(w);
            }
            if lightest != heaviest && total > 0 {
                // The first tied provider whose running weight exceeds the offset.
                let mut offset = rng.below(total as u64) as i64;
                return marked(ties).find(|&i| {
                    offset -= i64::from(weights[i]);
                    offset < 0
                });
            }
            marked(ties).nth(rng.below(u64::from(count)) as usize)
        }
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

    /// Runs the branch-free walk and the draw the way `least_key_weighted` does.
    fn passes(keys: &[i64], weights: &[i32], rng: &mut dyn PickRng) -> Option<usize> {
        let least = (0..keys.len())
            .filter(|&i| weights[i] != EXCLUDED)
            .map(|i| keys[i])
            .min()?;
        let mut ties = Vec::new();
        mark_ties(keys, least, &mut ties);
        for i in (0..keys.len()).filter(|&i| weights[i] == EXCLUDED) {
            ties[i / 64] &= !(1 << (i % 64));
        }
        choose_among(&ties, weights, rng)
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
