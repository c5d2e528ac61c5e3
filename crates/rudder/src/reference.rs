//! [`Reference`]: a handle on one remote service, the Rust counterpart of Dubbo's `ReferenceConfig`.

use std::fmt;
use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::weight::WeightSource;
use rudder_cluster::router::{Explanation, RouterChain, RuleError, RuleKey};
use rudder_cluster::zone_aware::{
    registry_pick_rng, RegistryChoice, RegistryMember, ZoneAwareInvoker,
};
use rudder_common::clock::Clock;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_common::value::{from_value, to_value};
use rudder_common::Value;
use rudder_rpc::RpcResponse;
use serde::{de::DeserializeOwned, Serialize};

use crate::caller::DubboCaller;
use crate::consumer::{Consumer, ConsumerInner};
use crate::error::{BuildError, CallError};

/// A remote service: its providers, the balancer that picks among them, and the wire to call them.
///
/// Cheap to clone: clones share the service's directory and balancer, and the [`Consumer`] it was built
/// from (its registry sessions, connections and statistics). `invoke` takes `&self`.
///
/// For a single service, [`Reference::builder`] makes a reference with a consumer of its own; with more
/// than one, build them from one [`Consumer`] so they share sessions, connections and statistics.
///
/// With several registries ([`ReferenceBuilder::registry`] repeated) the reference keeps one directory,
/// balancer and cluster invoker per registry and picks the registry first, by Dubbo 3.3's zone-aware
/// rules ([`rudder_cluster::zone_aware`]).
///
/// ```
/// use rudder::{Reference, Value};
/// use rudder_rpc::server::DubboServer;
/// use rudder_common::invocation::Invocation;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = DubboServer::bind(0, |call: Invocation| async move {
///     Ok(Value::from(format!("Hello {}", call.arguments()[0].as_str().unwrap_or("?"))))
/// })
/// .await?;
/// let greeter = Reference::builder("com.acme.Greeter")
///     .provider(&format!("dubbo://{}/com.acme.Greeter?weight=100", server.local_addr()))
///     .timeout_millis(2000)
///     .build()
///     .await?;
/// let answer = greeter.invoke("sayHello", &["java.lang.String"], vec![Value::from("rust")]).await?;
/// assert_eq!(answer, Value::from("Hello rust"));
/// # server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Reference {
    inner: Arc<ReferenceInner>,
}

struct ReferenceInner {
    consumer: Arc<ConsumerInner>,
    consumer_url: DubboUrl,
    /// One cluster invoker per registry; a single one for provider URLs, a directory or one registry.
    invoker: ZoneAwareInvoker<DubboCaller>,
    /// The routers of each registry's cluster, in the same order (one chain per directory, so each
    /// caches routes for its own snapshots); rules are set on all of them.
    routers: Vec<Arc<RouterChain>>,
    /// Each registry's subscription and router rules, followed in the background; dropping them
    /// stops following and releases the sessions.
    #[cfg(feature = "zookeeper")]
    _attachments: Vec<crate::registry::Attachment>,
}

impl Drop for ReferenceInner {
    fn drop(&mut self) {
        // This reference's providers may be nobody's now: their statistics and connections can go.
        // (Its registry attachments are dropped right after, which stops their tasks.)
        let directories: Vec<&Directory> = self
            .invoker
            .members()
            .iter()
            .map(|m| &**m.invoker.balancer().directory())
            .collect();
        self.consumer.prune(&directories);
    }
}

impl Reference {
    /// Starts configuring a reference to `interface` (a Java interface name) with a consumer of its own.
    pub fn builder(interface: &str) -> ReferenceBuilder {
        Consumer::builder().build().reference(interface)
    }

    /// Calls `method` with Java parameter types and arguments; the provider's return value, or its
    /// exception as [`CallError::Exception`].
    ///
    /// # Errors
    /// [`CallError`]: the provider threw, or the call failed after the cluster mode's retries.
    pub async fn invoke(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: Vec<Value>,
    ) -> Result<Value, CallError> {
        self.invoke_value(invocation(method, parameter_types, arguments))
            .await
    }

