//! What the call path records: a latency histogram per provider and method, and picks per strategy.
//!
//! Counters rudder already keeps (calls, failures, calls in flight, in [`rudder_common::status`]) are
//! not counted twice: each series holds a handle on the method's own counters and the collector reads
//! them at scrape time. The histogram and the pick counters are the only things added per call.
//!
//! The call path never locks: the series live in an immutable map behind an [`ArcSwap`], so finding a
//! call's series is one atomic load and two hash lookups: one of the provider's statistics by address
//! (stable for as long as the series holds them), one of the method name. A series is created (the map copied with it
//! added, under a mutex) on the first call of a method on a provider, and the map is filtered when the
//! consumer prunes a provider's statistics, so series come and go with the providers.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use arc_swap::ArcSwap;
use rudder_cluster::loadbalance::DEFAULT_LOADBALANCE;
use rudder_cluster::provider::Provider;
use rudder_common::status::{MethodStatus, ProviderStatus};

use super::histogram::Histogram;
use super::ticker::Ticker;
use crate::observer::{CallObserver, CallToken};

/// Methods with series per provider; calls of further methods are still counted in the statistics
/// but get no series, so a caller inventing method names cannot grow the exposition without bound.
pub(crate) const MAX_METHODS_PER_PROVIDER: usize = 256;

/// Strategies with a pick counter; picks under further names (a registry may send any
/// `loadbalance` value) are counted under [`OTHER_STRATEGY`].
pub(crate) const MAX_STRATEGIES: usize = 64;

/// The strategy label past [`MAX_STRATEGIES`].
pub(crate) const OTHER_STRATEGY: &str = "other";

/// Series by the address of the provider's statistics (see [`key`]), then by method.
type SeriesMap = HashMap<usize, Arc<ProviderSeries>, FastHash>;
type MethodMap = HashMap<Arc<str>, Arc<MethodSeries>, FastHash>;

/// The series of one provider.
#[derive(Clone)]
struct ProviderSeries {
    identity: Arc<str>,
    methods: MethodMap,
}

/// A provider's key in the map: where its statistics live. The series hold those statistics, so the
/// address cannot be reused by another provider while the key is in the map; hashing a word instead
/// of the identity string is what keeps the lookup cheap.
fn key(provider: &Provider) -> usize {
    Arc::as_ptr(provider.status()) as usize
}

/// One provider and method.
pub(crate) struct MethodSeries {
    /// The statistics the series was made for: a provider pruned and back has new ones.
    provider_status: Arc<ProviderStatus>,
    /// The provider version whose URL named the strategy (a registry update makes a new one).
    provider: Weak<Provider>,
    /// The method's own counters: calls, failures, in flight.
    pub(crate) status: MethodStatus,
    pub(crate) histogram: Arc<Histogram>,
    picks: Arc<AtomicU64>,
}

impl fmt::Debug for MethodSeries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodSeries")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// The recording side of a consumer's metrics.
pub(crate) struct Recorder {
    ticker: Arc<dyn Ticker>,
    series: ArcSwap<SeriesMap>,
    /// Serialises copy-on-write updates of `series` (first calls and pruning, never a plain call).
    updates: Mutex<()>,
    picks: Mutex<BTreeMap<Box<str>, Arc<AtomicU64>>>,
}

/// Times one call; records its duration in the histogram when dropped, also when the call's future is
/// dropped mid-call (the call ended, cancelled, as the statistics count it).
#[cfg(test)]
#[derive(Debug)]
#[must_use = "the call is timed until this is dropped"]
pub(crate) struct CallTimer<'a> {
    series: Option<Arc<MethodSeries>>,
    ticker: &'a dyn Ticker,
    started: u64,
}

#[cfg(test)]
impl Drop for CallTimer<'_> {
    fn drop(&mut self) {
        if let Some(series) = &self.series {
            let elapsed = self.ticker.now_micros().saturating_sub(self.started);
            series.histogram.record(elapsed);
        }
    }
}

impl Recorder {
    pub(crate) fn new(ticker: Arc<dyn Ticker>) -> Recorder {
        Recorder {
            ticker,
            series: ArcSwap::default(),
            updates: Mutex::new(()),
            picks: Mutex::new(BTreeMap::new()),
        }
    }

