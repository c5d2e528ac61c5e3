//! The balancer: for each call, the current snapshot, the policy its providers name, and one pick.
//!
//! This is the selection half of Dubbo's cluster invoker (`AbstractClusterInvoker.select`): it reads the
//! directory's snapshot, resolves the policy from the first provider's `loadbalance` parameter for the
//! method (default `random`) through a [`LoadBalanceRegistry`], and picks, skipping providers a retry has
//! already tried. The resolved policy is cached per snapshot and method, so steady-state picks do no map
//! lookups by name.
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::{balancer::Balancer, directory::Directory};
//! use rudder_common::{clock::ManualClock, invocation::Invocation, url::DubboUrl};
//!
//! let directory = Arc::new(Directory::default());
//! directory.replace(vec![
//!     DubboUrl::parse("dubbo://10.0.0.1:20880/S?loadbalance=roundrobin&weight=2")?,
//!     DubboUrl::parse("dubbo://10.0.0.2:20880/S?weight=1")?,
//! ]);
//! let balancer = Balancer::builder(directory).clock(Arc::new(ManualClock::new(0))).seed(7).build();
//! let call = Invocation::new("sayHello", vec![], vec![]);
//! let picks: Vec<String> =
//!     (0..3).map(|_| balancer.select(&call, &[]).unwrap().address().to_owned()).collect();
//! assert_eq!(picks, ["10.0.0.1:20880", "10.0.0.2:20880", "10.0.0.1:20880"]);
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::fmt;
use std::sync::{Arc, Weak};

use rudder_common::clock::{Clock, SystemClock};
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use crate::directory::{Directory, ProviderSet, PublishHook};
use crate::loadbalance::outlier;
use crate::loadbalance::weight::WeightSource;
use crate::loadbalance::{
    select, LoadBalance, LoadBalanceRegistry, MethodView, Pick, StateKey, UnknownLoadBalance,
};
use crate::provider::Provider;
use crate::rng::RngSource;
use crate::router::RouterChain;
use crate::view::ResolvedPolicy;
use rudder_common::status::availability::any_down;
use rudder_common::status::{ejections_ever, ejections_in_force};
use rudder_common::url::DubboUrl;

/// `cluster.availablecheck` (consumer): leave providers whose connection is down out of picks.
pub const AVAILABLE_CHECK_KEY: &str = "cluster.availablecheck";

/// `cluster.availablecheck` as Dubbo reads it from the consumer URL: absent or empty is `true` (the
/// default), otherwise `true` only for `true` in any case (Java's `Boolean.parseBoolean`).
///
/// ```
/// use rudder_cluster::balancer::available_check;
/// use rudder_common::url::DubboUrl;
/// let url = |q: &str| DubboUrl::parse(&format!("consumer://10.0.0.9/S?{q}")).unwrap();
/// assert!(available_check(&url("")));
/// assert!(available_check(&url("cluster.availablecheck=TRUE")));
/// assert!(!available_check(&url("cluster.availablecheck=false")));
/// assert!(!available_check(&url("cluster.availablecheck=yes")));
/// ```
pub fn available_check(consumer: &DubboUrl) -> bool {
    match consumer.parameter(AVAILABLE_CHECK_KEY).map(str::trim) {
        None | Some("") => true,
        Some(value) => value.eq_ignore_ascii_case("true"),
    }
}

/// Picks a provider for each call. Share it behind an `Arc`; `select` takes `&self`.
pub struct Balancer {
    resolver: Arc<Resolver>,
    directory: Arc<Directory>,
    clock: Arc<dyn Clock>,
    rng: RngSource,
    weight_source: Option<Arc<dyn WeightSource>>,
    /// `cluster.availablecheck`: providers whose connection is down are left out of picks.
    available_check: bool,
}

/// Which policy serves a view; also the directory's publish hook that prepares it.
struct Resolver {
    /// Files this balancer's resolution in each view, apart from any other balancer's.
    key: StateKey,
    policies: LoadBalanceRegistry,
    forced: Option<Arc<dyn LoadBalance>>,
    /// The routers between the snapshot and the policy, if any.
    routers: Option<Arc<RouterChain>>,
}

impl Resolver {
    /// The policy that serves `view`: the forced one, or the one its first provider names (resolved
    /// once per view). `slow` holds the resolution when another balancer owns the view's typed slot.
    fn policy_for<'a>(
        &'a self,
        view: &'a MethodView,
        slow: &'a mut Option<ResolvedPolicy>,
    ) -> Result<&'a dyn LoadBalance, &'a UnknownLoadBalance> {
        if let Some(policy) = &self.forced {
            return Ok(&**policy);
        }
        let resolve = |v: &MethodView| self.policies.get(v.loadbalance_name());
        let resolved = match view.policy_of(self.key, resolve) {
            Some(resolved) => resolved,
            None => slow.insert(view.with_state(self.key, resolve, Clone::clone)),
        };
        resolved.as_ref().map(|p| &**p)
    }
}

