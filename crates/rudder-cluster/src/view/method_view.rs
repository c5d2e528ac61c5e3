//! The per-method view of a provider snapshot: everything a pick reads, precomputed.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

use rudder_common::status::{MethodStatus, ProviderStatus, RpcStatus};

use rudder_common::invocation::Invocation;

use super::outlier::OutlierSettings;
use super::pick::Pick;
use super::prefix_sums::PrefixSums;
use super::state_key::StateKey;
use super::weight::effective_weight;
use crate::provider::Provider;
use crate::rng::PickRng;

pub use rudder_common::status::ACTIVES;

/// Strategy state slots per view; a view normally serves one strategy, rarely two.
const STATE_SLOTS: usize = 4;

/// A provider snapshot seen from one method: parsed weights, prefix sums and per-strategy state.
///
/// Built once per (snapshot, method) on the first call and then shared, so a pick does no URL parsing,
/// no hashing of provider keys and no allocation. Time-dependent warmup weights are computed per pick from
/// the pre-parsed numbers; once every provider is past its warmup the precomputed prefix sums are used.
pub struct MethodView {
    method: Box<str>,
    service_key: Box<str>,
    providers: Arc<[Arc<Provider>]>,
    weights: Box<[i32]>,
    /// `weights` with negatives as 0: the weights of every pick once warmup is over.
    full_weights: Box<[i32]>,
    heaviest: i32,
    method_status: Box<[MethodStatus]>,
    /// `method_status` as runs of adjacent counters: the first of each run and its length.
    runs: Box<[(MethodStatus, usize)]>,
    prefix: PrefixSums,
    /// From this instant on no provider is warming up (and none has a timestamp in the future).
    static_from: i64,
    /// A clock-reading pick has found the warmup over.
    warm: AtomicBool,
    loadbalance: Box<str>,
    /// `sticky` as the first provider says for this method.
    sticky: bool,
    /// Each provider's `actives` limit for this method (0: none).
    max_active: Box<[i32]>,
    /// Outlier ejection, as the first provider sets it for this method.
    outlier: Option<OutlierSettings>,
    /// `outlier.ignore-exceptions` as the first provider sets it: `None` when empty or ejection is off.
    outlier_ignored: Option<Arc<[Box<str>]>>,
    /// When relative outlier detection next compares this method's providers (epoch ms).
    outlier_due: AtomicI64,
    /// The policy the first balancer to prepare or pick here resolved for it, under that balancer's
    /// key: typed, so reading it costs no dynamic type check.
    policy: OnceLock<(StateKey, ResolvedPolicy)>,
    states: [OnceLock<(StateKey, Box<dyn Any + Send + Sync>)>; STATE_SLOTS],
}

/// A policy looked up by name: the policy, or why there is none.
pub(crate) type ResolvedPolicy = Result<Arc<dyn LoadBalance>, UnknownLoadBalance>;

impl MethodView {
    /// Precomputes the view of `providers` for `method`.
    pub fn new(providers: Arc<[Arc<Provider>]>, method: &str) -> MethodView {
        let weights: Box<[i32]> = providers
            .iter()
            .map(|p| p.configured_weight(method))
            .collect();
        let full_weights: Box<[i32]> = weights.iter().map(|&w| w.max(0)).collect();
        let prefix = PrefixSums::new(&weights);
        let static_from = providers
            .iter()
            .zip(weights.iter())
            .filter(|(p, &w)| w > 0 && p.timestamp() > 0)
            .map(|(p, _)| p.timestamp().saturating_add(p.warmup().max(0)))
            .max()
            .unwrap_or(i64::MIN);
        let first = providers.first();
        let loadbalance = first
            .and_then(|p| p.url().method_parameter(method, "loadbalance"))
            .filter(|name| !name.is_empty())
            .unwrap_or(DEFAULT_LOADBALANCE)
            .into();
        let sticky =
            first.is_some_and(|p| p.url().method_parameter(method, "sticky") == Some("true"));
        let outlier = first.and_then(|p| OutlierSettings::of(p.url(), method));
        let outlier_ignored = first
            .filter(|_| outlier.is_some())
            .map(|p| super::outlier::ignored_exceptions(p.url(), method))
            .filter(|classes| !classes.is_empty())
            .map(Arc::from);
        let max_active = providers
            .iter()
            .map(|p| rudder_common::status::max_active(p.url(), method))
            .collect();
        // Counters first created here are allocated together, in view order.
        let method_status =
            ProviderStatus::methods_of(providers.iter().map(|p| &**p.status()), method);
        MethodView {
            sticky,
            max_active,
            outlier,
            outlier_ignored,
            outlier_due: AtomicI64::new(i64::MIN),
            method: method.into(),
            service_key: first
                .map(|p| p.url().service_key())
                .unwrap_or_default()
                .into(),
            runs: runs_of(&method_status),
            method_status: method_status.into(),
            providers,
            weights,
            heaviest: full_weights.iter().copied().max().unwrap_or(0),
            full_weights,
            prefix,
            static_from,
            warm: AtomicBool::new(static_from == i64::MIN),
            loadbalance,
            policy: OnceLock::new(),
            states: Default::default(),
        }
    }