    /// As [`Reference::invoke`], through Dubbo's generic `$invoke`: POJOs travel as maps, and the provider
    /// needs no matching Java classes on the consumer side.
    ///
    /// # Errors
    /// As [`Reference::invoke`].
    pub async fn invoke_generic(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: Vec<Value>,
    ) -> Result<Value, CallError> {
        self.invoke_value(invocation(method, parameter_types, arguments).into_generic())
            .await
    }

    /// As [`Reference::invoke`], for an invocation built by the caller: with attachments (such as
    /// `registry_zone`, see [`rudder_cluster::zone_aware`]), or generic ([`Invocation::into_generic`]).
    ///
    /// # Errors
    /// As [`Reference::invoke`].
    pub async fn invoke_invocation(&self, invocation: Invocation) -> Result<Value, CallError> {
        self.invoke_value(invocation).await
    }

    /// The call's value, or the provider's exception.
    async fn invoke_value(&self, invocation: Invocation) -> Result<Value, CallError> {
        let response = self.invoke_raw(invocation).await?;
        response.into_result().map_err(CallError::Exception)
    }

    /// Typed call: serializes `arguments` with serde (a struct with a Java class name becomes that Java
    /// object, see [`rudder_common::value::JavaClass`]) and deserializes the result into `T`.
    ///
    /// # Errors
    /// As [`Reference::invoke`], plus [`CallError::Conversion`].
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: &[&dyn ErasedArgument],
    ) -> Result<T, CallError> {
        let values = arguments
            .iter()
            .map(|a| a.to_value())
            .collect::<Result<Vec<_>, _>>()?;
        let value = self.invoke(method, parameter_types, values).await?;
        Ok(from_value(value)?)
    }

    /// Sends a prepared invocation through the cluster: the whole response, attachments included.
    ///
    /// The per-call deadline is the invocation's `timeout` attachment if set, else the merged provider URL's
    /// `<method>.timeout` / `timeout` (consumer settings first, as Dubbo resolves them).
    ///
    /// # Errors
    /// [`RpcError`] when the call did not complete.
    pub async fn invoke_raw(&self, invocation: Invocation) -> Result<RpcResponse, RpcError> {
        let inner = &self.inner;
        if inner.consumer.is_shut_down() {
            return Err(RpcError::new(
                RpcErrorKind::Network,
                "the consumer is shut down",
            ));
        }
        let mode = ClusterMode::from_consumer(&inner.consumer_url, invocation.method_name())
            .unwrap_or_default();
        inner.invoker.invoke_in_mode(&invocation, &mode).await
    }

    /// The providers this reference currently sees (merged with its consumer settings); with several
    /// registries, those of the first ([`Reference::directories`] has them all).
    pub fn directory(&self) -> &Arc<Directory> {
        self.inner.invoker.first().balancer().directory()
    }

    /// The routers between each directory and its load balancer (tag and condition rules), one
    /// chain per registry in registry order; [`Reference::set_rule`] sets a rule on all of them.
    pub fn routers(&self) -> &[Arc<RouterChain>] {
        &self.inner.routers
    }

    /// Sets (`Some(yaml)`) or deletes (`None`) a routing rule on every registry's chain.
    ///
    /// # Errors
    /// [`RuleError`] when the rule does not parse; the last good rule stays.
    pub fn set_rule(&self, key: RuleKey, text: Option<&str>) -> Result<(), RuleError> {
        for chain in &self.inner.routers {
            chain.set_rule(key.clone(), text)?;
        }
        Ok(())
    }

    /// Each provider's fate for `invocation` under the current rules, over the first registry's
    /// providers: kept or not, and which rule decided it (`rudder providers --explain` prints this).
    pub fn explain(&self, invocation: &Invocation) -> Explanation {
        self.inner.routers[0].explain(&self.directory().snapshot(), invocation)
    }

    /// The directory of each registry, in the order the registries were given (one without registries).
    pub fn directories(&self) -> impl ExactSizeIterator<Item = &Arc<Directory>> + '_ {
        self.inner
            .invoker
            .members()
            .iter()
            .map(|m| m.invoker.balancer().directory())
    }

    /// The balancer picking among the providers of [`Reference::directory`].
    pub fn balancer(&self) -> &Arc<Balancer> {
        self.inner.invoker.first().balancer()
    }

    /// The consumer-side configuration, as a Dubbo consumer URL.
    pub fn consumer_url(&self) -> &DubboUrl {
        &self.inner.consumer_url
    }

    /// The first registry's cluster invoker; every registry's caller shares its waiters.
    pub(crate) fn invoker(&self) -> &ClusterInvoker<DubboCaller> {
        self.inner.invoker.first()
    }

    /// Whether the consumer this reference belongs to has been shut down.
    pub fn is_shut_down(&self) -> bool {
        self.inner.consumer.is_shut_down()
    }
}