impl Resolver {
    fn prepare_view(&self, view: &MethodView) {
        let mut slow = None;
        if let Ok(policy) = self.policy_for(view, &mut slow) {
            policy.prepare(view);
        }
    }
}

impl PublishHook for Resolver {
    fn prepare(&self, snapshot: &Arc<ProviderSet>) {
        snapshot.for_each_view(|view| self.prepare_view(view));
        if let Some(chain) = &self.routers {
            chain.prepare(snapshot, &|view| self.prepare_view(view));
        }
    }
}

impl Balancer {
    /// Starts building a balancer over `directory` with the built-in policies and the system clock.
    pub fn builder(directory: Arc<Directory>) -> BalancerBuilder {
        BalancerBuilder {
            directory,
            policies: LoadBalanceRegistry::with_builtins(),
            forced: None,
            clock: Arc::new(SystemClock),
            rng: RngSource::ThreadLocal,
            weight_source: None,
            routers: None,
            available_check: true,
        }
    }

    /// The directory this balancer reads.
    pub fn directory(&self) -> &Arc<Directory> {
        &self.directory
    }

    /// The router chain, if one is attached.
    pub fn routers(&self) -> Option<&Arc<RouterChain>> {
        self.resolver.routers.as_ref()
    }

    /// Runs `f` with the view `invocation` picks in from `snapshot`: the snapshot's view of the method,
    /// or with a router chain its routed subset (built once per snapshot, rule version and route).
    /// Without a chain this is the snapshot's view, at no extra cost.
    ///
    /// # Errors
    /// [`RpcErrorKind::NoProvider`] when providers are listed but the routers keep none; else `f`'s.
    pub fn with_routed_view<R>(
        &self,
        snapshot: &Arc<ProviderSet>,
        invocation: &Invocation,
        f: impl FnOnce(&MethodView) -> Result<R, RpcError>,
    ) -> Result<R, RpcError> {
        match &self.resolver.routers {
            None => snapshot.with_view(invocation.method_name(), |view| f(view)),
            Some(chain) => chain.with_view(snapshot, invocation, &self.rng, f),
        }
    }

    /// Whether picks leave out providers whose connection is down (`cluster.availablecheck`).
    pub fn checks_availability(&self) -> bool {
        self.available_check
    }

    /// Runs `f` with the random source picks use (seeded with [`BalancerBuilder::seed`]).
    pub fn with_rng<T>(&self, f: impl FnOnce(&mut dyn crate::rng::PickRng) -> T) -> T {
        self.rng.with(f)
    }

    /// The clock picks are made at.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Chooses a provider for `invocation`, skipping those in `excluded` (already tried by a retry).
    ///
    /// # Errors
    /// [`RpcErrorKind::NoProvider`] when the directory is empty or every provider is excluded;
    /// [`RpcErrorKind::Unknown`] when the providers name a policy that is not registered.
    pub fn select(
        &self,
        invocation: &Invocation,
        excluded: &[Arc<Provider>],
    ) -> Result<Arc<Provider>, RpcError> {
        self.directory.with_current(|snapshot| {
            self.with_routed_view(snapshot, invocation, |view| {
                self.select_in(view, invocation, excluded)
            })
        })
    }

    /// [`Balancer::select`] within a view the caller already holds.
    ///
    /// # Errors
    /// As [`Balancer::select`].
    pub fn select_in(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        excluded: &[Arc<Provider>],
    ) -> Result<Arc<Provider>, RpcError> {
        let index = self.select_index_in(view, invocation, excluded)?;
        Ok(Arc::clone(&view.providers()[index]))
    }

    /// [`Balancer::select_in`], giving the chosen provider's index in `view`.
    ///
    /// # Errors
    /// As [`Balancer::select`].
    pub fn select_index_in(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        excluded: &[Arc<Provider>],
    ) -> Result<usize, RpcError> {
        self.select_reporting(view, invocation, excluded)
            .map(|(index, _)| index)
    }

    /// [`Balancer::select_index_in`], and whether the policy asked for a load report with the
    /// answer ([`Pick::ask_load_report`]).
    pub(crate) fn select_reporting(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        excluded: &[Arc<Provider>],
    ) -> Result<(usize, bool), RpcError> {
        if view.is_empty() {
            return Err(RpcError::new(
                RpcErrorKind::NoProvider,
                format!(
                    "no provider available for method {} (the registry lists none)",
                    invocation.method_name()
                ),
            ));
        }
        // Providers whose connection is down, then ejected outliers, join the exclusions; when that
        // leaves nobody, the pick is made without them (Dubbo calls an unavailable invoker when
        // every one is, rather than failing without trying).
        let down = (self.available_check && any_down())
            .then(|| unavailable(view, excluded))
            .flatten();
        let base = down.as_deref().unwrap_or(excluded);
        let ejected = match view.outlier() {
            Some(settings) if ejections_ever() => {
                let now = self.clock.now_millis();
                ejections_in_force(now)
                    .then(|| outlier::ejected(view, settings, base, now))
                    .flatten()
            }
            _ => None,
        };
        if let Some(with_ejected) = &ejected {
            if let Ok(found) = self.pick_among(view, invocation, with_ejected) {
                return Ok(found);
            }
        }
        if let Some(with_down) = &down {
            if let Ok(found) = self.pick_among(view, invocation, with_down) {
                return Ok(found);
            }
        }
        self.pick_among(view, invocation, excluded)
    }

