//! [`ReferenceBuilder`]: a reference's settings, checked as they are given, and its construction.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rudder_cluster::balancer::{available_check, Balancer};
use rudder_cluster::cluster::{ClusterInvoker, ClusterMode, MethodModes};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::weight::WeightSource;
use rudder_cluster::router::RouterChain;
use rudder_cluster::zone_aware::{
    registry_pick_rng, Fallback, RegistryChoice, RegistryMember, ZoneAwareInvoker,
};
use rudder_common::clock::Clock;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;

use crate::caller::DubboCaller;
use crate::consumer::Consumer;
use crate::error::BuildError;
use crate::reference::{Reference, ReferenceInner};
use crate::strategy::LoadBalanceStrategy;

/// One provider source of a reference: its choice, directory, router chain (registries have their
/// own, fed by the config center) and, for a registry, its second list while a migration
/// `proportion` shares the calls.
type SourceParts = (
    RegistryChoice,
    Arc<Directory>,
    Option<Arc<RouterChain>>,
    Option<(
        Arc<Directory>,
        Arc<RouterChain>,
        Arc<rudder_common::discovery::CallShare>,
    )>,
);

/// Mixed into a seeded registry's seed for its second list, so the two lists do not draw alike.
const SPLIT_SEED: u64 = 0x5157_1a7e_0000_0002;

/// Where a reference's providers come from: exactly one source.
enum Source {
    None,
    Providers(Vec<DubboUrl>),
    #[cfg(feature = "zookeeper")]
    Registries(Vec<String>),
}

/// Configures a [`Reference`]. Settings are Dubbo's `<dubbo:reference>` attributes; `<method>.<key>`
/// sets one for a single method, as `<dubbo:method>` does. Later settings of one key win.
///
/// Each setting is checked when it is given: a provider or registry URL that does not parse, an
/// unknown `loadbalance` or `cluster` name, a second kind of provider source. The builder keeps the
/// first such error and [`ReferenceBuilder::build`] returns it (the builder never panics).
///
/// ```
/// use rudder::{BuildError, Reference};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let error = Reference::builder("com.acme.Greeter")
///     .provider("dubbo://127.0.0.1:20880/com.acme.Greeter")
///     .loadbalance("no-such-strategy")
///     .build()
///     .await
///     .unwrap_err();
/// assert!(matches!(error, BuildError::LoadBalance(_)), "{error}");
/// # }
/// ```
pub struct ReferenceBuilder {
    consumer: Consumer,
    consumer_url: DubboUrl,
    source: Source,
    /// The first setting found wrong; `build` returns it.
    error: Option<BuildError>,
    weight_source: Option<Arc<dyn WeightSource>>,
    clock: Option<Arc<dyn Clock>>,
    seed: Option<u64>,
    /// This reference's own TLS setting, over the consumer's ([`ReferenceBuilder::tls`]).
    tls: Option<crate::protocols::Tls>,
}

impl ReferenceBuilder {
    pub(crate) fn new(consumer: Consumer, interface: &str) -> ReferenceBuilder {
        // A bad `DUBBO_IP_TO_REGISTRY` is the builder's first error; the URL needs some host anyway.
        let host = consumer.host().unwrap_or("127.0.0.1").to_owned();
        let host_error = consumer
            .inner
            .host()
            .as_ref()
            .err()
            .map(|invalid| BuildError::BadParameter(invalid.to_string()));
        let mut consumer_url = DubboUrl::new("consumer", &host, 0, interface)
            .with_parameter("interface", interface)
            .with_parameter("side", "consumer");
        if let Some(application) = consumer.application() {
            consumer_url = consumer_url.with_parameter("application", application);
        }
        ReferenceBuilder {
            consumer,
            consumer_url,
            source: Source::None,
            error: host_error,
            weight_source: None,
            clock: None,
            seed: None,
            tls: None,
        }
    }