    /// The method this view serves.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The service key of the first provider (`[group/]interface[:version]`), which keys strategy state.
    pub fn service_key(&self) -> &str {
        &self.service_key
    }

    /// The providers, in registry order.
    pub fn providers(&self) -> &[Arc<Provider>] {
        &self.providers
    }

    /// Number of providers.
    pub fn len(&self) -> usize {
        self.providers.len()
    }

    /// Whether there is no provider.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// The balancer named by the first provider for this method (`loadbalance`, default `random`).
    pub fn loadbalance_name(&self) -> &str {
        &self.loadbalance
    }

    /// Method-level statistics of provider `index`.
    #[inline]
    pub fn method_status(&self, index: usize) -> &MethodStatus {
        &self.method_status[index]
    }

    /// Method-level statistics of every provider, in view order.
    #[inline]
    pub fn method_statuses(&self) -> &[MethodStatus] {
        &self.method_status
    }

    /// The same statistics as slices of adjacent counters, in view order: one slice when they were
    /// allocated together (a method's counters are, by the first view that reads them), a few more
    /// after providers come and go.
    #[inline]
    pub fn status_runs(&self) -> impl Iterator<Item = &[RpcStatus]> {
        self.runs
            .iter()
            .map(|(first, len)| first.run(*len).expect("a run lies within its block"))
    }

    /// The statistics as one slice of adjacent counters, when they form one run.
    #[inline]
    pub fn adjacent_statuses(&self) -> Option<&[RpcStatus]> {
        match &*self.runs {
            [(first, len)] => first.run(*len),
            _ => None,
        }
    }

    /// The heaviest weight in [`MethodView::static_weights`].
    pub(crate) fn heaviest(&self) -> i32 {
        self.heaviest
    }

    /// Whether calls of this method stick to the provider of the previous call (`sticky`, read from the
    /// first provider as Dubbo reads it).
    pub fn sticky(&self) -> bool {
        self.sticky
    }

    /// Outlier ejection settings for this method (`outlier.*`, read from the first provider as Dubbo
    /// reads `loadbalance`); `None` when off.
    pub fn outlier(&self) -> Option<&super::outlier::OutlierSettings> {
        self.outlier.as_ref()
    }

    /// The exception classes that are business results for ejection (`outlier.ignore-exceptions`),
    /// when ejection is on and some are named.
    pub fn outlier_ignored(&self) -> Option<&Arc<[Box<str>]>> {
        self.outlier_ignored.as_ref()
    }

