//! A latency histogram made of atomics: recording a call is three relaxed additions, no lock.
//!
//! prometheus-client's own `Histogram` takes a mutex per observation; on the call path of every
//! reference that would be one more contended lock, so rudder keeps its own buckets and hands the
//! counts to the encoder at scrape time.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Upper bounds of the buckets, in microseconds (0.5 ms to 10 s, the usual RPC latency range);
/// a last, unbounded bucket (`+Inf`) takes the rest.
pub(crate) const BOUNDS_MICROS: [u64; 14] = [
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
    2_500_000, 5_000_000, 10_000_000,
];

/// Call durations of one provider and method.
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    /// Per-bucket (not cumulative) counts; the last one is `+Inf`.
    buckets: [AtomicU64; BOUNDS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

/// What a scrape reads of a [`Histogram`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HistogramSnapshot {
    pub(crate) sum_seconds: f64,
    pub(crate) count: u64,
    /// `(upper bound in seconds, count in this bucket alone)`, `+Inf` last: the encoder accumulates.
    pub(crate) buckets: Vec<(f64, u64)>,
}

impl Histogram {
    /// Counts one call that took `micros`.
    #[inline]
    pub(crate) fn record(&self, micros: u64) {
        let index = BOUNDS_MICROS.partition_point(|&bound| bound < micros);
        self.buckets[index].fetch_add(1, Relaxed);
        self.sum_micros.fetch_add(micros, Relaxed);
    }

    /// The counts now. Each bucket is read once, and the count is their sum, so the exposition is
    /// self-consistent even while calls are recorded (`_count` equals the `+Inf` bucket).
    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        let bounds = BOUNDS_MICROS
            .iter()
            .map(|&b| b as f64 / 1e6)
            .chain(std::iter::once(f64::INFINITY));
        HistogramSnapshot {
            sum_seconds: self.sum_micros.load(Relaxed) as f64 / 1e6,
            count: counts.iter().sum(),
            buckets: bounds.zip(counts).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_on_a_bound_falls_in_that_bucket_and_beyond_the_last_in_inf() {
        let histogram = Histogram::default();
        for micros in [0, 500, 501, 10_000_000, 10_000_001, u64::MAX / 2] {
            histogram.record(micros);
        }
        let snapshot = histogram.snapshot();
        let count_at = |seconds: f64| {
            snapshot
                .buckets
                .iter()
                .find(|(bound, _)| *bound == seconds)
                .map(|(_, count)| *count)
        };
        assert_eq!(count_at(0.0005), Some(2)); // 0 and exactly 500 µs
        assert_eq!(count_at(0.001), Some(1)); // 501 µs
        assert_eq!(count_at(10.0), Some(1)); // exactly 10 s
        assert_eq!(count_at(f64::INFINITY), Some(2));
        assert_eq!(snapshot.count, 6);
        assert_eq!(snapshot.buckets.len(), BOUNDS_MICROS.len() + 1);
    }
}