    /// Calls this reference's providers with `tls` (`Some`) or in plaintext (`None`), whatever the
    /// consumer's [`tls`](crate::ConsumerBuilder::tls) says. The reference then has connections of
    /// its own, closed when it is dropped.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let consumer = rudder::Consumer::builder().build();
    /// let plain = consumer
    ///     .reference("com.acme.Greeter")
    ///     .provider("dubbo://127.0.0.1:20880/com.acme.Greeter")
    ///     .tls(None)
    ///     .build()
    ///     .await?;
    /// # drop(plain);
    /// # Ok(())
    /// # }
    /// ```
    pub fn tls(mut self, tls: Option<crate::TlsClient>) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Keeps `result`'s error if it is the first.
    fn keep<T>(&mut self, result: Result<T, BuildError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.error.get_or_insert(error);
                None
            }
        }
    }

    fn set_source(&mut self, kind: &'static str, add: impl FnOnce(&mut Source) -> bool) {
        if !add(&mut self.source) {
            self.keep::<()>(Err(BuildError::ConflictingSources(kind)));
        }
    }

    /// Calls this provider directly (repeatable; plain or percent-encoded URL). Cannot be combined with
    /// a registry.
    pub fn provider(mut self, url: &str) -> Self {
        let Some(url) = self.keep(DubboUrl::parse_any(url).map_err(BuildError::from)) else {
            return self;
        };
        self.set_source("provider", |source| match source {
            Source::None => {
                *source = Source::Providers(vec![url]);
                true
            }
            Source::Providers(urls) => {
                urls.push(url);
                true
            }
            #[allow(unreachable_patterns)]
            _ => false,
        });
        self
    }

    /// Finds providers in this registry (`zookeeper://host:port[?backup=...]`). Cannot be combined with
    /// provider URLs. References of one consumer share one session per registry address.
    ///
    /// Repeatable, for one registry per data centre: each registry gets its own directory and cluster
    /// invoker, and each call picks one registry by Dubbo 3.3's zone-aware rules, read from the registry
    /// URL's `preferred`, `zone` and `weight` parameters and the call's `registry_zone` and
    /// `registry_zone_force` attachments. Those parameters are not part of the session's identity.
    /// `registry.failover=true` on the reference (off by default, as in Dubbo) retries a retryable
    /// failure in the next registry the rules choose.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), rudder::BuildError> {
    /// let orders = rudder::Reference::builder("com.acme.Orders")
    ///     .registry("zookeeper://zk.hz.example:2181?zone=hz&preferred=true")
    ///     .registry("zookeeper://zk.sh.example:2181?zone=sh&weight=300")
    ///     .build()
    ///     .await?;
    /// assert_eq!(orders.snapshots().len(), 2);
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "zookeeper")]
    pub fn registry(mut self, url: &str) -> Self {
        if self
            .keep(crate::registry::RegistryTarget::parse(url))
            .is_none()
        {
            return self;
        }
        let url = url.to_owned();
        self.set_source("registry", |source| match source {
            Source::None => {
                *source = Source::Registries(vec![url]);
                true
            }
            Source::Registries(urls) => {
                urls.push(url);
                true
            }
            _ => false,
        });
        self
    }

    /// The service version to match.
    pub fn version(self, version: &str) -> Self {
        self.parameter("version", version)
    }

    /// The service group to match (`*` or a comma list as in Dubbo).
    pub fn group(self, group: &str) -> Self {
        self.parameter("group", group)
    }

    /// The application name this consumer registers under (overrides the consumer's).
    pub fn application(self, name: &str) -> Self {
        self.parameter("application", name)
    }

    /// Per-call deadline for every method (`timeout`, whole milliseconds, rounded up);
    /// `<method>.timeout` via [`Self::parameter`]. A zero duration is a
    /// [`BuildError::BadParameter`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        if timeout.is_zero() {
            self.keep::<()>(Err(BuildError::BadParameter(
                "timeout must be longer than zero".to_owned(),
            )));
            return self;
        }
        let millis = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128);
        self.parameter("timeout", &millis.to_string())
    }

    /// Failover retries (`retries`, default 2).
    pub fn retries(self, retries: u32) -> Self {
        self.parameter("retries", &retries.to_string())
    }

    /// Fault-tolerance mode and its settings: writes `cluster` and the mode's own parameters
    /// (`retries`, `forks`, `failbacktasks`, ...; forking's deadline is [`Self::timeout`]), so a
    /// later [`Self::retries`] or [`Self::parameter`] still changes them. `ClusterMode::Failfast`, or
    /// `"forking".parse()?` for a Dubbo name with Dubbo's defaults; `.parameter("cluster", name)`
    /// sets the name alone. A `group` of `*` or `a,b` selects mergeable by itself.
    ///
    /// ```
    /// use rudder::{ClusterMode, Reference};
    /// let builder = Reference::builder("com.acme.Orders").cluster(ClusterMode::Failover { retries: 4 });
    /// # let _ = builder;
    /// ```
    pub fn cluster(mut self, mode: ClusterMode) -> Self {
        for (key, value) in mode.parameters() {
            self = self.parameter(key, &value);
        }
        self
    }

    /// The load balancer (`loadbalance`), which beats the providers' own setting as in Dubbo: a
    /// built-in ([`LoadBalanceStrategy`]) or a name registered on the consumer
    /// ([`ConsumerBuilder::loadbalance_policy`](crate::ConsumerBuilder::loadbalance_policy)); a name
    /// that is neither is a [`BuildError::LoadBalance`].
    pub fn loadbalance(self, strategy: impl Into<LoadBalanceStrategy>) -> Self {
        self.parameter("loadbalance", strategy.into().name())
    }

    /// Any other consumer-side parameter, as Dubbo's `<dubbo:reference>` attributes and `<method>.<key>`.
    /// Merged into every provider URL as Dubbo 3.3 resolves them. `cluster`, `loadbalance`,
    /// `<method>.loadbalance` and `registry.failover` are checked here.
    pub fn parameter(mut self, key: &str, value: &str) -> Self {
        self.consumer_url = self.consumer_url.with_parameter(key, value);
        let checked = if key == "cluster" {
            value
                .parse::<ClusterMode>()
                .map(drop)
                .map_err(BuildError::from)
        } else if key == "loadbalance" || key.ends_with(".loadbalance") {
            self.consumer
                .inner
                .policies()
                .get(value)
                .map(drop)
                .map_err(BuildError::from)
        } else if key == REGISTRY_FAILOVER {
            registry_failover(&self.consumer_url).map(drop)
        } else if key == "check" {
            check_parameter(&self.consumer_url)
        } else {
            Ok(())
        };
        self.keep(checked);
        self
    }

    /// Reads time from `clock` instead of the consumer's (tests, simulations).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Makes this reference's random choices reproducible from `seed`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Whether [`ReferenceBuilder::build`] fails when a registry is not ready within its deadline
    /// (Dubbo's `check`; default `true`). The deadline is the registry URL's `timeout` in milliseconds
    /// (Dubbo's registry `timeout`), else the consumer's registry connect timeout (10 s by default,
    /// [`ConsumerBuilder::registry_options`](crate::ConsumerBuilder::registry_options)).
    ///
    /// * `true`: past the deadline the build fails with
    ///   [`BuildError::RegistryUnreachable`], naming the registry and why (its last connection
    ///   failure).
    /// * `false`: past the deadline the build succeeds without that registry's providers (calls fail
    ///   with "no provider" meanwhile); the reference keeps connecting and subscribing in the
    ///   background, and its providers arrive when the registry answers.
    ///
    /// Either way a build never waits longer than the deadline, and
    /// [`Consumer::shutdown`](crate::Consumer::shutdown) ends a build that waits at once. Unlike
    /// Dubbo's, `check=true` does not fail a build whose registry answers with no provider.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), rudder::BuildError> {
    /// let orders = rudder::Reference::builder("com.acme.Orders")
    ///     .registry("zookeeper://127.0.0.1:2181?timeout=3000")
    ///     .check(false) // built within 3 s even if ZooKeeper is down
    ///     .build()
    ///     .await?;
    /// # drop(orders);
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "zookeeper")]
    pub fn check(self, check: bool) -> Self {
        self.parameter("check", if check { "true" } else { "false" })
    }

    /// Overrides provider weights at pick time.
    pub fn weight_source(mut self, source: Arc<dyn WeightSource>) -> Self {
        self.weight_source = Some(source);
        self
    }

    /// Builds the reference; with a registry, waits for the first provider listing.
    ///
    /// # Errors
    /// [`BuildError`]: the first setting found wrong, no provider source, the registry failure, a
    /// shut-down consumer, or [`BuildError::NoRuntime`] when polled outside a tokio runtime.
    pub async fn build(self) -> Result<Reference, BuildError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| BuildError::NoRuntime)?;
        let consumer = Arc::clone(&self.consumer.inner);
        if consumer.is_shut_down() {
            return Err(BuildError::ShutDown);
        }
        let params = ConsumerParams::new(&self.consumer_url);
        #[cfg(feature = "zookeeper")]
        let mut attachments = Vec::new();
        // One directory (and router chain) per registry; a single one for the other sources.
        let sources: Vec<SourceParts> = match self.source {
            Source::None => return Err(BuildError::NoSource),
            Source::Providers(urls) => {
                let urls = urls.iter().map(|u| params.merge(u));
                // Given URLs keep their order (the first one's `loadbalance` is the method's, as
                // in Dubbo); registry listings have none, so they are sorted (`Directory::sorted`).
                let directory = Arc::new(Directory::new(consumer.statistics()));
                directory.replace(urls);
                vec![(RegistryChoice::new("provider URLs"), directory, None, None)]
            }
            // Each registry's config center feeds its cluster's router chain.
            #[cfg(feature = "zookeeper")]
            Source::Registries(urls) => {
                let keeper: Arc<dyn crate::prune::Keeper> = consumer.clone();
                let (attached, followed) = crate::registry::attach_all(
                    consumer.registries(),
                    &keeper,
                    &urls,
                    &self.consumer_url,
                )
                .await?;
                attachments = followed;
                attached
                    .into_iter()
                    .map(|a| (a.choice, a.directory, Some(a.chain), Some(a.split)))
                    .collect()
            }
        };
        let clock = self.clock.unwrap_or_else(|| consumer.clock());
        let seed = self.seed.or(consumer.seed());
        // Every registry's caller shares one set of waiters, so back-pressure hears of every call's end.
        let protocol = match self.tls {
            Some(tls) => consumer.protocol().with_tls(tls),
            None => consumer.protocol().clone(),
        };
        let caller = DubboCaller::new(protocol, consumer.call_observer());
        let timer: Arc<dyn rudder_cluster::cluster::Timer> =
            Arc::new(crate::caller::TokioTimer(runtime));
        let mut routers = Vec::with_capacity(sources.len());
        let mut members = Vec::with_capacity(sources.len());
        for (index, (choice, directory, chain, split)) in sources.into_iter().enumerate() {
            consumer.track(&directory);
            // Always routed: static `dubbo.tag`s on providers apply with no rule at all, as in Dubbo.
            let chain =
                chain.unwrap_or_else(|| Arc::new(RouterChain::new(self.consumer_url.clone())));
            routers.push(Arc::clone(&chain));
            // The first registry keeps the seed itself: one registry picks as it always did. The
            // second list of a registry draws from a seed of its own.
            let seeds = seed.map(|seed| seed.wrapping_add(index as u64));
            let invoker =
                |directory: Arc<Directory>, chain: Arc<RouterChain>, seed: Option<u64>| {
                    let mut balancer = Balancer::builder(directory)
                        .available_check(available_check(&self.consumer_url))
                        .routers(chain)
                        .policies(consumer.policies().clone())
                        .clock(Arc::clone(&clock));
                    if let Some(seed) = seed {
                        balancer = balancer.seed(seed);
                    }
                    if let Some(source) = &self.weight_source {
                        balancer = balancer.weight_source(Arc::clone(source));
                    }
                    ClusterInvoker::new(
                        Arc::new(balancer.build()),
                        caller.clone(),
                        ClusterMode::default(),
                    )
                    .with_timer(Arc::clone(&timer))
                };
            let mut member = RegistryMember::new(choice, invoker(directory, chain, seeds));
            if let Some((directory, chain, share)) = split {
                let seed = seeds.map(|s| s ^ SPLIT_SEED);
                member = member.with_fallback(Fallback {
                    invoker: invoker(directory, chain, seed),
                    share,
                });
            }
            members.push(member);
        }
        let invoker = ZoneAwareInvoker::new(members, registry_pick_rng(seed))
            .ok_or(BuildError::NoSource)?
            .with_failover(registry_failover(&self.consumer_url)?);
        #[cfg(feature = "triple")]
        let grpc = crate::grpc_caller::grpc_invoker(&invoker, &timer, registry_pick_rng(seed));
        Ok(Reference {
            inner: Arc::new(ReferenceInner {
                consumer,
                modes: MethodModes::new(self.consumer_url.clone()),
                consumer_url: self.consumer_url,
                routers,
                invoker,
                #[cfg(feature = "triple")]
                grpc,
                #[cfg(feature = "zookeeper")]
                _attachments: attachments,
            }),
        })
    }
}