    /// Counts the pick of `provider` for `method` and starts timing the call.
    #[inline]
    #[cfg(test)]
    pub(crate) fn start(&self, provider: &Arc<Provider>, method: &str) -> CallTimer<'_> {
        let (series, started) = self.begin(provider, method);
        CallTimer {
            series,
            ticker: &*self.ticker,
            started,
        }
    }

    /// Counts the pick; the call's series (if it has one) and its start time.
    #[inline]
    fn begin(&self, provider: &Arc<Provider>, method: &str) -> (Option<Arc<MethodSeries>>, u64) {
        let series = self
            .find(provider, method)
            .or_else(|| self.add(provider, method));
        match &series {
            Some(series) => series.picks.fetch_add(1, Relaxed),
            // Past the method cap (a caller inventing names): counted, on the slow path.
            None => self
                .picks_of(strategy_of(provider, method))
                .fetch_add(1, Relaxed),
        };
        (series, self.ticker.now_micros())
    }

    /// The series of `provider` and `method`, if it exists and was made for this provider version.
    #[inline]
    fn find(&self, provider: &Arc<Provider>, method: &str) -> Option<Arc<MethodSeries>> {
        let map = self.series.load();
        let series = map.get(&key(provider))?.methods.get(method)?;
        let current = Arc::ptr_eq(&series.provider_status, provider.status())
            && std::ptr::eq(series.provider.as_ptr(), Arc::as_ptr(provider));
        current.then(|| Arc::clone(series))
    }

    /// Makes (or remakes, for a new provider version) the series; `None` past the method cap.
    #[cold]
    fn add(&self, provider: &Arc<Provider>, method: &str) -> Option<Arc<MethodSeries>> {
        let _serialised = self.updates.lock().unwrap_or_else(PoisonError::into_inner);
        // Another call may have added it while this one waited.
        if let Some(series) = self.find(provider, method) {
            return Some(series);
        }
        let map = self.series.load_full();
        let methods = map.get(&key(provider)).map(|p| &p.methods);
        let previous = methods.and_then(|m| m.get(method));
        if previous.is_none() && methods.is_some_and(|m| m.len() >= MAX_METHODS_PER_PROVIDER) {
            return None;
        }
        // Same statistics, new URL: keep the durations recorded so far.
        let histogram = previous
            .filter(|p| Arc::ptr_eq(&p.provider_status, provider.status()))
            .map_or_else(Default::default, |p| Arc::clone(&p.histogram));
        let series = Arc::new(MethodSeries {
            provider_status: Arc::clone(provider.status()),
            provider: Arc::downgrade(provider),
            status: provider.status().method(method),
            histogram,
            picks: self.picks_of(strategy_of(provider, method)),
        });
        let mut methods: MethodMap = methods.cloned().unwrap_or_default();
        methods.insert(method.into(), Arc::clone(&series));
        let mut map: SeriesMap = (*map).clone();
        // A provider pruned and back while a call on its old statistics still starts: one identity,
        // two statistics. Only the newest has series, so no label set is exposed twice.
        map.retain(|_, p| &*p.identity != provider.identity());
        let identity = provider.identity().into();
        map.insert(
            key(provider),
            Arc::new(ProviderSeries { identity, methods }),
        );
        self.series.store(Arc::new(map));
        Some(series)
    }

    fn picks_of(&self, strategy: &str) -> Arc<AtomicU64> {
        let mut picks = self.picks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(counter) = picks.get(strategy) {
            return Arc::clone(counter);
        }
        let name = if picks.len() < MAX_STRATEGIES {
            strategy
        } else {
            OTHER_STRATEGY
        };
        Arc::clone(picks.entry(name.into()).or_default())
    }

    /// Drops the series of every provider identity for which `keep` says `false`, as the consumer
    /// prunes their statistics. Returns how many providers went.
    pub(crate) fn retain(&self, keep: impl Fn(&str) -> bool) -> usize {
        let _serialised = self.updates.lock().unwrap_or_else(PoisonError::into_inner);
        let map = self.series.load_full();
        if map.values().all(|p| keep(&p.identity)) {
            return 0;
        }
        let kept: SeriesMap = map
            .iter()
            .filter(|(_, p)| keep(&p.identity))
            .map(|(key, p)| (*key, Arc::clone(p)))
            .collect();
        let gone = map.len() - kept.len();
        self.series.store(Arc::new(kept));
        gone
    }

    /// Every series, ordered by provider identity and method (a stable exposition).
    pub(crate) fn series(&self) -> Vec<(Arc<str>, Arc<str>, Arc<MethodSeries>)> {
        let map = self.series.load_full();
        let mut all: Vec<_> = map
            .values()
            .flat_map(|p| {
                p.methods.iter().map(move |(method, series)| {
                    (
                        Arc::clone(&p.identity),
                        Arc::clone(method),
                        Arc::clone(series),
                    )
                })
            })
            .collect();
        all.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        all
    }

    /// Picks so far, by strategy name.
    pub(crate) fn picks(&self) -> Vec<(Box<str>, u64)> {
        let picks = self.picks.lock().unwrap_or_else(PoisonError::into_inner);
        picks
            .iter()
            .map(|(name, count)| (name.clone(), count.load(Relaxed)))
            .collect()
    }
}

/// The call path's view of the recorder (see [`crate::observer`]).
impl CallObserver for Recorder {
    #[inline]
    fn call_started(&self, provider: &Arc<Provider>, method: &str) -> CallToken {
        let (series, started) = self.begin(provider, method);
        CallToken {
            series: series.map(|s| s as Arc<dyn Any + Send + Sync>),
            started,
        }
    }

    #[inline]
    fn call_ended(&self, token: CallToken) {
        if let Some(series) = token.series.as_deref() {
            if let Some(series) = series.downcast_ref::<MethodSeries>() {
                let elapsed = self.ticker.now_micros().saturating_sub(token.started);
                series.histogram.record(elapsed);
            }
        }
    }

    fn retain(&self, keep: &dyn Fn(&str) -> bool) {
        Recorder::retain(self, keep);
    }
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("providers", &self.series.load().len())
            .field("ticker", &self.ticker)
            .finish_non_exhaustive()
    }
}

/// FxHash's word mix (rotate, xor, multiply): a few cycles per word where SipHash takes tens of
/// nanoseconds. Keys are addresses and method names the application itself calls, not input an
/// attacker picks, so flooding resistance is not needed here.
#[derive(Debug, Clone, Copy, Default)]
struct FastHash;

impl std::hash::BuildHasher for FastHash {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

#[derive(Debug)]
struct FastHasher(u64);

impl FastHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl std::hash::Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.mix(u64::from_le_bytes(tail));
    }

    #[inline]
    fn write_usize(&mut self, word: usize) {
        self.mix(word as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The strategy the provider's URL names for `method`, as the balancer reads it (`<method>.loadbalance`,
/// then `loadbalance`, default `random`).
fn strategy_of<'a>(provider: &'a Provider, method: &str) -> &'a str {
    provider
        .url()
        .method_parameter(method, "loadbalance")
        .filter(|name| !name.is_empty())
        .unwrap_or(DEFAULT_LOADBALANCE)
}

#[cfg(test)]
mod tests;