impl fmt::Debug for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reference")
            .field("consumer", &self.inner.consumer_url)
            .field("registries", &self.inner.invoker)
            .field("directory", self.directory())
            .finish()
    }
}

fn invocation(method: &str, parameter_types: &[&str], arguments: Vec<Value>) -> Invocation {
    let types = parameter_types.iter().map(|t| (*t).to_owned()).collect();
    Invocation::new(method, types, arguments)
}

/// An argument for [`Reference::call`]: anything serde can serialize.
pub trait ErasedArgument: Send + Sync {
    /// Converts to a value.
    ///
    /// # Errors
    /// When serde cannot represent it.
    fn to_value(&self) -> Result<Value, rudder_common::value::SerdeError>;
}

impl<T: Serialize + Send + Sync> ErasedArgument for T {
    fn to_value(&self) -> Result<Value, rudder_common::value::SerdeError> {
        to_value(self)
    }
}

/// Where a reference's providers come from: exactly one source.
enum Source {
    None,
    Providers(Vec<String>),
    #[cfg(feature = "zookeeper")]
    Registries(Vec<String>),
    Directory(Arc<Directory>),
}

/// Configures a [`Reference`]. Settings are Dubbo's `<dubbo:reference>` attributes; `<method>.<key>`
/// sets one for a single method, as `<dubbo:method>` does.
pub struct ReferenceBuilder {
    consumer: Consumer,
    consumer_url: DubboUrl,
    source: Source,
    conflict: Option<&'static str>,
    weight_source: Option<Arc<dyn WeightSource>>,
    clock: Option<Arc<dyn Clock>>,
    seed: Option<u64>,
}

impl ReferenceBuilder {
    pub(crate) fn new(consumer: Consumer, interface: &str) -> ReferenceBuilder {
        let mut consumer_url = DubboUrl::new("consumer", &local_host(), 0, interface)
            .with_parameter("interface", interface)
            .with_parameter("side", "consumer");
        if let Some(application) = consumer.application() {
            consumer_url = consumer_url.with_parameter("application", application);
        }
        ReferenceBuilder {
            consumer,
            consumer_url,
            source: Source::None,
            conflict: None,
            weight_source: None,
            clock: None,
            seed: None,
        }
    }

    fn set_source(&mut self, kind: &'static str, add: impl FnOnce(&mut Source) -> bool) {
        if !add(&mut self.source) && self.conflict.is_none() {
            self.conflict = Some(kind);
        }
    }

    /// Calls this provider directly (repeatable; plain or percent-encoded URL). Cannot be combined with
    /// a registry or a directory.
    pub fn provider(mut self, url: &str) -> Self {
        let url = url.to_owned();
        self.set_source("provider", |source| match source {
            Source::None => {
                *source = Source::Providers(vec![url]);
                true
            }
            Source::Providers(urls) => {
                urls.push(url);
                true
            }
            _ => false,
        });
        self
    }

