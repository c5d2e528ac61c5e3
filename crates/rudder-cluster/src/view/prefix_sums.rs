//! Running weight sums of a snapshot, and Dubbo's weighted draw over them.
//!
//! Dubbo's weighted choice draws an offset in `0..total` and walks the providers, subtracting weights,
//! until the offset goes negative: the winner is the first provider whose running sum exceeds the offset.
//! With the running sums precomputed per snapshot, a binary search finds the same provider in O(log n).
//! (A guide table, which replaces most of the search with one multiplication, was measured here: 1 ns
//! faster at 100 providers and 6 ns slower at 3, so it was left out.)

use std::fmt;

use crate::rng::PickRng;

/// Precomputed running sums of the providers' weights, in view order.
///
/// ```
/// use rudder_cluster::loadbalance::PrefixSums;
/// let sums = PrefixSums::new(&[100, 0, 300]);
/// assert_eq!(sums.total(), 400);
/// assert_eq!((sums.owner(0), sums.owner(99), sums.owner(100), sums.owner(399)), (0, 0, 2, 2));
/// ```
pub struct PrefixSums {
    /// `sums[i]`: the weights of providers `0..=i`, negatives counted as 0.
    sums: Box<[i64]>,
    same_weight: bool,
}

impl PrefixSums {
    /// The running sums of `weights` (negative weights count as 0).
    pub fn new(weights: &[i32]) -> PrefixSums {
        let mut total = 0i64;
        let sums = weights
            .iter()
            .map(|&w| {
                total += i64::from(w.max(0));
                total
            })
            .collect();
        let same_weight = weights.windows(2).all(|w| w[0].max(0) == w[1].max(0));
        PrefixSums { sums, same_weight }
    }

    /// Number of providers.
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether there is no provider.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// The sum of all weights.
    pub fn total(&self) -> i64 {
        self.sums.last().copied().unwrap_or(0)
    }

    /// Whether all providers have the same weight.
    pub fn same_weight(&self) -> bool {
        self.same_weight
    }

    /// The provider that owns `offset` (`0 <= offset < total`): the first whose running sum exceeds it.
    #[inline]
    pub fn owner(&self, offset: i64) -> usize {
        self.sums.partition_point(|&sum| sum <= offset)
    }

    /// Dubbo's weighted random choice: uniform when all weights are equal or all zero, otherwise the owner
    /// of an offset drawn in `0..total`. `None` only when there is no provider.
    #[inline]
    pub fn choose(&self, rng: &mut dyn PickRng) -> Option<usize> {
        let total = self.total();
        if self.is_empty() {
            return None;
        }
        if self.same_weight || total <= 0 {
            return Some(rng.below(self.len() as u64) as usize);
        }
        Some(self.owner(rng.below(total as u64) as i64))
    }
}

impl fmt::Debug for PrefixSums {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrefixSums")
            .field("providers", &self.sums.len())
            .field("total", &self.total())
            .field("same_weight", &self.same_weight)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_is_the_first_provider_whose_running_sum_exceeds_the_offset() {
        let weights = [0, 3, -2, 0, 1, 4];
        let sums = PrefixSums::new(&weights);
        assert_eq!(sums.total(), 8);
        let mut expected = Vec::new();
        for (i, &w) in weights.iter().enumerate() {
            expected.extend(std::iter::repeat_n(i, w.max(0) as usize));
        }
        let owners: Vec<usize> = (0..sums.total()).map(|o| sums.owner(o)).collect();
        assert_eq!(owners, expected);
        assert!(!sums.same_weight());
        assert!(PrefixSums::new(&[5, 5, 5]).same_weight());
        assert!(PrefixSums::new(&[0, -1]).same_weight());
    }
}
