//! [`Reference`]: a handle on one remote service, the Rust counterpart of Dubbo's `ReferenceConfig`.

use std::fmt;
use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::weight::WeightSource;
use rudder_common::clock::Clock;
#[cfg(feature = "zookeeper")]
use rudder_common::discovery::{ProviderSink, ProviderUpdate, UpdateOutcome};
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
    directory: Arc<Directory>,
    invoker: ClusterInvoker<DubboCaller>,
    #[cfg(feature = "zookeeper")]
    _registrations: Vec<crate::registry::Registration>,
}

impl Drop for ReferenceInner {
    fn drop(&mut self) {
        // This reference's providers may be nobody's now: their statistics and connections can go.
        // (Its registry subscriptions are dropped right after, which stops their tasks.)
        self.consumer.prune(Some(&self.directory));
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
        inner.invoker.invoke_in_mode(&invocation, mode).await
    }

    /// The providers this reference currently sees (merged with its consumer settings).
    pub fn directory(&self) -> &Arc<Directory> {
        &self.inner.directory
    }

    /// The balancer picking among them.
    pub fn balancer(&self) -> &Arc<Balancer> {
        self.inner.invoker.balancer()
    }

    /// The consumer-side configuration, as a Dubbo consumer URL.
    pub fn consumer_url(&self) -> &DubboUrl {
        &self.inner.consumer_url
    }

    pub(crate) fn invoker(&self) -> &ClusterInvoker<DubboCaller> {
        &self.inner.invoker
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
            .field("directory", &self.inner.directory)
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

#[cfg(feature = "zookeeper")]
/// The directory of one reference as its registries see it: every update goes to the directory, and a
/// provider that left may free statistics and connections.
struct PruningSink {
    directory: Arc<Directory>,
    consumer: std::sync::Weak<ConsumerInner>,
}

#[cfg(feature = "zookeeper")]
impl ProviderSink for PruningSink {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        let outcome = self.directory.update(update);
        if outcome.removed > 0 {
            if let Some(consumer) = self.consumer.upgrade() {
                consumer.prune(None);
            }
        }
        outcome
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
    #[cfg(feature = "zookeeper")]
    pub fn registry(mut self, url: &str) -> Self {
        let url = url.to_owned();
        self.set_source("registry", |source| match source {
            Source::None => {
                *source = Source::Registries(vec![url]);
                true
            }
            Source::Registries(urls) if urls.is_empty() => {
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

    /// Fault-tolerance mode (`cluster`): failover, failfast, failsafe or available.
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
        for (key, value) in self.consumer_url.parameters() {
            if key == "loadbalance" || key.ends_with(".loadbalance") {
                self.consumer.inner.policies.get(value)?;
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
        let directory = match &self.source {
            Source::Directory(directory) => Arc::clone(directory),
            _ => Arc::new(Directory::sorted(Arc::clone(&consumer.statuses))),
        };
        #[cfg(feature = "zookeeper")]
        let mut registrations = Vec::new();
        match self.source {
            Source::None => return Err(BuildError::NoSource),
            Source::Directory(_) => {}
            Source::Providers(urls) => {
                let urls = urls
                    .iter()
                    .map(|u| DubboUrl::parse_any(u).map(|u| params.merge(&u)))
                    .collect::<Result<Vec<_>, _>>()?;
                directory.replace(urls);
            }
            #[cfg(feature = "zookeeper")]
            Source::Registries(urls) => {
                for url in &urls {
                    let sink = PruningSink {
                        directory: Arc::clone(&directory),
                        consumer: Arc::downgrade(&consumer),
                    };
                    let registration = consumer
                        .registries
                        .subscribe(url, &self.consumer_url, sink)
                        .await?;
                    registrations.push(registration);
                }
            }
        }
        consumer.track(&directory);
        let mut balancer = Balancer::builder(Arc::clone(&directory))
            .policies(consumer.policies.clone())
            .clock(self.clock.unwrap_or_else(|| Arc::clone(&consumer.clock)));
        if let Some(seed) = self.seed.or(consumer.seed) {
            balancer = balancer.seed(seed);
        }
        if let Some(source) = self.weight_source {
            balancer = balancer.weight_source(source);
        }
        let caller = DubboCaller::new(&consumer);
        let invoker =
            ClusterInvoker::new(Arc::new(balancer.build()), caller, ClusterMode::default());
        Ok(Reference {
            inner: Arc::new(ReferenceInner {
                consumer,
                consumer_url: self.consumer_url,
                directory,
                invoker,
                #[cfg(feature = "zookeeper")]
                _registrations: registrations,
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

/// The address this consumer registers under: `DUBBO_IP_TO_REGISTRY`, else loopback.
fn local_host() -> String {
    std::env::var("DUBBO_IP_TO_REGISTRY").unwrap_or_else(|_| "127.0.0.1".to_owned())
}