    /// Finds providers in this registry (`zookeeper://host:port[?backup=...]`). Cannot be combined with
    /// provider URLs or a directory. References of one consumer share one session per registry address.
    ///
    /// Repeatable, for one registry per data centre: each registry gets its own directory and cluster
    /// invoker, and each call picks one registry by Dubbo 3.3's zone-aware rules, read from the registry
    /// URL's `preferred`, `zone` and `weight` parameters and the call's `registry_zone` and
    /// `registry_zone_force` attachments (see [`rudder_cluster::zone_aware`]). Those parameters are not
    /// part of the session's identity. `registry.failover=true` on the reference (off by default, as in
    /// Dubbo) retries a retryable failure in the next registry the rules choose.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), rudder::BuildError> {
    /// let orders = rudder::Reference::builder("com.acme.Orders")
    ///     .registry("zookeeper://zk.hz.example:2181?zone=hz&preferred=true")
    ///     .registry("zookeeper://zk.sh.example:2181?zone=sh&weight=300")
    ///     .build()
    ///     .await?;
    /// assert_eq!(orders.directories().len(), 2);
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "zookeeper")]
    pub fn registry(mut self, url: &str) -> Self {
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

    /// Uses this directory (e.g. one fed by your own discovery) instead of providers or a registry. Its
    /// URLs are used as given: consumer settings are not merged into them.
    pub fn directory(mut self, directory: Arc<Directory>) -> Self {
        self.set_source("directory", |source| match source {
            Source::None => {
                *source = Source::Directory(directory);
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

    /// Per-call deadline for every method (`timeout`); `<method>.timeout` via [`Self::parameter`].
    pub fn timeout_millis(self, millis: u64) -> Self {
        self.parameter("timeout", &millis.to_string())
    }

    /// Failover retries (`retries`, default 2).
    pub fn retries(self, retries: u32) -> Self {
        self.parameter("retries", &retries.to_string())
    }

    /// Fault-tolerance mode (`cluster`): failover, failfast, failsafe, failback, forking, broadcast,
    /// available or mergeable (a `group` of `*` or `a,b` selects mergeable by itself).
    pub fn cluster(self, mode: &str) -> Self {
        self.parameter("cluster", mode)
    }

    /// The load balancer (`loadbalance`), which beats the providers' own setting as in Dubbo; a name
    /// registered on the consumer or a built-in.
    pub fn loadbalance(self, name: &str) -> Self {
        self.parameter("loadbalance", name)
    }

    /// Any other consumer-side parameter, as Dubbo's `<dubbo:reference>` attributes and `<method>.<key>`.
    /// Merged into every provider URL as Dubbo 3.3 resolves them (see [`rudder_common::url::merge`]).
    pub fn parameter(mut self, key: &str, value: &str) -> Self {
        self.consumer_url = self.consumer_url.with_parameter(key, value);
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
    /// (Dubbo's registry `timeout`), 10 s without it ([`RegistryTarget::deadline`](crate::RegistryTarget::deadline)).
    ///
    /// * `true`: past the deadline the build fails with
    ///   [`BuildError::RegistryUnreachable`](crate::BuildError::RegistryUnreachable), naming the
    ///   registry and why (its last connection failure).
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
    ///     .check(false) // up within 3 s even if ZooKeeper is down
    ///     .build()
    ///     .await?;
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

    /// Checks the settings a call would fail on: the cluster mode and every `loadbalance` name.
    fn validate(&self) -> Result<(), BuildError> {
        if let Some(kind) = self.conflict {
            return Err(BuildError::ConflictingSources(kind));
        }
        ClusterMode::from_consumer(&self.consumer_url, "")?;
        registry_failover(&self.consumer_url)?;
        #[cfg(feature = "zookeeper")]
        crate::registry::check(&self.consumer_url)?;
        for (key, value) in self.consumer_url.parameters() {
            if key == "loadbalance" || key.ends_with(".loadbalance") {
                self.consumer.inner.policies().get(value)?;
            }
        }
        Ok(())
    }

    /// Builds the reference; with a registry, waits for the first provider listing.
    ///
    /// # Errors
    /// [`BuildError`] naming the setting that is wrong, the conflicting sources, or the registry failure.
    pub async fn build(self) -> Result<Reference, BuildError> {
        self.validate()?;
        let consumer = Arc::clone(&self.consumer.inner);
        if consumer.is_shut_down() {
            return Err(BuildError::ShutDown);
        }
        let params = ConsumerParams::new(&self.consumer_url);
        #[cfg(feature = "zookeeper")]
        let mut attachments = Vec::new();
        // One directory (and router chain) per registry; a single one for the other sources.
        let sources: Vec<(RegistryChoice, Arc<Directory>, Option<Arc<RouterChain>>)> =
            match self.source {
                Source::None => return Err(BuildError::NoSource),
                Source::Directory(directory) => {
                    vec![(RegistryChoice::new("directory"), directory, None)]
                }
                Source::Providers(urls) => {
                    let urls = urls
                        .iter()
                        .map(|u| DubboUrl::parse_any(u).map(|u| params.merge(&u)))
                        .collect::<Result<Vec<_>, _>>()?;
                    // Given URLs keep their order (the first one's `loadbalance` is the method's, as
                    // in Dubbo); registry listings have none, so they are sorted (`Directory::sorted`).
                    let directory = Arc::new(Directory::new(consumer.statistics()));
                    directory.replace(urls);
                    vec![(RegistryChoice::new("provider URLs"), directory, None)]
                }
                // Each registry's config center feeds its cluster's router chain.
                #[cfg(feature = "zookeeper")]
                Source::Registries(urls) => {
                    let (attached, followed) =
                        crate::registry::attach_all(&consumer, &urls, &self.consumer_url).await?;
                    attachments = followed;
                    attached
                        .into_iter()
                        .map(|(choice, directory, chain)| (choice, directory, Some(chain)))
                        .collect()
                }
            };
        let clock = self.clock.unwrap_or_else(|| consumer.clock());
        let seed = self.seed.or(consumer.seed());
        // Every registry's caller shares one set of waiters, so back-pressure hears of every call's end.
        let caller = DubboCaller::new(&consumer);
        let timer: Arc<dyn rudder_cluster::cluster::Timer> =
            Arc::new(crate::caller::TokioTimer(tokio::runtime::Handle::current()));
        let mut routers = Vec::with_capacity(sources.len());
        let mut members = Vec::with_capacity(sources.len());
        for (index, (choice, directory, chain)) in sources.into_iter().enumerate() {
            consumer.track(&directory);
            // Always routed: static `dubbo.tag`s on providers apply with no rule at all, as in Dubbo.
            let chain =
                chain.unwrap_or_else(|| Arc::new(RouterChain::new(self.consumer_url.clone())));
            routers.push(Arc::clone(&chain));
            let mut balancer = Balancer::builder(directory)
                .routers(chain)
                .policies(consumer.policies().clone())
                .clock(Arc::clone(&clock));
            if let Some(seed) = seed {
                // The first registry keeps the seed itself: one registry picks as it always did.
                balancer = balancer.seed(seed.wrapping_add(index as u64));
            }
            if let Some(source) = &self.weight_source {
                balancer = balancer.weight_source(Arc::clone(source));
            }
            let balancer = Arc::new(balancer.build());
            let invoker = ClusterInvoker::new(balancer, caller.clone(), ClusterMode::default())
                .with_timer(Arc::clone(&timer));
            members.push(RegistryMember { choice, invoker });
        }
        let invoker = ZoneAwareInvoker::new(members, registry_pick_rng(seed))
            .ok_or(BuildError::NoSource)?
            .with_failover(registry_failover(&self.consumer_url)?);
        Ok(Reference {
            inner: Arc::new(ReferenceInner {
                consumer,
                consumer_url: self.consumer_url,
                routers,
                invoker,
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

/// The address this consumer registers under: `DUBBO_IP_TO_REGISTRY`, else loopback.
fn local_host() -> String {
    std::env::var("DUBBO_IP_TO_REGISTRY").unwrap_or_else(|_| "127.0.0.1".to_owned())
}