impl fmt::Debug for ReferenceBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReferenceBuilder")
            .field("consumer", &self.consumer_url)
            .finish_non_exhaustive()
    }
}

/// The reference parameter that turns on failover across registries (rudder's; Dubbo has none).
pub(crate) const REGISTRY_FAILOVER: &str = "registry.failover";

/// Whether `registry.failover` is on (off when absent).
fn registry_failover(consumer_url: &DubboUrl) -> Result<bool, BuildError> {
    match consumer_url.parameter(REGISTRY_FAILOVER).map(str::trim) {
        None | Some("") => Ok(false),
        Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
        Some(value) => Err(BuildError::BadParameter(format!(
            "{REGISTRY_FAILOVER}={value:?} is not true or false"
        ))),
    }
}

/// Checks `check` (true or false) where the feature that reads it is on.
fn check_parameter(consumer_url: &DubboUrl) -> Result<(), BuildError> {
    #[cfg(feature = "zookeeper")]
    return crate::registry::check(consumer_url).map(drop);
    #[cfg(not(feature = "zookeeper"))]
    {
        let _ = consumer_url;
        Ok(())
    }
}

impl Consumer {
    /// Starts configuring a reference to `interface` (a Java interface name) on this consumer.
    pub fn reference(&self, interface: &str) -> ReferenceBuilder {
        ReferenceBuilder::new(self.clone(), interface)
    }
}

impl Reference {
    /// Starts configuring a reference to `interface` (a Java interface name) with a consumer of its own.
    pub fn builder(interface: &str) -> ReferenceBuilder {
        Consumer::builder().build().reference(interface)
    }
}
