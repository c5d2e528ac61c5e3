//! `prequal`: a few random candidates, the cold ones compared by latency (after Prequal, Wydrowski et
//! al., NSDI 2024), rudder's own.
//!
//! Each pick draws [`PROBES`] distinct allowed providers at random. A candidate is **hot** when its
//! calls in flight for the method are above the [`HOT_QUANTILE`] quantile of the calls in flight of
//! every allowed provider (of the candidates alone past [`EXACT_UP_TO`] providers); the others are
//! **cold**. Among the cold candidates the lowest latency estimate wins (ties: fewer calls in flight,
//! then the first drawn); when every candidate is hot, the fewest calls in flight wins.
//!
//! Why not latency × load (`peakewma`): that product trades a slow provider's latency against the
//! queue of a fast one even when the fast ones are not queueing, so a provider 10 × slower still gets
//! a call whenever a fast candidate has a few in flight, and the p99 is its latency. Here queue length
//! matters only once a provider is hot, relative to the others: while the fast providers keep up, the
//! slow one is not picked; when they queue, it takes the overflow.
//!
//! Latency is a moving mean of the call times over about the last ten calls (failures and provider
//! exceptions observed as taking the method's `timeout`, decaying toward 0 while unobserved so an
//! avoided provider is tried again), kept as `peakewma` keeps its estimates but not held at the
//! peak: under load a fast provider's worst recent call is as long as a slow provider's typical one,
//! and comparing peaks then sends the slow provider calls. A provider with calls in flight reads as
//! at least as slow as the time since its last answer: one that stalls is left alone a few
//! milliseconds into the stall, not only once its calls in flight make it hot. Calls in flight are
//! the consumer's own counters (`leastactive`'s). Weights only exclude (weight 0); warmup is not
//! applied. A pick allocates nothing.
//!
//! ```
//! use rudder_cluster::loadbalance::{prequal::Prequal, LoadBalance};
//! let policy: Box<dyn LoadBalance> = Box::new(Prequal::default());
//! ```

use rudder_common::invocation::Invocation;

use super::peak_ewma::{PeakEwma, Smoothing, DEFAULT_DECAY_MILLIS};
use super::{LoadBalance, MethodView, Pick, PickRng};

/// Candidates per pick (Prequal probes a few; three keeps a pick cheap).
pub const PROBES: usize = 3;
/// A candidate is hot above this quantile of the providers' calls in flight.
pub const HOT_QUANTILE: f64 = 0.75;
/// Up to this many providers, the quantile is taken over all of them; past it, over the candidates.
pub const EXACT_UP_TO: usize = 64;

/// Prequal-style pick: hot/cold by calls in flight, the coldest lowest-latency candidate.
#[derive(Debug)]
pub struct Prequal {
    latency: PeakEwma,
}

impl Default for Prequal {
    fn default() -> Self {
        Prequal::with_smoothing(Smoothing::Mean)
    }
}

impl Prequal {
    /// Latency estimates smoothed as `smoothing` says (tests compare the two).
    pub(crate) fn with_smoothing(smoothing: Smoothing) -> Prequal {
        Prequal {
            latency: PeakEwma::with_smoothing(DEFAULT_DECAY_MILLIS, smoothing),
        }
    }

    /// Up to [`PROBES`] distinct allowed providers, drawn at random; returns how many were found.
    fn candidates(
        view: &MethodView,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
        out: &mut [usize; PROBES],
    ) -> usize {
        let n = view.len();
        let mut found = 0;
        // Rejection sampling, bounded; then a scan so a pick with few allowed providers finds them.
        for _ in 0..PROBES * 4 {
            let i = rng.below(n as u64) as usize;
            if pick.allows(view, i) && view.configured_weight(i) > 0 && !out[..found].contains(&i) {
                out[found] = i;
                found += 1;
                if found == PROBES {
                    return found;
                }
            }
        }
        for i in 0..n {
            if found == PROBES {
                break;
            }
            if pick.allows(view, i) && !out[..found].contains(&i) {
                out[found] = i;
                found += 1;
            }
        }
        found
    }

    /// The hot threshold: the [`HOT_QUANTILE`] quantile of the allowed providers' calls in flight.
    fn threshold(view: &MethodView, pick: &Pick<'_>, candidates: &[usize]) -> i32 {
        let mut actives = [0i32; EXACT_UP_TO];
        let mut len = 0;
        if view.len() <= EXACT_UP_TO {
            for i in (0..view.len()).filter(|&i| pick.allows(view, i)) {
                actives[len] = view.method_status(i).active();
                len += 1;
            }
        } else {
            for &i in candidates {
                actives[len] = view.method_status(i).active();
                len += 1;
            }
        }
        let actives = &mut actives[..len.max(1)];
        let rank = ((actives.len() - 1) as f64 * HOT_QUANTILE).floor() as usize;
        *actives.select_nth_unstable(rank).1
    }
}

impl LoadBalance for Prequal {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize> {
        let mut drawn = [0usize; PROBES];
        let found = Prequal::candidates(view, pick, rng, &mut drawn);
        let candidates = &drawn[..found];
        match candidates {
            [] => return None,
            [only] => return Some(*only),
            _ => {}
        }
        let threshold = Prequal::threshold(view, pick, candidates);
        let active = |i: usize| view.method_status(i).active();
        let now = pick.now();
        self.latency.with_latencies(view, now, |latency| {
            let cold = candidates
                .iter()
                .copied()
                .filter(|&i| active(i) <= threshold)
                .min_by(|&a, &b| {
                    latency(a)
                        .total_cmp(&latency(b))
                        .then(active(a).cmp(&active(b)))
                });
            cold.or_else(|| candidates.iter().copied().min_by_key(|&i| active(i)))
        })
    }

    fn prepare(&self, view: &MethodView) {
        self.latency.prepare_view(view);
    }
}

#[cfg(test)]
mod tests;