    /// Whether the caller at `now` is the one to compare the providers for relative outlier
    /// detection: the comparison is due, and no other caller has claimed it. The next one is due
    /// `interval_ms` later.
    pub(crate) fn claim_outlier_interval(&self, interval_ms: i64, now: i64) -> bool {
        let due = self.outlier_due.load(Ordering::Relaxed);
        now >= due
            && self
                .outlier_due
                .compare_exchange(
                    due,
                    now.saturating_add(interval_ms),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    /// Provider `index`'s limit on concurrent calls of this method (`actives`; 0 means none).
    pub fn max_active(&self, index: usize) -> i32 {
        self.max_active[index]
    }

    /// The configured weight of provider `index` for this method, before warmup.
    pub fn configured_weight(&self, index: usize) -> i32 {
        self.weights[index]
    }

    /// The effective weight of provider `index` for this pick (warmup, then any weight hook).
    #[inline]
    pub fn weight(&self, index: usize, pick: &Pick<'_>) -> i32 {
        if let Some(full) = self.static_weights(pick) {
            return full[index];
        }
        let configured = self.weights[index];
        let provider = &self.providers[index];
        let computed = effective_weight(
            configured,
            provider.timestamp(),
            provider.warmup(),
            pick.now(),
        );
        match pick.weight_source {
            Some(source) => source.weight(provider, &self.method, computed).max(0),
            None => computed,
        }
    }

    /// Every provider's weight for this pick, when no warmup is in progress and no hook is set: the
    /// configured weights, precomputed. `None` when weights must be computed per provider.
    #[inline]
    pub fn static_weights(&self, pick: &Pick<'_>) -> Option<&[i32]> {
        (pick.weight_source.is_none() && self.past_warmup(pick)).then_some(&*self.full_weights)
    }

    /// Whether every provider is past its warmup at this pick's time.
    ///
    /// A pick that reads the system clock reads it here only until one such pick has found the warmup
    /// over; from then on the view stays past it, even if the wall clock is later set back (Dubbo
    /// would ramp weights down again, or give weight 1 to providers whose start now lies ahead).
    #[inline]
    fn past_warmup(&self, pick: &Pick<'_>) -> bool {
        if pick.is_fixed() {
            return pick.now() >= self.static_from;
        }
        if self.warm.load(Ordering::Relaxed) {
            return true;
        }
        let warm = pick.now() >= self.static_from;
        if warm {
            self.warm.store(true, Ordering::Relaxed);
        }
        warm
    }

    /// Precomputed running sums of full weights, when they are valid for this pick (no warmup in
    /// progress, no weight hook, nothing excluded).
    pub fn static_prefix(&self, pick: &Pick<'_>) -> Option<&PrefixSums> {
        let usable =
            pick.weight_source.is_none() && pick.excluded.is_empty() && self.past_warmup(pick);
        usable.then_some(&self.prefix)
    }

    /// The policy balancer `owner` resolved for this view, resolving it with `resolve` if no balancer
    /// has yet. `None` when another balancer got here first (rare: keep a per-balancer resolution in
    /// [`MethodView::with_state`] then).
    pub(crate) fn policy_of(
        &self,
        owner: StateKey,
        resolve: impl FnOnce(&MethodView) -> ResolvedPolicy,
    ) -> Option<&ResolvedPolicy> {
        let (first_owner, policy) = self.policy.get_or_init(|| (owner, resolve(self)));
        (*first_owner == owner).then_some(policy)
    }

    /// Runs `f` with the strategy state attached to this view, created by `init` on first use by `owner`.
    ///
    /// `owner` is the policy's [`StateKey`]. The state lives as long as the view, so it is rebuilt
    /// exactly when the provider snapshot changes (in [`LoadBalance::prepare`](LoadBalance::prepare),
    /// before the snapshot is published); reading it costs no reference counting.
    pub fn with_state<T: Any + Send + Sync, R>(
        &self,
        owner: StateKey,
        init: impl FnOnce(&MethodView) -> T,
        f: impl FnOnce(&T) -> R,
    ) -> R {
        let mut init = Some(init);
        for slot in &self.states {
            let (slot_owner, state) = slot.get_or_init(|| {
                let init = init.take().expect("init runs at most once");
                (owner, Box::new(init(self)))
            });
            if *slot_owner == owner {
                if let Some(state) = state.downcast_ref::<T>() {
                    return f(state);
                }
            }
            if init.is_none() {
                break;
            }
        }
        // More strategies than slots used this view: build a private state (slow, never in normal use).
        match init {
            Some(init) => f(&init(self)),
            None => unreachable!("a slot was initialised with this owner's state"),
        }
    }
}

impl fmt::Debug for MethodView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodView")
            .field("method", &self.method)
            .field("providers", &self.providers.len())
            .field("loadbalance", &self.loadbalance)
            .finish_non_exhaustive()
    }
}

/// Splits `statuses` into maximal runs of adjacent counters.
fn runs_of(statuses: &[MethodStatus]) -> Box<[(MethodStatus, usize)]> {
    let mut runs: Vec<(MethodStatus, usize)> = Vec::new();
    for (i, status) in statuses.iter().enumerate() {
        match runs.last_mut() {
            Some((_, len)) if status.follows(&statuses[i - 1]) => *len += 1,
            _ => runs.push((status.clone(), 1)),
        }
    }
    runs.into()
}

/// The policy used when no provider names one: Dubbo's default.
pub const DEFAULT_LOADBALANCE: &str = "random";

/// A load-balancing policy.
///
/// Implementations pick among the providers of `view` that `pick` allows, and return the index of the
/// chosen one. They are called through [`select`](crate::loadbalance::select), which has already
/// handled the empty and single-candidate cases. State that must persist across picks lives in the
/// policy (shared by all views, keyed as Dubbo keys it) or in per-view state from
/// [`MethodView::with_state`].
pub trait LoadBalance: Send + Sync + fmt::Debug {
    /// Chooses a provider for `invocation`; `None` only when no candidate is allowed.
    fn pick(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        pick: &Pick<'_>,
        rng: &mut dyn PickRng,
    ) -> Option<usize>;

    /// Builds the per-view state this policy's picks read (a ring, counter slots), so the first pick
    /// after a registry change finds it ready. Called by the directory for every method view of a
    /// snapshot before the snapshot is published; the default builds nothing.
    fn prepare(&self, view: &MethodView) {
        let _ = view;
    }
}

/// The name asked for is not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown load balancer {name:?}; registered: {}", registered.join(", "))]
pub struct UnknownLoadBalance {
    /// The name asked for.
    pub name: String,
    /// The names that are registered, sorted.
    pub registered: Vec<String>,
}

// Here rather than in pick.rs: the one method of a pick that reads a view.
impl Pick<'_> {
    /// Whether provider `index` of `view` may be picked.
    #[inline]
    pub fn allows(&self, view: &MethodView, index: usize) -> bool {
        if self.excluded.is_empty() {
            return true;
        }
        let p = &view.providers()[index];
        !self
            .excluded
            .iter()
            .any(|e| Arc::ptr_eq(e, p) || e.identity() == p.identity())
    }
}