    fn pick_among(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        excluded: &[Arc<Provider>],
    ) -> Result<(usize, bool), RpcError> {
        let pick = Pick::reading(&*self.clock)
            .excluding(excluded)
            .weighted_by(self.weight_source.as_deref());
        let mut slow = None;
        let policy = self
            .resolver
            .policy_for(view, &mut slow)
            .map_err(|unknown| RpcError::new(RpcErrorKind::Unknown, unknown.to_string()))?;
        let chosen = self
            .rng
            .with(|rng| select(policy, view, invocation, &pick, rng));
        let asked = pick.load_report_asked();
        chosen.map(|index| (index, asked)).ok_or_else(|| {
            RpcError::new(
                RpcErrorKind::NoProvider,
                format!(
                    "no provider left for method {} after excluding {} already tried",
                    invocation.method_name(),
                    excluded.len()
                ),
            )
        })
    }
}

/// `excluded` plus the providers of `view` whose connection is down: `None` when none is.
fn unavailable(view: &MethodView, excluded: &[Arc<Provider>]) -> Option<Vec<Arc<Provider>>> {
    let mut out: Option<Vec<Arc<Provider>>> = None;
    for provider in view.providers() {
        if !provider.is_available() {
            out.get_or_insert_with(|| excluded.to_vec())
                .push(Arc::clone(provider));
        }
    }
    out
}

impl fmt::Debug for Balancer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Balancer")
            .field("directory", &self.directory)
            .field("policies", &self.resolver.policies)
            .field("forced", &self.resolver.forced)
            .finish_non_exhaustive()
    }
}

/// Configures a [`Balancer`]: a balancer with defaults, changed setting by setting.
pub struct BalancerBuilder {
    directory: Arc<Directory>,
    policies: LoadBalanceRegistry,
    forced: Option<Arc<dyn LoadBalance>>,
    clock: Arc<dyn Clock>,
    rng: RngSource,
    weight_source: Option<Arc<dyn WeightSource>>,
    routers: Option<Arc<RouterChain>>,
    available_check: bool,
}

impl BalancerBuilder {
    /// Whether picks leave out providers whose connection is down (`cluster.availablecheck`,
    /// default `true`; read it with [`available_check`]).
    pub fn available_check(mut self, check: bool) -> Self {
        self.available_check = check;
        self
    }

    /// Uses `policies` instead of the built-ins (start from [`LoadBalanceRegistry::with_builtins`] to
    /// add your own).
    pub fn policies(mut self, policies: LoadBalanceRegistry) -> Self {
        self.policies = policies;
        self
    }

    /// Uses the policy called `name` for every call, whatever the providers say (a consumer-side
    /// `loadbalance` setting).
    ///
    /// # Errors
    /// [`UnknownLoadBalance`] when the name is not registered.
    pub fn force_policy(mut self, name: &str) -> Result<Self, UnknownLoadBalance> {
        self.forced = Some(self.policies.get(name)?);
        Ok(self)
    }

    /// Reads time from `clock` (warmup, windows, recycling).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Makes every random choice reproducible from `seed`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.rng = RngSource::seeded(seed);
        self
    }

    /// Overrides provider weights at pick time (see [`WeightSource`]).
    pub fn weight_source(mut self, source: Arc<dyn WeightSource>) -> Self {
        self.weight_source = Some(source);
        self
    }

    /// Routes every call through `chain` before picking (tag and condition rules). Rules set on the
    /// chain later apply from the next pick on. Share one chain per reference (consumer URL).
    pub fn routers(mut self, chain: Arc<RouterChain>) -> Self {
        self.routers = Some(chain);
        self
    }

    /// Builds the balancer, and registers it with the directory to prepare each new snapshot's policy
    /// state before it is published (and the current one's now).
    pub fn build(self) -> Balancer {
        let resolver = Arc::new(Resolver {
            key: StateKey::unique(),
            policies: self.policies,
            forced: self.forced,
            routers: self.routers,
        });
        let hook: Weak<dyn PublishHook> = Arc::downgrade(&resolver) as Weak<Resolver>;
        self.directory.add_publish_hook(hook);
        Balancer {
            resolver,
            directory: self.directory,
            clock: self.clock,
            rng: self.rng,
            weight_source: self.weight_source,
            available_check: self.available_check,
        }
    }
}

impl fmt::Debug for BalancerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BalancerBuilder")
            .field("directory", &self.directory)
            .field("policies", &self.policies)
            .field("forced", &self.forced)
            .finish_non_exhaustive()
    }
}
